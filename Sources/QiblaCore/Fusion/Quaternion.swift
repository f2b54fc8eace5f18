// SPDX-License-Identifier: Apache-2.0
// Unit quaternions for the attitude filter (Hamilton convention, as in J. Solà, "Quaternion
// kinematics for the error-state Kalman filter", arXiv:1711.02508, §2–4; equation numbers below
// refer to it).

/// A unit quaternion w + xi + yj + zk (Hamilton convention) standing for the rotation that takes
/// device coordinates into world coordinates: v_world = q ⊗ v_device ⊗ q* (Solà eq. 105).
public struct Quaternion: Sendable, Equatable {
    public var w: Double
    public var x: Double
    public var y: Double
    public var z: Double

    @inlinable public init(w: Double, x: Double, y: Double, z: Double) {
        self.w = w; self.x = x; self.y = y; self.z = z
    }

    public static let identity = Quaternion(w: 1, x: 0, y: 0, z: 0)

    /// The rotation by the rotation vector `v` (axis × angle, radians): the exponential map
    /// (Solà eq. 101); a Taylor form below 1e-8 rad.
    @inlinable public init(rotationVector v: Vector3) {
        let angle = v.length
        if angle < 1e-8 {
            self.init(w: 1, x: v.x / 2, y: v.y / 2, z: v.z / 2)
        } else {
            let s = sin(angle / 2) / angle
            self.init(w: cos(angle / 2), x: v.x * s, y: v.y * s, z: v.z * s)
        }
    }

    /// The quaternion of a rotation matrix (Shepperd's method, numerically safe for every angle),
    /// or nil for a matrix that is not finite.
    public init?(rotationMatrix m: Matrix3) {
        guard m.isFinite else { return nil }
        let m00 = m.row0.x, m01 = m.row0.y, m02 = m.row0.z
        let m10 = m.row1.x, m11 = m.row1.y, m12 = m.row1.z
        let m20 = m.row2.x, m21 = m.row2.y, m22 = m.row2.z
        let trace = m00 + m11 + m22
        if trace > 0 {
            let s = (trace + 1).squareRoot() * 2
            self.init(w: s / 4, x: (m21 - m12) / s, y: (m02 - m20) / s, z: (m10 - m01) / s)
        } else if m00 > m11, m00 > m22 {
            let s = (1 + m00 - m11 - m22).squareRoot() * 2
            self.init(w: (m21 - m12) / s, x: s / 4, y: (m01 + m10) / s, z: (m02 + m20) / s)
        } else if m11 > m22 {
            let s = (1 + m11 - m00 - m22).squareRoot() * 2
            self.init(w: (m02 - m20) / s, x: (m01 + m10) / s, y: s / 4, z: (m12 + m21) / s)
        } else {
            let s = (1 + m22 - m00 - m11).squareRoot() * 2
            self.init(w: (m10 - m01) / s, x: (m02 + m20) / s, y: (m12 + m21) / s, z: s / 4)
        }
        guard let unit = normalized else { return nil }
        self = unit
    }

    /// Hamilton product a ⊗ b (Solà eq. 12): the rotation b followed by a.
    @inlinable public static func * (a: Quaternion, b: Quaternion) -> Quaternion {
        Quaternion(w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
                   x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                   y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                   z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w)
    }

    /// The same rotation with norm 1, or nil for a zero or non-finite quaternion.
    @inlinable public var normalized: Quaternion? {
        let n = (w * w + x * x + y * y + z * z).squareRoot()
        guard n.isFinite, n > 1e-12 else { return nil }
        return Quaternion(w: w / n, x: x / n, y: y / n, z: z / n)
    }

    public var isFinite: Bool { w.isFinite && x.isFinite && y.isFinite && z.isFinite }

    /// The rotation matrix R with R·v = q ⊗ v ⊗ q* (Solà eq. 115).
    @inlinable public var rotationMatrix: Matrix3 {
        Matrix3(1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y))
    }

    /// R·v: the device vector `v` in world coordinates.
    @inlinable public func rotate(_ v: Vector3) -> Vector3 { rotationMatrix * v }

    /// Rᵀ·v: the world vector `v` in device coordinates.
    @inlinable public func inverseRotate(_ v: Vector3) -> Vector3 { rotationMatrix.transposed * v }
}

extension Matrix3 {
    /// Entry-wise difference.
    @inlinable static func - (a: Matrix3, b: Matrix3) -> Matrix3 {
        Matrix3(rows: a.row0 - b.row0, a.row1 - b.row1, a.row2 - b.row2)
    }

    /// The outer product a bᵀ.
    @inlinable static func outer(_ a: Vector3, _ b: Vector3) -> Matrix3 {
        Matrix3(rows: b * a.x, b * a.y, b * a.z)
    }

    /// A diagonal matrix with `value` on the diagonal.
    @inlinable static func diagonal(_ value: Double) -> Matrix3 {
        Matrix3(value, 0, 0, 0, value, 0, 0, 0, value)
    }

    /// The symmetric part (A + Aᵀ)/2: keeps a covariance symmetric against rounding.
    @inlinable var symmetrised: Matrix3 { (self + transposed) * 0.5 }
}
