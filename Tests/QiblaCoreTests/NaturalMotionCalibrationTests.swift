// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import QiblaCore

/// Issue 22: calibration that a person's natural hand motion achieves, at every latitude, with an
/// honest needle while it learns. Held-out units moved by a model of a person (`PersonMotion`),
/// at sites whose dips span −73° to +75°; nothing in the simulated world is drawn from the
/// estimator's or the error model's distributions.
@Suite struct NaturalMotionCalibrationTests {
    static let unitsPerSite = 3

    struct Tally {
        var count = 0, withinOne = 0, withinThree = 0, highAboveTen = 0
        mutating func add(_ s: PersonScene.Sample) {
            count += 1
            if s.realErrorDegrees <= s.error.headingErrorDegrees { withinOne += 1 }
            if s.realErrorDegrees <= 3 * s.error.headingErrorDegrees { withinThree += 1 }
            if s.error.accuracy == .high, s.realErrorDegrees > 10 { highAboveTen += 1 }
        }
        var one: Double { Double(withinOne) / Double(max(1, count)) }
        var three: Double { Double(withinThree) / Double(max(1, count)) }
        var line: String {
            "n=\(count) ≤1σ \((one * 1000).rounded() / 10) %, ≤3σ \((three * 1000).rounded() / 10) %, high>10° \(highAboveTen)"
        }
    }

    /// ±45° at every site and unit: a stage accepted within 30 s; then heading RMS ≤ 2°, max ≤ 5°
    /// over still poses at tilts ≤ 30°; honest throughout.
    @Test(arguments: SimulatedSite.issue22.map(\.name))
    func tilt45IsAcceptedWithinThirtySecondsAndHeadsWithinTwoDegrees(siteName: String) throws {
        let site = try #require(SimulatedSite.issue22.first { $0.name == siteName })
        var honesty = Tally(), learning = Tally()
        for unit in 0..<Self.unitsPerSite {
            let scene = PersonScene(site: site, motion: .tilt45, seed: 2200 + UInt64(unit) * 31 + UInt64(site.name.count),
                                    learnSeconds: 30, poseSeconds: 60)
            let accepted = scene.firstAcceptedSeconds
            let settled = scene.settledAfterAcceptance
            let rms = PersonScene.rms(settled), maximum = settled.map(\.realErrorDegrees).max() ?? .nan
            print("natural \(site.name) dip \(Int(site.model.inclinationDegrees.rounded()))° unit \(unit) ±45°: "
                  + "accepted \(accepted.map { "\(($0 * 10).rounded() / 10) s" } ?? "never") "
                  + "(\(scene.firstStage?.rawValue ?? "-") → \(scene.finalStage?.rawValue ?? "-"), \(scene.refinements) refinements), "
                  + "RMS \((rms * 100).rounded() / 100)°, max \((maximum * 100).rounded() / 100)° over \(settled.count)")
            #expect(accepted != nil && accepted! <= 30, "\(site.name) unit \(unit): accepted at \(String(describing: accepted))")
            #expect(settled.count > 500, "\(site.name) unit \(unit)")
            #expect(rms <= 2 && maximum <= 5, "\(site.name) unit \(unit): RMS \(rms)°, max \(maximum)°")
            for s in scene.samples {
                honesty.add(s)
                if s.state == .collecting { learning.add(s) }
            }
        }
        print("natural \(site.name) ±45° honesty: all \(honesty.line); learning \(learning.line)")
        #expect(honesty.three >= 0.99 && honesty.highAboveTen == 0, "\(site.name): \(honesty.line)")
    }

    /// ±70° motion (wider tilt) also calibrates, within 30 s.
    @Test func tilt70IsAcceptedAtEverySite() {
        for (index, site) in SimulatedSite.issue22.enumerated() {
            let scene = PersonScene(site: site, motion: .tilt70, seed: 7000 + UInt64(index), learnSeconds: 30, poseSeconds: 30)
            let settled = scene.settledAfterAcceptance
            let rms = PersonScene.rms(settled)
            print("natural \(site.name) ±70°: accepted \(scene.firstAcceptedSeconds.map { "\(($0 * 10).rounded() / 10) s" } ?? "never") "
                  + "(\(scene.finalStage?.rawValue ?? "-")), RMS \((rms * 100).rounded() / 100)°")
            #expect(scene.firstAcceptedSeconds.map { $0 <= 30 } == true, "\(site.name)")
            #expect(rms <= 2, "\(site.name): RMS \(rms)°")
        }
    }

    /// Flat-only turning at every site: a good needle while flat, an error that grows with tilt and
    /// stays honest (see also `CalibrationLifecycleTests`).
    @Test func flatOnlyTurningIsGoodFlatAndHonestTilted() {
        for (index, site) in SimulatedSite.issue22.enumerated() {
            let flat = PersonScene(site: site, motion: .flat, seed: 9100 + UInt64(index), learnSeconds: 40, poseSeconds: 40,
                                   poseTiltDegrees: 0)
            let still = flat.samples.filter { $0.settled }
            let flatRMS = PersonScene.rms(still)
            let tilted = PersonScene(site: site, motion: .flat, seed: 9100 + UInt64(index), learnSeconds: 40, poseSeconds: 40,
                                     poseTiltDegrees: 45)
            let leaning = tilted.samples.filter { $0.settled }
            func meanClaim(_ s: [PersonScene.Sample]) -> Double {
                s.map(\.error.headingErrorDegrees).reduce(0, +) / Double(max(1, s.count))
            }
            var honesty = Tally()
            for s in flat.samples + tilted.samples { honesty.add(s) }
            print("natural \(site.name) flat-only: \(flat.calibrator.state), RMS flat \((flatRMS * 100).rounded() / 100)°, "
                  + "HeadingError flat \((meanClaim(still) * 10).rounded() / 10)° tilted \((meanClaim(leaning) * 10).rounded() / 10)°, "
                  + "tilted RMS \((PersonScene.rms(leaning) * 100).rounded() / 100)°, hint \(flat.calibrator.hint); \(honesty.line)")
            #expect(still.count > 200 && flatRMS <= 3, "\(site.name): flat RMS \(flatRMS)°")
            #expect(meanClaim(still) < 15, "\(site.name): the flat needle is usable and said to be")
            if tilted.calibrator.state != .calibrated {
                #expect(meanClaim(leaning) > meanClaim(still), "\(site.name): HeadingError grows with tilt")
            }
            #expect(honesty.three >= 0.99 && honesty.highAboveTen == 0, "\(site.name): \(honesty.line)")
        }
    }

    /// Every scene and every phase together: real error ≤ HeadingError for 55–85 % of samples,
    /// ≤ 3× for ≥ 99 %, never `high` above 10°.
    @Test func headingErrorIsHonestOverEveryPhase() {
        var all = Tally(), learning = Tally(), accepted = Tally()
        var seed: UInt64 = 5000
        for site in SimulatedSite.issue22 {
            for motion in PersonMotion.allCases {
                seed += 1
                let scene = PersonScene(site: site, motion: motion, seed: seed, learnSeconds: 30, poseSeconds: 30,
                                        poseTiltDegrees: motion == .flat ? 0 : 30)
                for s in scene.samples {
                    all.add(s)
                    if s.state == .collecting { learning.add(s) } else { accepted.add(s) }
                }
            }
        }
        print("natural honesty: all \(all.line); learning \(learning.line); accepted \(accepted.line)")
        #expect(all.count > 20_000)
        #expect(all.one >= 0.55 && all.one <= 0.85, "\(all.line)")
        #expect(all.three >= 0.99, "\(all.line)")
        #expect(all.highAboveTen == 0)
        #expect(learning.three >= 0.99 && accepted.three >= 0.99)
    }
}
