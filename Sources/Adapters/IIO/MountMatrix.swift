// IIO mount matrices: "a, b, c; d, e, f; g, h, i" (kernel ABI Documentation/ABI/testing/sysfs-bus-iio,
// `mount_matrix` / `in_<type>_mount_matrix`; rows of M with v' = M·v taking the sensor frame to the
// device frame).
import QiblaCore

/// Why a mount matrix text was refused.
public enum MountMatrixError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not three rows of three locale-independent decimals.
    case malformed(String)
    /// A row of zeros would erase an axis (seen in broken device trees); the layer falls back to identity.
    case allZeroRow(index: Int)

    public var description: String {
        switch self {
        case .malformed(let text): "malformed mount matrix \"\(text)\""
        case .allZeroRow(let index): "mount matrix row \(index) is all zeros"
        }
    }
}

/// Parses a kernel mount matrix, throwing on malformed text or an all-zero row.
/// Improper matrices (determinant −1, a mirrored axis, as on the Librem 5 accelerometer) are accepted
/// unchanged: they are the kernel's statement of how the chip is mounted.
public func parseMountMatrixOrThrow(_ text: String) throws(MountMatrixError) -> Matrix3 {
    let trimmed = text.split(whereSeparator: { $0 == "\n" }).joined(separator: " ")
    let rows = trimmed.split(separator: ";", omittingEmptySubsequences: false)
    guard rows.count == 3 else { throw .malformed(text) }
    var values: [[Double]] = []
    for row in rows {
        let entries = row.split(separator: ",", omittingEmptySubsequences: false)
        guard entries.count == 3 else { throw .malformed(text) }
        var parsed: [Double] = []
        for entry in entries {
            guard let value = parseIIODecimal(entry) else { throw .malformed(text) }
            parsed.append(value)
        }
        values.append(parsed)
    }
    for (index, row) in values.enumerated() where row.allSatisfy({ $0 == 0 }) {
        throw .allZeroRow(index: index)
    }
    return Matrix3(values[0][0], values[0][1], values[0][2],
                   values[1][0], values[1][1], values[1][2],
                   values[2][0], values[2][1], values[2][2])
}

/// Parses a kernel mount matrix; `nil` for malformed text or an all-zero row.
public func parseMountMatrix(_ text: String) -> Matrix3? {
    try? parseMountMatrixOrThrow(text)
}

/// The mount matrix in effect for one sensor, and where it came from (for logging).
public struct MountMatrixChoice: Sendable, Equatable {
    public var matrix: Matrix3
    /// "configuration override", the attribute file name, "identity (none in sysfs)", or the rejection.
    public var source: String
}

/// Chooses the mount matrix for `kind` on the device at `devicePath`: the configured override wins;
/// then `in_<type>_mount_matrix`, `in_mount_matrix`, `mount_matrix` (most specific first); a rejected
/// matrix (malformed, all-zero row) falls back to identity with the reason in `source`.
func chooseMountMatrix(devicePath: String, kind: SensorKind, override: Matrix3?) -> MountMatrixChoice {
    if let override { return MountMatrixChoice(matrix: override, source: "configuration override") }
    for name in ["in_\(kind.channelPrefix)_mount_matrix", "in_mount_matrix", "mount_matrix"] {
        guard let text = try? SysfsAttribute.readText(devicePath + "/" + name) else { continue }
        do {
            let matrix = try parseMountMatrixOrThrow(text)
            return MountMatrixChoice(matrix: matrix, source: name)
        } catch {
            return MountMatrixChoice(matrix: .identity, source: "identity (\(name) rejected: \(error))")
        }
    }
    return MountMatrixChoice(matrix: .identity, source: "identity (no mount matrix in sysfs)")
}
