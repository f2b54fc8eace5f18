// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
@testable import QiblaCore

/// A model of a person moving a phone in the hand, and of a held-out sensor unit, for issue 22.
///
/// Nothing here is the calibrator's or the error model's assumption:
/// - **Motion**: heading, pitch and roll are smooth random walks (each an Ornstein–Uhlenbeck
///   process driven by Gaussian steps; Uhlenbeck & Ornstein 1930), not a figure-eight. The tilt is
///   bounded by squashing a latent walk through tanh, so the phone lingers near the bounds the way a
///   wrist does, and is never upside down.
/// - **Hand**: the accelerometer also sees the hand's linear acceleration, an OU process of 0.6 m/s²
///   RMS with a 0.3 s correlation time (the calibrator drops only samples beyond 10 % of g).
/// - **Magnetometer**: noise from a Laplace distribution (heavier tails than the Gaussian the
///   estimator weighs with), quantised to 0.15 µT steps (a LIS3MDL-class 16-bit ±4 gauss
///   sensor); hard iron 20–150 µT in a uniformly random direction; soft iron: a random symmetric
///   matrix with eigenvalues up to ±15 % and an overall gain of 0.95–1.05 (not volume-preserving).
/// - **Accelerometer**: a bias drawn uniformly in ±0.17 m/s² per axis (the error model assumes a
///   Gaussian of 0.1 m/s² per axis), Laplace noise.
/// - **World**: the truth has crustal anomalies drawn uniformly: declination ±1°, dip ±1°,
///   intensity ±2 % (the estimator's priors are Gaussians around WMM2025).
enum PersonMotion: String, CaseIterable, Sendable {
    /// Heading wanders through full turns, tilt within ±45° (pitch and roll each), never over.
    case tilt45 = "±45°"
    /// The same with tilt within ±70°.
    case tilt70 = "±70°"
    /// Flat on a table, turned by hand now and then.
    case flat = "flat"

    var maximumTiltDegrees: Double {
        switch self {
        case .tilt45: 45
        case .tilt70: 70
        case .flat: 0
        }
    }
}

/// Ornstein–Uhlenbeck process x' = −x/τ + σ√(2/τ)·ξ, stationary standard deviation σ, stepped
/// exactly (Gillespie 1996).
struct OrnsteinUhlenbeck {
    var value: Double
    var tau: Double
    var sigma: Double

    mutating func step(_ dt: Double, _ rng: inout SeededGenerator) -> Double {
        let decay = exp(-dt / tau)
        value = value * decay + sigma * (1 - decay * decay).squareRoot() * rng.gaussian()
        return value
    }
}

extension SeededGenerator {
    /// A Laplace variate of standard deviation `sigma` (scale σ/√2).
    mutating func laplace(sigma: Double) -> Double {
        let u = Double.random(in: -0.5..<0.5, using: &self)
        let b = sigma / 2.0.squareRoot()
        return -b * (u < 0 ? -1 : 1) * log(max(1e-300, 1 - 2 * abs(u)))
    }
}

/// The hand: state of one person's motion.
struct HandMotion {
    let kind: PersonMotion
    var heading: Double
    var headingRate: OrnsteinUhlenbeck
    var pitchLatent: OrnsteinUhlenbeck
    var rollLatent: OrnsteinUhlenbeck
    var linear: (OrnsteinUhlenbeck, OrnsteinUhlenbeck, OrnsteinUhlenbeck)

    init(_ kind: PersonMotion, rng: inout SeededGenerator) {
        self.kind = kind
        heading = Double.random(in: 0..<360, using: &rng)
        // Heading rate: RMS 50°/s (a full turn every few seconds of sweeping), 1.5 s memory; flat:
        // a slower hand turning the phone on the table.
        headingRate = OrnsteinUhlenbeck(value: 0, tau: 1.5, sigma: kind == .flat ? 35 : 50)
        pitchLatent = OrnsteinUhlenbeck(value: 0, tau: 1.2, sigma: 0.9)
        rollLatent = OrnsteinUhlenbeck(value: 0, tau: 0.9, sigma: 0.9)
        let hand = kind == .flat ? 0.1 : 0.6
        linear = (OrnsteinUhlenbeck(value: 0, tau: 0.3, sigma: hand), OrnsteinUhlenbeck(value: 0, tau: 0.3, sigma: hand),
                  OrnsteinUhlenbeck(value: 0, tau: 0.3, sigma: hand))
    }

    /// Advances by `dt` seconds; returns the device-to-world rotation and the hand's linear
    /// acceleration in the world frame, m/s².
    mutating func step(_ dt: Double, _ rng: inout SeededGenerator) -> (Matrix3, Vector3) {
        heading += headingRate.step(dt, &rng) * dt
        let limit = kind.maximumTiltDegrees
        let pitch = limit * tanh(pitchLatent.step(dt, &rng))
        let roll = limit * tanh(rollLatent.step(dt, &rng))
        let a = Vector3(linear.0.step(dt, &rng), linear.1.step(dt, &rng), linear.2.step(dt, &rng))
        return (SimulatedMotion.orientation(headingDegrees: heading, pitchDegrees: pitch, rollDegrees: roll), a)
    }
}

/// A held-out unit: a magnetometer and accelerometer drawn from distributions other than the
/// estimator's (see `PersonMotion`).
struct HeldOutUnit {
    var hardIronMicrotesla: Vector3
    /// raw = distortion · field + b.
    var distortion: Matrix3
    var noiseMicrotesla: Double
    var accelerometerBias: Vector3
    var accelerometerNoise: Double
    static let quantumMicrotesla = 0.15

    init(_ rng: inout SeededGenerator) {
        hardIronMicrotesla = rng.unitVector() * Double.random(in: 20...150, using: &rng)
        let rotation = Matrix3.rotationZ(degrees: Double.random(in: 0..<360, using: &rng))
            * Matrix3.rotationX(degrees: Double.random(in: 0..<180, using: &rng))
            * Matrix3.rotationZ(degrees: Double.random(in: 0..<360, using: &rng))
        let gain = Double.random(in: 0.95...1.05, using: &rng)
        let e = (Double.random(in: -0.15...0.15, using: &rng), Double.random(in: -0.15...0.15, using: &rng),
                 Double.random(in: -0.15...0.15, using: &rng))
        let d = Matrix3(gain * (1 + e.0), 0, 0, 0, gain * (1 + e.1), 0, 0, 0, gain * (1 + e.2))
        distortion = rotation * d * rotation.transposed
        noiseMicrotesla = Double.random(in: 0.3...0.8, using: &rng)
        accelerometerBias = Vector3(Double.random(in: -0.17...0.17, using: &rng), Double.random(in: -0.17...0.17, using: &rng),
                                    Double.random(in: -0.17...0.17, using: &rng))
        accelerometerNoise = 0.04
    }

    func readings(_ deviceToWorld: Matrix3, linearAcceleration: Vector3, worldField: Vector3,
                  rng: inout SeededGenerator) -> (magnetic: Vector3, acceleration: Vector3) {
        let toDevice = deviceToWorld.transposed
        let q = Self.quantumMicrotesla
        func quantised(_ x: Double) -> Double { (x / q).rounded() * q }
        let field = distortion * (toDevice * worldField) + hardIronMicrotesla
        let magnetic = Vector3(quantised(field.x + rng.laplace(sigma: noiseMicrotesla)),
                               quantised(field.y + rng.laplace(sigma: noiseMicrotesla)),
                               quantised(field.z + rng.laplace(sigma: noiseMicrotesla)))
        let specificForce = toDevice * (Vector3(0, 0, TiltCompensation.standardGravity) + linearAcceleration)
        let a = specificForce + accelerometerBias
            + Vector3(rng.laplace(sigma: accelerometerNoise), rng.laplace(sigma: accelerometerNoise),
                      rng.laplace(sigma: accelerometerNoise))
        return (magnetic, a)
    }
}

/// A site with its crustal anomaly (the truth), see `PersonMotion`.
struct AnomalousSite {
    var site: SimulatedSite
    var intensityFactor: Double
    var dipAnomalyDegrees: Double

    init(_ base: SimulatedSite, rng: inout SeededGenerator) {
        site = base
        site.declinationAnomalyDegrees = Double.random(in: -1...1, using: &rng)
        intensityFactor = 1 + Double.random(in: -0.02...0.02, using: &rng)
        dipAnomalyDegrees = Double.random(in: -1...1, using: &rng)
    }

    /// The true field (east, north, up), microtesla.
    var worldFieldMicrotesla: Vector3 {
        let f = site.model.totalNanotesla / 1000 * intensityFactor
        let dip = Angle.radians(site.model.inclinationDegrees + dipAnomalyDegrees)
        let d = Angle.radians(site.trueDeclinationDegrees)
        let h = f * cos(dip)
        return Vector3(h * sin(d), h * cos(d), -f * sin(dip))
    }
}

extension SimulatedSite {
    static let hobart = SimulatedSite("Hobart", latitude: -42.8821, longitude: 147.3272)
    static let dakar = SimulatedSite("Dakar", latitude: 14.6928, longitude: -17.4467)
    static let mecca = SimulatedSite("Mecca", latitude: 21.4225, longitude: 39.8262)
    static let moscow = SimulatedSite("Moscow", latitude: 55.7558, longitude: 37.6173)
    /// Issue 22's sites, spanning the dips from −73° to +75°.
    static let issue22: [SimulatedSite] = [.hobart, .capeTown, .jakarta, .dakar, .mecca, .london, .moscow, .reykjavik]
}

/// One scene: a unit at a site, moved by a person for `learnSeconds`, then held still at random
/// poses within `poseTiltDegrees`, all through the calibrator, the heading pipeline and the
/// error model as the daemon wires them (`CompassModel`).
struct PersonScene {
    struct Sample {
        var time: Double
        var realErrorDegrees: Double
        var error: HeadingErrorEstimate
        var state: MagnetometerCalibrator.State
        var provisional: Bool
        /// During a still pose, after 1.5 s of settling.
        var settled: Bool
        var tiltDegrees: Double
        /// The real error of the same sample through a pipeline with the unit's true calibration,
        /// degrees (what the rest of the error budget leaves: noise, tilt error, anomaly).
        var oracleErrorDegrees: Double
    }

    var samples: [Sample] = []
    var firstAcceptedSeconds: Double?
    var firstStage: CalibrationStage?
    var finalStage: CalibrationStage?
    var refinements = 0
    /// The hint when the hand stopped moving (end of `learnSeconds`).
    var hintAfterLearning = CalibrationHint.none
    var calibrator: MagnetometerCalibrator

    /// - Parameters:
    ///   - poseTiltDegrees: still poses' pitch and roll each within ±tilt/√2.
    ///   - poseMotion: `.flat` holds the poses flat.
    init(site base: SimulatedSite, motion: PersonMotion, seed: UInt64, learnSeconds: Double, poseSeconds: Double,
         poseTiltDegrees: Double = 30, rate: Double = 20, location: Bool = true) {
        var rng = SeededGenerator(seed: seed)
        let world = AnomalousSite(base, rng: &rng)
        let unit = HeldOutUnit(&rng)
        let model = HeadingErrorModel()
        calibrator = MagnetometerCalibrator()
        calibrator.setExpectedField(location ? base.model : nil)
        var pipeline = HeadingPipeline()
        var oracle = HeadingPipeline()
        oracle.setCalibration(MagnetometerCalibration(hardIronOffset: unit.hardIronMicrotesla,
                                                      softIronMatrix: unit.distortion.inverse ?? .identity))
        var generation = calibrator.calibrationGeneration
        pipeline.setCalibration(calibrator.calibration)
        var hand = HandMotion(motion, rng: &rng)
        let dt = 1 / rate
        let field = world.worldFieldMicrotesla
        let amplitude = poseTiltDegrees / 2.0.squareRoot()
        func randomPose(_ rng: inout SeededGenerator) -> (Double, Double, Double) {
            (Double.random(in: 0..<360, using: &rng), Double.random(in: -amplitude...amplitude, using: &rng),
             Double.random(in: -amplitude...amplitude, using: &rng))
        }
        var previous = randomPose(&rng), next = randomPose(&rng)
        var poseStart = learnSeconds
        let total = Int((learnSeconds + poseSeconds) * rate)
        for i in 0..<total {
            let t = Double(i) * dt + Double.random(in: -0.004...0.004, using: &rng)
            let r: Matrix3, linear: Vector3, settled: Bool
            if t < learnSeconds {
                (r, linear) = hand.step(dt, &rng)
                settled = false
                hintAfterLearning = calibrator.hint
            } else {
                if t - poseStart >= 4 { previous = next; next = randomPose(&rng); poseStart += 4 }
                let phase = min(1, (t - poseStart) / 0.5)
                r = SimulatedMotion.orientation(headingDegrees: previous.0 + Angle.turn(from: previous.0, to: next.0) * phase,
                                                pitchDegrees: previous.1 + (next.1 - previous.1) * phase,
                                                rollDegrees: previous.2 + (next.2 - previous.2) * phase)
                linear = .zero
                settled = t - poseStart >= 1.5
            }
            let (m, a) = unit.readings(r, linearAcceleration: linear, worldField: field, rng: &rng)
            calibrator.add(rawMicrotesla: m, accelerationMetresPerSecondSquared: a, time: t)
            if calibrator.state == .calibrated, firstAcceptedSeconds == nil {
                firstAcceptedSeconds = t
                firstStage = calibrator.estimate?.stage
            }
            if calibrator.calibrationGeneration != generation {
                generation = calibrator.calibrationGeneration
                pipeline.setCalibration(calibrator.calibration, restartingWindow: !calibrator.isProvisional)
            }
            let oracleEstimate = try? oracle.update(magnetic: m, acceleration: a, time: t).get()
            guard case .success(let estimate) = pipeline.update(magnetic: m, acceleration: a, time: t) else { continue }
            let axis = estimate.axis == .back ? Vector3(0, 0, -1) : Vector3(0, 1, 0)
            let pointing = r * axis
            let trueHeading = Angle.degrees(atan2(pointing.x, pointing.y))
            let published = location ? estimate.magneticHeadingDegrees + base.model.declinationDegrees
                : estimate.magneticHeadingDegrees
            let truth = location ? trueHeading : trueHeading - world.site.trueDeclinationDegrees
            let error = model.estimate(estimate, calibration: calibrator.quality, fieldDisturbed: calibrator.fieldDisturbed,
                                       expectedField: location ? base.model : nil,
                                       fittedFieldMicrotesla: calibrator.fit?.fieldMicrotesla,
                                       calibrationUncertaintyDegrees: calibrator.headingSigmaDegrees(
                                           rawMicrotesla: m, accelerationMetresPerSecondSquared: a))
            let up = r.transposed * Vector3(0, 0, 1)
            samples.append(Sample(time: t, realErrorDegrees: abs(Angle.turn(from: truth, to: published)), error: error,
                                  state: calibrator.state, provisional: calibrator.isProvisional, settled: settled,
                                  tiltDegrees: Angle.degrees(acos(max(-1, min(1, up.z)))),
                                  oracleErrorDegrees: oracleEstimate.map {
                                      let heading = location ? $0.magneticHeadingDegrees + base.model.declinationDegrees
                                          : $0.magneticHeadingDegrees
                                      return abs(Angle.turn(from: truth, to: heading))
                                  } ?? .nan))
        }
        finalStage = calibrator.estimate?.stage
        refinements = calibrator.refinementCount
    }

    /// Settled still-pose samples after the first acceptance.
    var settledAfterAcceptance: [Sample] {
        guard let accepted = firstAcceptedSeconds else { return [] }
        return samples.filter { $0.settled && $0.time > accepted }
    }

    static func rms(_ samples: [Sample]) -> Double {
        (samples.map { $0.realErrorDegrees * $0.realErrorDegrees }.reduce(0, +) / Double(max(1, samples.count))).squareRoot()
    }

    /// The calibration's share of an RMS error: √(rms² − oracle²), degrees (0 when the oracle does
    /// no better).
    static func calibrationShare(_ samples: [Sample]) -> Double {
        let real = rms(samples), oracle = oracleRMS(samples)
        return max(0, real * real - oracle * oracle).squareRoot()
    }

    /// RMS of the oracle's errors over the same samples (those it has).
    static func oracleRMS(_ samples: [Sample]) -> Double {
        let errors = samples.map(\.oracleErrorDegrees).filter(\.isFinite)
        return (errors.map { $0 * $0 }.reduce(0, +) / Double(max(1, errors.count))).squareRoot()
    }
}
