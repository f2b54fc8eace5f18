// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import QiblaDaemon
import QiblaSimulator
import Testing

/// Where the first use's remaining calibration error comes from (issue 36, section 1, sixteenth
/// session): the estimator, or the vertical it is given with each sample.
///
/// `CalibrationEstimator` fits m = S·(raw − b) with |m| = R and m·down = R sin I (the dot-product
/// invariance; Li & Li, IEEE Sensors J. 2012). Its dip residual carries any error of `down`
/// through the horizontal field: 1° of tilt error is R cos I · 0.017 ≈ 0.6 µT at Karachi, 0.3 µT at
/// London. Errors that change from sample to sample average out over hundreds of samples; errors
/// that stay for seconds (an attitude filter's tilt while its gyroscope's bias is still being
/// learned) do not, and pull the hard iron with them. The daemon therefore tells the calibrator
/// which verticals are the filter's (`MagnetometerCalibrator.add(…verticalFromAttitudeFilter:)`),
/// and the fit weighs their dip by `attitudeFilterVerticalErrorDegrees`.
@Suite struct FirstUseVerticalTests {
    /// The first seconds of the first use's waving, sampled at 50 Hz as `FirstUseSceneTests` does.
    struct Waving {
        var scene: Scene
        var raw: [Vector3] = []
        /// The scene's own down (NED +z seen from the device), unit.
        var trueDown: [Vector3] = []
        /// The accelerometer's reading negated (the hand's acceleration and the noise in it).
        var accelerometerDown: [Vector3] = []
    }

    static func waving(at site: FusedNeedleTests.Site, seed: UInt64, seconds: Double = 15) throws -> Waving {
        var w = Waving(scene: try FirstUseSceneTests.scene(at: site, seconds: 70, seed: seed))
        var noise = GaussianNoise(seed: seed)
        for k in 0...Int(seconds * 50) {
            let t = Double(k) / 50
            w.raw.append(w.scene.magnetometerReadingMicrotesla(at: t, noiseMicrotesla: noise.nextVector(standardDeviation: w.scene.magnetometerNoiseMicrotesla)))
            let a = w.scene.accelerometerReadingMetresPerSecondSquared(at: t, noise: noise.nextVector(standardDeviation: w.scene.accelerometerNoiseMetresPerSecondSquared))
            w.trueDown.append(w.scene.worldToDevice(at: t) * Vector3(0, 0, 1))
            w.accelerometerDown.append(-a)
        }
        return w
    }

    /// RMS heading error, degrees, that `calibration` leaves over the scene's turns and holds
    /// (21–61 s, every 0.1 s): the noise-free reading through it against the true field, both
    /// projected on the true horizontal plane. The noise is left out: it is the filter's to
    /// average, not the calibration's.
    static func headingRMSDegrees(_ calibration: MagnetometerCalibration, scene: Scene) throws -> Double {
        let inverse = try #require(scene.softIronMatrix.inverse)
        var sum = 0.0, count = 0.0
        for k in 210..<610 {
            let t = Double(k) / 10
            let raw = scene.magnetometerReadingMicrotesla(at: t)
            let truth = inverse * (raw - scene.hardIronOffsetMicrotesla)
            let fitted = calibration.apply(raw)
            let down = scene.worldToDevice(at: t) * Vector3(0, 0, 1)
            let a = truth - down * truth.dot(down), b = fitted - down * fitted.dot(down)
            let angle = Angle.degrees(atan2(down.dot(a.cross(b)), a.dot(b)))
            sum += angle * angle; count += 1
        }
        return (sum / count).squareRoot()
    }

    static func fit(_ raw: [Vector3], down: [Vector3], at site: FusedNeedleTests.Site) throws -> MagnetometerCalibration {
        var estimator = CalibrationEstimator()
        let field = MagneticModel.wmm2025.field(at: site.position, decimalYear: CalibrationIntegrationTests.now)
        let estimate = estimator.estimate(raw: raw, down: down, expectedField: field)
        let e = try #require(estimate)
        return MagnetometerCalibration(hardIronOffset: e.hardIronOffsetMicrotesla, softIronMatrix: e.softIronMatrix)
    }

    /// Given a vertical whose errors do not persist (the scene's own, or the accelerometer's with
    /// the hand's acceleration in it), the estimator fits the first 15 s of waving to a few tenths
    /// of a degree at every site and seed tried: what is left of the first use's error is not the
    /// estimator's. Measured (seeds 1–5, RMS over the turns and holds): the true vertical
    /// 0.02–0.67°, the accelerometer's 0.02–0.86° (`FIRST_USE_VERTICAL=1` prints the table).
    @Test(arguments: FirstUseSceneTests.sites)
    func theEstimatorGivenAVerticalWithoutPersistentErrorsFitsTheWaving(site: FusedNeedleTests.Site) throws {
        var worstTrue = 0.0, worstAccelerometer = 0.0
        for seed in UInt64(1)...5 {
            let w = try Self.waving(at: site, seed: seed)
            let exact = try Self.headingRMSDegrees(Self.fit(w.raw, down: w.trueDown, at: site), scene: w.scene)
            let measured = try Self.headingRMSDegrees(Self.fit(w.raw, down: w.accelerometerDown, at: site), scene: w.scene)
            let none = try Self.headingRMSDegrees(Self.fit(w.raw, down: Array(repeating: .zero, count: w.raw.count), at: site), scene: w.scene)
            if ProcessInfo.processInfo.environment["FIRST_USE_VERTICAL"] != nil {
                print(String(format: "first-use vertical %@ seed %d: true %.2f° accelerometer %.2f° none %.2f°", site.name, Int(seed), exact, measured, none))
            }
            worstTrue = max(worstTrue, exact); worstAccelerometer = max(worstAccelerometer, measured)
        }
        print("first-use waving fitted at \(site.name): worst heading RMS with the true vertical \(worstTrue)°, the accelerometer's \(worstAccelerometer)°")
        #expect(worstTrue <= 1, "\(site.name): \(worstTrue)°")
        #expect(worstAccelerometer <= 1.2, "\(site.name): \(worstAccelerometer)°")
    }

    /// Not a test of its own unless `FIRST_USE_VERTICAL` is set: the same fit with the vertical
    /// the daemon gives the calibrator (the attitude filter's while it tracks), next to the fit
    /// the daemon accepted, over seeds 1–10 (`FIRST_USE_VERTICAL=1 swift test --filter
    /// FirstUseVerticalTests/theDaemonsVertical`). The samples are every sample up to the
    /// acceptance, not the calibrator's binned set.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["FIRST_USE_VERTICAL"] != nil), arguments: FirstUseSceneTests.sites)
    func theDaemonsVertical(site: FusedNeedleTests.Site) throws {
        for seed in UInt64(1)...10 {
            let scene = try FirstUseSceneTests.scene(at: site, seconds: 62, seed: seed)
            var replay = SensorReplay(position: site.position, unixSecondsAtStart: Date().timeIntervalSince1970, hasGyroscope: true)
            var noise = GaussianNoise(seed: seed), gyroNoise = GaussianNoise(seed: seed ^ 0x77)
            var raw: [Vector3] = [], filterDown: [Vector3] = [], trueDown: [Vector3] = [], accelerometerDown: [Vector3] = []
            var filterTiltError = 0.0, filterTiltSigma = 0.0, tracked = 0.0
            var accepted: MagnetometerCalibration?
            for k in 0...(62 * 50) where accepted == nil {
                let t = Double(k) / 50
                let m = scene.magnetometerReadingMicrotesla(at: t, noiseMicrotesla: noise.nextVector(standardDeviation: scene.magnetometerNoiseMicrotesla))
                let a = scene.accelerometerReadingMetresPerSecondSquared(at: t, noise: noise.nextVector(standardDeviation: scene.accelerometerNoiseMetresPerSecondSquared))
                let g = scene.gyroscopeReadingRadiansPerSecond(at: t, periodSeconds: 0.02, noise: gyroNoise.nextVector(standardDeviation: scene.gyroscope.noiseDegreesPerSecond * .pi / 180))
                _ = replay.apply(timeSeconds: t, acceleration: a, angularVelocity: g, magneticField: m)
                let compass = replay.model.compass
                let down = scene.worldToDevice(at: t) * Vector3(0, 0, 1)
                raw.append(m); trueDown.append(down); accelerometerDown.append(-a)
                if compass.attitudeFilter.isTracking(at: t) {
                    let filter = -compass.attitudeFilter.upDirection
                    filterDown.append(filter)
                    let e = Angle.degrees(acos(max(-1, min(1, filter.dot(down)))))
                    filterTiltError += e * e; filterTiltSigma += compass.attitudeFilter.tiltSigmaDegrees; tracked += 1
                } else {
                    filterDown.append(-a)
                }
                if compass.state.calibrationState == .calibrated {
                    accepted = compass.calibrator.fit?.calibration
                }
            }
            let daemon = try accepted.map { try Self.headingRMSDegrees($0, scene: scene) } ?? .nan
            let withFilter = try Self.headingRMSDegrees(Self.fit(raw, down: filterDown, at: site), scene: scene)
            let exact = try Self.headingRMSDegrees(Self.fit(raw, down: trueDown, at: site), scene: scene)
            let measured = try Self.headingRMSDegrees(Self.fit(raw, down: accelerometerDown, at: site), scene: scene)
            print(String(format: "first-use vertical %@ seed %2d accepted at %4.1f s: accepted fit %.2f°; every sample with the filter's vertical %.2f° (its tilt error RMS %.2f°, sigma mean %.2f°), the true vertical %.2f°, the accelerometer's %.2f°",
                         site.name, Int(seed), Double(raw.count - 1) / 50, daemon, withFilter,
                         (filterTiltError / max(1, tracked)).squareRoot(), filterTiltSigma / max(1, tracked), exact, measured))
        }
    }
}

/// `MagnetometerCalibrator.Configuration.freshFitSeconds` on its own: the calibrator alone, given
/// the first use's samples (London, seed 7, the worst seed before the rule; Karachi, seed 7) with
/// the accelerometer's vertical, declared as the attitude filter's or not.
@Suite struct FreshFitTests {
    struct Outcome { var acceptedAt: Double?; var refinementsInWindow: Int; var refinements: Int }

    static func run(freshFitSeconds: Double, verticalFromAttitudeFilter: Bool, seed: UInt64 = 7,
                    site: FusedNeedleTests.Site = FusedNeedleTests.london) throws -> Outcome {
        let w = try FirstUseVerticalTests.waving(at: site, seed: seed, seconds: 60)
        var configuration = MagnetometerCalibrator.Configuration()
        configuration.freshFitSeconds = freshFitSeconds
        var calibrator = MagnetometerCalibrator(configuration: configuration)
        calibrator.setExpectedField(MagneticModel.wmm2025.field(at: site.position, decimalYear: CalibrationIntegrationTests.now))
        var outcome = Outcome(acceptedAt: nil, refinementsInWindow: 0, refinements: 0)
        for (k, raw) in w.raw.enumerated() {
            let t = Double(k) / 50
            calibrator.add(rawMicrotesla: raw, accelerationMetresPerSecondSquared: -w.accelerometerDown[k], time: t,
                           verticalFromAttitudeFilter: verticalFromAttitudeFilter)
            if outcome.acceptedAt == nil, calibrator.state == .calibrated { outcome.acceptedAt = t }
            if let accepted = outcome.acceptedAt, t - accepted <= 20 { outcome.refinementsInWindow = calibrator.refinementCount }
        }
        outcome.refinements = calibrator.refinementCount
        return outcome
    }

    /// Within 20 s of an acceptance through the filter's verticals a refit no worse determined is
    /// taken; without the rule, or through an accelerometer's verticals, the 20 % rule decides.
    @Test func aFreshFitsRefitsAreTakenOnlyThroughTheFiltersVertical() throws {
        let fresh = try Self.run(freshFitSeconds: 20, verticalFromAttitudeFilter: true)
        let never = try Self.run(freshFitSeconds: 0, verticalFromAttitudeFilter: true)
        // Karachi, seed 7: without the condition on the filter's verticals the rule took 3 refits
        // here where the 20 % rule takes 1.
        let accelerometer = try Self.run(freshFitSeconds: 20, verticalFromAttitudeFilter: false, seed: 7, site: FusedNeedleTests.karachi)
        let accelerometerNever = try Self.run(freshFitSeconds: 0, verticalFromAttitudeFilter: false, seed: 7, site: FusedNeedleTests.karachi)
        print("fresh fit: \(fresh); rule off: \(never); accelerometer's vertical: \(accelerometer), rule off: \(accelerometerNever)")
        #expect(fresh.acceptedAt != nil && fresh.acceptedAt == never.acceptedAt)
        #expect(fresh.refinementsInWindow > never.refinementsInWindow, "\(fresh) against \(never)")
        #expect(accelerometer.acceptedAt != nil && accelerometerNever.refinements >= 1)
        #expect(accelerometer.refinements == accelerometerNever.refinements, "\(accelerometer) against \(accelerometerNever)")
    }
}
