// SPDX-License-Identifier: Apache-2.0
// Calibration rows of qibla-bench: the online calibrator's per-sample cost, the calibration
// estimate's cost, and heap use per sample (issues 10 and 22: goal ≤ 1 µs and 0 allocations per
// sample).
import QiblaCore
import QiblaPlatform

enum CalibrationBenchmarks {
    /// A Librem-5-like magnetometer (hard iron 87 µT, 8 % soft iron, ±0.4 µT uniform noise) turned
    /// through all orientations at 20 Hz in London (WMM2025 F ≈ 49.1 µT, I ≈ 66.5°), from the
    /// benchmark LCG (seed + 2), with the matching accelerometer reading.
    static func stream(count: Int) -> [SensorSample] {
        var state = BenchmarkPoints.seed &+ 2
        func noise(_ amplitude: Double) -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (Double(state >> 11) * 0x1p-53 * 2 - 1) * amplitude
        }
        let world = Vector3(0.40, 19.55, -45.06)  // east, north, up, µT
        let hardIron = Vector3(50.2, -60.1, 38.4)  // |b| ≈ 87 µT
        let softIron = Matrix3(1.06, 0.02, 0, 0.02, 0.95, 0.01, 0, 0.01, 0.99)
        return (0..<count).map { i in
            let t = Double(i) * 0.05
            let r = Matrix3.rotationZ(degrees: -45 * t) * Matrix3.rotationX(degrees: 75 * sin(2 * .pi * 0.23 * t))
                * Matrix3.rotationY(degrees: 170 * sin(2 * .pi * 0.11 * t))
            let toDevice = r.transposed
            let magnetic = softIron * (toDevice * world) + hardIron + Vector3(noise(0.4), noise(0.4), noise(0.4))
            let acceleration = toDevice * Vector3(0, 0, 9.806_65) + Vector3(noise(0.05), noise(0.05), noise(0.05))
            return SensorSample(magnetic: magnetic, acceleration: acceleration)
        }
    }

    static let london = MagneticModel.wmm2025.field(
        at: GeodeticPosition(uncheckedLatitude: 51.5074, longitude: -0.1278, heightMetres: 0), decimalYear: 2027.5)

    /// Heap bytes in use (glibc `mallinfo2`), or nil where unavailable.
    static func heapBytesInUse() -> Int? { Heap.bytesInUse() }

    /// Runs the rows; returns the per-sample measurement and notes for the report.
    static func run(points: Int, batches: Int, warmup: Int, sink: inout Double) -> (Measurement, [String]) {
        var notes: [String] = []
        let samples = stream(count: max(points, 1000))

        // Per-sample cost, fit attempts included (one per second of sample time, as in the daemon).
        var calibrator = MagnetometerCalibrator()
        calibrator.setExpectedField(london)
        var time = 0.0
        let perSample = measure("`MagnetometerCalibrator.add(rawMicrotesla:…)` (20 Hz figure-8, fits included)",
                                inputs: samples, batches: batches, warmup: warmup, sink: &sink) { s in
            time += 0.05
            calibrator.add(rawMicrotesla: s.magnetic, accelerationMetresPerSecondSquared: s.acceleration, time: time)
            return calibrator.progress
        }

        // Per-sample cost without fit attempts.
        var bare = MagnetometerCalibrator(configuration: .init(fitIntervalSeconds: .infinity))
        bare.setExpectedField(london)
        var bareTime = 0.0
        let withoutFits = measure("add without fit attempts", inputs: samples, batches: max(10, batches / 3),
                                  warmup: warmup, sink: &sink) { s in
            bareTime += 0.05
            bare.add(rawMicrotesla: s.magnetic, accelerationMetresPerSecondSquared: s.acceleration, time: bareTime)
            return bare.progress
        }
        notes.append("Calibrator per sample without fit attempts: \(formatted(withoutFits.medianNanoseconds)) ns median "
            + "(p90 \(formatted(withoutFits.p90Nanoseconds)) ns); with fits: \(formatted(perSample.medianNanoseconds)) ns "
            + "(goal ≤ 1000 ns: \(perSample.p90Nanoseconds <= 1000 ? "met" : "not met")); "
            + "accepted: \(calibrator.state == .calibrated ? "yes" : "no").")

        // The estimator alone on the sample set a minute of the stream leaves (with down directions).
        var set = CalibrationSampleSet()
        for (i, s) in samples.enumerated() { set.add(s.magnetic, down: s.acceleration * -1, time: Double(i) * 0.05) }
        var raw: [Vector3] = [], downs: [Vector3] = []
        set.withPackedSamplesAndDowns { r, d in raw = Array(r); downs = Array(d) }
        var estimator = CalibrationEstimator()
        let fitCost = measure("`CalibrationEstimator.estimate` (\(raw.count) samples)", inputs: [0], batches: max(20, batches / 3),
                              warmup: 5, sink: &sink) { _ in
            estimator.estimate(raw: raw, down: downs, expectedField: london)?.fieldResidualRMSMicrotesla ?? 0
        }
        notes.append("Calibration estimate (MAP fit with its covariance, Levenberg–Marquardt, 14 parameters) on \(raw.count) "
            + "samples from a cold start: \(formatted(fitCost.medianNanoseconds / 1000, decimals: 1)) µs median, "
            + "\(formatted(fitCost.p90Nanoseconds / 1000, decimals: 1)) µs p90 (one attempt per second while collecting, "
            + "one per 5 s refining, warm-started from the previous estimate).")

        // Heap use over 10,000 samples through a fresh calibrator (fit attempts included).
        var fresh = MagnetometerCalibrator()
        fresh.setExpectedField(london)
        let long = stream(count: 10_000)
        let before = heapBytesInUse()
        for (i, s) in long.enumerated() {
            fresh.add(rawMicrotesla: s.magnetic, accelerationMetresPerSecondSquared: s.acceleration, time: Double(i) * 0.05)
        }
        let after = heapBytesInUse()
        sink += fresh.progress
        if let before, let after {
            notes.append("Heap in use across 10,000 calibrator samples (glibc mallinfo2 uordblks delta): \(after - before) bytes "
                + "(\(formatted(Double(after - before) / 10_000, decimals: 3)) bytes/sample); state \(fresh.state.rawValue), "
                + "\(fresh.calibrationGeneration) calibration change(s).")
        } else {
            notes.append("Heap use per sample: mallinfo2 unavailable on this platform.")
        }
        notes.append("Calibrator memory bound: \(fresh.memoryBytes) bytes (inline \(MemoryLayout<MagnetometerCalibrator>.size) "
            + "+ heap storage allocated once in init).")
        return (perSample, notes)
    }
}
