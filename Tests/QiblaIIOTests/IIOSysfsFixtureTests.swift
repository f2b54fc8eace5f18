// SPDX-License-Identifier: Apache-2.0
// Small fake sysfs trees in the styles of real drivers, and the discovery/calibration tests on them.
import Foundation
import Testing
import TestSupport
@testable import QiblaIIO
import QiblaCore

/// A fake `<root>/sys/bus/iio/devices` and `<root>/dev` for one test.
final class IIOSysfsFixture: @unchecked Sendable {
    let directory: TemporaryDirectory
    var sysfsRoot: String { directory.path + "/sys" }
    var devRoot: String { directory.path + "/dev" }
    /// A fake udev database (`/run/udev/data`), empty unless a test writes a record.
    var udevDataDirectory: String { directory.path + "/run/udev/data" }
    var devicesDirectory: String { sysfsRoot + "/bus/iio/devices" }

    init() throws {
        directory = try TemporaryDirectory(prefix: "qiblad-iio")
        try FileManager.default.createDirectory(atPath: directory.path + "/sys/bus/iio/devices", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory.path + "/dev", withIntermediateDirectories: true)
    }

    deinit { directory.remove() }

    func devicePath(_ number: Int) -> String { devicesDirectory + "/iio:device\(number)" }

    func write(_ text: String, device number: Int, _ attribute: String) throws {
        try directory.write(text, to: "sys/bus/iio/devices/iio:device\(number)/\(attribute)")
    }

    func read(device number: Int, _ attribute: String) -> String? {
        try? String(contentsOfFile: devicePath(number) + "/" + attribute, encoding: .utf8)
    }

    /// Writes a device with `name` and the given attributes (values get a trailing newline as sysfs prints).
    func addDevice(_ number: Int, name: String, _ attributes: [String: String]) throws {
        try write(name + "\n", device: number, "name")
        for (attribute, value) in attributes { try write(value + "\n", device: number, attribute) }
    }

    func addTrigger(_ number: Int, name: String) throws {
        try directory.write(name + "\n", to: "sys/bus/iio/devices/trigger\(number)/name")
    }

    static func rawAxes(_ prefix: String, _ x: Int, _ y: Int, _ z: Int) -> [String: String] {
        ["in_\(prefix)_x_raw": "\(x)", "in_\(prefix)_y_raw": "\(y)", "in_\(prefix)_z_raw": "\(z)"]
    }

    /// LIS3MDL (st_magn): per-axis scale 0.000146 gauss/LSB, sampling_frequency with a list, mount matrix,
    /// buffer with 16-bit scan elements, a `lis3mdl-dev<N>` trigger.
    func addLIS3MDL(_ number: Int, raw: (Int, Int, Int) = (1000, -2000, 3000),
                    mountMatrix: String? = "0, 1, 0; 1, 0, 0; 0, 0, -1") throws {
        var attributes = Self.rawAxes("magn", raw.0, raw.1, raw.2)
        for axis in ["x", "y", "z"] { attributes["in_magn_\(axis)_scale"] = "0.000146" }
        attributes["sampling_frequency"] = "10"
        attributes["sampling_frequency_available"] = "0.625 1.25 2.5 5 10 20 40 80"
        if let mountMatrix { attributes["mount_matrix"] = mountMatrix }
        attributes["buffer/enable"] = "0"
        attributes["buffer/length"] = "2"
        attributes["trigger/current_trigger"] = ""
        attributes["current_timestamp_clock"] = "realtime"
        for (index, axis) in ["x", "y", "z"].enumerated() {
            attributes["scan_elements/in_magn_\(axis)_en"] = "0"
            attributes["scan_elements/in_magn_\(axis)_index"] = "\(index)"
            attributes["scan_elements/in_magn_\(axis)_type"] = "le:s16/16>>0"
        }
        attributes["scan_elements/in_timestamp_en"] = "0"
        attributes["scan_elements/in_timestamp_index"] = "3"
        attributes["scan_elements/in_timestamp_type"] = "le:s64/64>>0"
        try addDevice(number, name: "lis3mdl", attributes)
        try addTrigger(number, name: "lis3mdl-dev\(number)")
    }

    /// AF8133J (PinePhone): shared in_magn_scale, no sampling_frequency, no trigger.
    func addAF8133J(_ number: Int, raw: (Int, Int, Int) = (100, 200, -300)) throws {
        var attributes = Self.rawAxes("magn", raw.0, raw.1, raw.2)
        attributes["in_magn_scale"] = "0.000333"
        try addDevice(number, name: "af8133j", attributes)
    }

    /// Librem 5: LSM9DS1 magnetometer without mount matrix, accelerometer with an improper matrix.
    func addLibrem5() throws {
        var magnetometer = Self.rawAxes("magn", 500, 600, -700)
        for axis in ["x", "y", "z"] { magnetometer["in_magn_\(axis)_scale"] = "0.000146" }
        try addDevice(0, name: "lsm9ds1_magn", magnetometer)
        var accelerometer = Self.rawAxes("accel", 100, -200, 16384)
        accelerometer["in_accel_scale"] = "0.000598"
        accelerometer["in_accel_mount_matrix"] = "-1, 0, 0; 0, 1, 0; 0, 0, 1"
        try addDevice(1, name: "lsm9ds1_accel", accelerometer)
    }

    /// MPU-6050 accelerometer with a shared scale and per-axis offsets.
    func addMPU6050(_ number: Int) throws {
        var attributes = Self.rawAxes("accel", 10, 20, 16000)
        attributes["in_accel_scale"] = "0.000598"
        attributes["in_accel_x_offset"] = "-10"
        attributes["in_accel_y_offset"] = "5"
        attributes["in_anglvel_x_raw"] = "3"
        try addDevice(number, name: "mpu6050", attributes)
    }
}

func expectClose(_ a: Vector3, _ b: Vector3, tolerance: Double = 1e-9, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect((a - b).length <= tolerance, "\(a) ≠ \(b)", sourceLocation: sourceLocation)
}

@Suite struct IIODiscoveryTests {
    @Test func librem5StyleTreeFindsBoth() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addLibrem5()
        let found = discoverSensors(sysfsRoot: fixture.sysfsRoot)
        #expect(found.magnetometer.device?.name == "lsm9ds1_magn")
        #expect(found.magnetometer.reason.contains("only candidate"))
        #expect(found.accelerometer.device?.name == "lsm9ds1_accel")
        #expect(found.accelerometer.device?.number == 1)
    }

    @Test func severalMagnetometersStableOrderOrConfiguredName() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addAF8133J(3)
        try fixture.addLIS3MDL(11)
        try fixture.addLIS3MDL(2)
        try fixture.addMPU6050(1)
        let plain = discoverSensors(sysfsRoot: fixture.sysfsRoot)
        #expect(plain.magnetometer.candidates.map(\.number) == [2, 3, 11])
        #expect(plain.magnetometer.device?.number == 2)
        #expect(plain.magnetometer.reason.contains("lowest device number"))
        #expect(plain.accelerometer.device?.name == "mpu6050")

        let preferred = discoverSensors(sysfsRoot: fixture.sysfsRoot, preferredMagnetometerName: "af8133j")
        #expect(preferred.magnetometer.device?.number == 3)
        #expect(preferred.magnetometer.reason.contains("configured name \"af8133j\""))

        let missing = discoverSensors(sysfsRoot: fixture.sysfsRoot, preferredMagnetometerName: "ak8975")
        #expect(missing.magnetometer.device?.number == 2)
        #expect(missing.magnetometer.reason.contains("\"ak8975\" not found"))
    }

    @Test func noMagnetometerExplainsQualcomm() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addMPU6050(0)
        try fixture.addDevice(1, name: "half_magn", ["in_magn_x_raw": "1", "in_magn_y_raw": "2"])
        try fixture.directory.write("x\n", to: "sys/bus/iio/devices/not-a-device/name")
        let found = discoverSensors(sysfsRoot: fixture.sysfsRoot)
        #expect(found.magnetometer.device == nil)
        #expect(found.magnetometer.reason.contains("no IIO magnetometer"))
        #expect(found.magnetometer.reason.contains("Qualcomm"))
        #expect(found.accelerometer.device?.name == "mpu6050")
        #expect(discoverSensors(sysfsRoot: "/nonexistent-root").magnetometer.device == nil)
    }
}

@Suite struct IIOCalibrationTests {
    @Test func perAxisScaleAndMountMatrixLIS3MDL() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addLIS3MDL(0)
        try fixture.write("0.000292\n", device: 0, "in_magn_z_scale")
        let device = try #require(listIIODevices(sysfsRoot: fixture.sysfsRoot).first)
        let mount = chooseMountMatrix(devicePath: device.sysfsPath, kind: .magnetometer, override: nil)
        #expect(mount.source == "mount_matrix")
        let calibration = try readAxisCalibration(device: device, kind: .magnetometer, mountMatrix: mount.matrix)
        #expect(calibration.scale == Vector3(0.000146, 0.000146, 0.000292))
        // Sensor frame µT: (1000, -2000, 3000) × scale × 100 = (14.6, -29.2, 87.6); M swaps x/y, negates z.
        let vector = try #require(calibration.apply(raw: Vector3(1000, -2000, 3000)))
        expectClose(vector, Vector3(-29.2, 14.6, -87.6))
    }

    @Test func sharedScaleAF8133JAndOffsetsMPU6050() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addAF8133J(0)
        try fixture.addMPU6050(1)
        let devices = listIIODevices(sysfsRoot: fixture.sysfsRoot)
        let magnetometer = try readAxisCalibration(device: devices[0], kind: .magnetometer, mountMatrix: .identity)
        #expect(magnetometer.scale == Vector3(0.000333, 0.000333, 0.000333) && magnetometer.offset == .zero)
        expectClose(try #require(magnetometer.apply(raw: Vector3(100, 200, -300))), Vector3(3.33, 6.66, -9.99))
        let accelerometer = try readAxisCalibration(device: devices[1], kind: .accelerometer, mountMatrix: .identity)
        #expect(accelerometer.offset == Vector3(-10, 5, 0))
        // (10 − 10, 20 + 5, 16000) × 0.000598 m/s²
        expectClose(try #require(accelerometer.apply(raw: Vector3(10, 20, 16000))), Vector3(0, 0.01495, 9.568))
    }

    @Test func garbageScaleIsASetupError() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addAF8133J(0)
        try fixture.write("0,000333\n", device: 0, "in_magn_scale")
        let device = try #require(listIIODevices(sysfsRoot: fixture.sysfsRoot).first)
        #expect(throws: SensorSetupError.self) {
            try readAxisCalibration(device: device, kind: .magnetometer, mountMatrix: .identity)
        }
    }

    @Test(arguments: ["0\n", "-0.000333\n", "nan\n", "1e999\n", "\n", "99999999999999999999999999999e999"])
    func aZeroNegativeOrNonFiniteScaleIsASetupError(scale: String) throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addAF8133J(0)
        try fixture.write(scale, device: 0, "in_magn_scale")
        let device = try #require(listIIODevices(sysfsRoot: fixture.sysfsRoot).first)
        #expect(throws: SensorSetupError.self, "\(scale.debugDescription)") {
            try readAxisCalibration(device: device, kind: .magnetometer, mountMatrix: .identity)
        }
    }

    @Test func mountMatrixChoiceOverrideImproperAndRejected() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addLibrem5()
        try fixture.addLIS3MDL(2, mountMatrix: "1, 0, 0; 0, 0, 0; 0, 0, 1")
        let devices = listIIODevices(sysfsRoot: fixture.sysfsRoot)
        // LSM9DS1 magnetometer: none in sysfs.
        let none = chooseMountMatrix(devicePath: devices[0].sysfsPath, kind: .magnetometer, override: nil)
        #expect(none.matrix == .identity && none.source.contains("no mount matrix"))
        // Librem 5 accelerometer: improper (det −1), applied as given.
        let improper = chooseMountMatrix(devicePath: devices[1].sysfsPath, kind: .accelerometer, override: nil)
        #expect(improper.source == "in_accel_mount_matrix" && improper.matrix.determinant == -1)
        let calibration = try readAxisCalibration(device: devices[1], kind: .accelerometer, mountMatrix: improper.matrix)
        expectClose(try #require(calibration.apply(raw: Vector3(100, -200, 16384))), Vector3(-0.0598, -0.1196, 9.797632))
        // Override wins over sysfs.
        let override = Matrix3.rotationZ(degrees: 90)
        let chosen = chooseMountMatrix(devicePath: devices[1].sysfsPath, kind: .accelerometer, override: override)
        #expect(chosen.matrix == override && chosen.source == "configuration override")
        // All-zero row: rejected, identity.
        let rejected = chooseMountMatrix(devicePath: devices[2].sysfsPath, kind: .magnetometer, override: nil)
        #expect(rejected.matrix == .identity && rejected.source.contains("all zeros"))
    }
}
