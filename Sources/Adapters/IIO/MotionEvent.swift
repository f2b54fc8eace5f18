// SPDX-License-Identifier: Apache-2.0
// An accelerometer's motion event (issue 37): the IIO event its chip raises when it moves, so that
// a phone at rest waits for it instead of being read twice a second.
//
// Kernel ABI: Documentation/ABI/testing/sysfs-bus-iio (`events/`: `in_accel_<axes>_<type>_<dir>_en`
// and `_value`), include/uapi/linux/iio/events.h (`IIO_GET_EVENT_FD_IOCTL` on /dev/iio:deviceN, the
// 16-byte `struct iio_event_data` records read from the descriptor it returns). Which drivers:
// - inv_mpu6050, chips from the MPU-6500 on (MPU-6500/6515/9250/9255, ICM-20602/20608/20609/20689/
//   20690, IAM-20680; not the MPU-6050/6000/9150): wake-on-motion as one event on the
//   `IIO_MOD_X_OR_Y_OR_Z` channel, `IIO_EV_TYPE_ROC` rising (the chip compares each sample with the
//   previous one): `events/in_accel_x|y|z_roc_rising_en`, `_value` in m/s² (the driver stores it in
//   4 mg steps). Added by the 2024 WoM series ("iio: imu: inv_mpu6050: add WoM event as accel event").
// - st_lsm6dsx (the LSM6DSx family, for the chips whose settings carry the wake-up registers): the
//   wake-up function as `IIO_EV_TYPE_THRESH` either, per axis (`st_lsm6dsx_ev_motion`):
//   `events/in_accel_{x,y,z}_thresh_either_en`, `_value` in the chip's raw steps (left at the
//   driver's setting).
// Others (adxl345/367/372 activity, bmc150 slope, kxcjk-1013 motion) name their events differently
// and are not used yet: those phones rest at `rest-sample-rate` as before.
import Logging
import QiblaPlatform
import SystemPackage

/// The motion event of one accelerometer device: the enable attributes and the open event descriptor.
final class MotionEvent: @unchecked Sendable {
    /// The enable attributes, written `1` when a rest begins and `0` when it ends.
    let enablePaths: [String]
    /// The event descriptor (non-blocking); readable when the chip saw motion.
    let descriptor: FileDescriptor
    /// For the log: which attributes and where the descriptor came from.
    let description: String
    /// One record, `struct iio_event_data`.
    static let recordBytes = 16
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * recordBytes, alignment: 8)

    private init(enablePaths: [String], descriptor: FileDescriptor, description: String) {
        self.enablePaths = enablePaths
        self.descriptor = descriptor
        self.description = description
    }

    deinit {
        disarm()
        try? descriptor.close()
        scratch.deallocate()
    }

    /// The file beside `/dev/iio:deviceN` that stands for the descriptor `IIO_GET_EVENT_FD_IOCTL`
    /// would return, in a tree of plain files (the project's simulator: a FIFO it writes
    /// `struct iio_event_data` records into). Opened only when `/dev/iio:deviceN` is not a
    /// character device, so a real system never reads it.
    static func standInPath(devRoot: String, deviceNodeName: String) -> String {
        "\(devRoot)/\(deviceNodeName)-event-fd"
    }

    /// The motion event of `device`, or nil when it has none this daemon knows (no `events/`
    /// directory, other event names). Throws a sentence for the log when it has one but it
    /// cannot be used (the descriptor is held by another process: `EBUSY`; no device node).
    /// - Parameter thresholdMetresPerSecondSquared: written to a wake-on-motion `_value` in m/s².
    static func find(device: IIODevice, devRoot: String,
                     thresholdMetresPerSecondSquared: Double) throws(SensorSetupError) -> MotionEvent? {
        let events = device.sysfsPath + "/events"
        let names = Set(Sysfs.list(events))
        guard !names.isEmpty else { return nil }
        let enables: [String]
        if names.contains("in_accel_x|y|z_roc_rising_en") {
            enables = ["in_accel_x|y|z_roc_rising_en"]
            if names.contains("in_accel_x|y|z_roc_rising_value") {
                // The driver's own default may be 0 (every sample would count as motion).
                try? SysfsAttribute.write(Self.microText(thresholdMetresPerSecondSquared), to: "\(events)/in_accel_x|y|z_roc_rising_value")
            }
        } else if ["x", "y", "z"].allSatisfy({ names.contains("in_accel_\($0)_thresh_either_en") }) {
            enables = ["x", "y", "z"].map { "in_accel_\($0)_thresh_either_en" }
        } else {
            return nil
        }
        guard enables.allSatisfy({ Sysfs.isWritable("\(events)/\($0)") }) else {
            throw SensorSetupError("\(device): \(events)/\(enables[0]) is not writable by this user "
                                   + "(systemd/70-qiblad-iio.rules)")
        }
        let node = "\(devRoot)/\(device.deviceNodeName)"
        let descriptor: FileDescriptor
        var origin = "\(node) (IIO_GET_EVENT_FD_IOCTL)"
        do {
            let opened = try? FileSystem.open(node, .readOnly, options: [.nonBlocking])
            if let opened, opened.fileKind?.isCharacterDevice == true {
                defer { try? opened.close() }
                descriptor = try opened.iioEventDescriptor()
                try descriptor.setNonBlocking()
            } else {
                try? opened?.close()
                let standIn = standInPath(devRoot: devRoot, deviceNodeName: device.deviceNodeName)
                guard FileSystem.exists(standIn) else {
                    throw SensorSetupError("\(device): \(events) has \(enables[0]) but \(node) is not its character device")
                }
                descriptor = try FileSystem.open(standIn, .readOnly, options: [.nonBlocking])
                origin = "\(standIn) (a test tree's stand-in)"
            }
        } catch let error as SensorSetupError {
            throw error
        } catch {
            throw SensorSetupError("\(device): cannot open its event descriptor: \(error)")
        }
        return MotionEvent(enablePaths: enables.map { "\(events)/\($0)" }, descriptor: descriptor,
                           description: "events/\(enables.joined(separator: ", ")), read from \(origin)")
    }

    /// A non-negative value as IIO's `IIO_VAL_INT_PLUS_MICRO` text: `0.350000`.
    static func microText(_ value: Double) -> String {
        let micro = Int((max(0, value) * 1e6).rounded())
        let fraction = String(micro % 1_000_000)
        return "\(micro / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    /// Drops the records waiting (motion from before the rest), then enables the event. False
    /// when an enable attribute cannot be written (the rest then reads at `rest-sample-rate`).
    func arm() -> Bool {
        _ = drain()
        for path in enablePaths {
            guard (try? SysfsAttribute.write("1", to: path)) != nil else { return false }
        }
        return true
    }

    /// Disables the event (the chip's interrupt stays quiet while the phone is read at full rate).
    func disarm() {
        for path in enablePaths { try? SysfsAttribute.write("0", to: path) }
    }

    /// Reads every waiting record; returns how many (0 when none: `EAGAIN`).
    @discardableResult
    func drain() -> Int {
        var records = 0
        while true {
            guard case .success(let count) = FileSystem.read(descriptor, into: scratch), count > 0 else { return records }
            records += count / Self.recordBytes
            if count < scratch.count { return records }
        }
    }
}
