// SPDX-License-Identifier: Apache-2.0
// The daemon's per-sample model work as qibla-bench rows (issue 12): one accelerometer and one
// magnetometer sample through `DaemonModel.apply`, then `DaemonModel.properties` and
// `PropertyPublisher.update`, exactly what `Daemon.handle(_: SensorEvent)` + `publish()` do on the
// loop thread (the bus encoding is not included). Goal: 0 heap allocations per sample.
//
// Allocations are counted from outside: `scripts/bench-allocations.sh` runs this row under
// valgrind (memcheck's "total heap usage: N allocs") for two sample counts and divides the
// difference, which cancels set-up. In-process, glibc `mallinfo2` shows only bytes still in use.
import QiblaCore
import QiblaDaemon
import QiblaInterface
import QiblaPlatform

enum SamplePathBenchmarks {
    static let london = Location(position: GeodeticPosition(uncheckedLatitude: 51.5074, longitude: -0.1278, heightMetres: 0),
                                 horizontalAccuracyMetres: nil, timestampUnixSeconds: 1_800_000_000)

    static func run(points: Int, batches: Int, warmup: Int, sink: inout Double) -> (Measurement, [String]) {
        let stream = SensorStream.generate(count: max(points, 1))
        var model = DaemonModel()
        var publisher = PropertyPublisher()
        let wallClock = 1_800_000_000.0
        _ = model.claim(by: ":1.1")
        model.apply(.manualSet(london), nowUnixSeconds: wallClock)
        model.apply(.sensorsAvailable(hasAccelerometer: true), nowUnixSeconds: wallClock)
        _ = publisher.update(model.properties, nowSeconds: 0)
        publisher.goLive()
        var time = 0.0
        var emitted = 0
        let heapBefore = Heap.bytesInUse()
        let measurement = measure("`DaemonModel.apply` ×2 + `properties` + `PropertyPublisher.update` (one 20 Hz sample pair)",
                                  inputs: stream, batches: batches, warmup: warmup, sink: &sink) { sample in
            time += 0.05
            model.apply(.acceleration(sample.acceleration, timeSeconds: time), nowUnixSeconds: wallClock + time)
            model.apply(.magneticField(sample.magnetic, timeSeconds: time), nowUnixSeconds: wallClock + time)
            let emission = publisher.update(model.properties, nowSeconds: time)
            emitted &+= emission.heading.count + emission.immediate.count
            return emission.retryAfterSeconds ?? 0
        }
        let heapAfter = Heap.bytesInUse()
        var notes = ["Sample path: \(emitted) property changes signalled over \((warmup + batches) * stream.count) sample pairs."]
        if let heapBefore, let heapAfter {
            notes.append("Sample path: heap in use after − before (glibc mallinfo2): \(heapAfter - heapBefore) bytes; "
                + "allocations per sample are counted by `scripts/bench-allocations.sh` (valgrind).")
        }
        return (measurement, notes)
    }
}
