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

    init(arguments: [String] = ["--no-gpsd"], bus: PrivateBus? = nil, stateDirectory: TemporaryDirectory? = nil) throws {
        self.bus = try bus ?? PrivateBus()
        self.stateDirectory = try stateDirectory ?? TemporaryDirectory(prefix: "qiblad-state")
        self.extraArguments = arguments
    }

    /// Starts qiblad and waits until it owns its name.
    @discardableResult
    func start(_ arguments: [String]? = nil, waitForName: Bool = true) throws -> ChildProcess {
        let child = try ChildProcess(
            product("qiblad").path,
            ["--session", "--state-dir", stateDirectory.path, "--config", stateDirectory.path + "/qiblad.conf", "--verbose"]
                + (arguments ?? extraArguments),
            environment: bus.environment.merging(["XDG_CONFIG_HOME": stateDirectory.path + "/config"]) { $1 })
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

    /// `busctl get-property` → (type letter, text value).
    func property(_ name: String) throws -> (type: String, value: String) {
        let r = try bus.busctl(["get-property", Self.name, Self.path, Self.interface, name])
        guard r.status == 0 else { throw HarnessError.busctl(r.stderr) }
        let text = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let space = text.firstIndex(of: " ") ?? text.endIndex
        var value = String(text[space...]).trimmingCharacters(in: .whitespaces)
        if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
        return (String(text[..<space]), value)
    }

    func double(_ name: String) throws -> Double {
        let (type, value) = try property(name)
        guard type == "d" else { throw HarnessError.type(name, type) }
        if value == "nan" || value == "-nan" { return .nan }
        guard let d = Double(value) else { throw HarnessError.parse(name, value) }
        return d
    }

    func string(_ name: String) throws -> String {
        let (type, value) = try property(name)
        guard type == "s" else { throw HarnessError.type(name, type) }
        return value
    }

    func bool(_ name: String) throws -> Bool {
        let (type, value) = try property(name)
        guard type == "b" else { throw HarnessError.type(name, type) }
        return value == "true"
    }

    /// `busctl call` on the Qibla1 interface; returns the whole result.
    @discardableResult
    func call(_ method: String, _ signature: String = "", _ arguments: [String] = []) throws -> (status: Int32, stdout: String, stderr: String) {
        // "--" so negative numbers are not taken for options.
        var args = ["call", "--", Self.name, Self.path, Self.interface, method]
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

/// Parses `busctl call` output "dddd 1.0 2.0 3.0 4.0" into doubles.
func doubles(fromBusctl text: String) -> [Double] {
    text.split(whereSeparator: { $0 == " " || $0 == "\n" }).dropFirst().map { token in
        let t = String(token)
        return t == "nan" || t == "-nan" ? .nan : (Double(t) ?? .nan)
    }
}
