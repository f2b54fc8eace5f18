// SPDX-License-Identifier: Apache-2.0
/// A 3-vector of `Double` in a right-handed frame. Units are the caller's (microtesla for the
/// magnetic field, m/s² for acceleration); operations are the usual Euclidean ones.
public struct Vector3: Sendable, Hashable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public var z: Double

    @inlinable public init(_ x: Double, _ y: Double, _ z: Double) {
        self.x = x; self.y = y; self.z = z
    }

    public static let zero = Vector3(0, 0, 0)

    @inlinable public static func + (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x + b.x, a.y + b.y, a.z + b.z) }
    @inlinable public static func - (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x - b.x, a.y - b.y, a.z - b.z) }
    @inlinable public static prefix func - (a: Vector3) -> Vector3 { Vector3(-a.x, -a.y, -a.z) }
    @inlinable public static func * (a: Vector3, s: Double) -> Vector3 { Vector3(a.x * s, a.y * s, a.z * s) }
    @inlinable public static func * (s: Double, a: Vector3) -> Vector3 { a * s }
    @inlinable public static func / (a: Vector3, s: Double) -> Vector3 { Vector3(a.x / s, a.y / s, a.z / s) }
    @inlinable public static func += (a: inout Vector3, b: Vector3) { a = a + b }
    @inlinable public static func -= (a: inout Vector3, b: Vector3) { a = a - b }

    /// Dot product.
    @inlinable public func dot(_ b: Vector3) -> Double { x * b.x + y * b.y + z * b.z }
    /// Cross product `self × b` (right-hand rule).
    @inlinable public func cross(_ b: Vector3) -> Vector3 {
        Vector3(y * b.z - z * b.y, z * b.x - x * b.z, x * b.y - y * b.x)
    }
    /// Euclidean norm.
    @inlinable public var length: Double { (x * x + y * y + z * z).squareRoot() }
    /// The unit vector, or `nil` for a zero or non-finite vector.
    @inlinable public var normalized: Vector3? {
        let n = length
        guard n > 0, n.isFinite else { return nil }
        return self / n
    }
    /// True when every component is finite (no NaN, no infinity).
    @inlinable public var isFinite: Bool { x.isFinite && y.isFinite && z.isFinite }

    public var description: String { "(\(x), \(y), \(z))" }
}
