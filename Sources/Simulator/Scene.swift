// SPDX-License-Identifier: Apache-2.0
// The physical situation the simulated sensors measure: Earth field, gravity, device attitude over
// time, and the magnetometer's imperfections.
//
// Frames (all right-handed):
// - World: NED — x north, y east, z down (WMM convention, NOAA/BGS WMM2025 technical report §1.2).
// - Device (Android/IIO convention, Android SensorEvent docs; kernel ABI "mount matrix"): x towards the
//   right edge, y towards the top edge, z out of the screen.
// - Attitude: heading ψ, pitch θ, roll φ, degrees, as aircraft ZYX Euler angles (yaw, pitch, roll; e.g.
//   Titterton & Weston, "Strapdown Inertial Navigation Technology", 2nd ed., §3.6.2) of a body frame
//   (forward, right, down) = (device y, device x, device −z):
//     ψ heading: clockwise from true north seen from above (rotation about down);
//     θ pitch: top edge up is positive;
//     φ roll: right edge down is positive (rotation about the top-edge axis).
//   World→body C_bn = R₁(φ)·R₂(θ)·R₃(ψ) with the passive rotations
//     R₃(ψ) = [cψ sψ 0; −sψ cψ 0; 0 0 1], R₂(θ) = [cθ 0 −sθ; 0 1 0; sθ 0 cθ], R₁(φ) = [1 0 0; 0 cφ sφ; 0 −sφ cφ],
//   and world→device C = P·C_bn with P = [0 1 0; 1 0 0; 0 0 −1] (body (f, r, d) → device (r, f, −d)).
// Consequences (checked by the tests):
// - flat face-up, ψ = θ = φ = 0: C = P; the accelerometer (specific force = reaction to gravity,
//   −g_NED = (0, 0, −g)) reads (0, 0, +g); a field (N, 0, D) reads (0, N, −D), so the heading
//   atan2(−m_x, m_y) is 0.
// - flat, ψ = 90° (top edge east): north = (1, 0, 0)_NED maps to (−1, 0, 0): the horizontal field lies
//   along −x (north is to the user's left when facing east). In general north → (−sin ψ, cos ψ, 0).
// - upright, θ = 90° (screen facing the user, top edge up): the accelerometer reads (0, +g, 0) and the
//   back camera (−z) points along ψ.
import QiblaCore

/// Standard gravity, m/s² (CGPM 1901; ISO 80000-3).
public let standardGravityMetresPerSecondSquared = 9.80665

/// A device attitude in degrees (see the frame conventions at the top of Scene.swift).
public struct DeviceOrientation: Sendable, Hashable {
    /// Clockwise from true north, degrees.
    public var headingDegrees: Double
    /// Top edge up positive, degrees.
    public var pitchDegrees: Double
    /// Right edge down positive, degrees.
    public var rollDegrees: Double

    public init(headingDegrees: Double, pitchDegrees: Double = 0, rollDegrees: Double = 0) {
        self.headingDegrees = headingDegrees; self.pitchDegrees = pitchDegrees; self.rollDegrees = rollDegrees
    }

    /// The world (NED) → device rotation C: v_device = C · v_NED.
    public var worldToDevice: Matrix3 {
        let p = Angle.radians(pitchDegrees), r = Angle.radians(rollDegrees), h = Angle.radians(headingDegrees)
        let r3 = Matrix3(cos(h), sin(h), 0, -sin(h), cos(h), 0, 0, 0, 1)
        let r2 = Matrix3(cos(p), 0, -sin(p), 0, 1, 0, sin(p), 0, cos(p))
        let r1 = Matrix3(1, 0, 0, 0, cos(r), sin(r), 0, -sin(r), cos(r))
        return DeviceOrientation.bodyToDevice * (r1 * (r2 * r3))
    }

    /// P: body (forward, right, down) → device (x right, y top, z out of screen).
    public static let bodyToDevice = Matrix3(0, 1, 0, 1, 0, 0, 0, 0, -1)
}

/// How the device's attitude evolves with scene time t (seconds).
public enum OrientationTrajectory: Sendable {
    /// A fixed attitude.
    case constant(DeviceOrientation)
    /// Flat face-up on a table, top edge towards `headingDegrees` (true).
    case flatOnTable(headingDegrees: Double)
    /// Held upright (pitch 90°, screen towards the user), back camera towards `headingDegrees`.
    case upright(headingDegrees: Double)
    /// Held in the hand and turned slowly back and forth:
    /// ψ(t) = base + amplitude · sin(2π t / period), θ(t) = basePitch + wobble · sin(2π t / 7 s),
    /// φ(t) = wobble · sin(2π t / 5.3 s).
    case turningInHand(baseHeadingDegrees: Double, amplitudeDegrees: Double = 20, periodSeconds: Double = 20,
                       basePitchDegrees: Double = 10, wobbleDegrees: Double = 3)
    /// Turning at a constant rate: ψ(t) = start + rate · t, with fixed pitch and roll.
    case rotating(startHeadingDegrees: Double, degreesPerSecond: Double, pitchDegrees: Double = 0, rollDegrees: Double = 0)
    /// Anything else.
    case custom(@Sendable (Double) -> DeviceOrientation)

    /// The attitude at scene time `t` seconds.
    public func orientation(at t: Double) -> DeviceOrientation {
        switch self {
        case .constant(let o): return o
        case .flatOnTable(let h): return DeviceOrientation(headingDegrees: h)
        case .upright(let h): return DeviceOrientation(headingDegrees: h, pitchDegrees: 90)
        case .turningInHand(let h0, let amplitude, let period, let pitch0, let wobble):
            let safePeriod = period > 0 && period.isFinite ? period : 20
            return DeviceOrientation(
                headingDegrees: Angle.normalized360(h0 + amplitude * sin(2 * .pi * t / safePeriod)),
                pitchDegrees: pitch0 + wobble * sin(2 * .pi * t / 7),
                rollDegrees: wobble * sin(2 * .pi * t / 5.3))
        case .rotating(let h0, let rate, let pitch, let roll):
            return DeviceOrientation(headingDegrees: Angle.normalized360(h0 + rate * t), pitchDegrees: pitch, rollDegrees: roll)
        case .custom(let f): return f(t)
        }
    }
}

/// An extra magnetic field (a magnet, a speaker, a car) present during [start, start + duration).
public struct Interference: Sendable, Hashable {
    /// Whether ``fieldMicrotesla`` is fixed to the world (NED) or to the device.
    public enum Frame: Sendable, Hashable { case world, device }

    public var startSeconds: Double
    public var durationSeconds: Double
    /// The added field, microtesla, in ``frame``.
    public var fieldMicrotesla: Vector3
    public var frame: Frame

    public init(startSeconds: Double, durationSeconds: Double, fieldMicrotesla: Vector3, frame: Frame = .device) {
        self.startSeconds = startSeconds; self.durationSeconds = durationSeconds
        self.fieldMicrotesla = fieldMicrotesla; self.frame = frame
    }

    /// True when t ∈ [start, start + duration).
    public func isActive(at t: Double) -> Bool { t >= startSeconds && t < startSeconds + durationSeconds }
}

/// The gyroscope's imperfections (what a MEMS rate sensor adds to the true angular velocity).
/// Measured ω_m = (1 + k)·ω + b(t) + n, per axis, device frame, where
/// b(t) = b₀ + Δb·(1 − e^(−t/τ)) is a bias that drifts as the chip warms up (a first-order thermal
/// response; MPU-6050 datasheet: ±20 °/s initial zero-rate output, ±20 °/s over −40…85 °C), k the
/// scale-factor error and n white noise; the raw counts then quantise by the driver's scale.
public struct GyroscopeErrors: Sendable, Hashable {
    /// b₀, °/s per device axis.
    public var biasDegreesPerSecond: Vector3
    /// Δb: how far the bias moves as the chip warms up, °/s per axis.
    public var biasDriftDegreesPerSecond: Vector3
    /// τ of the warm-up, seconds.
    public var biasDriftTimeConstantSeconds: Double
    /// Standard deviation of the white noise, °/s per axis per sample.
    public var noiseDegreesPerSecond: Double
    /// k, dimensionless (0.01 = 1 % too much).
    public var scaleFactorError: Double

    /// Defaults: a few tenths of °/s of bias, 0.1 °/s of drift over two minutes, 0.05 °/s noise
    /// (MPU-6050: 0.005 °/s/√Hz over a 100 Hz band), no scale-factor error.
    public init(biasDegreesPerSecond: Vector3 = Vector3(0.3, -0.2, 0.25),
                biasDriftDegreesPerSecond: Vector3 = Vector3(0.1, 0.05, -0.1), biasDriftTimeConstantSeconds: Double = 120,
                noiseDegreesPerSecond: Double = 0.05, scaleFactorError: Double = 0) {
        self.biasDegreesPerSecond = biasDegreesPerSecond
        self.biasDriftDegreesPerSecond = biasDriftDegreesPerSecond
        self.biasDriftTimeConstantSeconds = biasDriftTimeConstantSeconds
        self.noiseDegreesPerSecond = noiseDegreesPerSecond
        self.scaleFactorError = scaleFactorError
    }

    /// A perfect gyroscope.
    public static let none = GyroscopeErrors(biasDegreesPerSecond: .zero, biasDriftDegreesPerSecond: .zero,
                                             noiseDegreesPerSecond: 0)

    /// b(t), rad/s, device frame.
    public func biasRadiansPerSecond(at t: Double) -> Vector3 {
        let tau = biasDriftTimeConstantSeconds.isFinite && biasDriftTimeConstantSeconds > 0 ? biasDriftTimeConstantSeconds : 120
        let warm = t > 0 ? 1 - exp(-t / tau) : 0
        return (biasDegreesPerSecond + biasDriftDegreesPerSecond * warm) * (Double.pi / 180)
    }
}

/// Everything the simulated sensors "see". A value type: deterministic, no clock, no noise source
/// (``Simulator`` draws the noise). Magnetic quantities in microtesla, accelerations in m/s²,
/// angular velocities in rad/s.
public struct Scene: Sendable {
    /// The Earth's field at the scene, NED, microtesla.
    public var earthFieldNEDMicrotesla: Vector3
    /// Where the scene is, when known (the WMM initialiser sets it).
    public var position: GeodeticPosition?
    /// The decimal year the WMM was evaluated at, when it was.
    public var decimalYear: Double?
    public var trajectory: OrientationTrajectory
    /// |g|, m/s².
    public var gravityMetresPerSecondSquared: Double
    /// Hard-iron offset b, device frame, microtesla (a field fixed to the device).
    public var hardIronOffsetMicrotesla: Vector3
    /// Soft-iron matrix S (dimensionless, device frame): measured = S · external + b.
    public var softIronMatrix: Matrix3
    /// Standard deviation of the magnetometer's Gaussian noise, per axis, microtesla.
    public var magnetometerNoiseMicrotesla: Double
    /// Standard deviation of the accelerometer's Gaussian noise, per axis, m/s².
    public var accelerometerNoiseMetresPerSecondSquared: Double
    /// Interference fields added while active.
    public var interferences: [Interference]
    /// The gyroscope's imperfections.
    public var gyroscope = GyroscopeErrors()
    /// The device's own acceleration (a hand moving, steps), world frame (NED), m/s², at scene time
    /// t; nil: the device does not accelerate (the accelerometer reads gravity's reaction only).
    public var linearAccelerationNED: (@Sendable (Double) -> Vector3)?

    /// A scene with an explicit Earth field (no WMM), for tests.
    public init(earthFieldNEDMicrotesla: Vector3, trajectory: OrientationTrajectory,
                gravityMetresPerSecondSquared: Double = standardGravityMetresPerSecondSquared,
                hardIronOffsetMicrotesla: Vector3 = .zero, softIronMatrix: Matrix3 = .identity,
                magnetometerNoiseMicrotesla: Double = 0, accelerometerNoiseMetresPerSecondSquared: Double = 0,
                interferences: [Interference] = [], position: GeodeticPosition? = nil) {
        self.earthFieldNEDMicrotesla = earthFieldNEDMicrotesla
        self.trajectory = trajectory
        self.gravityMetresPerSecondSquared = gravityMetresPerSecondSquared
        self.hardIronOffsetMicrotesla = hardIronOffsetMicrotesla
        self.softIronMatrix = softIronMatrix
        self.magnetometerNoiseMicrotesla = magnetometerNoiseMicrotesla
        self.accelerometerNoiseMetresPerSecondSquared = accelerometerNoiseMetresPerSecondSquared
        self.interferences = interferences
        self.position = position
        self.decimalYear = nil
    }

    /// A scene whose Earth field is WMM2025 at `position` and `decimalYear`
    /// (`MagneticModel.wmm2025.field(at:decimalYear:)`, nanotesla → microtesla).
    public init(position: GeodeticPosition, decimalYear: Double, trajectory: OrientationTrajectory,
                hardIronOffsetMicrotesla: Vector3 = .zero, softIronMatrix: Matrix3 = .identity,
                magnetometerNoiseMicrotesla: Double = 0, accelerometerNoiseMetresPerSecondSquared: Double = 0,
                interferences: [Interference] = []) {
        let field = MagneticModel.wmm2025.field(at: position, decimalYear: decimalYear)
        self.init(earthFieldNEDMicrotesla: Vector3(field.northNanotesla, field.eastNanotesla, field.downNanotesla) / 1000,
                  trajectory: trajectory, hardIronOffsetMicrotesla: hardIronOffsetMicrotesla,
                  softIronMatrix: softIronMatrix, magnetometerNoiseMicrotesla: magnetometerNoiseMicrotesla,
                  accelerometerNoiseMetresPerSecondSquared: accelerometerNoiseMetresPerSecondSquared,
                  interferences: interferences, position: position)
        self.decimalYear = decimalYear
    }

    /// Magnetic declination of the scene's Earth field, degrees east of true north: atan2(E, N);
    /// nil when the horizontal field is below 1 nT.
    public var declinationDegrees: Double? {
        let f = earthFieldNEDMicrotesla
        guard hypot(f.x, f.y) >= 0.001, f.isFinite else { return nil }
        return Angle.degrees(atan2(f.y, f.x))
    }

    /// The attitude at scene time `t` seconds.
    public func orientation(at t: Double) -> DeviceOrientation { trajectory.orientation(at: t) }

    /// World (NED) → device rotation at time `t`.
    public func worldToDevice(at t: Double) -> Matrix3 { orientation(at: t).worldToDevice }

    /// The Earth field in the device frame, microtesla (what an ideal, calibrated magnetometer reads
    /// without interference).
    public func earthFieldDeviceMicrotesla(at t: Double) -> Vector3 {
        worldToDevice(at: t) * earthFieldNEDMicrotesla
    }

    /// Earth field plus active interference, device frame, microtesla (no sensor errors).
    public func externalFieldDeviceMicrotesla(at t: Double) -> Vector3 {
        let c = worldToDevice(at: t)
        var field = c * earthFieldNEDMicrotesla
        for i in interferences where i.isActive(at: t) {
            field += i.frame == .world ? c * i.fieldMicrotesla : i.fieldMicrotesla
        }
        return field
    }

    /// What the magnetometer measures, device frame, microtesla: S · external + b + noise.
    public func magnetometerReadingMicrotesla(at t: Double, noiseMicrotesla: Vector3 = .zero) -> Vector3 {
        softIronMatrix * externalFieldDeviceMicrotesla(at: t) + hardIronOffsetMicrotesla + noiseMicrotesla
    }

    /// What the accelerometer measures, device frame, m/s²: the specific force f = C · (a − g_NED),
    /// g_NED = (0, 0, g), a = ``linearAccelerationNED`` (zero when nil), plus noise.
    public func accelerometerReadingMetresPerSecondSquared(at t: Double, noise: Vector3 = .zero) -> Vector3 {
        let a = linearAccelerationNED?(t) ?? .zero
        return worldToDevice(at: t) * (a - Vector3(0, 0, gravityMetresPerSecondSquared)) + noise
    }

    /// Half the step of the central difference in ``angularVelocityRadiansPerSecond(at:)``, seconds.
    public static let angularVelocityHalfStepSeconds = 0.001

    /// The true angular velocity ω of the device, device frame, rad/s (counter-clockwise positive
    /// about each axis, the IIO/Android convention): from the trajectory by a central difference,
    /// R = C(t+h)·C(t−h)ᵀ = exp(−[ω×]·2h) (a world-fixed vector, seen from the device, turns
    /// opposite to the device), so ω = −θ·u / 2h with θ and u the angle and axis of R
    /// (θ = acos((tr R − 1)/2), u = (R₃₂ − R₂₃, R₁₃ − R₃₁, R₂₁ − R₁₂) / (2 sin θ)); h =
    /// ``angularVelocityHalfStepSeconds``. Exact for a constant rate; O(h²) otherwise.
    public func angularVelocityRadiansPerSecond(at t: Double) -> Vector3 {
        let h = Self.angularVelocityHalfStepSeconds
        return meanAngularVelocityRadiansPerSecond(from: t - h, to: t + h)
    }

    /// The constant angular velocity that turns the device from its attitude at `start` to its
    /// attitude at `end` (device frame, rad/s; the same construction over [start, end]).
    public func meanAngularVelocityRadiansPerSecond(from start: Double, to end: Double) -> Vector3 {
        let span = end - start
        guard span > 0 else { return angularVelocityRadiansPerSecond(at: start) }
        let r = worldToDevice(at: end) * worldToDevice(at: start).transposed
        let skew = Vector3(r.row2.y - r.row1.z, r.row0.z - r.row2.x, r.row1.x - r.row0.y)
        let sine = skew.length / 2
        let cosine = (r.row0.x + r.row1.y + r.row2.z - 1) / 2
        let angle = atan2(sine, cosine)
        guard sine > 1e-15 else { return skew * (-1 / (2 * span)) }  // θ → 0: θ/(2 sin θ) → 1/2
        return skew * (-angle / (2 * sine) / span)
    }

    /// What the gyroscope measures, device frame, rad/s: (1 + k)·ω + b(t) + noise (``GyroscopeErrors``;
    /// `noise` in rad/s, drawn by the caller). With `periodSeconds` > 0, ω is the mean over the
    /// period that ends at `t`, as a MEMS gyroscope's decimation filter gives its output data
    /// (a sample is the rate over the period ending at its time; BROAD's recordings agree: issue 36);
    /// with 0, the instantaneous rate.
    public func gyroscopeReadingRadiansPerSecond(at t: Double, periodSeconds: Double = 0, noise: Vector3 = .zero) -> Vector3 {
        let omega = periodSeconds > 0 && periodSeconds.isFinite
            ? meanAngularVelocityRadiansPerSecond(from: t - periodSeconds, to: t) : angularVelocityRadiansPerSecond(at: t)
        return omega * (1 + gyroscope.scaleFactorError) + gyroscope.biasRadiansPerSecond(at: t) + noise
    }

    /// Azimuth of a device-frame direction's horizontal projection, degrees clockwise from true north in
    /// [0, 360); nil when the direction is within about 1° of vertical.
    public func trueAzimuthDegrees(ofDeviceAxis axis: Vector3, at t: Double) -> Double? {
        let world = worldToDevice(at: t).transposed * axis
        guard let unit = world.normalized, hypot(unit.x, unit.y) > 0.0175 else { return nil }
        return Angle.normalized360(Angle.degrees(atan2(unit.y, unit.x)))
    }

    /// The true heading of the top edge (+y): azimuth of its horizontal projection, degrees in [0, 360)
    /// (Android `getOrientation` azimuth referred to true north); nil when the device is near-upright.
    public func expectedTrueHeading(at t: Double) -> Double? {
        trueAzimuthDegrees(ofDeviceAxis: Vector3(0, 1, 0), at: t)
    }

    /// The magnetic heading of the top edge: ``expectedTrueHeading(at:)`` − ``declinationDegrees``,
    /// degrees in [0, 360), relative to the Earth field only (interference and sensor errors are what
    /// the daemon must reject or calibrate away). nil when undefined.
    public func expectedMagneticHeading(at t: Double) -> Double? {
        guard let h = expectedTrueHeading(at: t), let d = declinationDegrees else { return nil }
        return Angle.normalized360(h - d)
    }

    /// The true heading of the back camera (−z, out of the back of the phone), degrees in [0, 360);
    /// nil when the phone lies near-flat.
    public func expectedBackCameraTrueHeading(at t: Double) -> Double? {
        trueAzimuthDegrees(ofDeviceAxis: Vector3(0, 0, -1), at: t)
    }

    /// The magnetic heading of the back camera, degrees in [0, 360); nil when undefined.
    public func expectedBackCameraHeading(at t: Double) -> Double? {
        guard let h = expectedBackCameraTrueHeading(at: t), let d = declinationDegrees else { return nil }
        return Angle.normalized360(h - d)
    }
}
