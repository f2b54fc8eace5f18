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

    /// ±45° at every site and unit. Where the dip is below 60° a stage is accepted within 30 s;
    /// at higher dips a hand that never tilts beyond 45° leaves the hard iron along the screen's
    /// normal loose (the field stays within a cap of about 60° around it), and some units are not
    /// yet determined to 2° at 30° of tilt after 30 s: those keep an honest provisional needle and
    /// a hint to tilt. After acceptance the heading over still poses at tilts ≤ 30° is within 2° RMS
    /// and 5° at most; where the rest of the error budget (the accelerometer's bias at a steep dip,
    /// the noise in a weak horizontal field) already costs more, measured by the same unit with its
    /// true calibration (the oracle), the calibration's own share √(RMS² − oracle²) is within 2°.
    /// Its maximum stays within 5°, or within 2.5 times its RMS where that is larger.
    @Test(arguments: SimulatedSite.issue22.map(\.name))
    func tilt45IsAcceptedWithinThirtySecondsAndHeadsWithinTwoDegrees(siteName: String) throws {
        let site = try #require(SimulatedSite.issue22.first { $0.name == siteName })
        let highDip = abs(site.model.inclinationDegrees) >= 60
        var honesty = Tally()
        for unit in 0..<Self.unitsPerSite {
            let scene = PersonScene(site: site, motion: .tilt45, seed: 2200 + UInt64(unit) * 31 + UInt64(site.name.count),
                                    learnSeconds: 30, poseSeconds: 60)
            let accepted = scene.firstAcceptedSeconds.flatMap { $0 <= 30 ? $0 : nil }
            let poses = scene.samples.filter(\.settled)
            let afterAcceptance = scene.settledAfterAcceptance
            let judged = accepted == nil ? poses : afterAcceptance
            let rms = PersonScene.rms(judged), oracle = PersonScene.oracleRMS(judged)
            let maximum = judged.map(\.realErrorDegrees).max() ?? .nan
            let claimed = judged.map(\.error.headingErrorDegrees).reduce(0, +) / Double(max(1, judged.count))
            print("natural \(site.name) dip \(Int(site.model.inclinationDegrees.rounded()))° unit \(unit) ±45°: "
                  + "accepted \(scene.firstAcceptedSeconds.map { "\(($0 * 10).rounded() / 10) s" } ?? "not within \(Int(scene.samples.last?.time ?? 0)) s") "
                  + "(\(scene.firstStage?.rawValue ?? "-") → \(scene.finalStage?.rawValue ?? "-"), \(scene.refinements) refinements); "
                  + "still poses \(accepted == nil ? "(provisional)" : "after acceptance"): RMS \((rms * 100).rounded() / 100)° "
                  + "(oracle \((oracle * 100).rounded() / 100)°), max \((maximum * 100).rounded() / 100)°, "
                  + "mean HeadingError \((claimed * 10).rounded() / 10)° over \(judged.count); hint \(scene.calibrator.hint)")
            if !highDip {
                #expect(accepted != nil, "\(site.name) unit \(unit): accepted at \(String(describing: scene.firstAcceptedSeconds))")
            }
            if accepted != nil {
                #expect(afterAcceptance.count > 500, "\(site.name) unit \(unit)")
                let share = PersonScene.calibrationShare(judged)
                #expect(rms <= 2 || share <= 2, "\(site.name) unit \(unit): RMS \(rms)° (oracle \(oracle)°)")
                #expect(maximum <= max(5, 2.5 * rms), "\(site.name) unit \(unit): max \(maximum)°")
            } else {
                // Not accepted within 30 s: the provisional needle is published, usable and says how
                // good, and the hint asks for the missing motion.
                let beforeAcceptance = poses.filter { $0.state == .collecting }
                let provisionalThroughout = beforeAcceptance.allSatisfy { $0.provisional }
                #expect(provisionalThroughout, "\(site.name) unit \(unit): a provisional estimate is in use")
                #expect(poses.count > 500 && claimed < 20, "\(site.name) unit \(unit): HeadingError \(claimed)°")
                #expect(PersonScene.calibrationShare(judged) <= 2, "\(site.name) unit \(unit): RMS \(rms)° (oracle \(oracle)°)")
                let asked: Set<CalibrationHint> = [.tiltForwardBack, .tiltLeftRight, .move]
                #expect(asked.contains(scene.hintAfterLearning), "\(site.name) unit \(unit): hint \(scene.hintAfterLearning)")
            }
            for s in scene.samples { honesty.add(s) }
        }
        print("natural \(site.name) ±45° honesty: \(honesty.line)")
        // Per site (the issue's bar is over every scene together, in `headingErrorIsHonestOverEveryPhase`).
        #expect(honesty.three >= 0.98 && honesty.highAboveTen == 0, "\(site.name): \(honesty.line)")
    }

    /// ±70° motion (wider tilt) also calibrates, within 30 s.
    @Test func tilt70IsAcceptedAtEverySite() {
        for (index, site) in SimulatedSite.issue22.enumerated() {
            let scene = PersonScene(site: site, motion: .tilt70, seed: 7000 + UInt64(index), learnSeconds: 30, poseSeconds: 30)
            let settled = scene.settledAfterAcceptance
            let rms = PersonScene.rms(settled), share = PersonScene.calibrationShare(settled)
            print("natural \(site.name) ±70°: accepted \(scene.firstAcceptedSeconds.map { "\(($0 * 10).rounded() / 10) s" } ?? "never") "
                  + "(\(scene.finalStage?.rawValue ?? "-")), RMS \((rms * 100).rounded() / 100)° "
                  + "(oracle \((PersonScene.oracleRMS(settled) * 100).rounded() / 100)°)")
            #expect(scene.firstAcceptedSeconds.map { $0 <= 30 } == true, "\(site.name)")
            #expect(rms <= 2 || share <= 2, "\(site.name): RMS \(rms)°, calibration's share \(share)°")
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
            if flat.calibrator.state == .collecting {
                let asked: Set<CalibrationHint> = [.tiltForwardBack, .tiltLeftRight]
                #expect(asked.contains(flat.calibrator.hint), "\(site.name): a flat-only phone is asked to tilt, not \(flat.calibrator.hint)")
            }
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
