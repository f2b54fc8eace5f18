// SPDX-License-Identifier: Apache-2.0
// Debian's real iio-sensor-proxy under umockdev on a private system bus, for the daemon's
// integration tests (SensorProxyIntegrationTests) and the app's (SensorProxyAppTests).
import Foundation

/// Debian's real iio-sensor-proxy (/usr/sbin/iio-sensor-proxy in Debian 12's 3.0,
/// /usr/libexec/iio-sensor-proxy in Debian 13's 3.7) on a private "system" bus, under umockdev
/// (`umockdev-run`: a testbed of fake sysfs devices and udev database the proxy's GUdev sees
/// instead of the machine's), read by the real qiblad.
///
/// The bus applies iio-sensor-proxy's packaged policy (net.hadess.SensorProxy.conf; 3.0's gives the
/// compass to GeoClue's user only, 3.7's to everyone) behind a default policy like the system
/// bus's (method calls denied unless allowed, `PrivateBus.systemDefaultPolicy`), and — when a test
/// asks for the grant — qiblad's drop-in dbus/qiblad-iio-sensor-proxy.conf with its user "qiblad"
/// replaced by the user running the tests.
///
/// iio-sensor-proxy 3.5 and later also ask polkit before any claim (the action
/// net.hadess.SensorProxy.claim-sensor, allowed by default to active local sessions only, never to
/// a system service): there the rig runs python-dbusmock's polkitd on the bus, which allows the
/// action when the grant is asked for (what dbus/qiblad-iio-sensor-proxy.rules does for the user
/// qiblad on a real system) and refuses it otherwise.
public final class SensorProxyRig: @unchecked Sendable {
    /// Debian 12's paths, then Debian 13's (/usr/libexec, the policy under /usr/share).
    public static let executable = firstExisting(["/usr/sbin/iio-sensor-proxy", "/usr/libexec/iio-sensor-proxy"])
    public static let packagedPolicy = firstExisting(["/etc/dbus-1/system.d/net.hadess.SensorProxy.conf",
                                                      "/usr/share/dbus-1/system.d/net.hadess.SensorProxy.conf"])

    /// Present from iio-sensor-proxy 3.5, which asks polkit before a claim.
    public static let claimAction = "net.hadess.SensorProxy.claim-sensor"
    public static let claimActionFile = "/usr/share/polkit-1/actions/net.hadess.SensorProxy.policy"
    public static var asksPolkit: Bool { FileManager.default.fileExists(atPath: claimActionFile) }

    /// Whether the packaged D-Bus policy keeps the compass object from users other than GeoClue's
    /// (3.0's does; 3.7's leaves it to polkit).
    public static var packagedPolicyRestrictsCompass: Bool {
        ((try? String(contentsOfFile: packagedPolicy, encoding: .utf8)) ?? "").contains("<policy user=\"geoclue\">")
    }

    private static func firstExisting(_ paths: [String]) -> String {
        paths.first { FileManager.default.fileExists(atPath: $0) } ?? paths[0]
    }

    /// An input device named "Power Button": iio-sensor-proxy's fake compass (`FAKE_COMPASS=1`)
    /// latches on it and turns its heading by 10° each second from the first claim.
    public static let powerButton = """
        P: /devices/LNXSYSTM:00/LNXPWRBN:00/input/input3
        E: SUBSYSTEM=input
        E: NAME="Power Button"
        E: PRODUCT=19/0/1/0
        A: name=Power Button

        """

    /// A HID sensor hub's magnetometer (`magn_3d`, as the kernel's hid-sensor-magn-3d driver
    /// presents it) with the tilt-compensated heading channel in its buffer, and the hub's
    /// trigger `magn_3d-dev0` (what iio-sensor-proxy's iio-buffer-compass driver looks for). udev's
    /// rule (80-iio-sensor-proxy.rules) would set IIO_SENSOR_PROXY_TYPE; umockdev runs no rules,
    /// so the description carries it. The device node is a file holding one scan: a signed
    /// 32-bit little-endian raw heading, times the channel's scale 0.1 (degrees).
    public static func sensorHub(rawHeading: Int32) -> String {
        """
        P: /devices/pci0000:00/0000:00:14.0/usb1/1-6/1-6:1.0/0003:2047:0855.0001/HID-SENSOR-200083.3.auto/iio:device0
        N: iio:device0=\(scan(rawHeading))
        E: DEVNAME=/dev/iio:device0
        E: SUBSYSTEM=iio
        E: IIO_SENSOR_PROXY_TYPE=iio-buffer-compass
        A: name=magn_3d
        A: in_rot_from_north_magnetic_tilt_comp_scale=0.100000
        A: in_rot_sampling_frequency=10.000000
        A: scan_elements/in_rot_from_north_magnetic_tilt_comp_en=0
        A: scan_elements/in_rot_from_north_magnetic_tilt_comp_index=0
        A: scan_elements/in_rot_from_north_magnetic_tilt_comp_type=le:s32/32>>0
        A: buffer/enable=0
        A: buffer/length=0
        A: trigger/current_trigger=

        P: /devices/pci0000:00/0000:00:14.0/usb1/1-6/1-6:1.0/0003:2047:0855.0001/HID-SENSOR-200083.3.auto/trigger0
        E: SUBSYSTEM=iio
        A: name=magn_3d-dev0

        """
    }

    /// One scan as hex bytes (le:s32/32>>0).
    public static func scan(_ raw: Int32) -> String {
        withUnsafeBytes(of: raw.littleEndian) { $0.map { String(format: "%02X", $0) }.joined() }
    }

    public let systemBus: PrivateBus
    public let testbed: TemporaryDirectory
    public private(set) var proxy: ChildProcess?
    /// python-dbusmock's polkitd, where iio-sensor-proxy asks polkit (``asksPolkit``).
    public private(set) var polkit: ChildProcess?

    public var environment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": systemBus.address] }

    public static var available: Bool {
        FileManager.default.isExecutableFile(atPath: executable) && FileManager.default.fileExists(atPath: packagedPolicy)
    }

    /// - Parameter dropIn: grant the user running the tests the compass as qiblad's files grant it
    ///   to the user qiblad: the D-Bus policy drop-in, and where polkit is asked, the claim action.
    public init(dropIn: Bool) throws {
        testbed = try TemporaryDirectory(prefix: "qiblad-umockdev")
        try testbed.write(Self.powerButton, to: "fake-compass.umockdev")
        var includes = ["<include>\(Self.packagedPolicy)</include>"]
        if dropIn {
            let user = String(cString: getpwuid(getuid()).pointee.pw_name)
            let text = try String(contentsOf: repositoryRoot.appendingPathComponent("dbus/qiblad-iio-sensor-proxy.conf"), encoding: .utf8)
            guard text.contains("<policy user=\"qiblad\">") else {
                throw TestSupportError.startFailed("dbus/qiblad-iio-sensor-proxy.conf has no <policy user=\"qiblad\">")
            }
            try testbed.write(text.replacingOccurrences(of: "<policy user=\"qiblad\">", with: "<policy user=\"\(user)\">"),
                              to: "qiblad-iio-sensor-proxy.conf")
            includes.append("<include>\(testbed.path)/qiblad-iio-sensor-proxy.conf</include>")
        }
        if Self.asksPolkit {
            // What polkit's own packaged policy allows: its name owned, its authority called.
            includes.append("""
                <policy context="default">
                    <allow own="org.freedesktop.PolicyKit1"/>
                    <allow send_destination="org.freedesktop.PolicyKit1"/>
                  </policy>
                """)
        }
        systemBus = try PrivateBus(type: "qiblad-test-system", policy: PrivateBus.systemDefaultPolicy, extra: includes.joined(separator: "\n"))
        if Self.asksPolkit { try startPolkit(allowingClaims: dropIn) }
    }

    private func startPolkit(allowingClaims: Bool) throws {
        let child = try ChildProcess("/usr/bin/python3", ["-m", "dbusmock", "--system", "--template", "polkitd"], environment: environment)
        polkit = child
        let authority = ["org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority"]
        guard waitUntil(timeout: 15, { hasOwner("org.freedesktop.PolicyKit1") || !child.isRunning }), child.isRunning else {
            throw TestSupportError.startFailed("python3 -m dbusmock --template polkitd (python3-dbusmock): \(child.standardError)")
        }
        if allowingClaims {
            let r = try systemBus.busctl(["call"] + authority + ["org.freedesktop.DBus.Mock", "SetAllowed", "as", "1", Self.claimAction])
            guard r.status == 0 else { throw TestSupportError.startFailed("polkitd mock SetAllowed: \(r)") }
        }
    }

    /// Starts iio-sensor-proxy under umockdev with the fake compass (or, given a raw heading, a
    /// HID sensor hub) and waits for its name.
    public func startProxy(sensorHubRawHeading: Int32? = nil) throws {
        var description = testbed.path + "/fake-compass.umockdev"
        var environment = environment.merging(["G_MESSAGES_DEBUG": "all"]) { $1 }
        if let raw = sensorHubRawHeading {
            description = testbed.path + "/sensor-hub.umockdev"
            try testbed.write(Self.sensorHub(rawHeading: raw), to: "sensor-hub.umockdev")
        } else {
            environment["FAKE_COMPASS"] = "1"
        }
        // The testbed's directory is written down so that a test can change the device node's scan.
        // Under umockdev, iio-sensor-proxy 3.5 and later read a buffer's scans from the testbed's
        // iio-dev-data.bin instead of the device node (its get_device_file()): a copy of the node.
        let child = try ChildProcess("umockdev-run", ["-d", description, "--", "/bin/sh", "-c",
                                                      "echo \"$UMOCKDEV_DIR\" > '\(testbed.path)/umockdev-dir' "
                                                      + "&& { [ ! -e \"$UMOCKDEV_DIR/dev/iio:device0\" ] || cp \"$UMOCKDEV_DIR/dev/iio:device0\" \"$UMOCKDEV_DIR/iio-dev-data.bin\"; } "
                                                      + "&& exec \(Self.executable)"],
                                     environment: environment)
        proxy = child
        guard waitUntil(timeout: 15, { hasOwner() || !child.isRunning }), child.isRunning else {
            // Its debug messages (G_MESSAGES_DEBUG) go to standard output: why it found no sensor.
            throw TestSupportError.startFailed("iio-sensor-proxy: \(child.standardError)\n\(child.standardOutput.suffix(3000))")
        }
    }

    /// Writes a new scan into the sensor hub's device node (iio-sensor-proxy 3.0 reads it every
    /// 700 ms), and appends it to the testbed's iio-dev-data.bin (3.5 and later read that through
    /// one descriptor, so a new scan must come after the ones read).
    public func setSensorHubRawHeading(_ raw: Int32) throws {
        let dir = try String(contentsOfFile: testbed.path + "/umockdev-dir", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let bytes = withUnsafeBytes(of: raw.littleEndian) { Data($0) }
        try bytes.write(to: URL(fileURLWithPath: dir + "/dev/iio:device0"))
        if let data = FileHandle(forWritingAtPath: dir + "/iio-dev-data.bin") {
            defer { try? data.close() }
            try data.seekToEnd()
            try data.write(contentsOf: bytes)
        }
    }

    public func stopProxy() {
        proxy?.terminate()
        _ = waitUntil(timeout: 10) { !hasOwner() }
    }

    public func hasOwner(_ name: String = "net.hadess.SensorProxy") -> Bool {
        let r = try? systemBus.busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                       "NameHasOwner", "s", name])
        return r?.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "b true"
    }

    /// The process that owns `net.hadess.SensorProxy` (iio-sensor-proxy itself, not umockdev-run).
    public func ownerPID() -> Int32? {
        let r = try? systemBus.busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                       "GetConnectionUnixProcessID", "s", "net.hadess.SensorProxy"])
        return r.flatMap { Int32($0.stdout.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst(2)) }
    }

    /// Unique names `pid` holds on the system bus.
    public func connections(of pid: Int32) -> [String] {
        guard let r = try? systemBus.busctl(["--json=short", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                             "org.freedesktop.DBus", "ListNames"]),
              let object = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
              let data = object["data"] as? [[String]], let names = data.first else { return [] }
        return names.filter { $0.hasPrefix(":") }.filter { name in
            let r = try? systemBus.busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                           "GetConnectionUnixProcessID", "s", name])
            return r?.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "u \(pid)"
        }
    }

    deinit {
        proxy?.terminate()
        polkit?.terminate()
        testbed.remove()
    }
}
