// SPDX-License-Identifier: Apache-2.0
// Which mount matrix applies to a sensor: the configured override, else udev's ACCEL_MOUNT_MATRIX
// (systemd hwdb), else the most specific sysfs attribute. The text format and its parser are
// QiblaCore's `parseMountMatrixOrThrow` (one parser for sysfs, udev and the configuration).
import QiblaCore

/// The mount matrix in effect for one sensor, and where it came from (for logging).
public struct MountMatrixChoice: Sendable, Equatable {
    public var matrix: Matrix3
    /// "configuration override", "udev ACCEL_MOUNT_MATRIX", the attribute file name,
    /// "identity (none in sysfs)", or the rejection.
    public var source: String
}

/// Chooses the mount matrix for `kind` on the device at `devicePath`, in iio-sensor-proxy's order
/// with qiblad's own override on top:
/// 1. the configured override (`accelerometer-mount-matrix`, `magnetometer-mount-matrix`);
/// 2. the udev property for `kind` in `udevProperties` (``SensorKind/udevMountMatrixProperty``:
///    `ACCEL_MOUNT_MATRIX` from systemd's hwdb, which exists to correct what firmware and sysfs get
///    wrong; iio-sensor-proxy's `setup_mount_matrix` reads it before sysfs). A malformed one is
///    skipped with its reason in `source`, as iio-sensor-proxy does;
/// 3. `in_<type>_mount_matrix`, `in_mount_matrix`, `mount_matrix` (most specific first); a rejected
///    matrix (malformed, all-zero row) falls back to identity with the reason in `source`.
///
/// `udevProperty` overrides the kind's own (``SensorKind/udevMountMatrixProperty``): a gyroscope on
/// the accelerometer's device takes `ACCEL_MOUNT_MATRIX` (one chip: the same axes).
func chooseMountMatrix(devicePath: String, kind: SensorKind, override: Matrix3?,
                       udevProperties: [String: String] = [:], udevProperty: String? = nil) -> MountMatrixChoice {
    if let override { return MountMatrixChoice(matrix: override, source: "configuration override") }
    var udevRejection = ""
    if let property = udevProperty ?? kind.udevMountMatrixProperty, let text = udevProperties[property] {
        do {
            return MountMatrixChoice(matrix: try parseMountMatrixOrThrow(text), source: "udev \(property)")
        } catch {
            udevRejection = "; udev \(property) rejected: \(error)"
        }
    }
    for name in ["in_\(kind.channelPrefix)_mount_matrix", "in_mount_matrix", "mount_matrix"] {
        guard let text = try? SysfsAttribute.readText(devicePath + "/" + name) else { continue }
        do {
            let matrix = try parseMountMatrixOrThrow(text)
            return MountMatrixChoice(matrix: matrix, source: name + udevRejection)
        } catch {
            return MountMatrixChoice(matrix: .identity, source: "identity (\(name) rejected: \(error)\(udevRejection))")
        }
    }
    return MountMatrixChoice(matrix: .identity, source: "identity (no mount matrix in sysfs\(udevRejection))")
}
