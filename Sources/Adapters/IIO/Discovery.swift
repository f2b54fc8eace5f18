// SPDX-License-Identifier: Apache-2.0
// Finding IIO magnetometers, accelerometers and gyroscopes under <sysfsRoot>/bus/iio/devices
// (kernel ABI Documentation/ABI/testing/sysfs-bus-iio).

/// One IIO device directory.
public struct IIODevice: Sendable, Hashable, CustomStringConvertible {
    /// The `N` of `iio:deviceN`.
    public var number: Int
    /// The `name` attribute (driver or part name, e.g. `lis3mdl`), or "" when missing.
    public var name: String
    /// The sysfs directory, `<sysfsRoot>/bus/iio/devices/iio:deviceN`.
    public var sysfsPath: String

    /// `iio:deviceN`, also the character device's name under `/dev`.
    public var deviceNodeName: String { "iio:device\(number)" }

    public var description: String { "\(deviceNodeName) (\(name.isEmpty ? "unnamed" : name))" }

    /// Whether the device has `in_<type>_{x,y,z}_raw` for `kind`.
    public func provides(_ kind: SensorKind) -> Bool {
        ["x", "y", "z"].allSatisfy { Sysfs.exists("\(sysfsPath)/in_\(kind.channelPrefix)_\($0)_raw") }
    }
}

/// The outcome of choosing one device of a kind, with a sentence for the log.
public struct SensorChoice: Sendable, Equatable {
    public var device: IIODevice?
    /// Human-readable reason for the choice (or for finding nothing).
    public var reason: String
    /// Every device that provides the kind, by device number.
    public var candidates: [IIODevice]
}

/// The choices of one discovery pass.
public struct SensorDiscovery: Sendable, Equatable {
    public var magnetometer: SensorChoice
    public var accelerometer: SensorChoice
    /// The gyroscope (`in_anglvel_*`): on the accelerometer's own device (inv_mpu6050, bmi160,
    /// st_lsm6dsx as one device) or on one of its own (st_gyro, st_lsm6dsx `*_gyro`,
    /// hid-sensor-gyro-3d `gyro_3d`).
    public var gyroscope: SensorChoice
}

/// Lists IIO devices (`iio:deviceN` entries) under `sysfsRoot`, ordered by device number.
public func listIIODevices(sysfsRoot: String) -> [IIODevice] {
    let directory = sysfsRoot + "/bus/iio/devices"
    var devices: [IIODevice] = []
    for entry in Sysfs.list(directory) where entry.hasPrefix("iio:device") {
        guard let number = Int(entry.dropFirst("iio:device".count)), number >= 0 else { continue }
        let path = directory + "/" + entry
        let name = SysfsAttribute.readTrimmed(path + "/name") ?? ""
        devices.append(IIODevice(number: number, name: name, sysfsPath: path))
    }
    return devices.sorted { $0.number < $1.number }
}

/// Chooses a magnetometer, an accelerometer and a gyroscope: the configured name when present,
/// otherwise the lowest device number (stable across boots for a given device tree); for the
/// gyroscope, without a configured name, the accelerometer's own device first when it carries
/// `in_anglvel_*` (one chip: one clock, one mount, one buffered scan for both).
public func discoverSensors(sysfsRoot: String, preferredMagnetometerName: String? = nil,
                            preferredAccelerometerName: String? = nil,
                            preferredGyroscopeName: String? = nil) -> SensorDiscovery {
    let devices = listIIODevices(sysfsRoot: sysfsRoot)
    let accelerometer = choose(.accelerometer, from: devices, preferred: preferredAccelerometerName, sysfsRoot: sysfsRoot)
    var gyroscope = choose(.gyroscope, from: devices, preferred: preferredGyroscopeName, sysfsRoot: sysfsRoot)
    if preferredGyroscopeName?.isEmpty ?? true, let shared = accelerometer.device,
       gyroscope.candidates.contains(shared), gyroscope.device != shared {
        gyroscope.device = shared
        gyroscope.reason = "gyroscope \(shared): on the accelerometer's device"
    } else if let device = gyroscope.device, device == accelerometer.device, preferredGyroscopeName?.isEmpty ?? true,
              gyroscope.candidates.count == 1 {
        gyroscope.reason = "gyroscope \(device): on the accelerometer's device"
    }
    return SensorDiscovery(
        magnetometer: choose(.magnetometer, from: devices, preferred: preferredMagnetometerName, sysfsRoot: sysfsRoot),
        accelerometer: accelerometer, gyroscope: gyroscope)
}

private func choose(_ kind: SensorKind, from devices: [IIODevice], preferred: String?, sysfsRoot: String) -> SensorChoice {
    let candidates = devices.filter { $0.provides(kind) }
    guard let first = candidates.first else {
        let reason = kind == .magnetometer
            ? "no IIO magnetometer under \(sysfsRoot)/bus/iio/devices (Qualcomm phones keep it behind the sensor DSP)"
            : "no IIO \(kind.rawValue) under \(sysfsRoot)/bus/iio/devices"
        return SensorChoice(device: nil, reason: reason, candidates: [])
    }
    let listed = candidates.map(\.description).joined(separator: ", ")
    if let preferred, !preferred.isEmpty {
        if let match = candidates.first(where: { $0.name == preferred }) {
            return SensorChoice(device: match, reason: "\(kind.rawValue) \(match): matches the configured name \"\(preferred)\"",
                                candidates: candidates)
        }
        return SensorChoice(device: first,
                            reason: "\(kind.rawValue) \(first): configured name \"\(preferred)\" not found among \(listed); lowest device number",
                            candidates: candidates)
    }
    if candidates.count == 1 {
        return SensorChoice(device: first, reason: "\(kind.rawValue) \(first): the only candidate", candidates: candidates)
    }
    return SensorChoice(device: first, reason: "\(kind.rawValue) \(first): lowest device number of \(listed)",
                        candidates: candidates)
}
