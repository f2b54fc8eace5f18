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

    /// With `gyroscope`, each instant also carries the gyroscope sample the stream implies, so the
    /// heading comes from the attitude filter (issue 30).
    static func run(points: Int, batches: Int, warmup: Int, sink: inout Double,
                    gyroscope: Bool = false) -> (Measurement, [String]) {
        let stream = SensorStream.generate(count: max(points, 1))
        var model = DaemonModel()
        var publisher = PropertyPublisher()
        let wallClock = 1_800_000_000.0
        _ = model.claim(by: ":1.1")
        model.apply(.manualSet(london), nowUnixSeconds: wallClock)
        model.apply(.sensorsAvailable(hasAccelerometer: true, hasGyroscope: gyroscope), nowUnixSeconds: wallClock)
        _ = publisher.update(model.properties, nowSeconds: 0)
        publisher.goLive()
        var time = 0.0
        var emitted = 0
        var index = 0
        var fused = 0
        let heapBefore = Heap.bytesInUse()
        let name = gyroscope
            ? "`DaemonModel.apply` ×3 (gyroscope too: fused) + `properties` + `PropertyPublisher.update` (one 20 Hz instant)"
            : "`DaemonModel.apply` ×2 + `properties` + `PropertyPublisher.update` (one 20 Hz sample pair)"
        let measurement = measure(name, inputs: stream, batches: batches, warmup: warmup, sink: &sink) { sample in
            time += 0.05
            index += 1
            if gyroscope {
                model.apply(.angularVelocity(SensorStream.angularVelocity(at: time, index: index), timeSeconds: time - 0.01),
                            nowUnixSeconds: wallClock + time)
            }
            model.apply(.acceleration(sample.acceleration, timeSeconds: time), nowUnixSeconds: wallClock + time)
            model.apply(.magneticField(sample.magnetic, timeSeconds: time), nowUnixSeconds: wallClock + time)
            let emission = publisher.update(model.properties, nowSeconds: time)
            if model.compass.state.fused { fused += 1 }
            emitted &+= emission.heading.count + emission.immediate.count
            return emission.retryAfterSeconds ?? 0
        }
        let heapAfter = Heap.bytesInUse()
        let label = gyroscope ? "Sample path with the gyroscope" : "Sample path"
        var notes = ["\(label): \(emitted) property changes signalled over \((warmup + batches) * stream.count) instants"
            + (gyroscope ? ", \(fused) of them fused." : ".")]
        if let heapBefore, let heapAfter {
            notes.append("\(label): heap in use after − before (glibc mallinfo2): \(heapAfter - heapBefore) bytes; "
                + "allocations per sample are counted by `scripts/bench-allocations.sh` (valgrind).")
        }
        return (measurement, notes)
    }
}
