// SPDX-License-Identifier: Apache-2.0
// The accelerometer's mount matrix from udev (systemd hwdb's ACCEL_MOUNT_MATRIX), read from a fake
// udev database: the record names, the `E:` lines, and its place between sysfs and the configuration.
import Foundation
import QiblaCore
import Testing
@testable import QiblaIIO

extension IIOSysfsFixture {
    /// Writes udev's record `name` (`c244:1`, `+iio:iio:device1`) with `properties` as `E:` lines,
    /// between the other lines udevd writes.
    func writeUdevRecord(_ name: String, _ properties: [String: String]) throws {
        let lines = ["S:iio/by-name/sensor", "I:5102938"] + properties.sorted { $0.key < $1.key }.map { "E:\($0.key)=\($0.value)" } + ["G:systemd", "Q:systemd", "V:1"]
        try directory.write(lines.joined(separator: "\n") + "\n", to: "run/udev/data/" + name)
    }
}

@Suite struct UdevMountMatrixTests {
    /// hwdb's spelling, with spaces after the separators (60-sensor.hwdb, iio-sensor-proxy's sscanf).
    static let hwdbMatrix = "0, 1, 0; -1, 0, 0; 0, 0, 1"

    @Test func propertiesAreTheELinesOfTheRecord() {
        let record = """
            S:iio/by-name/mpu6050
            I:5102938
            E:ACCEL_MOUNT_MATRIX=0, 1, 0; -1, 0, 0; 0, 0, 1
            E:IIO_SENSOR_PROXY_TYPE=iio-poll-accel iio-buffer-accel
            E:ODD=a=b
            E:=no key
            X:ACCEL_MOUNT_MATRIX=not a property
            G:systemd
            """
        let properties = UdevDatabase.parseProperties(record)
        #expect(properties == ["ACCEL_MOUNT_MATRIX": Self.hwdbMatrix,
                               "IIO_SENSOR_PROXY_TYPE": "iio-poll-accel iio-buffer-accel", "ODD": "a=b"])
        #expect(parseMountMatrix(properties["ACCEL_MOUNT_MATRIX"]!) == Matrix3(0, 1, 0, -1, 0, 0, 0, 0, 1))
    }

    @Test func theRecordIsFoundByDeviceNumberOrByName() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addMPU6050(1)
        try fixture.addMPU6050(2)
        try fixture.write("244:1\n", device: 1, "dev")
        try fixture.write("garbage\n", device: 2, "dev")
        let devices = listIIODevices(sysfsRoot: fixture.sysfsRoot)
        let database = UdevDatabase(directory: fixture.udevDataDirectory)
        #expect(database.recordNames(for: devices[0]) == ["c244:1", "+iio:iio:device1"])
        #expect(database.recordNames(for: devices[1]) == ["+iio:iio:device2"])
        #expect(database.properties(of: devices[0]).isEmpty)  // no database at all

        try fixture.writeUdevRecord("c244:1", ["ACCEL_MOUNT_MATRIX": Self.hwdbMatrix])
        try fixture.writeUdevRecord("+iio:iio:device2", ["ACCEL_MOUNT_MATRIX": "-1, 0, 0; 0, -1, 0; 0, 0, 1"])
        #expect(database.properties(of: devices[0])["ACCEL_MOUNT_MATRIX"] == Self.hwdbMatrix)
        #expect(database.properties(of: devices[1])["ACCEL_MOUNT_MATRIX"] == "-1, 0, 0; 0, -1, 0; 0, 0, 1")
        #expect(UdevDatabase.isDeviceNumber("10:0") && !UdevDatabase.isDeviceNumber("10:") && !UdevDatabase.isDeviceNumber("a:1"))
    }

    /// sysfs < udev < configuration, as iio-sensor-proxy orders sysfs and udev.
    @Test func udevWinsOverSysfsAndTheConfigurationOverUdev() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addLibrem5()  // accelerometer: in_accel_mount_matrix "-1, 0, 0; 0, 1, 0; 0, 0, 1"
        let accelerometer = listIIODevices(sysfsRoot: fixture.sysfsRoot)[1]
        let udev = ["ACCEL_MOUNT_MATRIX": Self.hwdbMatrix]

        let sysfs = chooseMountMatrix(devicePath: accelerometer.sysfsPath, kind: .accelerometer, override: nil)
        #expect(sysfs.source == "in_accel_mount_matrix")

        let fromUdev = chooseMountMatrix(devicePath: accelerometer.sysfsPath, kind: .accelerometer, override: nil, udevProperties: udev)
        #expect(fromUdev.matrix == Matrix3(0, 1, 0, -1, 0, 0, 0, 0, 1) && fromUdev.source == "udev ACCEL_MOUNT_MATRIX")

        let override = Matrix3.rotationZ(degrees: 180)
        let configured = chooseMountMatrix(devicePath: accelerometer.sysfsPath, kind: .accelerometer, override: override, udevProperties: udev)
        #expect(configured.matrix == override && configured.source == "configuration override")
    }

    @Test func aMalformedUdevMatrixFallsBackToSysfsAndSaysWhy() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addLibrem5()
        let accelerometer = listIIODevices(sysfsRoot: fixture.sysfsRoot)[1]
        for bad in ["0, 1, 0; -1, 0, 0", "1, 0, 0; 0, 0, 0; 0, 0, 1", "0,1,0;-1,0,0;0,0,x"] {
            let choice = chooseMountMatrix(devicePath: accelerometer.sysfsPath, kind: .accelerometer, override: nil,
                                           udevProperties: ["ACCEL_MOUNT_MATRIX": bad])
            #expect(choice.matrix == Matrix3(-1, 0, 0, 0, 1, 0, 0, 0, 1), "\(bad)")
            #expect(choice.source.hasPrefix("in_accel_mount_matrix; udev ACCEL_MOUNT_MATRIX rejected"), "\(choice.source)")
        }
        // No sysfs matrix either: identity.
        let magnetometerless = try IIOSysfsFixture()
        try magnetometerless.addMPU6050(0)
        let choice = chooseMountMatrix(devicePath: listIIODevices(sysfsRoot: magnetometerless.sysfsRoot)[0].sysfsPath,
                                       kind: .accelerometer, override: nil, udevProperties: ["ACCEL_MOUNT_MATRIX": "junk"])
        #expect(choice.matrix == .identity && choice.source.contains("no mount matrix in sysfs; udev ACCEL_MOUNT_MATRIX rejected"))
    }

    /// The hwdb has no magnetometer matrix; ACCEL_MOUNT_MATRIX on a magnetometer's record (a hwdb
    /// pattern matching a shared parent) is not applied to it.
    @Test func theMagnetometerIgnoresACCEL_MOUNT_MATRIX() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addLIS3MDL(0)  // mount_matrix "0, 1, 0; 1, 0, 0; 0, 0, -1"
        let magnetometer = listIIODevices(sysfsRoot: fixture.sysfsRoot)[0]
        #expect(SensorKind.magnetometer.udevMountMatrixProperty == nil)
        let choice = chooseMountMatrix(devicePath: magnetometer.sysfsPath, kind: .magnetometer, override: nil,
                                       udevProperties: ["ACCEL_MOUNT_MATRIX": Self.hwdbMatrix, "MAGN_MOUNT_MATRIX": Self.hwdbMatrix])
        #expect(choice.source == "mount_matrix" && choice.matrix == Matrix3(0, 1, 0, 1, 0, 0, 0, 0, -1))
    }

    /// The hub reads the record of the accelerometer it opens and applies the udev matrix to its samples.
    @Test func theHubAppliesTheUdevMatrixToAccelerometerSamples() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addLibrem5()
        try fixture.write("244:1\n", device: 1, "dev")
        try fixture.writeUdevRecord("c244:1", ["ACCEL_MOUNT_MATRIX": Self.hwdbMatrix])
        let harness = try HubHarness(fixture.configuration())
        harness.hub.start()
        #expect(harness.pump { harness.samples(.accelerometer).count >= 2 })
        // (100, −200, 16384) × 0.000598 = (0.0598, −0.1196, 9.797632); rows (0,1,0), (−1,0,0), (0,0,1).
        expectClose(try #require(harness.samples(.accelerometer).last).vector, Vector3(-0.1196, -0.0598, 9.797632))
        harness.stopAndExpectQuiet()
    }
}
