// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

/// Issue 12: the IIO triggered buffer tested on umockdev (as iio-sensor-proxy's own tests use it)
/// instead of a FIFO. umockdev 0.17 has no IIO buffer model of its own; what it does have is
/// enough: the sysfs tree of a buffered LIS3MDL (scan elements, `buffer/`, `trigger/`, a sibling
/// trigger device `trigger0` named `lis3mdl-dev0`) from a device description, and
/// `/dev/iio:device0` replayed from a script (`umockdev-run --script`): one 6-byte scan every
/// 50 ms, read with `poll` + non-blocking `read` like a kernel buffer. qiblad runs unmodified inside
/// (`LD_PRELOAD`: no `--sysfs-root`, no `--dev-root`), with an accelerometer that has no buffer
/// beside it (so polling and buffered run together).
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/umockdev-run"),
                "needs umockdev (Debian: umockdev)"))
struct UmockdevBufferedTests {
    static let testbed = """
        P: /devices/platform/magn/iio:device0
        N: iio:device0
        E: DEVNAME=/dev/iio:device0
        E: SUBSYSTEM=iio
        A: name=lis3mdl
        A: in_magn_x_raw=1344
        A: in_magn_y_raw=256
        A: in_magn_z_raw=2560
        A: in_magn_scale=0.000146
        A: sampling_frequency=20
        A: scan_elements/in_magn_x_en=0
        A: scan_elements/in_magn_x_index=0
        A: scan_elements/in_magn_x_type=le:s16/16>>0
        A: scan_elements/in_magn_y_en=0
        A: scan_elements/in_magn_y_index=1
        A: scan_elements/in_magn_y_type=le:s16/16>>0
        A: scan_elements/in_magn_z_en=0
        A: scan_elements/in_magn_z_index=2
        A: scan_elements/in_magn_z_type=le:s16/16>>0
        A: buffer/enable=0
        A: buffer/length=2
        A: buffer/watermark=1
        A: trigger/current_trigger=

        P: /devices/platform/magn/trigger0
        E: SUBSYSTEM=iio
        A: name=lis3mdl-dev0

        P: /devices/platform/accel/iio:device1
        N: iio:device1
        E: DEVNAME=/dev/iio:device1
        E: SUBSYSTEM=iio
        A: name=mxc4005
        A: in_accel_x_raw=0
        A: in_accel_y_raw=0
        A: in_accel_z_raw=1024
        A: in_accel_scale=0.009580

        """

    /// `count` scans of x, y, z (little-endian s16) 50 ms apart, in umockdev's script format:
    /// bytes below 32 as `^` + (byte + 64), `^` itself as "^`" (docs/script-format.txt).
    static func script(scans count: Int) -> String {
        func escaped(_ bytes: [UInt8]) -> String {
            var text = ""
            for byte in bytes {
                if byte < 32 { text += "^" + String(UnicodeScalar(byte + 64)) } else if byte == 94 { text += "^`" } else { text += String(UnicodeScalar(byte)) }
            }
            return text
        }
        var lines: [String] = []
        for index in 0..<count {
            // y steps by 4 counts (about 0.17°, more than the 0.1° resolution): every scan turns
            // the needle. All bytes stay below 128 (the script is text) and are never a space.
            var y = 256 + Int16(index % 24) * 4
            if y & 0xFF == 32 { y += 1 }
            let axes: [Int16] = [1344, y, 2560]
            let bytes = axes.flatMap { value in [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)] }
            lines.append("r 50 " + escaped(bytes))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The environment variable `name` of the child of `parent` (qiblad under umockdev-run).
    static func childEnvironment(of parent: Int32, _ name: String) -> String? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        for entry in entries where Int32(entry) != nil {
            guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 1, Int32(fields[1]) == parent,
                  let environ = FileManager.default.contents(atPath: "/proc/\(entry)/environ") else { continue }
            for variable in environ.split(separator: 0) {
                let text = String(decoding: variable, as: UTF8.self)
                if text.hasPrefix(name + "=") { return String(text.dropFirst(name.count + 1)) }
            }
        }
        return nil
    }

    @Test func aTriggeredBufferOnUmockdevGivesAHeading() throws {
        let directory = try TemporaryDirectory(prefix: "qiblad-umockdev")
        try Self.testbed.write(toFile: directory.path + "/testbed.umockdev", atomically: true, encoding: .utf8)
        try Self.script(scans: 400).write(toFile: directory.path + "/scans.script", atomically: true, encoding: .utf8)
        // umockdev-run keeps the testbed and replays the script in its own process, forwards
        // SIGTERM to qiblad, and exits with it.
        let launcher = directory.path + "/qiblad-in-testbed"
        try """
            #!/bin/sh
            exec umockdev-run --device '\(directory.path)/testbed.umockdev' \
                --script '/dev/iio:device0=\(directory.path)/scans.script' -- '\(product("qiblad").path)' "$@"

            """.write(toFile: launcher, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: launcher)

        let q = try QibladHarness(arguments: ["--no-gpsd", "--sensor-mode", "buffered", "--location=51.5074,-0.1278"])
        q.executable = launcher
        defer { q.stop() }
        try q.start()
        let claim = try ChildProcess(product("qiblactl").path, ["monitor"], environment: q.bus.environment)
        defer { claim.terminate() }
        #expect(waitUntil(timeout: 15) { ((try? q.double("MagneticHeading")) ?? .nan).isFinite }, "\(q.log)")
        #expect(q.log.contains("iio:device0 (lis3mdl) buffered: 6-byte scans in_magn_x=le:s16/16>>0"), "\(q.log)")
        #expect(!q.log.contains("iio:device0 (lis3mdl): no data from the IIO buffer"), "\(q.log)")
        #expect(q.log.contains("iio:device1 (mxc4005) polling"), "the accelerometer has no buffer: \(q.log)")

        // What qiblad wrote into the testbed's sysfs: the trigger it chose, the enabled buffer.
        let launcherPID = try #require(q.daemon?.pid)
        let root = try #require(Self.childEnvironment(of: launcherPID, "UMOCKDEV_DIR"))
        let device = root + "/sys/devices/platform/magn/iio:device0"
        func attribute(_ name: String) -> String? {
            (try? String(contentsOfFile: device + "/" + name, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(attribute("trigger/current_trigger") == "lis3mdl-dev0")
        #expect(attribute("buffer/enable") == "1")
        #expect(attribute("buffer/watermark") == "2", "20 Hz × 100 ms hand-off interval: two scans per wakeup")
        #expect(attribute("scan_elements/in_magn_z_en") == "1")

        // Samples keep coming from the buffer: the heading group is signalled more than once.
        let before = claim.standardOutput.components(separatedBy: "MagneticHeading=").count
        #expect(waitUntil(timeout: 5) { claim.standardOutput.components(separatedBy: "MagneticHeading=").count > before + 2 },
                "\(claim.standardOutput)")

        print("umockdev buffered: trigger \(attribute("trigger/current_trigger") ?? "?"), "
              + "\(claim.standardOutput.components(separatedBy: "MagneticHeading=").count - 1) heading signals")

        // Released: the buffer is disabled and the trigger put back.
        claim.terminate()
        #expect(waitUntil(timeout: 5) { attribute("buffer/enable") == "0" }, "\(q.log)")
        #expect(attribute("trigger/current_trigger") == "")
        #expect(attribute("buffer/watermark") == "1")
    }
}
