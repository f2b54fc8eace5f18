#if canImport(Glibc)
@_exported import func Glibc.sin
@_exported import func Glibc.cos
@_exported import func Glibc.tan
@_exported import func Glibc.atan2
@_exported import func Glibc.asin
@_exported import func Glibc.acos
@_exported import func Glibc.atan
@_exported import func Glibc.hypot
@_exported import func Glibc.sqrt
@_exported import func Glibc.pow
@_exported import func Glibc.fmod
@_exported import func Glibc.remainder
@_exported import func Glibc.log
@_exported import func Glibc.exp
#elseif canImport(Musl)
@_exported import func Musl.sin
@_exported import func Musl.cos
@_exported import func Musl.tan
@_exported import func Musl.atan2
@_exported import func Musl.asin
@_exported import func Musl.acos
@_exported import func Musl.atan
@_exported import func Musl.hypot
@_exported import func Musl.sqrt
@_exported import func Musl.pow
@_exported import func Musl.fmod
@_exported import func Musl.remainder
@_exported import func Musl.log
@_exported import func Musl.exp
#endif

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
