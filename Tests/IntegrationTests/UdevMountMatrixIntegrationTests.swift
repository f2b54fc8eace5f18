// SPDX-License-Identifier: Apache-2.0
// hwdb's ACCEL_MOUNT_MATRIX end to end: a simulated PinePhone whose sysfs accelerometer matrix is
// wrong and whose udev database record holds the right one; qiblad must publish the true heading of
// the tilted phone. A wrong accelerometer matrix tilts the compensation the wrong way, so the
// heading would be off by tens of degrees.
import Foundation
import QiblaCore
import QiblaSimulator
import Testing
import TestSupport

@Suite struct UdevMountMatrixIntegrationTests {
    /// The PinePhone's accelerometer (iio:device2) as the simulator mounts it.
    static let accelerometerMatrix = "0, -1, 0; -1, 0, 0; 0, 0, -1"
    static let identity = "1, 0, 0; 0, 1, 0; 0, 0, 1"

    /// A tilted PinePhone in London; sysfs says identity for the accelerometer; `udev` is written
    /// as the record `c189:2` (the device's `dev` attribute says 189:2); `configuration` as qiblad.conf.
    static func heading(udev: String?, configuration: String = "", expectLog: String) throws -> (error: Double, log: String) {
        let position = try GeodeticPosition(latitudeDegrees: 51.5074, longitudeDegrees: -0.1278)
        let phone = try SimulatedPhone(scene: scene(at: position, orientation: .init(headingDegrees: 70, pitchDegrees: 35, rollDegrees: -25)))
        try phone.directory.write(identity + "\n", to: "sys/bus/iio/devices/iio:device2/in_accel_mount_matrix")
        try phone.directory.write("189:2\n", to: "sys/bus/iio/devices/iio:device2/dev")
        let q = try QibladHarness(arguments: ["--no-gpsd", "--sysfs-root", phone.sysfsRoot, "--location=51.5074,-0.1278"])
        defer { q.stop(); phone.stop() }
        if let udev {
            try q.stateDirectory.write("I:1234\nE:DEVNAME=/dev/iio:device2\nE:ACCEL_MOUNT_MATRIX=\(udev)\nG:systemd\n", to: "udev/c189:2")
        }
        try q.stateDirectory.write(configuration, to: "qiblad.conf")
        try q.start()
        phone.start(rate: 20)
        #expect(try q.call("ClaimCompass").status == 0)
        // busctl leaves at once and its claim with it; a monitor keeps one.
        let monitor = try ChildProcess(product("qiblactl").path, ["monitor"], environment: q.bus.environment)
        defer { monitor.terminate() }
        #expect(waitUntil(timeout: 15) { (try? q.double("Heading"))?.isFinite == true }, "\(q.log)")
        usleep(1_200_000)  // the 0.5 s smoothing window settles
        let truth = try #require(phone.simulator.scene.expectedTrueHeading(at: 0))
        let error = abs(Angle.normalized180(try q.double("Heading") - truth))
        #expect(q.log.contains(expectLog), "\(q.log)")
        print("ACCEL_MOUNT_MATRIX \(udev ?? "absent"), configuration \"\(configuration.trimmingCharacters(in: .newlines))\": heading error \(error)°")
        return (error, q.log)
    }

    @Test func theUdevMatrixWinsOverSysfs() throws {
        let (error, _) = try Self.heading(udev: Self.accelerometerMatrix, expectLog: "accelerometer mount matrix")
        #expect(error < 3, "heading off by \(error)° with the udev matrix")
    }

    @Test func theConfigurationWinsOverUdev() throws {
        let (error, _) = try Self.heading(udev: Self.identity, configuration: "accelerometer-mount-matrix = \(Self.accelerometerMatrix)\n",
                                          expectLog: "from configuration override")
        #expect(error < 3, "heading off by \(error)° with the configured matrix")
    }

    /// The control: without the udev record the wrong sysfs matrix is used, and the heading is wrong.
    @Test func withoutTheUdevRecordTheWrongSysfsMatrixIsUsed() throws {
        let (error, _) = try Self.heading(udev: nil, expectLog: "from in_accel_mount_matrix")
        #expect(error > 10, "the sysfs identity matrix should have spoiled the heading; off by only \(error)°")
    }
}
