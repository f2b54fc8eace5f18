// Which mount matrix applies to a sensor: the configured override, else the most specific sysfs
// attribute. The text format and its parser are QiblaCore's `parseMountMatrixOrThrow` (one parser
// for sysfs and the configuration).
import QiblaCore

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
