// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
@testable import QiblaCore

/// What one run of a scene measured (degrees, seconds).
struct FusionMetrics {
    var holdErrors: [Double] = []
    var turnErrors: [Double] = []
    /// Turn errors of the heading at its last sample, not extrapolated to the read.
    var turnErrorsUnextrapolated: [Double] = []
    var walkErrors: [Double] = []
    var settleSeconds: [Double] = []
    var magnetMaximum = 0.0
    var magnetReads = 0
    var withinOneSigma = 0
    var withinThreeSigma = 0
    var honestyReads = 0
    var untrackedReads = 0
    var reads = 0
    /// Today's path (`HeadingPipeline`, 0.5 s moving average) on the same samples.
    var todayHoldErrors: [Double] = []
    var todayTurnErrors: [Double] = []
    var todayMagnetMaximum = 0.0

    mutating func merge(_ o: FusionMetrics) {
        holdErrors += o.holdErrors; turnErrors += o.turnErrors; turnErrorsUnextrapolated += o.turnErrorsUnextrapolated
        walkErrors += o.walkErrors; settleSeconds += o.settleSeconds
        magnetMaximum = max(magnetMaximum, o.magnetMaximum); magnetReads += o.magnetReads
        withinOneSigma += o.withinOneSigma; withinThreeSigma += o.withinThreeSigma; honestyReads += o.honestyReads
        untrackedReads += o.untrackedReads; reads += o.reads
        todayHoldErrors += o.todayHoldErrors; todayTurnErrors += o.todayTurnErrors
        todayMagnetMaximum = max(todayMagnetMaximum, o.todayMagnetMaximum)
    }

    static func rms(_ x: [Double]) -> Double { x.isEmpty ? .nan : (x.reduce(0) { $0 + $1 * $1 } / Double(x.count)).squareRoot() }
    static func percentile(_ x: [Double], _ p: Double) -> Double {
        guard !x.isEmpty else { return .nan }
        let s = x.map(abs).sorted()
        return s[min(s.count - 1, Int((p / 100 * Double(s.count - 1)).rounded()))]
    }
    var oneSigmaShare: Double { Double(withinOneSigma) / Double(max(1, honestyReads)) }
    var threeSigmaShare: Double { Double(withinThreeSigma) / Double(max(1, honestyReads)) }
}

/// Feeds one run to a filter at `rateHertz`, reads the heading every 50 ms (and every 10 ms after
/// a turn, for the settling time) against the truth at that instant.
func measure(_ run: FusionRun, rateHertz: Double, seed: UInt64,
             configuration: AttitudeFilter.Configuration = FusionSweep.configuration) -> FusionMetrics {
    var samples: [FusionSample] = []
    run.samples(rateHertz: rateHertz, seed: seed) { samples.append($0) }
    var filter = AttitudeFilter(configuration: configuration)
    var pipeline = HeadingPipeline()
    var latestAcceleration: Vector3?
    var lastToday: HeadingEstimate?
    var metrics = FusionMetrics()
    var index = 0
    let warmUp = 4.0
    let step = 0.01
    var settleStart: Double?
    var nextTurnEnd = 0
    var settled: Double?
    var read = 0
    let end = run.timeline.duration
    while Double(read) * step <= end {
        let t = Double(read) * step
        read += 1
        while index < samples.count, samples[index].time <= t {
            switch samples[index] {
            case .gyroscope(let w, let ts): filter.addAngularVelocity(w, time: ts)
            case .acceleration(let a, let ts): filter.addAcceleration(a, time: ts); latestAcceleration = a
            case .magneticField(let m, let ts):
                filter.addMagneticField(m, time: ts)
                if let a = latestAcceleration, case .success(let e) = pipeline.update(magnetic: m, acceleration: a, time: ts) {
                    lastToday = e
                }
            }
            index += 1
        }
        guard t >= warmUp else { continue }
        let segment = run.timeline.segment(at: t)
        // Settling after each turn end, at 10 ms: the first read from which the error stays ≤ 2°
        // until the hold ends.
        if nextTurnEnd < run.turnEnds.count, t >= run.turnEnds[nextTurnEnd] {
            if let start = settleStart { metrics.settleSeconds.append((settled ?? end) - start) }
            settleStart = run.turnEnds[nextTurnEnd]; settled = nil
            nextTurnEnd += 1
        }
        let current = filter.heading(at: t)
        if let start = settleStart {
            if segment.kind == .hold, let h = current, let truth = run.trueHeading(h.axis, at: t) {
                let error = abs(Angle.turn(from: truth, to: h.magneticHeadingDegrees))
                if error <= 2 { settled = settled ?? t } else { settled = nil }
            } else if segment.kind != .hold {
                metrics.settleSeconds.append((settled ?? t) - start); settleStart = nil; settled = nil
            }
        }
        guard (read - 1) % 5 == 0 else { continue }
        metrics.reads += 1
        guard let h = current, let truth = run.trueHeading(h.axis, at: t) else { metrics.untrackedReads += 1; continue }
        let error = Angle.turn(from: truth, to: h.magneticHeadingDegrees)
        if abs(error) <= h.sigmaDegrees { metrics.withinOneSigma += 1 }
        if abs(error) <= 3 * h.sigmaDegrees { metrics.withinThreeSigma += 1 }
        metrics.honestyReads += 1
        let today = lastToday.flatMap { e in
            run.trueHeading(e.axis, at: t).map { Angle.turn(from: $0, to: e.magneticHeadingDegrees) }
        }
        if run.timeline.magnetNear(t) {
            metrics.magnetReads += 1
            metrics.magnetMaximum = max(metrics.magnetMaximum, abs(error))
            if let today { metrics.todayMagnetMaximum = max(metrics.todayMagnetMaximum, abs(today)) }
            continue
        }
        switch segment.kind {
        case .hold:
            metrics.holdErrors.append(error)
            if let today { metrics.todayHoldErrors.append(today) }
        case .turn:
            metrics.turnErrors.append(error)
            if let today { metrics.todayTurnErrors.append(today) }
            if let last = filter.heading, let truthNow = run.trueHeading(last.axis, at: t) {
                metrics.turnErrorsUnextrapolated.append(Angle.turn(from: truthNow, to: last.magneticHeadingDegrees))
            }
        case .walk: metrics.walkErrors.append(error)
        case .lift, .rest: break
        }
    }
    if let start = settleStart { metrics.settleSeconds.append((settled ?? end) - start) }
    return metrics
}

enum FusionSweep {
    /// The filter's settings in the sweep: the defaults, with the reference error of the
    /// simulated unit's calibration residual and misalignment (the daemon adds the calibration's
    /// own term instead).
    static var configuration: AttitudeFilter.Configuration {
        var c = AttitudeFilter.Configuration()
        c.referenceHeadingErrorDegrees = 0.1
        return c
    }

    static func run(scenes: [FusionScene], dips: [SiteDip], seeds: Range<UInt64>, rateHertz: Double)
        -> [String: FusionMetrics] {
        var result: [String: FusionMetrics] = [:]
        for scene in scenes {
            for dip in dips {
                var total = FusionMetrics()
                for seed in seeds {
                    let s = seed &* 7919 &+ UInt64(scene.rawValue.count * 31 + (dip == .low ? 1 : 2))
                    total.merge(measure(FusionRun(scene: scene, dip: dip, seed: s), rateHertz: rateHertz, seed: s))
                }
                result["\(scene.rawValue)/\(dip.rawValue)"] = total
            }
        }
        return result
    }

    static func row(_ name: String, _ m: FusionMetrics) -> String {
        func f(_ x: Double) -> String { x.isFinite ? String(format: "%.2f", x) : "–" }
        func pct(_ x: Double) -> String { String(format: "%.0f %%", 100 * x) }
        let settle = FusionMetrics.percentile(m.settleSeconds, 50) * 1000
        return "| \(name) | \(f(FusionMetrics.rms(m.holdErrors))) | \(f(FusionMetrics.percentile(m.turnErrors, 95))) "
            + "| \(f(FusionMetrics.percentile(m.turnErrorsUnextrapolated, 95))) | \(settle.isFinite ? String(format: "%.0f", settle) : "–") "
            + "| \(m.magnetReads > 0 ? f(m.magnetMaximum) : "–") | \(m.walkErrors.isEmpty ? "–" : f(FusionMetrics.rms(m.walkErrors))) "
            + "| \(pct(m.oneSigmaShare)) | \(pct(m.threeSigmaShare)) | \(m.untrackedReads)/\(m.reads) |"
    }

    static let header = """
        | scene/dip | RMS holds ° | p95 turns ° (extrapolated to the read) | p95 turns ° (last sample) | settled ≤ 2° median ms | max with magnet ° | RMS walking ° | within 1σ | within 3σ | reads without heading |
        |---|---|---|---|---|---|---|---|---|---|
        """
}

@Suite struct FusionSweepTests {
    static let seeds: Range<UInt64> = 1..<13

    /// Prints the sweep's table (BENCHMARKS.md, "Attitude filter") and checks the goals.
    static func check(_ result: [String: FusionMetrics], rateHertz: Double, oneSigmaCeiling: Bool = true) {
        var table = ["Filter fed at \(Int(rateHertz)) Hz, \(seeds.count) units/sites/seeds per row:", FusionSweep.header]
        for key in result.keys.sorted() { table.append(FusionSweep.row(key, result[key]!)) }
        table.append("")
        table.append("Today's path (0.5 s moving average, no gyroscope) on the same samples at \(Int(rateHertz)) Hz:")
        table.append("| scene/dip | RMS holds ° | p95 turns ° | max with magnet ° |")
        table.append("|---|---|---|---|")
        for key in result.keys.sorted() where !key.hasPrefix("walking") {
            let m = result[key]!
            table.append(String(format: "| %@ | %.2f | %.2f | %@ |", key, FusionMetrics.rms(m.todayHoldErrors),
                                FusionMetrics.percentile(m.todayTurnErrors, 95),
                                m.magnetReads > 0 ? String(format: "%.1f", m.todayMagnetMaximum) : "–"))
        }
        print(table.joined(separator: "\n"))
        for (key, m) in result {
            #expect(m.oneSigmaShare >= 0.55, "\(key) at \(rateHertz) Hz: \(m.oneSigmaShare) within 1σ")
            if oneSigmaCeiling { #expect(m.oneSigmaShare <= 0.90, "\(key) at \(rateHertz) Hz: \(m.oneSigmaShare) within 1σ") }
            #expect(m.threeSigmaShare >= 0.97, "\(key) at \(rateHertz) Hz: \(m.threeSigmaShare) within 3σ")
            guard !key.hasPrefix("walking") else { continue }
            #expect(FusionMetrics.rms(m.holdErrors) <= 1, "\(key): RMS over holds")
            #expect(FusionMetrics.percentile(m.turnErrors, 95) <= 5, "\(key): p95 during turns")
            #expect(FusionMetrics.percentile(m.settleSeconds, 50) <= 0.15, "\(key): settling median")
            if m.magnetReads > 0 { #expect(m.magnetMaximum <= 3, "\(key): largest error with the magnet") }
        }
    }

    /// The sweep of issue 30 at 50 Hz: every scene at a low and a high dip over several units,
    /// sites and seeds; the goals per scene.
    @Test func sweepMeetsTheGoalsAtFiftyHertz() {
        let result = FusionSweep.run(scenes: FusionScene.allCases, dips: SiteDip.allCases, seeds: Self.seeds, rateHertz: 50)
        Self.check(result, rateHertz: 50)
    }

    /// The same at 100 Hz (every goal holds) and at 20 Hz: the accuracy goals and the 3σ share
    /// hold, but the sigma is too cautious for the 90 % ceiling in one scene (table/high, 93 %
    /// within 1σ when measured), so 20 Hz is not the rate that meets every goal.
    @Test(arguments: [20.0, 100.0])
    func sweepAtOtherRates(_ rate: Double) {
        let result = FusionSweep.run(scenes: FusionScene.allCases, dips: SiteDip.allCases, seeds: Self.seeds, rateHertz: rate)
        Self.check(result, rateHertz: rate, oneSigmaCeiling: rate >= 50)
    }
}
