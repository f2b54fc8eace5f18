// SPDX-License-Identifier: Apache-2.0
/// A 3×3 matrix stored by rows. Used for IIO mount matrices (kernel ABI
/// `Documentation/ABI/testing/sysfs-bus-iio`, `in_*_mount_matrix`: v' = M·v) and soft-iron
/// correction matrices.
public struct Matrix3: Sendable, Hashable, CustomStringConvertible {
    /// Rows of the matrix: `rows.0` is the first row.
    public var row0: Vector3
    public var row1: Vector3
    public var row2: Vector3

    @inlinable public init(rows row0: Vector3, _ row1: Vector3, _ row2: Vector3) {
        self.row0 = row0; self.row1 = row1; self.row2 = row2
    }

    /// Builds a matrix from nine entries in row-major order.
    @inlinable public init(_ a: Double, _ b: Double, _ c: Double,
                           _ d: Double, _ e: Double, _ f: Double,
                           _ g: Double, _ h: Double, _ i: Double) {
        self.init(rows: Vector3(a, b, c), Vector3(d, e, f), Vector3(g, h, i))
    }

    public static let identity = Matrix3(1, 0, 0, 0, 1, 0, 0, 0, 1)

    /// M·v
    @inlinable public static func * (m: Matrix3, v: Vector3) -> Vector3 {
        Vector3(m.row0.dot(v), m.row1.dot(v), m.row2.dot(v))
    }

    /// Matrix product A·B.
    @inlinable public static func * (a: Matrix3, b: Matrix3) -> Matrix3 {
        let t = b.transposed
        return Matrix3(rows: Vector3(a.row0.dot(t.row0), a.row0.dot(t.row1), a.row0.dot(t.row2)),
                       Vector3(a.row1.dot(t.row0), a.row1.dot(t.row1), a.row1.dot(t.row2)),
                       Vector3(a.row2.dot(t.row0), a.row2.dot(t.row1), a.row2.dot(t.row2)))
    }

    @inlinable public var transposed: Matrix3 {
        Matrix3(row0.x, row1.x, row2.x, row0.y, row1.y, row2.y, row0.z, row1.z, row2.z)
    }

    @inlinable public var determinant: Double { row0.dot(row1.cross(row2)) }

    /// The columns as vectors.
    @inlinable public var columns: (Vector3, Vector3, Vector3) {
        let t = transposed
        return (t.row0, t.row1, t.row2)
    }

    /// The inverse, or `nil` when the matrix is singular (|det| < 1e-12) or not finite.
    public var inverse: Matrix3? {
        let det = determinant
        guard det.isFinite, abs(det) > 1e-12 else { return nil }
        // Adjugate: columns of the inverse are cross products of the rows.
        let c0 = row1.cross(row2), c1 = row2.cross(row0), c2 = row0.cross(row1)
        return Matrix3(rows: c0, c1, c2).transposed * (1 / det)
    }

    @inlinable public static func * (m: Matrix3, s: Double) -> Matrix3 {
        Matrix3(rows: m.row0 * s, m.row1 * s, m.row2 * s)
    }

    /// Rotation about the z axis by `degrees` (counter-clockwise seen from +z).
    public static func rotationZ(degrees: Double) -> Matrix3 {
        let r = degrees * .pi / 180, c = cos(r), s = sin(r)
        return Matrix3(c, -s, 0, s, c, 0, 0, 0, 1)
    }
    /// Rotation about the x axis by `degrees`.
    public static func rotationX(degrees: Double) -> Matrix3 {
        let r = degrees * .pi / 180, c = cos(r), s = sin(r)
        return Matrix3(1, 0, 0, 0, c, -s, 0, s, c)
    }
    /// Rotation about the y axis by `degrees`.
    public static func rotationY(degrees: Double) -> Matrix3 {
        let r = degrees * .pi / 180, c = cos(r), s = sin(r)
        return Matrix3(c, 0, s, 0, 1, 0, -s, 0, c)
    }

    public var isFinite: Bool { row0.isFinite && row1.isFinite && row2.isFinite }

    public var description: String {
        "[\(row0.x), \(row0.y), \(row0.z); \(row1.x), \(row1.y), \(row1.z); \(row2.x), \(row2.y), \(row2.z)]"
    }
}
