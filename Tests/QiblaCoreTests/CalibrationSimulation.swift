// SPDX-License-Identifier: Apache-2.0
@testable import QiblaCore

/// Simulated truth for the calibration and accuracy tests: a site's field (WMM2025 plus an optional
/// declination anomaly), a magnetometer with hard and soft iron and noise, an accelerometer with bias
/// and noise, and motions. World frame: true east, true north, up; device frame as Android/IIO.
struct SimulatedSite {
    var name: String
    var position: GeodeticPosition
    /// WMM2025 at the site (what the daemon would use).
    var model: MagneticField
    /// Declination of the simulated truth minus WMM's, degrees (a crustal anomaly).
    var declinationAnomalyDegrees = 0.0

    static let decimalYear = 2026.5

    init(_ name: String, latitude: Double, longitude: Double, declinationAnomalyDegrees: Double = 0) {
        self.name = name
        position = GeodeticPosition(uncheckedLatitude: latitude, longitude: longitude, heightMetres: 0)
        model = MagneticModel.wmm2025.field(at: position, decimalYear: Self.decimalYear)
        self.declinationAnomalyDegrees = declinationAnomalyDegrees
    }

    static let london = SimulatedSite("London", latitude: 51.5074, longitude: -0.1278)
    static let reykjavik = SimulatedSite("Reykjavik", latitude: 64.1466, longitude: -21.9426)
    static let jakarta = SimulatedSite("Jakarta", latitude: -6.2088, longitude: 106.8456)
    static let capeTown = SimulatedSite("Cape Town", latitude: -33.9249, longitude: 18.4241)
    /// Resolute, Nunavut: inside the WMM caution zone (H < 6000 nT).
    static let resolute = SimulatedSite("Resolute", latitude: 74.6973, longitude: -94.8297)

    /// The true declination, degrees.
    var trueDeclinationDegrees: Double { model.declinationDegrees + declinationAnomalyDegrees }

    /// The true field in the world frame (east, north, up), microtesla.
    var worldFieldMicrotesla: Vector3 {
        let h = model.horizontalNanotesla / 1000, z = model.downNanotesla / 1000
        let d = Angle.radians(trueDeclinationDegrees)
        return Vector3(h * sin(d), h * cos(d), -z)
    }
}

/// A magnetometer + accelerometer pair: raw = W·m + b + noise (W = S⁻¹ of the calibration model),
/// a = g + bias + noise.
struct SimulatedSensor {
    var hardIronMicrotesla: Vector3
    var distortion: Matrix3
    var noiseMicrotesla: Double
    var accelerometerBias: Vector3 = .zero
    var accelerometerNoise = 0.03

    /// Librem-5-like: |b| = 87 µT, `softIron` fractional distortion on random axes (volume
    /// preserving, det 1: an overall gain error is indistinguishable from the field strength and is
    /// what the ±15 % radius acceptance allows for), σ = 0.4 µT.
    static func librem(_ rng: inout SeededGenerator, softIron: Double = 0.08, noise: Double = 0.4) -> SimulatedSensor {
        let axis = rng.unitVector()
        let rotation = Matrix3.rotationZ(degrees: Double.random(in: 0..<360, using: &rng))
            * Matrix3.rotationX(degrees: Double.random(in: 0..<180, using: &rng))
        let e = (1 + softIron, 1 - softIron / 2, 1 + softIron / 3)
        let g = pow(e.0 * e.1 * e.2, -1.0 / 3)
        let d = Matrix3(e.0 * g, 0, 0, 0, e.1 * g, 0, 0, 0, e.2 * g)
        return SimulatedSensor(hardIronMicrotesla: axis * 87, distortion: rotation * d * rotation.transposed,
                               noiseMicrotesla: noise)
    }

    /// A factory-calibrated sensor: residual offsets N(0, 1 µT²) per axis (as
    /// `HeadingErrorModel.uncalibratedMatchingResidualMicrotesla`), 1 % gain error, σ = 0.3 µT.
    static func factory(_ rng: inout SeededGenerator) -> SimulatedSensor {
        SimulatedSensor(hardIronMicrotesla: Vector3(rng.gaussian(), rng.gaussian(), rng.gaussian()),
                        distortion: Matrix3(1.01, 0, 0, 0, 0.995, 0, 0, 0, 1.0), noiseMicrotesla: 0.3)
    }

    /// Raw magnetometer and accelerometer readings for a device-to-world rotation.
    func readings(_ deviceToWorld: Matrix3, site: SimulatedSite, extraWorldField: Vector3 = .zero,
                  rng: inout SeededGenerator) -> (magnetic: Vector3, acceleration: Vector3) {
        let toDevice = deviceToWorld.transposed
        let field = toDevice * (site.worldFieldMicrotesla + extraWorldField)
        let noise = Vector3(rng.gaussian(), rng.gaussian(), rng.gaussian()) * noiseMicrotesla
        let magnetic = distortion * field + hardIronMicrotesla + noise
        let g = toDevice * Vector3(0, 0, TiltCompensation.standardGravity)
        let a = g + accelerometerBias + Vector3(rng.gaussian(), rng.gaussian(), rng.gaussian()) * accelerometerNoise
        return (magnetic, a)
    }
}

enum SimulatedMotion {
    /// Heading (true, of the top edge), pitch and roll, degrees → device-to-world rotation.
    static func orientation(headingDegrees: Double, pitchDegrees: Double, rollDegrees: Double) -> Matrix3 {
        HeadingFixture.orientation(headingDegrees: headingDegrees, pitchDegrees: pitchDegrees, rollDegrees: rollDegrees)
    }

    /// A slow "figure-8" through all orientations: heading turning 45°/s, pitch ±75° and roll ±170°
    /// at incommensurate rates.
    static func figureEight(time t: Double) -> Matrix3 {
        orientation(headingDegrees: 45 * t, pitchDegrees: 75 * sin(2 * .pi * 0.23 * t),
                    rollDegrees: 170 * sin(2 * .pi * 0.11 * t))
    }

    /// Turning flat on a table at 30°/s.
    static func flat(time t: Double) -> Matrix3 {
        orientation(headingDegrees: 30 * t, pitchDegrees: 0, rollDegrees: 0)
    }
}

/// Runs a calibrator through `seconds` of a motion at 20 Hz from `start`; returns the time of the
/// first acceptance (if any).
@discardableResult
func runCalibration(_ calibrator: inout MagnetometerCalibrator, sensor: SimulatedSensor, site: SimulatedSite,
                    seconds: Double, start: Double = 0, rng: inout SeededGenerator,
                    motion: (Double) -> Matrix3 = SimulatedMotion.figureEight) -> Double? {
    var accepted: Double?
    let count = Int(seconds * 20)
    for i in 0..<count {
        let t = start + Double(i) * 0.05
        let (m, a) = sensor.readings(motion(t - start), site: site, rng: &rng)
        calibrator.add(rawMicrotesla: m, accelerationMetresPerSecondSquared: a, time: t)
        if accepted == nil, calibrator.state == .calibrated { accepted = t }
    }
    return accepted
}

/// One published heading of a simulated run with its known real error.
struct SimulatedHeading {
    var time: Double
    /// |published − true|, degrees (true heading when a location is known, else magnetic).
    var realErrorDegrees: Double
    var error: HeadingErrorEstimate
    /// True during the still part of a pose (after 1 s of settling).
    var settled: Bool
    var interference: Bool
    /// |instantaneous − true| of the same sample, degrees (diagnostics).
    var instantaneousErrorDegrees = 0.0
}

/// Still poses at random headings and tilts (pitch, roll each within ±`tiltDegrees`/√2, so the
/// tilt stays ≤ `tiltDegrees`), each held `holdSeconds` and reached by a 0.5 s turn, at 20 Hz.
/// Every sample goes through the calibrator (which drives the pipeline's calibration) and the
/// pipeline; each estimate is scored by `model` against the truth.
func runPoses(_ calibrator: inout MagnetometerCalibrator, _ pipeline: inout HeadingPipeline,
              sensor: SimulatedSensor, site: SimulatedSite, seconds: Double, start: Double,
              rng: inout SeededGenerator, model: HeadingErrorModel = HeadingErrorModel(),
              locationKnown: Bool = true, tiltDegrees: Double = 30, holdSeconds: Double = 3,
              extraWorldField: (Double) -> Vector3 = { _ in .zero }) -> [SimulatedHeading] {
    var out: [SimulatedHeading] = []
    let amplitude = tiltDegrees / 2.0.squareRoot()
    func randomPose() -> (Double, Double, Double) {
        (Double.random(in: 0..<360, using: &rng), Double.random(in: -amplitude...amplitude, using: &rng),
         Double.random(in: -amplitude...amplitude, using: &rng))
    }
    var previous = randomPose(), next = randomPose()
    var poseStart = 0.0
    var generation = -1
    let period = holdSeconds + 0.5
    for i in 0..<Int(seconds * 20) {
        let elapsed = Double(i) * 0.05, t = start + elapsed
        if elapsed - poseStart >= period { previous = next; next = randomPose(); poseStart += period }
        let phase = min(1, (elapsed - poseStart) / 0.5)
        let heading = previous.0 + Angle.turn(from: previous.0, to: next.0) * phase
        let pitch = previous.1 + (next.1 - previous.1) * phase
        let roll = previous.2 + (next.2 - previous.2) * phase
        let r = SimulatedMotion.orientation(headingDegrees: heading, pitchDegrees: pitch, rollDegrees: roll)
        let (m, a) = sensor.readings(r, site: site, extraWorldField: extraWorldField(elapsed), rng: &rng)
        calibrator.add(rawMicrotesla: m, accelerationMetresPerSecondSquared: a, time: t)
        if calibrator.calibrationGeneration != generation {
            generation = calibrator.calibrationGeneration
            pipeline.setCalibration(calibrator.calibration)
        }
        guard case .success(let estimate) = pipeline.update(magnetic: m, acceleration: a, time: t) else { continue }
        let axis = estimate.axis == .back ? Vector3(0, 0, -1) : Vector3(0, 1, 0)
        let world = r * axis
        let trueHeading = Angle.degrees(atan2(world.x, world.y))
        let published = locationKnown
            ? estimate.magneticHeadingDegrees + site.model.declinationDegrees : estimate.magneticHeadingDegrees
        let truth = locationKnown ? trueHeading : trueHeading - site.trueDeclinationDegrees
        let error = model.estimate(estimate, calibration: calibrator.quality, fieldDisturbed: calibrator.fieldDisturbed,
                                   expectedField: locationKnown ? site.model : nil,
                                   fittedFieldMicrotesla: calibrator.fit?.fieldMicrotesla,
                                   calibrationUncertaintyDegrees: calibrator.headingSigmaDegrees(
                                       rawMicrotesla: m, accelerationMetresPerSecondSquared: a))
        out.append(SimulatedHeading(time: t, realErrorDegrees: abs(Angle.turn(from: truth, to: published)),
                                    error: error, settled: elapsed - poseStart >= 1.5,
                                    interference: calibrator.magneticInterference,
                                    instantaneousErrorDegrees: abs(Angle.turn(
                                        from: truth, to: published - estimate.magneticHeadingDegrees
                                            + estimate.instantaneousHeadingDegrees))))
    }
    return out
}
