// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import QiblaDaemon
import QiblaSimulator
import Testing

/// Issue 36, section 1: a new user's uncalibrated phone with a gyroscope — a PinePhone-like unit
/// (about 40 µT of hard iron and a few per cent of soft iron on the magnetometer, an MPU-6050 whose
/// gyroscope is biased by about 0.7 °/s, no stored calibration) waved for 20 s, then turned to find
/// the Qibla with holds of 1–2 s, then held still while a magnet comes near (`PersonScene.firstUse`).
/// Here through the daemon's own model (`SensorReplay`: calibration, rest policy, fusion, accuracy)
/// at 50 Hz in simulated time; `FusedNeedleTests` runs the same scene through the real daemon.
@Suite struct FirstUseSceneTests {
    /// The unit's errors (the simulator's, not the estimator's model of them).
    static func unit(_ scene: Scene) -> Scene { unit(scene, hardIronMicrotesla: Vector3(28, -22, 18)) }

    /// The unit with another hard iron, microtesla.
    static func unit(_ scene: Scene, hardIronMicrotesla: Vector3) -> Scene {
        var scene = scene
        scene.hardIronOffsetMicrotesla = hardIronMicrotesla
        scene.softIronMatrix = Matrix3(1.04, 0.02, -0.01, 0.02, 0.97, 0.015, -0.01, 0.015, 1.02)
        scene.gyroscope = GyroscopeErrors(biasDegreesPerSecond: Vector3(0.7, -0.5, 0.6), biasDriftDegreesPerSecond: Vector3(0.1, 0.1, -0.1),
                                          biasDriftTimeConstantSeconds: 60, noiseDegreesPerSecond: 0.05, scaleFactorError: 0.005)
        scene.magnetometerNoiseMicrotesla = 0.4
        scene.accelerometerNoiseMetresPerSecondSquared = 0.04
        return scene
    }

    struct Outcome {
        var score: NeedleScore
        /// Instants after the calibration was accepted whose error exceeded 3× `HeadingError` while
        /// the accuracy said `medium` or `high`, and the worst such error.
        var confidentlyWrong: Int
        var worstConfidentErrorDegrees: Double
        var acceptedAtSeconds: Double?
    }

    /// The first use at `site` with the unit's errors: waving, turns to the Qibla, a magnet.
    static func scene(at site: FusedNeedleTests.Site, seconds: Double, seed: UInt64,
                      hardIronMicrotesla: Vector3 = Vector3(28, -22, 18)) throws -> Scene {
        let qibla = try #require(GreatCircle.initialBearingDegrees(from: site.position, to: Qibla.defaultKaaba))
        let motion = PersonSceneMotion(.firstUse, targetHeadingDegrees: qibla, seed: seed, durationSeconds: seconds)
        let base = Scene(position: site.position, decimalYear: CalibrationIntegrationTests.now,
                         trajectory: .constant(.init(headingDegrees: qibla)))
        return unit(motion.scene(from: base), hardIronMicrotesla: hardIronMicrotesla)
    }

    /// Runs the scene for `seconds` through `SensorReplay` at `rateHertz` and scores it after the waving.
    static func run(at site: FusedNeedleTests.Site, seconds: Double = 70, rateHertz: Double = 50, seed: UInt64 = 5,
                    hardIronMicrotesla: Vector3 = Vector3(28, -22, 18)) throws -> Outcome {
        let position = site.position
        let scene = try Self.scene(at: site, seconds: seconds, seed: seed, hardIronMicrotesla: hardIronMicrotesla)
        var replay = SensorReplay(position: position, unixSecondsAtStart: Date().timeIntervalSince1970, hasGyroscope: true)
        var noise = GaussianNoise(seed: seed), gyroNoise = GaussianNoise(seed: seed ^ 0x77)
        // A measurement (FIRST_USE_AGE_MS=J): each sample's value taken a random 0…J ms before its
        // stamp, as a polled register's (FusedNeedleTimingSweep), for the sensors named in
        // FIRST_USE_AGE_SENSORS (g, m, a; all by default). Without it the samples are as before.
        // FIRST_USE_DELAY_MS=D adds a constant D ms to those sensors' age (a chip's low-pass
        // filter's group delay; PollingDriver.chipRateOversampling).
        let maximumAge = (ProcessInfo.processInfo.environment["FIRST_USE_AGE_MS"].flatMap(Double.init) ?? 0) / 1000
        let delay = (ProcessInfo.processInfo.environment["FIRST_USE_DELAY_MS"].flatMap(Double.init) ?? 0) / 1000
        let aged = ProcessInfo.processInfo.environment["FIRST_USE_AGE_SENSORS"] ?? "gma"
        var age = SplitMix64(seed: seed ^ 0xA9E)
        var readings: [NeedleRecorder.Reading] = []
        var confident = 0, worst = 0.0
        var accepted: Double?
        let steps = Int(seconds * rateHertz)
        for k in 0...steps {
            let t = Double(k) / rateHertz
            let taken = t - delay - (maximumAge > 0 ? age.nextUnitInterval() * maximumAge : 0)
            let m = scene.magnetometerReadingMicrotesla(at: aged.contains("m") ? taken : t, noiseMicrotesla: noise.nextVector(standardDeviation: scene.magnetometerNoiseMicrotesla))
            let a = scene.accelerometerReadingMetresPerSecondSquared(at: aged.contains("a") ? taken : t, noise: noise.nextVector(standardDeviation: scene.accelerometerNoiseMetresPerSecondSquared))
            let w = scene.gyroscopeReadingRadiansPerSecond(at: aged.contains("g") ? taken : t, periodSeconds: 1 / rateHertz, noise: gyroNoise.nextVector(standardDeviation: scene.gyroscope.noiseDegreesPerSecond * .pi / 180))
            let o = replay.apply(timeSeconds: t, acceleration: a, angularVelocity: w, magneticField: m)
            readings.append(.init(timeSeconds: t, magneticHeading: o.magneticHeadingDegrees, headingError: o.headingErrorDegrees, fused: o.fused))
            if accepted == nil, replay.model.compass.state.calibrationState == .calibrated { accepted = t }
            if ProcessInfo.processInfo.environment["FIRST_USE_TRACE"] == site.name, k % 50 == 0 {
                let axis = o.axis
                let c = replay.model.compass
                print(String(format: "t %5.1f truth %6.1f out %6.1f err %6.1f sigma %5.1f %@ fused %d cal %@ gen %d prov %d mag %@ bias %.2f,%.2f,%.2f",
                             t, scene.expectedMagneticHeading(of: axis, at: t) ?? .nan, o.magneticHeadingDegrees,
                             Angle.normalized180(o.magneticHeadingDegrees - (scene.expectedMagneticHeading(of: axis, at: t) ?? .nan)),
                             o.headingErrorDegrees, o.accuracy.rawValue, o.fused ? 1 : 0, c.state.calibrationState.rawValue,
                             c.calibrator.calibrationGeneration, c.calibrator.isProvisional ? 1 : 0, c.attitudeFilter.magneticState.rawValue,
                             c.attitudeFilter.gyroscopeBiasRadiansPerSecond.x * 57.3, c.attitudeFilter.gyroscopeBiasRadiansPerSecond.y * 57.3,
                             c.attitudeFilter.gyroscopeBiasRadiansPerSecond.z * 57.3) + " lag \(Int(c.attitudeFilter.magnetometerLagSeconds * 1000)) \(site.name) trusted \(c.calibrator.correctionTrusted) \(c.calibrator.lastRejection.map { "\($0)" } ?? "-")")
            }
            let axis = o.axis
            if accepted != nil, o.accuracy == .medium || o.accuracy == .high, o.headingErrorDegrees.isFinite,
               let truth = scene.expectedMagneticHeading(of: axis, at: t) {
                let error = abs(Angle.normalized180(o.magneticHeadingDegrees - truth))
                if error > 3 * o.headingErrorDegrees {
                    confident += 1; worst = max(worst, error)
                    if ProcessInfo.processInfo.environment["FIRST_USE_TRACE"] == site.name {
                        print("confidently wrong at \(t) s: error \(error)°, HeadingError \(o.headingErrorDegrees)°, \(o.accuracy), fused \(o.fused), \(replay.model.compass.attitudeFilter.magneticState)")
                    }
                }
            }
        }
        let truth: (Double) -> Double? = { t in
            let axis: HeadingAxis = scene.orientation(at: t).pitchDegrees > 50 ? .back : .top
            return scene.expectedMagneticHeading(of: axis, at: t)
        }
        let disturbed: (Double) -> Bool = { t in
            scene.interferences.contains { t >= $0.startSeconds && t < $0.startSeconds + $0.durationSeconds + 0.5 }
        }
        let score = NeedleScore.score(readings, truth: truth, from: PersonSceneMotion.firstUseCalibrationSeconds + 1, to: seconds,
                                      readIntervalSeconds: 0.05, disturbed: disturbed)
        return Outcome(score: score, confidentlyWrong: confident, worstConfidentErrorDegrees: worst, acceptedAtSeconds: accepted)
    }

    /// Karachi (issue 36's new user, dip about 39°), London (67°), and two more: Jakarta (south of
    /// the magnetic equator, −29°) and Istanbul (59°). (At Stockholm, 73°, and Cape Town, −65°,
    /// 20 s of waving within ±45° of tilt leave the fit's heading uncertainty at 2.7–2.8° where the
    /// acceptance asks for 2°: the heading stays on the provisional fit, `medium`, holds 1.2–1.7°.)
    static let sites = [FusedNeedleTests.karachi, FusedNeedleTests.london,
                        FusedNeedleTests.jakarta,
                        FusedNeedleTests.Site(name: "Istanbul", latitude: 41.0, longitude: 29.0)]

    @Test(arguments: sites)
    func theUncalibratedPhoneMeetsTheNeedleGoals(site: FusedNeedleTests.Site) throws {
        let outcome = try Self.run(at: site, seed: Self.seed)
        print("first use (model, 50 Hz) at \(site) (dip \(Int(site.dipDegrees.rounded()))°): \(outcome.score); accepted at "
            + "\(outcome.acceptedAtSeconds.map { String(Int($0)) } ?? "never") s; confidently wrong \(outcome.confidentlyWrong) instants, worst \(outcome.worstConfidentErrorDegrees)°")
        #expect(outcome.acceptedAtSeconds != nil, "the calibration is accepted")
        #expect(outcome.confidentlyWrong == 0, "never medium or high while wrong by more than 3× HeadingError")
        #expect(outcome.score.holdRMSDegrees <= 1, "\(outcome.score)")
        #expect(outcome.score.turnP95Degrees <= 5, "\(outcome.score)")
        #expect(outcome.score.settleMedianMilliseconds <= 150, "\(outcome.score)")
        #expect(outcome.score.worstDuringDisturbanceDegrees <= 3, "\(outcome.score)")
    }

    /// Issue 36, section 3: real phones whose raw readings are 380–630 µT long (hard iron 8 to 13
    /// times the Earth's field) were tens of degrees off for whole records. The same first use with
    /// about 500 µT of hard iron: the raw field is nothing like the Earth's, so the filter holds it
    /// off from the start on a yaw seeded through it, and the provisional fits that follow are not
    /// trusted. Without taking the new field's yaw when such a hold meets a new correction, the
    /// needle stayed 79° off until the gate gave way and then taught the gyroscope a wrong bias
    /// (Karachi: holds 11.4° RMS); with a lag learned through those fits (38 ms) the accepted fit
    /// taught it 3 °/s (Jakarta: turns p95 8.0°).
    @Test(arguments: [(FusedNeedleTests.karachi, Vector3(-450, 200, 300)), (FusedNeedleTests.jakarta, Vector3(300, -350, 200)),
                      (FusedNeedleTests.london, Vector3(-450, 200, 300))])
    func aPhoneWithHundredsOfMicroteslaOfHardIronFindsTheQibla(site: FusedNeedleTests.Site, hardIron: Vector3) throws {
        let outcome = try Self.run(at: site, seed: Self.seed, hardIronMicrotesla: hardIron)
        print("first use with \(Int(hardIron.length.rounded())) µT of hard iron (model, 50 Hz) at \(site): \(outcome.score); accepted at "
            + "\(outcome.acceptedAtSeconds.map { String(Int($0)) } ?? "never") s; confidently wrong \(outcome.confidentlyWrong) instants")
        #expect(outcome.acceptedAtSeconds != nil, "the calibration is accepted")
        #expect(outcome.confidentlyWrong == 0, "never medium or high while wrong by more than 3× HeadingError")
        // Issue 30's goal is 1°. Measured at seed 5: Karachi 0.24°, Jakarta 0.23°, London 0.66°;
        // over seeds 1–10 (BENCHMARKS.md) means of 0.23°, 0.22° and 0.55°, London's worst 0.85°
        // (`theGoalsHoldAtEverySeedAtTheHighestDips`).
        #expect(outcome.score.holdRMSDegrees <= 1, "\(outcome.score)")
        #expect(outcome.score.turnP95Degrees <= 5, "\(outcome.score)")
    }

    /// Not only at CI's seed: the two highest dips, where a fit's error turns the needle most
    /// (·tan I), with the 40 µT unit, and London with 500 µT, at seeds 1–10. Before a fresh fit's
    /// refinements were taken (`MagnetometerCalibrator.Configuration.freshFitSeconds`) London's
    /// holds were 1.01° (seed 2) and 1.29° (seed 7) with 40 µT and 1.31° (seed 7) with 500 µT: the
    /// fit accepted in the middle of the waving, through verticals still a degree off, stayed in
    /// use for the whole scene. Simulated time: the result is the same on every run.
    @Test(arguments: 1...10)
    func theGoalsHoldAtEverySeedAtTheHighestDips(seed: Int) throws {
        let istanbul = try #require(Self.sites.first { $0.name == "Istanbul" })
        for (site, hardIron) in [(FusedNeedleTests.london, Vector3(28, -22, 18)), (istanbul, Vector3(28, -22, 18)),
                                 (FusedNeedleTests.london, Vector3(-450, 200, 300))] {
            let outcome = try Self.run(at: site, seed: UInt64(seed), hardIronMicrotesla: hardIron)
            let label = "seed \(seed), \(site.name), \(Int(hardIron.length.rounded())) µT: \(outcome.score); confidently wrong \(outcome.confidentlyWrong)"
            print("first use (model, 50 Hz) " + label)
            #expect(outcome.acceptedAtSeconds != nil, "\(label)")
            #expect(outcome.confidentlyWrong == 0, "\(label)")
            #expect(outcome.score.holdRMSDegrees <= 1, "\(label)")
            #expect(outcome.score.turnP95Degrees <= 5, "\(label)")
            #expect(outcome.score.settleMedianMilliseconds <= 150, "\(label)")
            #expect(outcome.score.worstDuringDisturbanceDegrees <= 3, "\(label)")
        }
    }

    /// The scenes' seed: 5, or `FIRST_USE_SEED` to run another (the seed sweeps of BENCHMARKS.md).
    static let seed: UInt64 = ProcessInfo.processInfo.environment["FIRST_USE_SEED"].flatMap { UInt64($0) } ?? 5
}
