// SPDX-License-Identifier: Apache-2.0
// Tilt-compensated compass from one accelerometer and one magnetometer sample.
//
// Frame: the Android / Linux IIO device frame after the mount matrix is applied — x towards the
// right edge, y towards the top edge, z out of the screen. The accelerometer measures the reaction
// to gravity, so a phone lying flat face-up reads a ≈ (0, 0, +9.81) m/s².

/// Why a sample could not produce a heading. Every rejection is explicit: the pipeline never
/// publishes NaN or a number it cannot justify.
public enum HeadingRejection: Error, Sendable, Equatable, CustomStringConvertible {
    /// A component of the magnetic field, the acceleration or the time was NaN or infinite.
    case nonFiniteInput
    /// |a| is below `TiltCompensation.freeFallFraction` × standard gravity, so "up" is unknown.
    case freeFall(accelerationMetresPerSecondSquared: Double)
    /// The (calibrated) magnetic field is shorter than `TiltCompensation.minimumFieldMicrotesla`.
    case zeroMagneticField(fieldMicrotesla: Double)
    /// The field is (nearly) parallel to gravity: ‖m × a‖ / (|m||a|) = sin(angle) is below the
    /// configured minimum, so the horizontal field — and north — is undefined (near a magnetic pole,
    /// or a strong vertical disturbance).
    case fieldParallelToGravity(sineOfAngle: Double)
    /// The chosen axis (top edge or back camera) points (nearly) straight up or down, so it has no
    /// horizontal direction.
    case headingAxisVertical(HeadingAxis)
    /// The smoothed headings cancel out (mean resultant length below the threshold): the mean
    /// direction is undefined.
    case headingDispersed(resultantLength: Double)

    public var description: String {
        switch self {
        case .nonFiniteInput: return "non-finite input"
        case .freeFall(let a): return "free fall (|a| = \(a) m/s²)"
        case .zeroMagneticField(let f): return "magnetic field too weak (\(f) µT)"
        case .fieldParallelToGravity(let s): return "magnetic field parallel to gravity (sin = \(s))"
        case .headingAxisVertical(let axis): return "\(axis.rawValue) axis is vertical"
        case .headingDispersed(let r): return "headings dispersed (R = \(r))"
        }
    }
}

/// The orientation of the device relative to the local magnetic east / north / up frame, with the
/// derived headings and angles. All vectors are expressed in the device frame.
public struct DeviceOrientation: Sendable, Equatable {
    /// Unit vector pointing to magnetic east, in device coordinates (first row of Android's R).
    public var east: Vector3
    /// Unit vector pointing to magnetic north (horizontal), in device coordinates (second row of R).
    public var north: Vector3
    /// Unit vector pointing up (along the measured reaction to gravity), in device coordinates.
    public var up: Vector3
    /// Magnetic heading of the top edge (+y), degrees clockwise from magnetic north in [0, 360);
    /// `nil` when the top edge is within ~1e-7 rad of vertical.
    public var topEdgeHeadingDegrees: Double?
    /// Magnetic heading of the back camera's viewing direction (−z), degrees clockwise from
    /// magnetic north in [0, 360); `nil` when the phone lies (almost exactly) flat.
    public var backCameraHeadingDegrees: Double?
    /// Angle between the screen normal (+z) and up, degrees in [0, 180]: 0 flat face-up,
    /// 90 upright, 180 face-down.
    public var tiltDegrees: Double
    /// Elevation of the top edge above the horizon, degrees in [−90, 90] (= asin(up·ŷ)); positive
    /// when the top edge is raised. (Android's `getOrientation` pitch has the opposite sign.)
    public var pitchDegrees: Double
    /// Rotation about the top-edge axis, degrees in (−180, 180] (= atan2(up.x, up.z)); positive
    /// when the right edge is raised.
    public var rollDegrees: Double
    /// |m|, microtesla.
    public var fieldStrengthMicrotesla: Double
    /// Measured dip angle of the field below the horizontal, degrees in [−90, 90], positive when
    /// the field points down (northern magnetic hemisphere), as WMM's inclination I.
    public var inclinationDegrees: Double

    /// The magnetic heading of `axis`, or `nil` for `.none` or a vertical axis.
    public func headingDegrees(of axis: HeadingAxis) -> Double? {
        switch axis {
        case .top: return topEdgeHeadingDegrees
        case .back: return backCameraHeadingDegrees
        case .none: return nil
        }
    }
}

/// Tilt compensation by the cross-product (TRIAD-like) method of Android's
/// `SensorManager.getRotationMatrix` (AOSP `frameworks/base/core/java/android/hardware/SensorManager.java`):
///
///     east  = normalise(m × a)
///     north = normalise(a × east)
///     up    = normalise(a)
///
/// The rows (east, north, up) form the rotation matrix R that takes device coordinates to the
/// local magnetic ENU frame, so the world direction of a device axis d is (east·d, north·d, up·d)
/// and its heading is atan2(east·d, north·d). For the top edge d = +y: atan2(east.y, north.y)
/// (Android's azimuth, `getOrientation` values[0]); for the back camera d = −z:
/// atan2(−east.z, −north.z).
public enum TiltCompensation {
    /// Standard gravity g₀, m/s² (CGPM 1901; ISO 80000-3).
    public static let standardGravity = 9.80665
    /// |a| below this fraction of g₀ counts as free fall (Android uses the same 0.1 g limit).
    public static let freeFallFraction = 0.1
    /// Fields weaker than this many microtesla are treated as "no field" (Earth's field is
    /// 22–67 µT).
    public static let minimumFieldMicrotesla = 0.1
    /// Default minimum of sin(angle between m and a): 0.05, i.e. the field must be at least ≈2.9°
    /// away from vertical. Heading noise grows as 1 / sin, so this bounds the noise amplification
    /// to 20×. Android uses an absolute ‖m × a‖ < 0.1 µT·m/s² test instead.
    public static let defaultMinimumFieldGravitySine = 0.05

    /// Computes the device orientation from one calibrated magnetometer sample `magnetic`
    /// (microtesla, device frame) and one accelerometer sample `acceleration` (m/s², device frame,
    /// reaction to gravity).
    ///
    /// Checks, in order: non-finite input, free fall, zero field, field parallel to gravity.
    public static func orientation(
        magnetic m: Vector3, acceleration a: Vector3,
        minimumFieldGravitySine: Double = defaultMinimumFieldGravitySine
    ) -> Result<DeviceOrientation, HeadingRejection> {
        guard m.isFinite, a.isFinite else { return .failure(.nonFiniteInput) }
        let aLength = a.length
        guard aLength.isFinite else { return .failure(.nonFiniteInput) }
        guard aLength >= freeFallFraction * standardGravity else {
            return .failure(.freeFall(accelerationMetresPerSecondSquared: aLength))
        }
        let mLength = m.length
        guard mLength.isFinite else { return .failure(.nonFiniteInput) }
        guard mLength >= minimumFieldMicrotesla else {
            return .failure(.zeroMagneticField(fieldMicrotesla: mLength))
        }
        let h = m.cross(a)
        let sine = h.length / (mLength * aLength)
        guard sine.isFinite, sine >= minimumFieldGravitySine else {
            return .failure(.fieldParallelToGravity(sineOfAngle: sine.isFinite ? sine : 0))
        }
        guard let east = h.normalized, let up = a.normalized,
              let north = up.cross(east).normalized else {
            return .failure(.fieldParallelToGravity(sineOfAngle: 0))
        }

        // Tilt as atan2(|horizontal part of ẑ|, up.z): accurate near 0° and 180°, unlike acos.
        let tilt = Angle.degrees(atan2(hypot(up.x, up.y), up.z))
        let pitch = Angle.degrees(asin(max(-1, min(1, up.y))))
        let roll = Angle.degrees(atan2(up.x, up.z))

        // Horizontal projection length of an axis d is hypot(east·d, north·d) = sqrt(1 − (up·d)²).
        let degenerate = 1e-7
        let top: Double? = hypot(east.y, north.y) > degenerate
            ? Angle.normalized360(Angle.degrees(atan2(east.y, north.y))) : nil
        let back: Double? = hypot(east.z, north.z) > degenerate
            ? Angle.normalized360(Angle.degrees(atan2(-east.z, -north.z))) : nil

        // Dip: downward component of m over its horizontal component (WMM: I = atan2(Z, H)).
        let down = -m.dot(up)
        let horizontal = (m + up * down).length
        let inclination = Angle.degrees(atan2(down, horizontal))

        return .success(DeviceOrientation(
            east: east, north: north, up: up,
            topEdgeHeadingDegrees: top, backCameraHeadingDegrees: back,
            tiltDegrees: tilt, pitchDegrees: pitch, rollDegrees: roll,
            fieldStrengthMicrotesla: mLength, inclinationDegrees: inclination))
    }
}
