// SPDX-License-Identifier: Apache-2.0
// Sensor sets of real Linux phones, as the simulator reproduces them. Mount matrices are
// representative of each phone's device tree (an in-plane rotation or reflection), not copies of it.
import QiblaCore

/// A phone whose IIO sensors the simulator can imitate.
public enum PhoneModel: String, Sendable, CaseIterable {
    /// PINE64 PinePhone: LIS3MDL magnetometer (iio:device1) and MPU-6050 accelerometer and gyroscope
    /// on one device (iio:device2, inv_mpu6050's layout, one `in_mount_matrix`), both with mount
    /// matrices, and an unrelated STK3310 light sensor at iio:device0.
    case pinephone
    /// PINE64 PinePhone Pro: AF8133J magnetometer (iio:device0, no buffer) and MPU-6500 accelerometer
    /// and gyroscope (iio:device1, inv_mpu6050 like the PinePhone's), both with mount matrices.
    case pinephonePro = "pinephone-pro"
    /// Purism Librem 5: LSM9DS1 magnetometer without mount matrix (iio:device0), an LSM6DSx-style
    /// accelerometer (iio:device1) with the improper (det −1) mount matrix "-1, 0, 0; 0, 1, 0; 0, 0, 1",
    /// and the LSM9DS1's gyroscope as a device of its own (iio:device2, `lsm9ds1_gyro`, as
    /// st_lsm6dsx registers it), with the accelerometer's mount matrix (one chip).
    case librem5
    /// A Qualcomm phone on mainline: accelerometer only (iio:device0), no magnetometer, no gyroscope
    /// (both behind the sensor DSP).
    case qualcomm

    /// The magnetometer, or nil when the phone has none.
    public func magnetometer(buffered: Bool) -> SimulatedDevice.Configuration? {
        switch self {
        case .pinephone:
            SimulatedDevice.Configuration(style: .lis3mdl, deviceIndex: 1,
                                          mountMatrix: Matrix3(0, 1, 0, -1, 0, 0, 0, 0, 1), buffered: buffered)
        case .pinephonePro:
            SimulatedDevice.Configuration(style: .af8133j, deviceIndex: 0,
                                          mountMatrix: Matrix3(0, -1, 0, 1, 0, 0, 0, 0, 1), buffered: buffered)
        case .librem5:
            SimulatedDevice.Configuration(style: .lsm9ds1Magn, deviceIndex: 0, buffered: buffered)
        case .qualcomm:
            nil
        }
    }

    /// The accelerometer.
    public func accelerometer(buffered: Bool) -> SimulatedDevice.Configuration {
        switch self {
        case .pinephone:
            SimulatedDevice.Configuration(style: .mpu6050, deviceIndex: 2,
                                          mountMatrix: Matrix3(0, -1, 0, -1, 0, 0, 0, 0, -1), buffered: buffered,
                                          includesGyroscope: true)
        case .pinephonePro:
            SimulatedDevice.Configuration(style: .mpu6050, deviceIndex: 1, name: "mpu6500",
                                          mountMatrix: Matrix3(1, 0, 0, 0, -1, 0, 0, 0, -1), buffered: buffered,
                                          includesGyroscope: true)
        case .librem5:
            SimulatedDevice.Configuration(style: .lsm6dsx, deviceIndex: 1,
                                          mountMatrix: Matrix3(-1, 0, 0, 0, 1, 0, 0, 0, 1), buffered: buffered)
        case .qualcomm:
            SimulatedDevice.Configuration(style: .lsm6dsx, deviceIndex: 0, name: "lsm6dso_accel",
                                          mountMatrix: Matrix3(0, 1, 0, 1, 0, 0, 0, 0, -1), buffered: buffered)
        }
    }

    /// A gyroscope on a device of its own (the Librem 5's); nil when the phone has none or it is on
    /// the accelerometer's device (``hasGyroscope``).
    public func gyroscope(buffered: Bool) -> SimulatedDevice.Configuration? {
        switch self {
        case .librem5:
            SimulatedDevice.Configuration(style: .lsm9ds1Gyro, deviceIndex: 2,
                                          mountMatrix: Matrix3(-1, 0, 0, 0, 1, 0, 0, 0, 1), buffered: buffered)
        case .pinephone, .pinephonePro, .qualcomm:
            nil
        }
    }

    /// Whether the phone has a gyroscope the kernel shows (on the accelerometer's device or its own).
    public var hasGyroscope: Bool { self != .qualcomm }

    /// Writes the phone's IIO devices that are neither magnetometer nor accelerometer (so consumers
    /// must select devices by `name`, not by index). PinePhone: `iio:device0` named `stk3310`.
    public func createUnrelatedDevices(sysfsRoot: String) throws(SimulatorError) {
        guard self == .pinephone else { return }
        let directory = "\(sysfsRoot)/bus/iio/devices/iio:device0"
        try AttributeFiles.makeDirectories(directory)
        try AttributeFiles.writeAttribute("\(directory)/name", "stk3310\n")
        try AttributeFiles.writeAttribute("\(directory)/in_illuminance_raw", "42\n")
        try AttributeFiles.writeAttribute("\(directory)/in_illuminance_scale", "1.000000\n")
        try AttributeFiles.writeAttribute("\(directory)/in_proximity_raw", "0\n")
    }
}
