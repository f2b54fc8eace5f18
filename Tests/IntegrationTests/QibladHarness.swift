// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport

/// One real `qiblad` on its own private `dbus-daemon`, with its own state directory. Talks to it
/// with `busctl` (systemd's client), like a shell script would.
final class QibladHarness: @unchecked Sendable {
    static let name = "io.github.qiblad.Qibla1"
    static let path = "/io/github/qiblad/Qibla1"
    static let interface = "io.github.qiblad.Qibla1"

    let bus: PrivateBus
    let stateDirectory: TemporaryDirectory
    private(set) var daemon: ChildProcess?
    var extraArguments: [String]
    /// The qiblad to run (default: the one built beside the tests; the soak runs an ASan build).
    var executable = product("qiblad").path
    /// Added to qiblad's environment. The system bus points nowhere unless a test gives one (a
    /// GeoClue2 on the machine's real system bus must not answer the tests).
    var environment = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/qiblad-tests-have-no-system-bus"]

    init(arguments: [String] = ["--no-gpsd"], bus: PrivateBus? = nil, stateDirectory: TemporaryDirectory? = nil) throws {
        self.bus = try bus ?? PrivateBus()
        self.stateDirectory = try stateDirectory ?? TemporaryDirectory(prefix: "qiblad-state")
        self.extraArguments = arguments
    }

    /// Starts qiblad and waits until it owns its name.
    @discardableResult
    func start(_ arguments: [String]? = nil, waitForName: Bool = true) throws -> ChildProcess {
        let child = try ChildProcess(
            executable,
            ["--session", "--state-dir", stateDirectory.path, "--config", stateDirectory.path + "/qiblad.conf", "--verbose",
             // The machine's /etc/qiblad and udev database stay out of the tests.
             "--sysconfdir", stateDirectory.path + "/etc", "--udev-data-dir", stateDirectory.path + "/udev"]
                + (arguments ?? extraArguments),
            environment: bus.environment.merging(["XDG_CONFIG_HOME": stateDirectory.path + "/config"]) { $1 }
                .merging(environment) { $1 })
        daemon = child
        if waitForName {
            let owned = waitUntil(timeout: 15) { (try? nameHasOwner()) == true || !child.isRunning }
            guard owned, child.isRunning else {
                throw TestSupportError.startFailed("qiblad: \(child.standardError)")
            }
        }
        return child
    }

    func stop() {
        daemon?.terminate()
    }

    var log: String { daemon?.standardError ?? "" }

    func nameHasOwner() throws -> Bool {
        let r = try bus.busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                "NameHasOwner", "s", Self.name])
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "b true"
    }

    /// `busctl --json=short get-property` → (type letter, value). busctl's JSON keeps every digit
    /// of a double (its plain output rounds to six) and writes NaN as null.
    func property(_ name: String) throws -> (type: String, value: Any) {
        let r = try bus.busctl(["--json=short", "get-property", Self.name, Self.path, Self.interface, name])
        guard r.status == 0 else { throw HarnessError.busctl(r.stderr) }
        guard let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
              let type = object["type"] as? String else { throw HarnessError.parse(name, r.stdout) }
        return (type, object["data"] ?? NSNull())
    }

    func double(_ name: String) throws -> Double {
        let (type, value) = try property(name)
        guard type == "d" else { throw HarnessError.type(name, type) }
        if value is NSNull { return .nan }
        guard let d = (value as? NSNumber)?.doubleValue else { throw HarnessError.parse(name, "\(value)") }
        return d
    }

    func uint64(_ name: String) throws -> UInt64 {
        let (type, value) = try property(name)
        guard type == "t", let n = value as? NSNumber else { throw HarnessError.type(name, type) }
        return n.uint64Value
    }

    func string(_ name: String) throws -> String {
        let (type, value) = try property(name)
        guard type == "s", let s = value as? String else { throw HarnessError.type(name, type) }
        return s
    }

    func bool(_ name: String) throws -> Bool {
        let (type, value) = try property(name)
        guard type == "b", let b = value as? Bool else { throw HarnessError.type(name, type) }
        return b
    }

    /// `busctl call` on the Qibla1 interface; returns the whole result.
    @discardableResult
    func call(_ method: String, _ signature: String = "", _ arguments: [String] = []) throws -> (status: Int32, stdout: String, stderr: String) {
        // "--" so negative numbers are not taken for options.
        var args = ["--json=short", "call", "--", Self.name, Self.path, Self.interface, method]
        if !signature.isEmpty { args += [signature] + arguments }
        return try bus.busctl(args)
    }

    /// A long-running `busctl monitor` of this bus (an unrelated client, claimed or not).
    func monitor() throws -> ChildProcess {
        let m = try ChildProcess("busctl", ["--address=\(bus.address)", "monitor", "--match",
                                            "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"])
        usleep(300_000)
        return m
    }
}

enum HarnessError: Error, CustomStringConvertible {
    case busctl(String)
    case type(String, String)
    case parse(String, String)
    var description: String {
        switch self {
        case .busctl(let s): "busctl failed: \(s)"
        case .type(let n, let t): "property \(n) has type \(t)"
        case .parse(let n, let v): "property \(n): cannot parse '\(v)'"
        }
    }
}

/// Parses `busctl --json=short call` output {"type":"dddd","data":[…]} into doubles (null = NaN).
func doubles(fromBusctl text: String) -> [Double] {
    guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
          let data = object["data"] as? [Any] else { return [] }
    return data.map { ($0 as? NSNumber)?.doubleValue ?? .nan }
}
