// SPDX-License-Identifier: Apache-2.0
// The simulator's motion event (issue 37): inv_mpu6050's wake-on-motion attributes and the FIFO
// standing in for the event descriptor, written as the kernel's ABI defines the records.
import Foundation
import QiblaCore
import QiblaSimulator
import Testing

@Suite("Simulator motion event")
struct SimulatorMotionEventTests {
    /// Reads every whole `struct iio_event_data` waiting in the FIFO (id, timestamp).
    static func records(_ fd: Int32) -> [(id: UInt64, timestamp: Int64)] {
        var buffer = [UInt8](repeating: 0, count: 16 * 64)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return [] }
        return stride(from: 0, to: count - count % 16, by: 16).map { offset in
            buffer.withUnsafeBytes { raw in
                (raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self), raw.loadUnaligned(fromByteOffset: offset + 8, as: Int64.self))
            }
        }
    }

    @Test("an enabled wake-on-motion event writes one record per sample that moved beyond _value; disabled, none")
    func wakeOnMotion() throws {
        let scratch = ScratchDirectory()
        var configuration = SimulatedDevice.Configuration(style: .mpu6050, deviceIndex: 1, name: "mpu6500")
        configuration.motionEvents = true
        let device = try SimulatedDevice(configuration: configuration, sysfsRoot: scratch.sysfs, devRoot: scratch.dev)
        defer { device.close() }
        let events = "\(scratch.sysfs)/bus/iio/devices/iio:device1/events"
        #expect(try readText("\(events)/in_accel_x|y|z_roc_rising_en") == "0\n")
        #expect(try readText("\(events)/in_accel_x|y|z_roc_rising_value") == "0.000000\n")
        #expect(device.eventDescriptorPath == "\(scratch.dev)/iio:device1-event-fd")
        #expect(isFIFO(device.eventDescriptorPath))
        let reader = open(device.eventDescriptorPath, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }
        let still = Vector3(0, 0, 9.81), pushed = Vector3(1.5, 0, 9.81)
        // Disabled: a push raises nothing.
        try device.writeSample(still, timestampNanoseconds: 1)
        try device.writeSample(pushed, timestampNanoseconds: 2)
        #expect(Self.records(reader).isEmpty)
        // Enabled, threshold 0.35 m/s²: noise-sized changes raise nothing, a push one record.
        try "1\n".write(toFile: "\(events)/in_accel_x|y|z_roc_rising_en", atomically: false, encoding: .utf8)
        try "0.350000\n".write(toFile: "\(events)/in_accel_x|y|z_roc_rising_value", atomically: false, encoding: .utf8)
        // (The chip compares each sample with the previous one, as the push above was.)
        try device.writeSample(pushed, timestampNanoseconds: 3)
        try device.writeSample(pushed + Vector3(0.05, -0.05, 0.02), timestampNanoseconds: 4)
        #expect(Self.records(reader).isEmpty)
        try device.writeSample(still, timestampNanoseconds: 5)
        let written = Self.records(reader)
        #expect(written.count == 1)
        // IIO_MOD_EVENT_CODE(IIO_ACCEL, 0, IIO_MOD_X_OR_Y_OR_Z, IIO_EV_TYPE_ROC, IIO_EV_DIR_RISING),
        // taken apart with include/uapi/linux/iio/events.h's IIO_EVENT_CODE_EXTRACT_* shifts.
        if let record = written.first {
            #expect((record.id >> 56) & 0xFF == 2, "IIO_EV_TYPE_ROC")
            #expect((record.id >> 48) & 0x7F == 1, "IIO_EV_DIR_RISING")
            #expect((record.id >> 40) & 0xFF == 11, "IIO_MOD_X_OR_Y_OR_Z")
            #expect((record.id >> 32) & 0xFF == 3, "IIO_ACCEL")
            #expect(record.timestamp == 5)
        }
        #expect(device.writtenMotionEvents == 1)
        // Another style (a magnetometer) has no events even when asked.
        var magnetometer = SimulatedDevice.Configuration(style: .lis3mdl, deviceIndex: 2)
        magnetometer.motionEvents = true
        let other = try SimulatedDevice(configuration: magnetometer, sysfsRoot: scratch.sysfs, devRoot: scratch.dev)
        defer { other.close() }
        #expect(!fileExists("\(scratch.sysfs)/bus/iio/devices/iio:device2/events"))
    }
}
