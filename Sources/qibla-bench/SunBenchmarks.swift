// SPDX-License-Identifier: Apache-2.0
// Sun rows of qibla-bench (issue 15): one full SPA solar position (goal ≤ 5 µs) and one day's
// Qibla-shadow search (goal ≤ 1 ms).
import QiblaCore

enum SunBenchmarks {
    /// Instants spread over 1990–2060, one per benchmark point (the benchmark LCG, seed + 3).
    static func instants(count: Int) -> [Double] {
        var state = BenchmarkPoints.seed &+ 3
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return 631_152_000 + Double(state >> 11) * 0x1p-53 * 70 * 365.25 * 86_400
        }
    }

    /// `SolarPositionAlgorithm.position(at:for:)` (standard atmosphere, ΔT from the model) at the
    /// benchmark points, each at its own instant.
    static func solarPosition(points: [GeodeticPosition], batches: Int, warmup: Int, sink: inout Double) -> (Measurement, [String]) {
        let inputs = Array(zip(points, instants(count: points.count)))
        let m = measure("`SolarPositionAlgorithm.position(at:for:)` (full NREL SPA, refraction on)",
                        inputs: inputs, batches: batches, warmup: warmup, sink: &sink) { input in
            guard let p = SolarPositionAlgorithm.position(at: input.1, for: input.0) else { return 0 }
            return p.azimuthDegrees + p.elevationDegrees
        }
        return (m, ["Solar position: **\(formatted(m.medianNanoseconds / 1000, decimals: 2)) µs** median "
            + "(goal ≤ 5 µs: \(m.medianNanoseconds <= 5_000 ? "met" : "not met"))."])
    }

    /// `QiblaSunSearch().times(at:from:)` over 24 hours (Qibla bearing included) at the first
    /// 100 benchmark points, each on its own day.
    static func qiblaSunDay(points: [GeodeticPosition], batches: Int, warmup: Int, sink: inout Double) -> (Measurement, [String]) {
        let inputs = Array(zip(points.prefix(100), instants(count: 100)))
        let search = QiblaSunSearch()
        var events = 0
        let m = measure("`QiblaSunSearch().times(at:from:)` (one day's Qibla-sun instants)",
                        inputs: inputs, batches: max(5, batches / 10), warmup: max(1, warmup / 10), sink: &sink) { input in
            guard let result = search.times(at: input.0, from: input.1) else { return 0 }
            events += result.events.count
            return result.events.first?.unixSeconds ?? 1
        }
        return (m, ["Qibla-sun day: **\(formatted(m.medianNanoseconds / 1000, decimals: 1)) µs** median "
            + "(goal ≤ 1 ms: \(m.medianNanoseconds <= 1_000_000 ? "met" : "not met")); \(events) instants over all batches."])
    }
}
