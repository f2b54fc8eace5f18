// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import QiblaCore

/// Issue 33: is `HeadingError` honest after a hand-motion calibration at a low dip? Held-out units
/// (`PersonScene`: the simulated world draws its own crustal anomaly, ±1° of declination, ±1° of
/// dip, ±2 % of intensity, and its own sensor errors) calibrated by natural ±45° motion for 30 s,
/// then held still at 60 poses within 30° of tilt; the settled samples after acceptance.
///
/// What the unit at a dip of −9° showed (52 % within 1σ, 93 % within 3×) is not the
/// calibration's sigma: with the unit's true calibration (the oracle) the same samples have the
/// same RMS error within 0.03°, so the calibration's own share √(RMS² − oracle²) is ≈ 0.1–0.2°
/// while its term in the sigma is 0.3–0.6°. What dominates at a low dip, where the horizontal
/// field is strong and the tilt term's tan|I| small, is the place's crustal declination anomaly,
/// one constant offset for every sample of a unit: a unit whose site drew 0.8° against the WMM's
/// 0.29° (its D uncertainty at H ≈ 40 µT) is outside 1σ nearly always, one that drew 0.2° inside
/// nearly always. No per-sample sigma makes one unit's share right; over units it is: the goals
/// hold for the units together, at a low and a high dip.
@Suite struct LowDipAccuracyTests {
    /// Dip −9° (WMM2025, 2026.5).
    static let kualaLumpur = SimulatedSite("Kuala Lumpur", latitude: 3.139, longitude: 101.6869)
    static let units: ClosedRange<UInt64> = 1...10

    struct Coverage {
        var count = 0, withinOne = 0, withinThree = 0
        /// Per unit: the calibration's share of its RMS error, and the mean calibration term of its sigma.
        var calibrationShares: [(share: Double, term: Double)] = []
        var one: Double { Double(withinOne) / Double(max(1, count)) }
        var three: Double { Double(withinThree) / Double(max(1, count)) }
    }

    static func coverage(at site: SimulatedSite) -> Coverage {
        var c = Coverage()
        for unit in units {
            let scene = PersonScene(site: site, motion: .tilt45, seed: 7700 + unit, learnSeconds: 30, poseSeconds: 240)
            let settled = scene.settledAfterAcceptance
            for s in settled {
                c.count += 1
                if s.realErrorDegrees <= s.error.headingErrorDegrees { c.withinOne += 1 }
                if s.realErrorDegrees <= 3 * s.error.headingErrorDegrees { c.withinThree += 1 }
            }
            var rng = SeededGenerator(seed: 7700 + unit)
            let world = AnomalousSite(site, rng: &rng)
            let share = PersonScene.calibrationShare(settled)
            let term = settled.map(\.error.terms.calibrationDegrees).reduce(0, +) / Double(max(1, settled.count))
            c.calibrationShares.append((share, term))
            let sigma = settled.map(\.error.headingErrorDegrees).reduce(0, +) / Double(max(1, settled.count))
            let one = Double(settled.filter { $0.realErrorDegrees <= $0.error.headingErrorDegrees }.count) / Double(max(1, settled.count))
            print("\(site.name) dip \(Int(site.model.inclinationDegrees.rounded()))° unit \(unit): accepted \(scene.firstAcceptedSeconds ?? .nan) s, "
                  + "RMS \(PersonScene.rms(settled)), oracle \(PersonScene.oracleRMS(settled)), calibration's share \(share), "
                  + "declination anomaly \(world.site.declinationAnomalyDegrees)°; mean sigma \(sigma) (calibration "
                  + "\(term), declination "
                  + "\(settled.first?.error.terms.declinationDegrees ?? .nan)); within 1σ \(one)")
        }
        print("\(site.name): n=\(c.count) within 1σ \(c.one), within 3σ \(c.three)")
        return c
    }

    /// Dip −9° and London's 67°.
    @Test(arguments: ["Kuala Lumpur", "London"])
    func headingErrorIsHonestOverUnitsAtLowAndHighDip(name: String) {
        let site = name == "London" ? SimulatedSite.london : Self.kualaLumpur
        let c = Self.coverage(at: site)
        #expect(c.count > 10_000)
        #expect(c.one >= 0.55 && c.one <= 0.90, "\(site.name): \(c.one) within 1σ")
        #expect(c.three >= 0.97, "\(site.name): \(c.three) within 3σ")
        // At every unit the calibration's term in the sigma covers the calibration's own share of
        // the error: what misses at a low dip is not the calibration.
        #expect(c.calibrationShares.allSatisfy { $0.share <= $0.term }, "\(c.calibrationShares)")
    }
}
