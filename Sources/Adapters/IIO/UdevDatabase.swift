// SPDX-License-Identifier: Apache-2.0
// udev's device database: the properties systemd-udevd keeps for each device, among them those
// its hwdb adds (`60-sensor.hwdb`: ACCEL_MOUNT_MATRIX). Read as files, without libudev: udevd writes
// one record per device to /run/udev/data/<id>, where <id> is `c<major>:<minor>` for a device
// with a character node and `+<subsystem>:<sysname>` for one without (systemd's device_get_device_id();
// an IIO device gets a node only when it has a buffer or events). A property is a line `E:KEY=VALUE`.
import QiblaPlatform

/// udev's device database directory (`/run/udev/data`).
public struct UdevDatabase: Sendable, Equatable {
    public static let defaultDirectory = "/run/udev/data"

    /// Where the records are; tests point it at a fake tree (`--udev-data-dir`).
    public var directory: String

    public init(directory: String = UdevDatabase.defaultDirectory) { self.directory = directory }

    /// The record names that may hold `device`'s properties, most likely first: `c<major>:<minor>`
    /// from the device's `dev` attribute (`244:0`), then `+iio:iio:deviceN`.
    public func recordNames(for device: IIODevice) -> [String] {
        var names: [String] = []
        if let dev = SysfsAttribute.readTrimmed(device.sysfsPath + "/dev"), Self.isDeviceNumber(dev) {
            names.append("c" + dev)
        }
        names.append("+iio:" + device.deviceNodeName)
        return names
    }

    /// The udev properties of `device` (`E:` lines of its record); empty when udev has no record
    /// (no udevd, a fake sysfs tree, or a database directory that cannot be read).
    public func properties(of device: IIODevice) -> [String: String] {
        for name in recordNames(for: device) {
            if let text = FileSystem.readText(directory + "/" + name, limit: 1 << 16) { return Self.parseProperties(text) }
        }
        return [:]
    }

    /// The `E:KEY=VALUE` lines of a record; other lines (`S:` symlinks, `G:` tags, `I:` init time…)
    /// are skipped. The value is everything after the first `=`, unchanged.
    public static func parseProperties(_ text: String) -> [String: String] {
        var properties: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("E:") {
            let entry = line.dropFirst(2)
            guard let equals = entry.firstIndex(of: "="), equals > entry.startIndex else { continue }
            properties[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
        }
        return properties
    }

    /// `MAJOR:MINOR`, two decimal numbers.
    static func isDeviceNumber(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
    }
}

extension SensorKind {
    /// The udev property that carries this kind's mount matrix: `ACCEL_MOUNT_MATRIX` for the
    /// accelerometer (systemd's 60-sensor.hwdb, read by iio-sensor-proxy). There is none for
    /// magnetometers: the hwdb defines only ACCEL_MOUNT_MATRIX, ACCEL_LOCATION and
    /// PROXIMITY_NEAR_LEVEL, and iio-sensor-proxy applies no matrix to its compass.
    public var udevMountMatrixProperty: String? {
        switch self {
        case .accelerometer: "ACCEL_MOUNT_MATRIX"
        case .magnetometer, .gyroscope: nil
        }
    }
}
