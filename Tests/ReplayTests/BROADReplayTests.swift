// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import QiblaDaemon
import Testing

/// Issue 36: recordings nobody here wrote. Three BROAD trials (a real 9-axis IMU with optical
/// truth; `Tests/Recordings/BROAD/README.md`), decimated to the daemon's rate with a gyroscope,
/// through the daemon's own model, scored with BROAD's metric beside VQF on the same samples.
@Suite struct BROADReplayTests {
    @Test(arguments: BROADRecording.names)
    func theFusedHeadingHoldsAgainstTheOpticalTruth(name: String) throws {
        let recording = try BROADRecording(name)
        let score = try recording.replay()
        print("BROAD \(name): \(score); VQF heading \(recording.vqfHeadingRMSE)°, inclination \(recording.vqfInclinationRMSE)°")
        #expect(score.scored >= score.motion * 9 / 10, "a heading at nearly every motion instant")
        // HeadingError's honesty: at least 55 % of the errors within 1× and 97 % within 3×, and
        // hardly ever confidently wrong (beyond 3× while it says 10° or less), never by more than
        // 10°. (Issue 36 also asks for at most 90 % within 1×; the four fixtures stand at 94–100 %,
        // too cautious on this IMU: the sigma's floor is the 1 µT assumed for a sensor without a
        // fit whose field matches, 3.1° at Berlin, where the slow trials' errors are 0.5–0.8° at
        // the median, and a sigma scaled down until BROAD leaves 90 % is confidently wrong beside
        // the magnet — not met: BENCHMARKS.md, "Real recordings".)
        #expect(score.withinOne >= 0.55, "\(score)")
        #expect(score.withinThree >= 0.97, "\(score)")
        #expect(Double(score.confidentlyWrong) <= 0.005 * Double(score.scored) && score.worstConfidentDegrees <= 10, "\(score)")
        // Issue 36's goals, against VQF on the same samples: heading at most VQF's undisturbed and
        // 0.8× VQF's disturbed, inclination at most VQF's. Over BROAD's 30 trials they are met at
        // this rate (`scripts/broad/benchmark.py`, BENCHMARKS.md, "Real recordings"); a fixture
        // that meets its own goal is held to it, one that does not is held about 10 % above where
        // it stands, so what was reached cannot slip back (the replay is deterministic).
        let bound = BROADRecording.vqfBounds[name] ?? (heading: 1, inclination: 1)
        #expect(score.headingRMSE <= bound.heading * recording.vqfHeadingRMSE, "\(score)")
        #expect(score.inclinationRMSE <= bound.inclination * recording.vqfInclinationRMSE, "\(score)")
    }
}

/// Trial 30: a magnetometer that needs no correction, moved about beside a magnet lying on the
/// table. Fits learned from the magnet's field explain the samples' lengths hardly better than
/// no correction; seen through the attitude filter's attitudes, the uncorrected field points the
/// same way in the world more tightly (`FieldAttitudeHistory`), so they are set aside.
@Suite struct BROADFalseFitTests {
    @Test func theFitsLearnedBesideTheMagnetAreSetAside() throws {
        let (score, kept) = try BROADRecording("30_disturbed_stationary_magnet_C").replayWithAndWithoutTheWorld()
        print("BROAD 30, fits compared in the world: \(score); kept: \(kept)")
        #expect(score.fitsSetAside >= 1 && kept.fitsSetAside == 0)
        // At 451656c (every fit kept) this fixture stood at 5.15°; with the fits set aside 3.58°.
        // Since the calibrator is given no vertical while the filter and the accelerometer
        // disagree (thirteenth session), fewer false fits are learned at all: 2.36° kept, 2.06°
        // set aside. Since the field's inconsistency slows the magnetometer's pull
        // (`AttitudeFilter.Configuration.magneticDisturbanceNoiseWeight`, fourteenth session) the
        // false fits' field no longer drags the needle either: 3.12° kept, 3.14° set aside — the
        // stationary magnet's bent field itself is now the larger part (BENCHMARKS.md). Setting
        // them aside must not cost the needle.
        #expect(score.headingRMSE <= kept.headingRMSE + 0.1, "\(score) against \(kept)")
        #expect(score.withinThree >= 0.97 && score.confidentlyWrong == 0, "\(score)")
    }
}

/// Trial 36: a magnet attached 5 cm from the sensor while the phone rests (at 36.8 s), taken off
/// again (at about 98 s) while it moves. Its fit learned with the magnet (5.4 µT of hard iron) is
/// too close to the Earth's field for the interference tolerances; once the magnet is off, a new
/// estimate disagrees with it, and the field points steadier in the world through the new one: the
/// fit is discarded and the calibration learned again. BROAD's magnetometer needs no correction.
@Suite struct BROADChangedFieldTests {
    @Test func theMagnetTakenOffDiscardsTheFitLearnedWithIt() throws {
        let (score, kept) = try BROADRecording("36_disturbed_attached_magnet_5cm").replayWithAndWithoutTheWorld()
        print("BROAD 36: \(score), final hard iron \(score.finalHardIronMicrotesla.map { "\($0)" } ?? "none"); "
              + "without the comparison in the world: \(kept), final hard iron \(kept.finalHardIronMicrotesla.map { "\($0)" } ?? "none")")
        #expect(score.fitsDiscardedForAChangedField >= 1 && kept.fitsDiscardedForAChangedField == 0)
        let final = try #require(score.finalHardIronMicrotesla)
        #expect(final.length < 2, "the magnet's hard iron is gone: \(final)")
        #expect(score.headingRMSE < kept.headingRMSE, "\(score) against \(kept)")
        #expect(score.withinThree >= 0.97 && score.confidentlyWrong == 0, "\(score)")
    }
}

extension BROADRecording {
    /// The replay as the daemon runs it, and one whose calibrator compares no corrections in the
    /// world (`MagnetometerCalibrator.Configuration.comparesCorrectionsInTheWorld` false).
    func replayWithAndWithoutTheWorld() throws -> (Score, Score) {
        var configuration = DaemonModel.Configuration()
        configuration.compass.calibrator.comparesCorrectionsInTheWorld = false
        return (try replay(), try replay(configuration: configuration))
    }
}

/// Not a test of its own unless `BROAD_EXPLORE` is set: the filter's settings varied on the
/// fixtures, for tuning (`BROAD_EXPLORE=1 swift test --filter BROADExploration`).
@Suite struct BROADExploration {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["BROAD_EXPLORE"] != nil))
    func variants() throws {
        var variants: [(String, (inout AttitudeFilter.Configuration) -> Void)] = [("default", { _ in })]
        for sigma in [1.0, 3.0] {
            variants.append(("plain accelerometer σ \(sigma)", {
                $0.accelerationGateMetresPerSecondSquared = 20; $0.accelerometerNoisePerRateMetresPerSecondSquared = 0
                $0.accelerometerDeviationWeight = 0; $0.accelerometerMotionWeight = 0; $0.accelerometerNoiseMetresPerSecondSquared = sigma
                $0.usefulGravityNoiseDegrees = 90
            }))
        }
        variants.append(("no lag estimate", { $0.magnetometerLagSigmaSeconds = 0 }))
        variants.append(("rate noise 0.3", { $0.accelerometerNoisePerRateMetresPerSecondSquared = 0.3; $0.usefulGravityNoiseDegrees = 20 }))
        let names = ProcessInfo.processInfo.environment["BROAD_NAMES"]?.split(separator: ",").map(String.init) ?? BROADRecording.names
        for name in names {
            let recording = try BROADRecording(name)
            for (label, change) in variants {
                var configuration = DaemonModel.Configuration()
                change(&configuration.compass.attitudeFilter)
                let score = try recording.replay(configuration: configuration, restSampleRateHertz: 2)
                print("explore \(name.prefix(2)) \(label): \(score)")
                if label == "never" {
                    print("explore \(name.prefix(2)) without the place: \(try recording.replay(configuration: configuration, restSampleRateHertz: nil, withoutPlace: true))")
                    print("explore \(name.prefix(2)) with the rest policy: \(try recording.replay(configuration: configuration))")
                }
            }
        }
    }
}

/// A returning user's daemon: a stored fit restored at the start (`--state-directory`), here
/// another day's — BROAD trial 32's, learned with a magnet 1 cm from the sensor (60 µT of hard
/// iron), restored on the same IMU without the magnet (fixture 09). Lying still, the phone cannot
/// tell that fit from a magnet nearby, so `HeadingError` says unknown while the corrected field
/// does not match; once the phone turns, the fit is contradicted and given up. Never confidently
/// wrong meanwhile (issue 36: BROAD's trials replayed through one state directory were, 2034
/// times, before 1a261d5).
@Suite struct BROADRestoredFitTests {
    @Test func anotherDaysFitIsNeverTrustedAndIsGivenUp() throws {
        let magnetDay = CalibrationFit(kind: .ellipsoid, hardIronOffsetMicrotesla: Vector3(-5.22, -0.30, 59.71),
                                       softIronMatrix: .identity, fieldMicrotesla: 46.0, residualRMSMicrotesla: 0.69,
                                       eigenvalueSpread: 1, sampleCount: 600)
        let recording = try BROADRecording("09_undisturbed_fast_rotation_with_breaks_B")
        let score = try recording.replay(restoring: magnetDay)
        print("BROAD 09 with another day's fit restored: \(score), fits contradicted \(score.fitsContradicted), final hard iron \(String(describing: score.finalHardIronMicrotesla))")
        #expect(score.fitsContradicted == 1, "the wrong fit is given up once the phone turns")
        #expect(score.confidentlyWrong == 0 && score.withinThree >= 0.97, "\(score)")
        #expect((score.finalHardIronMicrotesla?.length ?? 0) < 5, "the magnet's fit is not in use at the end")
        // The first seconds of the motion are off (24° under a HeadingError of 180° until the fit
        // is given up, 4 s in; at 1a261d5 5.4° RMSE over the motion against 1.3° at a first use);
        // from 10 s into the motion (it begins at 30.1 s) the needle is a first use's.
        let later = try recording.replay(restoring: magnetDay, scoringFrom: 40)
        let freshLater = try recording.replay(scoringFrom: 40)
        print("… from 40 s: \(later); a first use: \(freshLater)")
        #expect(later.headingRMSE <= freshLater.headingRMSE + 0.5, "\(later) against a first use \(freshLater)")
    }
}

/// A rest's first mean levels the attitude filter's kept attitude and turns its yaw
/// (`AttitudeFilter.addRestMeanField`): the attitude a motion left, its yaw still on its way to
/// the field when the phone was put down, is no longer kept for the whole rest. The four fixtures'
/// heading over their still instants against the same replays with the rest's means kept from the
/// filter (`CompassModel.Configuration.restMeanMinimumSamples` 0, as before): better over the
/// four, no fixture worse by more than 0.1° (a trial's rests may go either way by a few hundredths:
/// 09 0.77° → 0.80°; BENCHMARKS.md), and the motion phases not worse
/// by more than that either.
@Suite struct BROADRestTests {
    @Test func aRestsMeansTurnTheKeptYaw() throws {
        var off = DaemonModel.Configuration()
        off.compass.restMeanMinimumSamples = 0
        var rest = 0.0, restKept = 0.0
        for name in BROADRecording.names {
            let recording = try BROADRecording(name)
            let score = try recording.replay(), kept = try recording.replay(configuration: off)
            print(String(format: "BROAD %@ at rest: heading RMSE %.2f° over %d still instants, %.2f° with the rest's means kept from the filter; in motion %.2f° against %.2f°",
                         name, score.restHeadingRMSE, score.restInstants, kept.restHeadingRMSE, score.headingRMSE, kept.headingRMSE))
            #expect(score.restInstants > 1000, "\(name)")
            #expect(score.restHeadingRMSE <= kept.restHeadingRMSE + 0.1, "\(name): \(score.restHeadingRMSE)° against \(kept.restHeadingRMSE)°")
            #expect(score.headingRMSE <= kept.headingRMSE + 0.1, "\(name) in motion: \(score.headingRMSE)° against \(kept.headingRMSE)°")
            rest += score.restHeadingRMSE / Double(BROADRecording.names.count)
            restKept += kept.restHeadingRMSE / Double(BROADRecording.names.count)
        }
        print(String(format: "BROAD fixtures at rest, mean: %.3f° (%.3f° with the rest's means kept from the filter)", rest, restKept))
        #expect(rest <= restKept - 0.05)
    }
}
