// SPDX-License-Identifier: Apache-2.0
// The sysfs shape of the Linux IIO drivers the simulator imitates.
// Kernel ABI: Documentation/ABI/testing/sysfs-bus-iio — a channel's value in the ABI unit is
// (in_<type>_<axis>_raw + in_<type>_offset) × in_<type>[_<axis>]_scale; magnetic field in gauss
// (1 gauss = 100 µT), acceleration in m/s², angular velocity in rad/s.

/// What a simulated IIO device measures.
public enum SensorKind: String, Sendable, Equatable, CaseIterable {
    case magnetometer, accelerometer, gyroscope

    /// The IIO channel type used in attribute names (`in_magn_x_raw`, `in_accel_x_raw`, `in_anglvel_x_raw`).
    public var channelType: String {
        switch self {
        case .magnetometer: "magn"
        case .accelerometer: "accel"
        case .gyroscope: "anglvel"
        }
    }

    /// Multiply a value in the simulator's unit (microtesla, m/s², rad/s) by this to get the kernel
    /// ABI unit (gauss, m/s², rad/s). 1 gauss = 100 µT.
    public var kernelUnitsPerSimulatorUnit: Double {
        switch self {
        case .magnetometer: 0.01
        case .accelerometer, .gyroscope: 1
        }
    }
}

/// The attribute layout of one Linux IIO driver, as seen under `/sys/bus/iio/devices/iio:deviceN`.
/// Scale strings are what the simulator writes (the kernel's fixed-point formatting).
public enum DriverStyle: String, Sendable, Equatable, CaseIterable {
    /// ST LIS3MDL magnetometer (`st_magn`): per-axis `in_magn_{x,y,z}_scale` = 0.000146156 gauss/LSB
    /// (±4 gauss range, 6842 LSB/gauss, LIS3MDL datasheet table 3), `sampling_frequency`,
    /// triggered buffer, little-endian s16 scans.
    case lis3mdl
    /// Voltafield AF8133J magnetometer: shared `in_magn_scale` = 0.0001 gauss/LSB, no sampling
    /// frequency, no trigger and therefore no buffered mode in the simulator.
    case af8133j
    /// ST LSM9DS1 magnetometer part (`st_magn`, LIS3MDL-compatible registers): like ``lis3mdl``.
    /// Presets use it without a mount matrix.
    case lsm9ds1Magn
    /// InvenSense MPU-6050/6500 accelerometer (`inv_mpu6050`): shared `in_accel_scale` = 0.000598
    /// m/s²/LSB (±2 g, 16384 LSB/g), big-endian s16 scans.
    case mpu6050
    /// ST LSM6DSx accelerometer (`st_lsm6dsx`): shared `in_accel_scale` = 0.000598205 m/s²/LSB
    /// (±2 g, 61 µg/LSB), little-endian s16 scans.
    case lsm6dsx
    /// ST LSM9DS1 gyroscope as `st_lsm6dsx` registers it (drivers/iio/imu/st_lsm6dsx: one IIO device
    /// per sensor, named `<part>_gyro`): shared `in_anglvel_scale` = 0.000153 rad/s per LSB
    /// (±245 °/s, 8.75 m°/s per LSB: `IIO_DEGREE_TO_RAD(8750)` µrad), `mount_matrix` shared by all
    /// channels, scan elements x, y, z (le:s16) at 0–2 and the timestamp at 3.
    case lsm9ds1Gyro

    public var kind: SensorKind {
        switch self {
        case .lis3mdl, .af8133j, .lsm9ds1Magn: .magnetometer
        case .mpu6050, .lsm6dsx: .accelerometer
        case .lsm9ds1Gyro: .gyroscope
        }
    }

    /// True when the driver puts a gyroscope (`in_anglvel_*`) on the accelerometer's own device:
    /// `inv_mpu6050` (MPU-6050, MPU-6500, …). Its layout (drivers/iio/imu/inv_mpu6050,
    /// `enum inv_mpu6050_scan`): scan elements accel x, y, z at 0–2, temp at 3, anglvel x, y, z at
    /// 4–6, timestamp at 7, all big-endian s16 but the timestamp; `in_mount_matrix` shared by both
    /// (`IIO_SHARED_BY_DIR`); `in_anglvel_scale` from `in_anglvel_scale_available`.
    public var carriesGyroscope: Bool { self == .mpu6050 }

    /// The gyroscope scale on a device that ``carriesGyroscope``, rad/s per LSB: inv_mpu6050's
    /// `gyro_scale_6050` at its default ±2000 °/s (`INV_MPU6050_FSR_2000DPS`, 16.4 LSB per °/s).
    public static let mpu6050GyroscopeScaleText = "0.001064724"
    /// inv_mpu6050's `in_anglvel_scale_available` (±250, 500, 1000, 2000 °/s), rad/s per LSB.
    public static let mpu6050GyroscopeScaleAvailableText = "0.000133090 0.000266181 0.000532362 0.001064724"
    /// inv_mpu6050's `in_accel_scale_available` (±2, 4, 8, 16 g), m/s² per LSB.
    public static let mpu6050AccelerometerScaleAvailableText = "0.000598 0.001196 0.002392 0.004785"

    /// The `name` attribute the driver reports unless a preset overrides it.
    public var defaultName: String {
        switch self {
        case .lis3mdl: "lis3mdl"
        case .af8133j: "af8133j"
        case .lsm9ds1Magn: "lsm9ds1_magn"
        case .mpu6050: "mpu6050"
        case .lsm6dsx: "lsm6dsl_accel"
        case .lsm9ds1Gyro: "lsm9ds1_gyro"
        }
    }

    /// The scale attribute text, in gauss/LSB (magnetometers), m/s²/LSB (accelerometers) or
    /// rad/s per LSB (gyroscopes).
    public var scaleText: String {
        switch self {
        case .lis3mdl, .lsm9ds1Magn: "0.000146156"
        case .af8133j: "0.000100"
        case .mpu6050: "0.000598"
        case .lsm6dsx: "0.000598205"
        case .lsm9ds1Gyro: "0.000153"
        }
    }

    /// The scale as a number (parsed from ``scaleText``).
    public var scale: Double { Double(scaleText)! }

    /// True when each axis has its own `in_<type>_<axis>_scale`; false for one shared `in_<type>_scale`.
    public var hasPerAxisScale: Bool {
        switch self {
        case .lis3mdl, .lsm9ds1Magn: true
        case .af8133j, .mpu6050, .lsm6dsx, .lsm9ds1Gyro: false
        }
    }

    /// `sampling_frequency` (Hz) as written at creation, or nil when the driver has none.
    public var samplingFrequencyText: String? {
        switch self {
        case .lis3mdl, .lsm9ds1Magn: "20"
        case .af8133j: nil
        case .mpu6050: "50"
        case .lsm6dsx: "52.000"
        case .lsm9ds1Gyro: "59.500"
        }
    }

    /// `sampling_frequency_available` (Hz, space separated), or nil when the driver has none.
    public var samplingFrequencyAvailableText: String? {
        switch self {
        case .lis3mdl, .lsm9ds1Magn: "0.625 1.25 2.5 5 10 20 40 80"
        case .af8133j: nil
        case .mpu6050: "10 20 50 100 200 500"
        case .lsm6dsx: "12.500 26.000 52.000 104.000 208.000 416.000"
        case .lsm9ds1Gyro: "14.900 59.500 119.000 238.000 476.000 952.000"
        }
    }

    /// True when the driver registers a trigger (`trigger/current_trigger`, a `triggerN` device) and a
    /// buffer. Buffered mode is only simulated for such styles.
    public var supportsBufferedMode: Bool { self != .af8133j }

    /// The scan element `_type` of each axis (`[be|le]:[s|u]bits/storagebits>>shift`).
    public var axisScanTypeText: String {
        switch self {
        case .mpu6050: "be:s16/16>>0"
        default: "le:s16/16>>0"
        }
    }

    /// The attribute that carries the mount matrix when one is configured. Real kernels spell it
    /// `mount_matrix`, `in_mount_matrix` or `in_<type>_mount_matrix` depending on the driver's
    /// `IIO_MOUNT_MATRIX` sharing; the simulator spreads the spellings across styles.
    public var defaultMountMatrixAttribute: String {
        switch self {
        case .lis3mdl, .af8133j, .lsm9ds1Magn: "in_magn_mount_matrix"
        case .mpu6050: "in_accel_mount_matrix"
        case .lsm6dsx, .lsm9ds1Gyro: "mount_matrix"
        }
    }

    /// The range of raw counts the chip can produce (16-bit two's complement); values saturate.
    public var rawRange: ClosedRange<Int> { -32768...32767 }
}
