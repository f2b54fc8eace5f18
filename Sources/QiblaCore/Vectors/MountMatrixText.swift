// SPDX-License-Identifier: Apache-2.0
// The text form of IIO mount matrices, "a, b, c; d, e, f; g, h, i" (kernel ABI
// Documentation/ABI/testing/sysfs-bus-iio, `mount_matrix` / `in_<type>_mount_matrix`: rows of M with
// v' = M·v taking the sensor frame to the device frame). One parser for the sysfs attribute and the
// configuration override (which uses the same text, like systemd hwdb's ACCEL_MOUNT_MATRIX), and the
// formatter the simulator writes with.

/// Why a mount matrix text was refused.
public enum MountMatrixError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not three rows of three locale-independent decimals.
    case malformed(String)
    /// A row of zeros would erase an axis (seen in broken device trees); the caller falls back to identity.
    case allZeroRow(index: Int)

    public var description: String {
        switch self {
        case .malformed(let text): "malformed mount matrix \"\(text)\""
        case .allZeroRow(let index): "mount matrix row \(index) is all zeros"
        }
    }
}

/// Parses a kernel mount matrix: three `;`-separated rows of three `,`-separated decimals
/// (``parseFiniteDouble(_:)``; blanks and line breaks around them are ignored).
/// Improper matrices (determinant −1, a mirrored axis, as on the Librem 5 accelerometer) are accepted
/// unchanged: they are the kernel's statement of how the chip is mounted.
/// - Throws: ``MountMatrixError/malformed(_:)``, ``MountMatrixError/allZeroRow(index:)``.
public func parseMountMatrixOrThrow(_ text: String) throws(MountMatrixError) -> Matrix3 {
    let rows = text.split(separator: ";", omittingEmptySubsequences: false)
    guard rows.count == 3 else { throw .malformed(text) }
    var values: [Double] = []
    for row in rows {
        let entries = row.split(separator: ",", omittingEmptySubsequences: false)
        guard entries.count == 3 else { throw .malformed(text) }
        for entry in entries {
            guard let value = parseFiniteDouble(entry) else { throw .malformed(text) }
            values.append(value)
        }
    }
    let m = Matrix3(values[0], values[1], values[2], values[3], values[4], values[5], values[6], values[7], values[8])
    for (index, row) in [m.row0, m.row1, m.row2].enumerated() where row == .zero {
        throw .allZeroRow(index: index)
    }
    return m
}

/// Parses a kernel mount matrix; `nil` for malformed text or an all-zero row (see ``parseMountMatrixOrThrow(_:)``).
public func parseMountMatrix(_ text: String) -> Matrix3? {
    try? parseMountMatrixOrThrow(text)
}

extension Matrix3 {
    /// The kernel's mount matrix text, `"a, b, c; d, e, f; g, h, i"`: integers without a decimal
    /// point, other values in Swift's shortest round-trip form (so ``parseMountMatrix(_:)`` gives them back).
    public var mountMatrixText: String {
        func f(_ v: Double) -> String {
            if v == v.rounded(), abs(v) < 1e9 { return String(Int(v)) }
            return String(v)
        }
        return [row0, row1, row2].map { "\(f($0.x)), \(f($0.y)), \(f($0.z))" }.joined(separator: "; ")
    }
}
