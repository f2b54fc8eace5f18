// SPDX-License-Identifier: Apache-2.0
// The C math functions QiblaCore uses, imported one by one from libm (math.h through the CMath
// shim, the same on glibc and musl) and re-exported, so no QiblaCore file imports the C library.
@_exported import func CMath.sin
@_exported import func CMath.cos
@_exported import func CMath.tan
@_exported import func CMath.atan2
@_exported import func CMath.asin
@_exported import func CMath.acos
@_exported import func CMath.atan
@_exported import func CMath.hypot
@_exported import func CMath.sqrt
@_exported import func CMath.pow
@_exported import func CMath.fmod
@_exported import func CMath.remainder
@_exported import func CMath.log
@_exported import func CMath.exp

/// Angle helpers shared by geodesy, WMM and the heading pipeline. Degrees throughout.
public enum Angle {
    @inlinable public static func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
    @inlinable public static func degrees(_ radians: Double) -> Double { radians * 180 / .pi }

    /// Wraps an angle to [0, 360). NaN stays NaN.
    @inlinable public static func normalized360(_ degrees: Double) -> Double {
        var r = fmod(degrees, 360)
        if r < 0 { r += 360 }
        return r >= 360 ? 0 : r
    }

    /// Wraps an angle to (-180, 180]. NaN stays NaN.
    @inlinable public static func normalized180(_ degrees: Double) -> Double {
        var r = fmod(degrees, 360)
        if r <= -180 { r += 360 } else if r > 180 { r -= 360 }
        return r
    }

    /// The signed smallest turn from `from` to `to`, in (-180, 180]; positive is clockwise.
    @inlinable public static func turn(from: Double, to: Double) -> Double {
        normalized180(to - from)
    }
}
