// SPDX-License-Identifier: Apache-2.0
import QiblaPlatform

extension IIODevice {
    /// Where the device sits in the kernel's device tree, stable across reboots as long as the
    /// hardware is the same: the target of `/sys/bus/iio/devices/iio:deviceN` (a symlink into
    /// `/sys/devices/…`) without its last component, whose `N` may change from boot to boot
    /// (kernel `Documentation/ABI/testing/sysfs-bus-iio`). Used to key per-device state such as the
    /// magnetometer calibration. Falls back to the path itself when it is not a link (test trees).
    public var stableLocation: String {
        let target = Self.resolvedPath(sysfsPath) ?? sysfsPath
        let trimmed = target.hasSuffix("/" + deviceNodeName) ? String(target.dropLast(deviceNodeName.count + 1)) : target
        return trimmed.isEmpty ? sysfsPath : trimmed
    }

    /// The target of the symlink at `path` (`readlink(2)`), made absolute; nil when it is not a link.
    private static func resolvedPath(_ path: String) -> String? {
        guard let target = try? FileSystem.destinationOfSymbolicLink(path) else { return nil }
        if target.hasPrefix("/") { return target }
        guard let slash = path.lastIndex(of: "/") else { return target }
        return String(path[..<slash]) + "/" + target
    }
}
