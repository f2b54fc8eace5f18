// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import QiblaDaemon
import QiblaSensorLog

/// The BROAD fixtures under `Tests/Recordings/BROAD/` (Laidig et al., Data 2021, CC BY 4.0; their
/// README gives the attribution and what was changed) and BROAD's error metric, reimplemented from
/// that README (BROAD's `broad_utils.py`: the error quaternion in the earth frame, its heading and
/// inclination parts, RMSE over the motion phases).
struct BROADRecording {
    /// `Tests/Recordings/BROAD/`, or `BROAD_DIRECTORY` (for a look at other trials by hand).
    static let directory = ProcessInfo.processInfo.environment["BROAD_DIRECTORY"].map { URL(fileURLWithPath: $0) }
        ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Recordings/BROAD")

    static let names = ["09_undisturbed_fast_rotation_with_breaks_B", "21_undisturbed_fast_combined",
                        "30_disturbed_stationary_magnet_C", "36_disturbed_attached_magnet_5cm"]

    /// The most each fixture's heading and inclination RMSE may be, as multiples of VQF's on the
    /// same samples (`reference.json`). The goal's multiple where the fixture meets it; otherwise
    /// about 10 % above the fixture's own figure at 379c64f (`swift test --filter
    /// BROADReplayTests` prints them), where the goal is not met for that trial.
    static let vqfBounds: [String: (heading: Double, inclination: Double)] = [
        // Heading 1.32° against VQF's 2.54° (0.52×); inclination 2.46° against 2.34° (1.05×, goal 1×).
        "09_undisturbed_fast_rotation_with_breaks_B": (heading: 1, inclination: 1.15),
        // 2.30° against 2.59° (0.89×); 2.20° against 3.05° (0.72×).
        "21_undisturbed_fast_combined": (heading: 1, inclination: 1),
        // 2.73° against 2.68° (1.02×, goal 0.8×); 2.00° against 2.97° (0.67×).
        "30_disturbed_stationary_magnet_C": (heading: 1.15, inclination: 1),
        // 3.03° against 2.65° (1.14×, goal 0.8×); 1.30° against 1.77° (0.73×).
        "36_disturbed_attached_magnet_5cm": (heading: 1.25, inclination: 1),
    ]

    struct Truth {
        /// Device → ENU (magnetic north); nil where the optical system lost the body.
        var attitude: Quaternion?
        var moving: Bool
    }

    var name: String
    var log: SensorLog
    /// By the log's time text.
    var truth: [String: Truth]
    /// VQF on the same samples (`reference.json`, scripts/broad/make_fixtures.py), degrees.
    var vqfHeadingRMSE: Double
    var vqfInclinationRMSE: Double

    init(_ name: String) throws {
        self.name = name
        log = try SensorLog.parse(String(contentsOf: Self.directory.appendingPathComponent(name + ".log"), encoding: .utf8))
        var truth: [String: Truth] = [:]
        let text = try String(contentsOf: Self.directory.appendingPathComponent(name + ".truth"), encoding: .utf8)
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let f = line.split(separator: " ")
            guard f.count == 6 else { continue }
            let q = Quaternion(w: Double(f[1]) ?? .nan, x: Double(f[2]) ?? .nan, y: Double(f[3]) ?? .nan, z: Double(f[4]) ?? .nan)
            truth[String(f[0])] = Truth(attitude: q.isFinite ? q.normalized : nil, moving: f[5] == "1")
        }
        self.truth = truth
        let json = (try? Data(contentsOf: Self.directory.appendingPathComponent("reference.json")))
            .flatMap { try? JSONSerialization.jsonObject(with: $0) }
        let trial = ((json as? [String: Any])?["trials"] as? [String: Any])?[name] as? [String: Any]
        vqfHeadingRMSE = trial?["vqf_heading_rmse_deg"] as? Double ?? .nan
        vqfInclinationRMSE = trial?["vqf_inclination_rmse_deg"] as? Double ?? .nan
    }

    /// BROAD's heading and inclination errors (degrees) of an estimate against the truth:
    /// q_err = q_e ⊗ q_t*, e_h = 2·atan(|z/w|), e_i = 2·acos(√(w² + z²)).
    static func errors(estimate: Quaternion, truth: Quaternion) -> (heading: Double, inclination: Double) {
        let t = Quaternion(w: truth.w, x: -truth.x, y: -truth.y, z: -truth.z)
        guard let e = (estimate * t).normalized else { return (.nan, .nan) }
        let heading = 2 * atan(abs(e.z / e.w))
        let inclination = 2 * acos(min(1, (e.w * e.w + e.z * e.z).squareRoot()))
        return (Angle.degrees(heading), Angle.degrees(inclination))
    }

    struct Score: CustomStringConvertible {
        var headingRMSE = Double.nan
        var inclinationRMSE = Double.nan
        /// Scored instants (moving, truth and estimate finite) and motion instants with truth.
        var scored = 0, motion = 0
        /// Among the scored instants with a finite `HeadingError`: the share whose heading error
        /// is within 1× and 3× it, and those beyond 3× while it said at most 10° ("confidently wrong").
        var withinOne = Double.nan, withinThree = Double.nan
        var confidentlyWrong = 0
        var worstConfidentDegrees = 0.0
        /// Fits set aside for no correction (`MagnetometerCalibrator.fitsSetAsideCount`).
        var fitsSetAside = 0
        /// Fits discarded for a changed field (`MagnetometerCalibrator.fitsDiscardedForAChangedFieldCount`).
        var fitsDiscardedForAChangedField = 0
        /// Applied fits discarded as contradicted by live data (`MagnetometerCalibrator.discardedFitCount`).
        var fitsContradicted = 0
        /// The hard iron of the fit in use at the end, µT (nil without a fit).
        var finalHardIronMicrotesla: Vector3?
        /// BROAD's heading error over the instants it marks still (not its metric, which scores
        /// the motion phases only; a phone lying still is most of a compass's use), degrees RMS,
        /// and how many such instants had a truth and an estimate.
        var restHeadingRMSE = Double.nan
        var restInstants = 0

        var description: String {
            String(format: "heading RMSE %.2f°, inclination RMSE %.2f° (%d of %d motion instants); HeadingError: %.0f %% within 1×, %.1f %% within 3×, %d confidently wrong (worst %.1f°)",
                   headingRMSE, inclinationRMSE, scored, motion, withinOne * 100, withinThree * 100, confidentlyWrong, worstConfidentDegrees)
        }
    }

    /// Replays the log through the daemon's model (`SensorReplay`) and scores it; `restoring` is
    /// a stored fit restored before the first sample, as qiblad restores its state directory's;
    /// only the instants from `scoringFrom` (the log's seconds) on are scored.
    func replay(configuration: DaemonModel.Configuration = DaemonModel.Configuration(), restSampleRateHertz: Double? = 2,
                withoutPlace: Bool = false, restoring storedFit: CalibrationFit? = nil,
                scoringFrom: Double = -.infinity) throws -> Score {
        var replay = SensorReplay(configuration: configuration, position: withoutPlace ? nil : try log.position(),
                                  unixSecondsAtStart: try log.startUnixSeconds() ?? 0, hasGyroscope: log.hasGyroscope,
                                  gyroscopeOutputHertz: try log.gyroscopeOutputHertz(), restSampleRateHertz: restSampleRateHertz)
        if let storedFit { replay.restoreCalibration(storedFit) }
        var score = Score()
        var headingSquares = 0.0, inclinationSquares = 0.0, restSquares = 0.0
        var honest = 0, one = 0, three = 0
        for instant in log.instants {
            let o = replay.apply(timeSeconds: instant.timeSeconds, acceleration: instant.acceleration,
                                 angularVelocity: instant.angularVelocity, magneticField: instant.magneticField)
            if name.hasPrefix(ProcessInfo.processInfo.environment["BROAD_ONLY"] ?? ""),
               let window = ProcessInfo.processInfo.environment["BROAD_TRACE"]?.split(separator: "-").compactMap({ Double($0) }),
               window.count == 2, instant.timeSeconds >= window[0], instant.timeSeconds <= window[1],
               let q = truth[instant.timeText]?.attitude, let estimate = o.attitudeENU {
                let c = replay.model.compass, f = c.attitudeFilter
                let e = Self.errors(estimate: estimate, truth: q)
                print(String(format: "trace %.2f head %.1f incl %.1f σ %.1f %@ cal %@ gen %d yawReseeds %d seeds %d recov %d bias %.2f %.2f %.2f |m| %.1f interf %d trusted %d still %d lpf %d fit %@",
                             instant.timeSeconds, e.heading, e.inclination, o.headingErrorDegrees, f.magneticState.rawValue,
                             c.state.calibrationState.rawValue, c.calibrator.calibrationGeneration, f.yawReseedCount, f.seedCount,
                             f.attitudeRecoveryCount, Angle.degrees(f.gyroscopeBiasRadiansPerSecond.x), Angle.degrees(f.gyroscopeBiasRadiansPerSecond.y),
                             Angle.degrees(f.gyroscopeBiasRadiansPerSecond.z), instant.magneticField?.length ?? .nan, c.calibrator.magneticInterference ? 1 : 0, c.calibrator.correctionTrusted ? 1 : 0, f.stillBiasMeasurementCount, f.lowPassedGravityUpdateCount, c.calibrator.fit.map { "\($0.hardIronOffsetMicrotesla) r \($0.fieldMicrotesla) res \($0.residualRMSMicrotesla) \($0.kind)" } ?? "-"))
            }
            if instant.timeSeconds >= scoringFrom, let truth = truth[instant.timeText], !truth.moving,
               let q = truth.attitude, let estimate = o.attitudeENU {
                let e = Self.errors(estimate: estimate, truth: q).heading
                if e.isFinite { score.restInstants += 1; restSquares += e * e }
            }
            guard instant.timeSeconds >= scoringFrom, let truth = truth[instant.timeText], truth.moving,
                  let q = truth.attitude else { continue }
            score.motion += 1
            guard let estimate = o.attitudeENU else { continue }
            let e = Self.errors(estimate: estimate, truth: q)
            guard e.heading.isFinite, e.inclination.isFinite else { continue }
            score.scored += 1
            headingSquares += e.heading * e.heading
            inclinationSquares += e.inclination * e.inclination
            if o.headingErrorDegrees.isFinite, o.headingErrorDegrees > 0 {
                honest += 1
                if e.heading <= o.headingErrorDegrees { one += 1 }
                if e.heading <= 3 * o.headingErrorDegrees {
                    three += 1
                } else if o.headingErrorDegrees <= 10 {
                    score.confidentlyWrong += 1
                    score.worstConfidentDegrees = max(score.worstConfidentDegrees, e.heading)
                }
            }
        }
        if score.restInstants > 0 { score.restHeadingRMSE = (restSquares / Double(score.restInstants)).squareRoot() }
        if score.scored > 0 {
            score.headingRMSE = (headingSquares / Double(score.scored)).squareRoot()
            score.inclinationRMSE = (inclinationSquares / Double(score.scored)).squareRoot()
        }
        score.fitsSetAside = replay.model.compass.calibrator.fitsSetAsideCount
        score.fitsDiscardedForAChangedField = replay.model.compass.calibrator.fitsDiscardedForAChangedFieldCount
        score.fitsContradicted = replay.model.compass.calibrator.discardedFitCount
        score.finalHardIronMicrotesla = replay.model.compass.calibrator.fit?.hardIronOffsetMicrotesla
        if honest > 0 { score.withinOne = Double(one) / Double(honest); score.withinThree = Double(three) / Double(honest) }
        return score
    }
}
