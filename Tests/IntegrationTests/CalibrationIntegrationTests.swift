// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import QiblaSimulator
import Testing
import TestSupport

/// Online calibration, interference and the honest accuracy, through the real qiblad reading a
/// simulated phone's IIO tree (issue 10). Each run is real time at 20 Hz.
@Suite(.serialized) struct CalibrationIntegrationTests {
    static let london = GeodeticPosition(uncheckedLatitude: 51.5074, longitude: -0.1278)
    static var now: Double { DecimalYear.from(unixSeconds: Date().timeIntervalSince1970) }

    /// A slow figure-8 through all orientations: heading turning 45°/s, pitch ±75° and roll ±170°
    /// at incommensurate rates, starting at scene time `start`.
    static func figureEight(from start: Double) -> OrientationTrajectory {
        .custom { t in
            let u = max(0, t - start)
            return QiblaSimulator.DeviceOrientation(headingDegrees: 45 * u, pitchDegrees: 75 * sin(2 * .pi * 0.23 * u),
                                                    rollDegrees: 170 * sin(2 * .pi * 0.11 * u))
        }
    }

    /// A Librem-5-like magnetometer: |b| ≈ 87 µT of hard iron (about twice the Earth's field in
    /// London) and about 8 % soft iron, 0.4 µT noise.
    static let libremHardIron = Vector3(62, -48, 37)
    static let libremSoftIron = Matrix3(1.07, 0.03, 0.01, 0.03, 0.94, -0.02, 0.01, -0.02, 1.02)

    static func scene(at position: GeodeticPosition = london, hardIron: Vector3 = .zero, softIron: Matrix3 = .identity,
                      trajectory: OrientationTrajectory) -> Scene {
        Scene(position: position, decimalYear: now, trajectory: trajectory, hardIronOffsetMicrotesla: hardIron,
              softIronMatrix: softIron, magnetometerNoiseMicrotesla: 0.4, accelerometerNoiseMetresPerSecondSquared: 0.05)
    }

    /// Still poses with tilts up to 30°.
    static let poses: [(Double, Double, Double)] = [
        (10, 0, 0), (100, 30, 0), (190, -30, 20), (280, 20, -25), (330, 0, 30), (45, -25, 10), (225, 20, 20), (160, -15, -30),
    ]

    /// Holds each pose, lets the window settle and reads Heading twice; returns the errors, degrees.
    static func headingErrors(_ rig: CompassRig) throws -> [Double] {
        var errors: [Double] = []
        for (h, p, r) in poses {
            rig.phone.simulator.updateScene { $0.trajectory = .constant(.init(headingDegrees: h, pitchDegrees: p, rollDegrees: r)) }
            let truth = try #require(rig.phone.simulator.scene.expectedTrueHeading(at: 0))
            usleep(1_200_000)
            for _ in 0..<2 {
                let published = try rig.daemon.double("Heading")
                errors.append(published.isFinite ? abs(Angle.normalized180(published - truth)) : 180)
                usleep(100_000)
            }
        }
        return errors
    }

    static func calibrationFiles(_ rig: CompassRig) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: rig.daemon.stateDirectory.path)) ?? [])
            .filter { $0.hasPrefix("calibration-") && !$0.contains(".corrupt-") }
    }

    @Test func aLibremLikeMagnetometerCalibratesItselfPersistsAndIsDiscardedWhenContradicted() throws {
        let rig = try CompassRig(phone: .librem5,
                                 scene: Self.scene(hardIron: Self.libremHardIron, softIron: Self.libremSoftIron,
                                                   trajectory: .constant(.init(headingDegrees: 40))),
                                 location: "51.5074,-0.1278", claim: false)
        let q = rig.daemon
        // qiblactl calibrate is the claimant: it guides the user and reports the result.
        let calibrate = try ChildProcess(product("qiblactl").path, ["calibrate", "--timeout", "60"], environment: q.bus.environment)
        #expect(waitUntil(timeout: 15) { (try? q.bool("HasCompass")) == true }, "\(q.log)")
        #expect(waitUntil(timeout: 10) { (try? q.bool("CalibrationNeeded")) == true },
                "an uncalibrated Librem 5 reads twice the Earth's field: calibration is needed")
        #expect(try q.string("CompassAccuracy") == "unreliable")
        #expect(try q.double("Heading").isFinite, "the uncorrected needle is still shown")

        // The figure-8.
        let simulatorTime = rig.phone.simulator.lastSample?.timeSeconds ?? 0
        rig.phone.simulator.updateScene { $0.trajectory = Self.figureEight(from: simulatorTime) }
        let motionStarted = Date()
        var progress: [Double] = []
        var accepted: Double?
        while Date().timeIntervalSince(motionStarted) < 45 {
            progress.append(try q.double("CalibrationProgress"))
            if try q.string("CalibrationState") == "calibrated" {
                accepted = Date().timeIntervalSince(motionStarted)
                break
            }
            usleep(250_000)
        }
        let convergence = try #require(accepted, "no fit accepted in 45 s of figure-8: \(progress) \(q.log)")
        print("calibration: a Librem-5-like unit (|b| 87 µT, 8 % soft iron) in London was accepted after \(String(format: "%.1f", convergence)) s of figure-8")
        #expect(convergence <= 30)
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0 <= $1 + 1e-12 }, "progress is monotone: \(progress)")
        #expect((progress.last ?? 0) > 0.5)
        #expect(calibrate.wait(timeout: 10) == 0, "qiblactl calibrate: \(calibrate.standardOutput) \(calibrate.standardError)")
        // Progress is shown on the way, not only at the end. Which decile comes first depends on
        // when the figure-8 starts: begun after the phone came to rest (1 s without a gyroscope,
        // issue 37) its first moves are read at the rest rate, and the first line was 30 %.
        #expect((1...9).contains { calibrate.standardOutput.contains("calibration \($0 * 10) %") }, "\(calibrate.standardOutput)")
        #expect(calibrate.standardOutput.contains("Calibrated in"), "\(calibrate.standardOutput)")
        #expect(abs(try q.double("HardIronOffsetMagnitude") - Self.libremHardIron.length) < 3)
        #expect(try q.double("CalibrationResidual") < 1.5)

        // Still poses with a claim held: the calibrated heading.
        try rig.claimCompass()
        let errors = try Self.headingErrors(rig)
        let rms = (errors.map { $0 * $0 }.reduce(0, +) / Double(errors.count)).squareRoot()
        let worst = errors.max() ?? 180
        print("calibration: heading after calibration over \(errors.count) readings at tilts ≤ 30°: RMS \(String(format: "%.2f", rms))° max \(String(format: "%.2f", worst))°")
        #expect(rms <= 2)
        #expect(worst <= 5)
        #expect(["high", "medium"].contains(try q.string("CompassAccuracy")))
        #expect(try q.bool("CalibrationNeeded") == false)
        #expect(Self.calibrationFiles(rig).count == 1, "the accepted fit is persisted per device")

        // A restart: the stored calibration is used at once, unvalidated until live data confirms it.
        rig.monitor?.terminate()
        q.stop()
        try q.start()
        try rig.claimCompass()
        #expect(waitUntil(timeout: 15) { q.log.contains("restored the calibration") }, "\(q.log)")
        #expect(waitUntil(timeout: 5) { (try? q.string("CalibrationState")) == "unvalidated" })
        #expect(try q.bool("CalibrationNeeded") == false)
        let t1 = rig.phone.simulator.lastSample?.timeSeconds ?? 0
        rig.phone.simulator.updateScene { $0.trajectory = Self.figureEight(from: t1) }
        #expect(waitUntil(timeout: 20) { (try? q.string("CalibrationState")) == "calibrated" }, "\(q.log)")

        // The sensor is swapped (another hard iron): the stored fit is contradicted and discarded.
        rig.phone.simulator.updateScene { $0.hardIronOffsetMicrotesla = Vector3(-30, 55, -20) }
        #expect(waitUntil(timeout: 20) { (try? q.string("CalibrationState")) != "calibrated" }, "\(q.log)")
        #expect(q.log.contains("no longer matches live data"))
        // … and learnt again from the same motion.
        #expect(waitUntil(timeout: 40) { (try? q.string("CalibrationState")) == "calibrated" }, "\(q.log)")
        #expect(abs(try q.double("HardIronOffsetMagnitude") - Vector3(-30, 55, -20).length) < 3)

        // ResetCalibration forgets the fit and its file.
        #expect(try q.call("ResetCalibration").status == 0)
        #expect(Self.calibrationFiles(rig).isEmpty)
        #expect(try q.string("CalibrationState") == "collecting")
    }

    /// Issue 22: a phone only ever turned flat determines the hard iron's horizontal part: qiblad
    /// publishes that provisional needle (never `high`, never a 180° HeadingError once it has
    /// one), asks for tilt, and the flat heading is good.
    @Test func aPhoneTurnedOnlyFlatGetsAProvisionalNeedleAndATiltHint() throws {
        let rig = try CompassRig(phone: .librem5,
                                 scene: Self.scene(hardIron: Self.libremHardIron, softIron: Self.libremSoftIron,
                                                   trajectory: .rotating(startHeadingDegrees: 0, degreesPerSecond: 30)),
                                 location: "51.5074,-0.1278")
        let q = rig.daemon
        #expect(waitUntil(timeout: 15) { (try? q.bool("HasCompass")) == true })
        var accuracies: Set<String> = [], errors: [Double] = []
        let start = Date()
        while Date().timeIntervalSince(start) < 25 {
            accuracies.insert(try q.string("CompassAccuracy"))
            errors.append(try q.double("HeadingError"))
            usleep(300_000)
        }
        #expect(!accuracies.contains("high"), "\(accuracies)")
        #expect(try q.string("CalibrationState") == "collecting")
        let hint = try q.string("CalibrationHint")
        #expect(["tilt-forward-back", "tilt-left-right"].contains(hint), "hint \(hint)")
        #expect((errors.suffix(10).max() ?? 180) < 20, "the provisional needle is published with an honest error: \(errors)")
        #expect(waitUntil(timeout: 5) { q.log.contains("calibrating (") }, "one line says why it is not calibrated yet: \(q.log)")
        // Held flat: the provisional heading is good, and within its own error.
        var flat: [(error: Double, claimed: Double)] = []
        for h in [20.0, 110, 200, 290] {
            rig.phone.simulator.updateScene { $0.trajectory = .constant(.init(headingDegrees: h)) }
            let truth = try #require(rig.phone.simulator.scene.expectedTrueHeading(at: 0))
            usleep(1_200_000)
            flat.append((abs(Angle.normalized180(try q.double("Heading") - truth)), try q.double("HeadingError")))
        }
        let rms = (flat.map { $0.error * $0.error }.reduce(0, +) / Double(flat.count)).squareRoot()
        print("calibration: flat-only provisional needle, RMS \(String(format: "%.2f", rms))° over \(flat.count) flat poses, HeadingError \(flat.map(\.claimed))")
        #expect(rms <= 3, "\(flat)")
        #expect(flat.allSatisfy { $0.error <= 3 * $0.claimed }, "\(flat)")
    }

    /// Issue 22: a person's hand, never tilting beyond ±45° and never turning the phone over, in
    /// London (dip 67°), calibrates a Librem-5-like unit through the real daemon within 30 s.
    @Test func aHandThatNeverTurnsThePhoneOverCalibratesItInLondon() throws {
        let path = HandPath(seed: 22, seconds: 120, maximumTiltDegrees: 45)
        let rig = try CompassRig(phone: .librem5,
                                 scene: Self.scene(hardIron: Self.libremHardIron, softIron: Self.libremSoftIron,
                                                   trajectory: .constant(.init(headingDegrees: 40))),
                                 location: "51.5074,-0.1278")
        let q = rig.daemon
        #expect(waitUntil(timeout: 15) { (try? q.bool("HasCompass")) == true }, "\(q.log)")
        let simulatorTime = rig.phone.simulator.lastSample?.timeSeconds ?? 0
        rig.phone.simulator.updateScene { $0.trajectory = path.trajectory(from: simulatorTime) }
        let started = Date()
        var accepted: Double?, progress: [Double] = [], hints: Set<String> = []
        while Date().timeIntervalSince(started) < 40 {
            progress.append(try q.double("CalibrationProgress"))
            hints.insert(try q.string("CalibrationHint"))
            if try q.string("CalibrationState") == "calibrated" { accepted = Date().timeIntervalSince(started); break }
            usleep(250_000)
        }
        let convergence = try #require(accepted, "not accepted in 40 s of ±45° hand motion: \(progress) \(hints) \(q.log)")
        print("calibration: ±45° hand motion in London accepted after \(String(format: "%.1f", convergence)) s (hints \(hints.sorted()))")
        #expect(convergence <= 30)
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0 <= $1 + 1e-12 }, "progress is monotone: \(progress)")
        #expect(try q.double("CalibrationProgress") == 1)
        #expect(try q.string("CalibrationHint") == "none")
        #expect(waitUntil(timeout: 5) { q.log.contains("calibration accepted (") }, "\(q.log)")
        let errors = try Self.headingErrors(rig)
        let rms = (errors.map { $0 * $0 }.reduce(0, +) / Double(errors.count)).squareRoot()
        print("calibration: after ±45° hand motion, RMS \(String(format: "%.2f", rms))° max \(String(format: "%.2f", errors.max() ?? 180))° at tilts ≤ 30°")
        #expect(rms <= 2 && (errors.max() ?? 180) <= 5, "\(errors)")
    }

    @Test func aCleanMagnetometerIsTrustedAndAMagnetIsNoticedAndForgotten() throws {
        let rig = try CompassRig(phone: .pinephone, scene: Self.scene(trajectory: Self.figureEight(from: 0)),
                                 location: "51.5074,-0.1278")
        let q = rig.daemon
        #expect(waitUntil(timeout: 15) { (try? q.bool("HasCompass")) == true })
        // A factory-calibrated magnetometer reads the right field: no nagging, from the start.
        var asked = false
        let start = Date()
        while Date().timeIntervalSince(start) < 6 {
            if try q.bool("CalibrationNeeded") { asked = true }
            usleep(200_000)
        }
        #expect(!asked, "a clean sensor must not ask for calibration")
        // 40 s of a phone turning in the hand: no false interference alarm (the QiblaCore
        // calibrator tests run ten simulated minutes of the same).
        rig.phone.simulator.updateScene {
            $0.trajectory = .turningInHand(baseHeadingDegrees: 120, amplitudeDegrees: 40, periodSeconds: 12,
                                           basePitchDegrees: 15, wobbleDegrees: 4)
        }
        usleep(40_000_000)
        let alarms = q.log.components(separatedBy: "magnetic interference: the field").count - 1
        print("interference: \(alarms) false alarm(s) in 40 s of a clean phone turning in the hand at 20 Hz")
        #expect(alarms == 0, "\(q.log)")
        // Still, then a magnet: +40 % of the field, along it, fixed to the device.
        rig.phone.simulator.updateScene { $0.trajectory = .constant(.init(headingDegrees: 70, pitchDegrees: 10)) }
        usleep(2_000_000)
        #expect(try q.bool("MagneticInterference") == false)
        let field = rig.phone.simulator.scene.earthFieldDeviceMicrotesla(at: 0)
        let t0 = rig.phone.simulator.lastSample?.timeSeconds ?? 0
        rig.phone.simulator.updateScene {
            $0.interferences = [Interference(startSeconds: t0, durationSeconds: 1e9, fieldMicrotesla: field * 0.4, frame: .device)]
        }
        let appeared = Date()
        #expect(waitUntil(timeout: 3) { (try? q.bool("MagneticInterference")) == true })
        let detect = Date().timeIntervalSince(appeared)
        #expect(waitUntil(timeout: 2) { (try? q.string("CompassAccuracy")) == "unreliable" })
        rig.phone.simulator.updateScene { $0.interferences = [] }
        let removed = Date()
        #expect(waitUntil(timeout: 4) { (try? q.bool("MagneticInterference")) == false })
        let recover = Date().timeIntervalSince(removed)
        print("interference: a +40 % magnet noticed after \(Int(detect * 1000)) ms, its removal after \(Int(recover * 1000)) ms (busctl polling included)")
        #expect(detect <= 1.5, "within 1 s, plus busctl polling")
        #expect(recover <= 2.5, "within 2 s, plus busctl polling")
        #expect(try q.bool("CalibrationNeeded") == false)
    }

    @Test func theHeadingErrorGrowsWithInclinationAndInTheCautionZone() throws {
        func stillError(_ position: GeodeticPosition) throws -> (error: Double, accuracy: String) {
            let rig = try CompassRig(scene: Self.scene(at: position, trajectory: Self.figureEight(from: 0)),
                                     location: "\(position.latitudeDegrees),\(position.longitudeDegrees)")
            let q = rig.daemon
            #expect(waitUntil(timeout: 15) { (try? q.bool("HasCompass")) == true })
            usleep(6_000_000)   // turning: the calibrator sees the clean field match in many directions
            rig.phone.simulator.updateScene { $0.trajectory = .constant(.init(headingDegrees: 120, pitchDegrees: 5)) }
            usleep(2_000_000)
            var values: [Double] = []
            for _ in 0..<5 {
                values.append(try q.double("HeadingError"))
                usleep(200_000)
            }
            return (values.sorted()[2], try q.string("CompassAccuracy"))
        }
        // 139° W northwards: the first place in the WMM2025 caution zone (H < 6000 nT).
        var caution = Self.london
        for step in 0...1200 {
            let p = GeodeticPosition(uncheckedLatitude: 74 + Double(step) * 0.01, longitude: -139)
            if MagneticModel.wmm2025.field(at: p, decimalYear: Self.now).zone == .caution { caution = p; break }
        }
        #expect(caution != Self.london)
        let reykjavik = GeodeticPosition(uncheckedLatitude: 64.1466, longitude: -21.9426)
        let (london, _) = try stillError(Self.london)
        let (iceland, _) = try stillError(reykjavik)
        let (arctic, arcticAccuracy) = try stillError(caution)
        let h = MagneticModel.wmm2025.field(at: caution, decimalYear: Self.now).horizontalNanotesla
        print("HeadingError, still clean phone: London \(String(format: "%.2f", london))°, Reykjavik \(String(format: "%.2f", iceland))°, caution zone \(caution) \(String(format: "%.2f", arctic))°")
        #expect(london.isFinite && iceland.isFinite && arctic.isFinite)
        #expect(iceland > london, "higher inclination and weaker H: a larger error")
        #expect(arctic > iceland + 3, "in the caution zone (H \(Int(h)) nT) the tilt and declination terms grow")
        #expect(arctic >= HeadingErrorModel().declinationUncertaintyDegrees(horizontalNanotesla: h))
        #expect(!["high", "medium"].contains(arcticAccuracy), "caution zone: at most low")
    }

    @Test func resetWithoutAMagnetometerIsNotSupported() throws {
        let q = try QibladHarness(arguments: ["--no-gpsd", "--sysfs-root", "/nonexistent-qiblad-test"]); defer { q.stop() }
        try q.start()
        let r = try q.call("ResetCalibration")
        #expect(r.status != 0)
        #expect(r.stderr.contains("no magnetometer"), "\(r.stderr)")
    }
}

/// A person's hand as a pure function of time, for the simulator's `.custom` trajectory: heading,
/// pitch and roll are Ornstein–Uhlenbeck random walks (heading rate 50°/s RMS, 1.5 s memory;
/// pitch and roll squashed through tanh into ±`maximumTiltDegrees`), precomputed at 50 Hz from a
/// fixed seed and interpolated.
struct HandPath: Sendable {
    let samples: [QiblaSimulator.DeviceOrientation]
    static let rate = 50.0

    init(seed: UInt64, seconds: Double, maximumTiltDegrees: Double) {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        func uniform() -> Double {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return (Double(state >> 11) + 0.5) / Double(1 << 53)
        }
        func gaussian() -> Double { (-2 * log(uniform())).squareRoot() * cos(2 * .pi * uniform()) }
        let dt = 1 / Self.rate
        func step(_ x: inout Double, tau: Double, sigma: Double) {
            let decay = exp(-dt / tau)
            x = x * decay + sigma * (1 - decay * decay).squareRoot() * gaussian()
        }
        var heading = 360 * uniform(), rate = 0.0, pitch = 0.0, roll = 0.0
        var out: [QiblaSimulator.DeviceOrientation] = []
        for _ in 0..<Int(seconds * Self.rate) {
            step(&rate, tau: 1.5, sigma: 50)
            step(&pitch, tau: 1.2, sigma: 0.9)
            step(&roll, tau: 0.9, sigma: 0.9)
            heading += rate * dt
            out.append(.init(headingDegrees: heading, pitchDegrees: maximumTiltDegrees * tanh(pitch),
                             rollDegrees: maximumTiltDegrees * tanh(roll)))
        }
        samples = out
    }

    /// The path started at simulator time `start` (held at its last pose after the end).
    func trajectory(from start: Double) -> OrientationTrajectory {
        let samples = self.samples
        return .custom { t in
            let x = max(0, t - start) * HandPath.rate
            let i = min(samples.count - 2, Int(x)), f = min(1, x - Double(i))
            let a = samples[i], b = samples[i + 1]
            return .init(headingDegrees: a.headingDegrees + (b.headingDegrees - a.headingDegrees) * f,
                         pitchDegrees: a.pitchDegrees + (b.pitchDegrees - a.pitchDegrees) * f,
                         rollDegrees: a.rollDegrees + (b.rollDegrees - a.rollDegrees) * f)
        }
    }
}
