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
    /// Turn errors of a heading published at 10, 20 and 25 Hz (each signal carrying the heading
    /// at its own instant) and read at every 10 ms tick in between (any phase): what a client
    /// sees at `max-signal-rate` 10, 20, 25.
    var turnErrorsPublished: [Int: [Double]] = [:]
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
    /// Times `AttitudeFilter`'s recovery rules re-seeded or re-levelled the attitude (a motion
    /// the gyroscope missed: none happens in these scenes) and runs.
    var recoveries = 0
    var runs = 0

    mutating func merge(_ o: FusionMetrics) {
        holdErrors += o.holdErrors; turnErrors += o.turnErrors; turnErrorsUnextrapolated += o.turnErrorsUnextrapolated
        walkErrors += o.walkErrors; settleSeconds += o.settleSeconds
        turnErrorsPublished.merge(o.turnErrorsPublished) { $0 + $1 }
        magnetMaximum = max(magnetMaximum, o.magnetMaximum); magnetReads += o.magnetReads
        withinOneSigma += o.withinOneSigma; withinThreeSigma += o.withinThreeSigma; honestyReads += o.honestyReads
        untrackedReads += o.untrackedReads; reads += o.reads
        todayHoldErrors += o.todayHoldErrors; todayTurnErrors += o.todayTurnErrors
        todayMagnetMaximum = max(todayMagnetMaximum, o.todayMagnetMaximum)
        recoveries += o.recoveries; runs += o.runs
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
    measure(run, rateHertz: rateHertz, seed: seed, estimator: AttitudeFilter(configuration: configuration))
}

/// What the sweep needs of an attitude estimator (the Kalman filter, or the complementary filter
/// it was compared with).
protocol AttitudeEstimator {
    @discardableResult mutating func addAngularVelocity(_ omega: Vector3, time: Double) -> HeadingRejection?
    @discardableResult mutating func addAcceleration(_ a: Vector3, time: Double) -> HeadingRejection?
    @discardableResult mutating func addMagneticField(_ m: Vector3, time: Double, expected: ExpectedMagneticField?,
                                                      disturbed: Bool) -> HeadingRejection?
    func heading(at time: Double) -> FusedHeading?
    var heading: FusedHeading? { get }
}

extension AttitudeFilter: AttitudeEstimator {
    @discardableResult mutating func addMagneticField(_ m: Vector3, time: Double, expected: ExpectedMagneticField?,
                                                      disturbed: Bool) -> HeadingRejection? {
        addMagneticField(m, time: time, expected: expected, disturbed: disturbed, correctionSigmaDegrees: 0, learnsBias: true)
    }
}

func measure<Estimator: AttitudeEstimator>(_ run: FusionRun, rateHertz: Double, seed: UInt64,
                                           estimator: Estimator) -> FusionMetrics {
    var samples: [FusionSample] = []
    run.samples(rateHertz: rateHertz, seed: seed) { samples.append($0) }
    var filter = estimator
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
    let signalRates = [10, 20, 25]
    var published: [Int: FusedHeading] = [:]
    while Double(read) * step <= end {
        let t = Double(read) * step
        read += 1
        while index < samples.count, samples[index].time <= t {
            switch samples[index] {
            case .gyroscope(let w, let ts): filter.addAngularVelocity(w, time: ts)
            case .acceleration(let a, let ts): filter.addAcceleration(a, time: ts); latestAcceleration = a
            case .magneticField(let m, let ts):
                filter.addMagneticField(m, time: ts, expected: nil, disturbed: false)
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
        // Signals on the 10 ms grid: every 10, 5 and 4 reads.
        for rate in signalRates where (read - 1) % (100 / rate) == 0 { published[rate] = current }
        // A client reads at any phase of the signals: every 10 ms tick of a turn counts.
        if segment.kind == .turn, !run.timeline.magnetNear(t) {
            for rate in signalRates {
                if let p = published[rate], let truthNow = run.trueHeading(p.axis, at: t) {
                    metrics.turnErrorsPublished[rate, default: []].append(Angle.turn(from: truthNow, to: p.magneticHeadingDegrees))
                }
            }
        }
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
        if h.sigmaDegrees.isFinite {
            if abs(error) <= h.sigmaDegrees { metrics.withinOneSigma += 1 }
            if abs(error) <= 3 * h.sigmaDegrees { metrics.withinThreeSigma += 1 }
            metrics.honestyReads += 1
        }
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
    if let kalman = filter as? AttitudeFilter { metrics.recoveries = kalman.attitudeRecoveryCount }
    metrics.runs = 1
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

    static func run(scenes: [FusionScene], dips: [SiteDip], seeds: Range<UInt64>, rateHertz: Double,
                    complementary: Bool = false) -> [String: FusionMetrics] {
        var result: [String: FusionMetrics] = [:]
        for scene in scenes {
            for dip in dips {
                var total = FusionMetrics()
                for seed in seeds {
                    let s = seed &* 7919 &+ UInt64(scene.rawValue.count * 31 + (dip == .low ? 1 : 2))
                    let run = FusionRun(scene: scene, dip: dip, seed: s)
                    total.merge(complementary
                        ? measure(run, rateHertz: rateHertz, seed: s, estimator: ComplementaryAttitude())
                        : measure(run, rateHertz: rateHertz, seed: s))
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
            #expect(m.recoveries == 0, "\(key) at \(rateHertz) Hz: the recovery rules fired \(m.recoveries) times on motions the gyroscope saw")
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
        // What a client sees between signals: the heading at each signal's instant, held.
        var lines = ["p95 of the turn error as a client sees it (read at any phase), sampled at 50 Hz, signalled at (max-signal-rate):",
                     "| scene/dip | 10 Hz | 20 Hz | 25 Hz | fresh at every read |", "|---|---|---|---|---|"]
        for key in result.keys.sorted() where !key.hasPrefix("walking") {
            let m = result[key]!
            let p = [10, 20, 25].map { String(format: "%.1f", FusionMetrics.percentile(m.turnErrorsPublished[$0] ?? [], 95)) }
            lines.append("| \(key) | \(p[0]) | \(p[1]) | \(p[2]) | \(String(format: "%.1f", FusionMetrics.percentile(m.turnErrors, 95))) |")
        }
        print(lines.joined(separator: "\n"))
        print("recoveries (a motion the gyroscope missed) at 50 Hz: " + result.keys.sorted().map {
            "\($0) \(result[$0]!.recoveries) in \(result[$0]!.runs) runs"
        }.joined(separator: ", "))
    }

    /// The design choice (BENCHMARKS.md): a complementary filter with scheduled gains on the same
    /// runs at 50 Hz, for its accuracy (it has no sigma of its own). Printed, not asserted.
    @Test func complementaryFilterForComparison() {
        let result = FusionSweep.run(scenes: FusionScene.allCases, dips: SiteDip.allCases, seeds: Self.seeds,
                                     rateHertz: 50, complementary: true)
        var table = ["Complementary filter (scheduled gains) at 50 Hz:", FusionSweep.header]
        for key in result.keys.sorted() { table.append(FusionSweep.row(key, result[key]!)) }
        print(table.joined(separator: "\n"))
        #expect(result.count == FusionScene.allCases.count * SiteDip.allCases.count)
    }

    /// The same at 100 Hz (every goal holds) and at 20 Hz: the accuracy goals and the 3σ share
    /// hold, but the sigma is too cautious for the 90 % ceiling in one scene (table/high, 92–93 %
    /// within 1σ when measured), so 20 Hz is not the rate that meets every goal.
    @Test(arguments: [20.0, 100.0])
    func sweepAtOtherRates(_ rate: Double) {
        let result = FusionSweep.run(scenes: FusionScene.allCases, dips: SiteDip.allCases, seeds: Self.seeds, rateHertz: rate)
        Self.check(result, rateHertz: rate, oneSigmaCeiling: rate >= 50)
    }
}

/// A complementary filter with scheduled gains (Mahony, Hamel & Pflimlin 2008, "Nonlinear
/// complementary filters on the special orthogonal group", with the corrections split as in
/// `AttitudeFilter`: gravity for the tilt, the magnetometer for the yaw only), for the design
/// comparison. Gains: the tilt pulled towards the accelerometer with a 1 s time constant while
/// ||a| − g₀| < 0.5 m/s² and |ω| < 0.5 rad/s (else not at all), the yaw towards the magnetometer
/// with 2 s, the bias integrated from both (k_I = 0.02/s); a magnetic disturbance (strength off by
/// 8 % or dip by 5° from a learned reference) holds the yaw. No sigma: it reports NaN.
struct ComplementaryAttitude: AttitudeEstimator {
    var attitude = Quaternion.identity
    var bias = Vector3.zero
    var seeded = false
    var time: Double?
    var lastGyro: Double?
    var rate = Vector3.zero
    var latestA: Vector3?
    var latestM: Vector3?
    var referenceField: Double?
    var referenceDip: Double?
    var selector = HeadingAxisSelector()

    mutating func addAngularVelocity(_ omega: Vector3, time t: Double) -> HeadingRejection? {
        if seeded, let last = lastGyro, t - last <= 0.25, let t0 = time, t > t0 {
            attitude = (attitude * Quaternion(rotationVector: (omega - bias) * (t - t0))).normalized ?? attitude
        } else if let a = latestA, let m = latestM,
                  case .success(let o) = TiltCompensation.orientation(magnetic: m, acceleration: a),
                  let q = Quaternion(rotationMatrix: Matrix3(rows: o.north, o.east, -o.up)) {
            attitude = q; seeded = true; selector.reset()
        }
        lastGyro = t; rate = omega; time = max(time ?? t, t)
        updateAxis()
        return nil
    }

    mutating func advance(_ t: Double) -> Bool {
        guard seeded, let last = lastGyro, t - last <= 0.25, let t0 = time else { return false }
        if t > t0 { attitude = (attitude * Quaternion(rotationVector: (rate - bias) * (t - t0))).normalized ?? attitude; time = t }
        return true
    }

    mutating func correct(_ worldError: Vector3, gain: Double) {
        attitude = (Quaternion(rotationVector: worldError * gain) * attitude).normalized ?? attitude
        bias -= attitude.inverseRotate(worldError) * (0.02 * 0.02)
    }

    mutating func addAcceleration(_ a: Vector3, time t: Double) -> HeadingRejection? {
        latestA = a
        guard advance(t), abs(a.length - 9.80665) < 0.5, (rate - bias).length < 0.5, let d = a.normalized else { return nil }
        let r = attitude.rotate(d) - Vector3(0, 0, -1)
        correct(Vector3(-r.y, r.x, 0), gain: 0.02 / 1.0)
        updateAxis()
        return nil
    }

    mutating func addMagneticField(_ m: Vector3, time t: Double, expected: ExpectedMagneticField?, disturbed: Bool) -> HeadingRejection? {
        latestM = m
        guard advance(t) else { return nil }
        let w = attitude.rotate(m)
        let h = hypot(w.x, w.y)
        let dip = Angle.degrees(atan2(w.z, h))
        let f0 = referenceField ?? m.length, i0 = referenceDip ?? dip
        guard abs(m.length - f0) <= 0.08 * f0, abs(dip - i0) <= 5 else { return nil }
        referenceField = f0 + 0.002 * (m.length - f0); referenceDip = i0 + 0.002 * (dip - i0)
        correct(Vector3(0, 0, -atan2(w.y, w.x)), gain: 0.02 / 2.0)
        return nil
    }

    mutating func updateAxis() {
        let up = attitude.inverseRotate(Vector3(0, 0, -1))
        selector.update(tiltDegrees: Angle.degrees(atan2(hypot(up.x, up.y), up.z)))
    }

    func heading(at t: Double) -> FusedHeading? {
        guard seeded, let last = lastGyro, t - last <= 0.25, let t0 = time else { return nil }
        let q = (attitude * Quaternion(rotationVector: (rate - bias) * (t - t0))).normalized ?? attitude
        let v = q.rotate(selector.axis == .back ? Vector3(0, 0, -1) : Vector3(0, 1, 0))
        guard selector.axis != .none, hypot(v.x, v.y) > 1e-7 else { return nil }
        let up = q.inverseRotate(Vector3(0, 0, -1))
        return FusedHeading(magneticHeadingDegrees: Angle.normalized360(Angle.degrees(atan2(v.y, v.x))), sigmaDegrees: .nan,
                            axis: selector.axis, tiltDegrees: Angle.degrees(atan2(hypot(up.x, up.y), up.z)),
                            timeSeconds: t, magneticState: .tracking)
    }

    var heading: FusedHeading? { time.flatMap { heading(at: $0) } }
}
