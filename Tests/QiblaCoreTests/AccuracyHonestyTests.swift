// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import QiblaCore

/// Is `HeadingError` an honest one-sigma figure? Simulated runs with known truth over several sites
/// (including Reykjavik and the caution-zone Resolute), sensors, calibration states and
/// interference; the truth has a declination anomaly drawn from the WMM2025 uncertainty and an
/// accelerometer bias drawn from `HeadingErrorModel`'s figure, so the model's assumptions are the
/// simulated world's, and every other error (noise, fit error, smoothing lag, tilt) is real.
@Suite struct AccuracyHonestyTests {
    enum Scenario: String, CaseIterable {
        case calibrated, factory, restored, uncalibrated, interference, noLocation
    }

    struct Tally {
        var count = 0, withinOne = 0, withinThree = 0, highAboveTen = 0
        var sumReal2 = 0.0, sumTerms = [0.0, 0.0, 0.0, 0.0, 0.0], settled = 0
        mutating func add(_ h: SimulatedHeading) {
            count += 1
            if h.settled, h.error.accuracy != .unreliable {
                settled += 1
                sumReal2 += h.realErrorDegrees * h.realErrorDegrees
                let t = h.error.terms
                for (i, v) in [t.smoothingDegrees, t.calibrationDegrees, t.tiltDegrees, t.declinationDegrees,
                               t.disturbanceDegrees].enumerated() { sumTerms[i] += v * v }
            }
            if h.realErrorDegrees <= h.error.headingErrorDegrees { withinOne += 1 }
            if h.realErrorDegrees <= 3 * h.error.headingErrorDegrees { withinThree += 1 }
            if h.error.accuracy == .high, h.realErrorDegrees > 10 { highAboveTen += 1 }
        }
        var one: Double { Double(withinOne) / Double(max(1, count)) }
        var three: Double { Double(withinThree) / Double(max(1, count)) }
    }

    static func run(_ scenario: Scenario, site baseSite: SimulatedSite, seed: UInt64) -> [SimulatedHeading] {
        var rng = SeededGenerator(seed: seed)
        let model = HeadingErrorModel()
        var site = baseSite
        site.declinationAnomalyDegrees = rng.gaussian()
            * model.declinationUncertaintyDegrees(horizontalNanotesla: site.model.horizontalNanotesla)
        var sensor = scenario == .factory ? SimulatedSensor.factory(&rng) : SimulatedSensor.librem(&rng)
        sensor.accelerometerBias = Vector3(rng.gaussian(), rng.gaussian(), rng.gaussian())
            * model.accelerometerErrorMetresPerSecondSquared
        var calibrator = MagnetometerCalibrator()
        calibrator.setExpectedField(scenario == .noLocation ? nil : site.model)
        switch scenario {
        case .calibrated, .interference, .noLocation:
            runCalibration(&calibrator, sensor: sensor, site: site, seconds: 40, rng: &rng)
        case .restored:
            var first = MagnetometerCalibrator()
            first.setExpectedField(site.model)
            runCalibration(&first, sensor: sensor, site: site, seconds: 40, rng: &rng)
            if let fit = first.fit { calibrator.restore(fit) }
        case .factory, .uncalibrated:
            break
        }
        var pipeline = HeadingPipeline()
        let earth = site.worldFieldMicrotesla
        return runPoses(&calibrator, &pipeline, sensor: sensor, site: site, seconds: 60, start: 100, rng: &rng,
                        model: model, locationKnown: scenario != .noLocation,
                        extraWorldField: { scenario == .interference && $0 >= 20 && $0 < 35 ? earth * 0.4 : .zero })
    }

    @Test func headingErrorIsAnHonestOneSigma() {
        let sites: [SimulatedSite] = [.london, .reykjavik, .jakarta, .capeTown, .resolute]
        var all = Tally(), reliable = Tally()
        var byScenario: [Scenario: Tally] = [:], bySite: [String: Tally] = [:]
        var seed: UInt64 = 1000
        for site in sites {
            for scenario in Scenario.allCases {
                for _ in 0..<2 {
                    seed += 1
                    for h in Self.run(scenario, site: site, seed: seed) {
                        all.add(h)
                        if h.error.accuracy != .unreliable { reliable.add(h) }
                        byScenario[scenario, default: Tally()].add(h)
                        bySite[site.name, default: Tally()].add(h)
                    }
                }
            }
        }
        func line(_ name: String, _ t: Tally) -> String {
            "\(name): n=\(t.count) ≤1σ \((t.one * 1000).rounded() / 10) %, ≤3σ \((t.three * 1000).rounded() / 10) %, high>10° \(t.highAboveTen)"
                + " | settled RMS real \((t.sumReal2 / Double(max(1, t.settled))).squareRoot()) terms \(t.sumTerms.map { ($0 / Double(max(1, t.settled))).squareRoot() })"
        }
        print(line("honesty all", all))
        print(line("honesty reported-reliable", reliable))
        for s in Scenario.allCases { print(line("  scenario \(s.rawValue)", byScenario[s] ?? Tally())) }
        for s in sites { print(line("  site \(s.name)", bySite[s.name] ?? Tally())) }
        #expect(all.count > 50_000)
        #expect(all.one >= 0.55 && all.one <= 0.85)
        #expect(all.three >= 0.99)
        // Issue 10 asks for "never". Before `high` was withheld while turning (AccuracyLimits.turning)
        // one sample of ≈ 54,000 broke it (Reykjavik, mid-turn, with a ≈ 2.5σ accelerometer bias:
        // 8.8° instantaneous error plus 3° of lag against an estimate of 4.3°).
        #expect(all.highAboveTen == 0, "high must never be reported with a real error above 10°")
        #expect(reliable.one >= 0.55 && reliable.one <= 0.85)
        #expect(reliable.three >= 0.99)
    }
}
