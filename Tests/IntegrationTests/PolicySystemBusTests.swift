// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

/// The system-bus policy (dbus/io.github.qiblad.Qibla1.conf) in a private `dbus-daemon` whose
/// configuration has system.conf's default context and includes the policy, with qiblad and its
/// clients running as different uids (setpriv; root is needed to switch).
///
/// This machine has no `qiblad` user or group, and dbus-daemon ignores rules naming unknown ones,
/// so the included copy names stand-ins: the user `daemon` (uid 1) for `qiblad`, the group `users`
/// (gid 100) for the group `qiblad`. Everything else is the installed file, byte for byte.
@Suite(.enabled(if: geteuid() == 0, "switching uids needs root"))
struct PolicySystemBusTests {
    static let name = "io.github.qiblad.Qibla1", path = "/io/github/qiblad/Qibla1"
    static let serviceUID = "1", groupGID = "100", nobody = "65534"

    final class SystemBus {
        let policyDirectory: TemporaryDirectory
        let bus: PrivateBus
        var directory: TemporaryDirectory { policyDirectory }
        var address: String { bus.address }

        init() throws {
            policyDirectory = try TemporaryDirectory(prefix: "qiblad-policy")
            let policy = try String(contentsOf: repositoryRoot.appendingPathComponent("dbus/io.github.qiblad.Qibla1.conf"), encoding: .utf8)
            #expect(policy.contains("<policy user=\"qiblad\">") && policy.contains("<policy group=\"qiblad\">"))
            try policyDirectory.write(policy.replacingOccurrences(of: "user=\"qiblad\"", with: "user=\"daemon\"")
                                            .replacingOccurrences(of: "group=\"qiblad\"", with: "group=\"users\""),
                                      to: "io.github.qiblad.Qibla1.conf")
            bus = try PrivateBus(type: "system", policy: PrivateBus.systemDefaultPolicy,
                                 extra: "<include>\(policyDirectory.path)/io.github.qiblad.Qibla1.conf</include>")
            // Reachable by every uid of the test: the bus socket, the state directories.
            for path in [bus.directory.path, policyDirectory.path] { _ = try run("/bin/chmod", ["0755", path]) }
        }

        /// `setpriv` to uid/gid (and supplementary groups, none by default), then the command.
        func asUser(_ uid: String, groups: [String] = [], _ command: [String]) -> [String] {
            ["/usr/bin/setpriv", "--reuid", uid, "--regid", uid] + (groups.isEmpty ? ["--clear-groups"] : ["--groups", groups.joined(separator: ",")]) + command
        }

        func busctl(_ uid: String, groups: [String] = [], _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
            let command = asUser(uid, groups: groups, ["busctl", "--address=\(address)"] + arguments)
            return try run(command[0], Array(command.dropFirst()))
        }

        func call(_ uid: String, groups: [String] = [], _ interface: String, _ member: String, _ signature: String = "", _ arguments: [String] = []) throws -> (status: Int32, stdout: String, stderr: String) {
            try busctl(uid, groups: groups, ["call", "--", PolicySystemBusTests.name, PolicySystemBusTests.path, interface, member]
                       + (signature.isEmpty ? [] : [signature] + arguments))
        }

        deinit { policyDirectory.remove() }
    }

    /// qiblad --system as `uid`, with a state directory that uid can write.
    static func startQiblad(on bus: SystemBus, as uid: String) throws -> ChildProcess {
        let state = bus.directory.path + "/state-\(uid)"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        _ = try run("/bin/chown", ["\(uid):\(uid)", state])
        let command = bus.asUser(uid, [product("qiblad").path, "--system", "--no-gpsd", "--state-dir", state,
                                       "--config", state + "/none.conf", "--sysfs-root", state + "/no-sysfs"])
        return try ChildProcess(command[0], Array(command.dropFirst()), environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
    }

    static func owned(_ bus: SystemBus) -> Bool {
        (try? bus.busctl("0", ["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "NameHasOwner", "s", name]).stdout.contains("true")) == true
    }

    /// Even a member of the group may not own the name: a stray qiblad cannot stand in for the service.
    @Test func onlyTheServiceUserOrRootMayOwnTheName() throws {
        let bus = try SystemBus()
        for uid in [Self.nobody] {
            let r = try bus.busctl(uid, groups: [Self.groupGID], ["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                         "RequestName", "su", Self.name, "0"])
            #expect(r.status != 0 && r.stderr.contains("Access denied"), "uid \(uid): \(r)")
            let qiblad = try Self.startQiblad(on: bus, as: uid)
            #expect(qiblad.wait(timeout: 15) == 1, "qiblad as uid \(uid): \(qiblad.standardError)")
            #expect(qiblad.standardError.contains("cannot request the name"), "\(qiblad.standardError)")
        }
        let root = try bus.busctl("0", ["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                        "RequestName", "su", Self.name, "0"])
        #expect(root.status == 0, "root: \(root.stderr)")
        let service = try Self.startQiblad(on: bus, as: Self.serviceUID)
        defer { service.terminate() }
        #expect(waitUntil(timeout: 15) { Self.owned(bus) && service.standardError.contains("serving") }, "\(service.standardError)")
    }

    @Test func anyoneReadsAndClaimsOnlyRootAndTheGroupChangeTheLocation() throws {
        let bus = try SystemBus()
        let service = try Self.startQiblad(on: bus, as: Self.serviceUID)
        defer { service.terminate() }
        #expect(waitUntil(timeout: 15) { Self.owned(bus) }, "\(service.standardError)")
        let interface = Self.name

        // Anyone: properties, introspection, QiblaFor, the claim methods.
        for (member, signature, arguments) in [("QiblaFor", "dd", ["-33.45", "-70.66"]), ("ClaimCompass", "", []), ("ReleaseCompass", "", [])] {
            let r = try bus.call(Self.nobody, interface, member, signature, arguments)
            #expect(r.status == 0, "nobody \(member): \(r.stderr)")
        }
        let get = try bus.busctl(Self.nobody, ["get-property", Self.name, Self.path, interface, "LocationSource"])
        #expect(get.status == 0 && get.stdout.contains("\"none\""), "\(get)")
        let all = try bus.call(Self.nobody, "org.freedesktop.DBus.Properties", "GetAll", "s", [interface])
        #expect(all.status == 0, "\(all.stderr)")
        let introspect = try bus.busctl(Self.nobody, ["introspect", Self.name, Self.path])
        #expect(introspect.status == 0 && introspect.stdout.contains("QiblaFor"), "\(introspect.stderr)")

        // Nobody in particular: the three state-changing methods are denied by the bus, before qiblad.
        for (member, signature, arguments) in [("SetManualLocation", "dd", ["-33.45", "-70.66"]), ("ClearManualLocation", "", []), ("ResetCalibration", "", [])] {
            let r = try bus.call(Self.nobody, interface, member, signature, arguments)
            #expect(r.status != 0 && r.stderr.contains("Access denied"), "nobody \(member): \(r)")
        }
        #expect(try bus.busctl("0", ["get-property", Self.name, Self.path, interface, "LocationSource"]).stdout.contains("\"none\""))

        // A member of the group: allowed (ResetCalibration gets as far as qiblad, which has no magnetometer).
        let set = try bus.call(Self.nobody, groups: [Self.groupGID], interface, "SetManualLocation", "dd", ["-33.45", "-70.66"])
        #expect(set.status == 0, "group member: \(set.stderr)")
        #expect(try bus.busctl(Self.nobody, ["get-property", Self.name, Self.path, interface, "LocationSource"]).stdout.contains("\"manual\""))
        let reset = try bus.call(Self.nobody, groups: [Self.groupGID], interface, "ResetCalibration")
        #expect(!reset.stderr.contains("Access denied"), "group member: \(reset.stderr)")
        // Root: allowed.
        let clear = try bus.call("0", interface, "ClearManualLocation")
        #expect(clear.status == 0, "root: \(clear.stderr)")

        // qiblactl --system reports a denial as a runtime failure (1) with the bus's message.
        let command = bus.asUser(Self.nobody, [product("qiblactl").path, "set-location", "--system", "--", "-33.45", "-70.66"])
        let denied = try run(command[0], Array(command.dropFirst()), environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        #expect(denied.status == 1 && denied.stderr.contains("AccessDenied"), "\(denied)")
    }
}
