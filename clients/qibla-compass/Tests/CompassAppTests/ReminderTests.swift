// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import QiblaCore
import TestSupport

/// The next Qibla-sun time at a place after `startMicroseconds`, from qiblad's own calculator
/// (`QiblaSunTimes`, called with busctl as any client would).
func nextQiblaSunTime(_ rig: AppRig, latitude: Double, longitude: Double, after startMicroseconds: UInt64) throws -> UInt64? {
    // "--" ends busctl's options: a western longitude ("-5.6") is an argument, not an option.
    let r = try rig.bus.busctl(["--json=short", "--", "call", "io.github.qiblad.Qibla1", "/io/github/qiblad/Qibla1", "io.github.qiblad.Qibla1",
                                "QiblaSunTimes", "ddt", "\(latitude)", "\(longitude)", "\(startMicroseconds)"])
    guard r.status == 0, let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
          let data = object["data"] as? [Any], let times = data.first as? [[Any]] else { return nil }
    return times.compactMap { ($0.first as? NSNumber)?.uint64Value }.first
}

/// Voluntary context switches of every thread of a process: each time one of them slept and was woken.
func voluntarySwitches(pid: Int32) -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    return tasks.reduce(0) { sum, task in
        let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
        return sum + (line.flatMap { Int($0.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") } ?? 0)
    }
}

@Suite(.serialized) struct ReminderTests {
    /// The app's menu switches the user service on and off through systemd's D-Bus API
    /// (python-dbusmock's systemd manager on the test's session bus, with the unit-file methods
    /// systemctl enable/disable use): enabled, reloaded, started; stopped, disabled.
    @Test func theMenuSwitchesTheReminderServiceOnAndOff() throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        try rig.startDaemon(location: "\(london.latitude),\(london.longitude)")
        let log = rig.directory.path + "/systemd.log"
        let systemd = try ChildProcess("/usr/bin/python3", ["-m", "dbusmock", "--session", "--template", "systemd", "-l", log],
                                       environment: rig.bus.environment)
        defer { systemd.terminate() }
        #expect(waitUntil(timeout: 15) { (try? rig.bus.busctl(["status", "org.freedesktop.systemd1"]).status) == 0 }, "\(systemd.standardError)")
        let manager = ["org.freedesktop.systemd1", "/org/freedesktop/systemd1"]
        let mock = manager + ["org.freedesktop.DBus.Mock"]
        for (name, inSignature, outSignature, code) in [("EnableUnitFiles", "asbb", "ba(sss)", "ret = (True, [])"),
                                                        ("DisableUnitFiles", "asb", "a(sss)", "ret = []"),
                                                        ("Reload", "", "", ""),
                                                        ("GetUnitFileState", "s", "s", "ret = 'disabled'")] {
            let r = try rig.bus.busctl(["call"] + mock + ["AddMethod", "sssss", "org.freedesktop.systemd1.Manager", name, inSignature, outSignature, code])
            #expect(r.status == 0, "\(r.stderr)")
        }
        _ = try rig.bus.busctl(["call"] + mock + ["AddMockUnit", "s", "qibla-remind.service"])
        let unit = "/org/freedesktop/systemd1/unit/qibla_remind_service"
        func activeState() -> String? {
            guard let r = try? rig.bus.busctl(["--json=short", "get-property", "org.freedesktop.systemd1", unit, "org.freedesktop.systemd1.Unit", "ActiveState"]),
                  let o = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] else { return nil }
            return o["data"] as? String
        }
        func calls(_ name: String) -> Int {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.split(separator: " ").dropFirst().first == Substring(name) }.count
        }
        let app = try ChildProcess(compassApp, ["--size", "360x720", "--verbose"], environment: rig.appEnvironment)
        defer { app.terminate() }
        #expect(waitUntil(timeout: 15) { app.standardError.contains("qibla-remind.service is disabled") }, "\(app.standardError)")
        func activate() throws -> Int32 {
            try rig.bus.busctl(["call", "io.github.qiblad.Compass", "/io/github/qiblad/Compass", "org.gtk.Actions",
                                "Activate", "sava{sv}", "remind", "0", "0"]).status
        }
        #expect(try activate() == 0)
        #expect(waitUntil(timeout: 10) { activeState() == "active" }, "not started: \(app.standardError)")
        #expect(calls("EnableUnitFiles") == 1 && calls("Reload") == 1, "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        #expect(try activate() == 0)
        #expect(waitUntil(timeout: 10) { activeState() == "inactive" }, "not stopped: \(app.standardError)")
        #expect(waitUntil(timeout: 5) { calls("DisableUnitFiles") == 1 }, "not disabled: \(app.standardError)")
    }

    /// `qiblactl remind` against a real qiblad and python-dbusmock's notification server on the
    /// test's bus. The clock is the real one; the place moves instead: a longitude on the equator
    /// (or, at the hours when there is none, 10°, 20° or 30° north or south of it) where qiblad's
    /// next Qibla-sun time is 40–100 s away. Then the notification arrives at that time (the
    /// server's log stamps it; not before, at most 2 s after), says what to do, comes once, and
    /// the reminder's threads do not wake between its start and the time.
    @Test func theReminderComesAtTheTimeAndSleepsUntilThen() throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        try rig.startDaemon(location: "0,0")
        let now = { UInt64(Date().timeIntervalSince1970 * 1e6) }
        // Where the sun, a minute from now, stands in the Qibla or opposite it:
        // a root of (sun's azimuth − Qibla bearing) over longitude, found by a scan and bisection
        // (QiblaCore's solar position and great-circle bearing; qiblad's calculator then decides).
        let instant = Double(now()) / 1e6 + 60
        let kaaba = try GeodeticPosition(latitudeDegrees: 21.4225241, longitudeDegrees: 39.8261818)
        func misalignment(_ longitude: Double, latitude: Double, shadow: Bool) -> Double? {
            guard let here = try? GeodeticPosition(latitudeDegrees: latitude, longitudeDegrees: longitude),
                  let sun = SolarPositionAlgorithm.position(at: instant, for: here), sun.elevationDegrees >= 10,
                  let qibla = GreatCircle.initialBearingDegrees(from: here, to: kaaba) else { return nil }
            let d = (sun.azimuthDegrees - qibla - (shadow ? 180 : 0) + 540).truncatingRemainder(dividingBy: 360) - 180
            return d
        }
        // At some hours the sun lines up with the Qibla nowhere on the equator (high enough, in a
        // minute): then 10°, 20° or 30° north or south of it.
        var found: (latitude: Double, longitude: Double)?
        search: for latitude in [0.0, 10, -10, 20, -20, 30, -30] {
            for shadow in [false, true] {
                var west = -180.0
                while west < 180 {
                    let east = west + 0.5
                    if let a = misalignment(west, latitude: latitude, shadow: shadow),
                       let b = misalignment(east, latitude: latitude, shadow: shadow), a * b <= 0, abs(a - b) < 20 {
                        var (lo, hi, fLo) = (west, east, a)
                        for _ in 0..<50 {
                            let mid = (lo + hi) / 2
                            guard let f = misalignment(mid, latitude: latitude, shadow: shadow) else { break }
                            if f * fLo <= 0 { hi = mid } else { lo = mid; fLo = f }
                        }
                        found = (latitude, (lo + hi) / 2)
                        break search
                    }
                    west = east
                }
            }
        }
        let place = try #require(found, "no place within 30° of the equator where the sun lines up with the Qibla in a minute")
        let (latitude, longitude) = place
        let calculated = try nextQiblaSunTime(rig, latitude: latitude, longitude: longitude, after: now() + 30_000_000) ?? 0
        try #require(calculated > now() + 30_000_000 && calculated < now() + 110_000_000,
                     "no Qibla-sun time found within two minutes (latitude \(latitude), longitude \(longitude))")
        let set = try rig.bus.busctl(["--", "call", "io.github.qiblad.Qibla1", "/io/github/qiblad/Qibla1", "io.github.qiblad.Qibla1",
                                      "SetManualLocation", "dd", "\(latitude)", "\(longitude)"])
        #expect(set.status == 0, "\(set.stderr)")
        // The published time (searched from qiblad's own now) agrees with the calculator's within a second.
        var due: UInt64 = 0
        #expect(waitUntil(timeout: 5) {
            due = (try? rig.property("NextQiblaSunTime") as? NSNumber)?.uint64Value ?? 0
            return due > calculated - 1_000_000 && due < calculated + 1_000_000
        }, "qiblad publishes \(due), its calculator said \(calculated)")
        let kind = try #require(rig.property("NextQiblaSunKind") as? String)

        let log = rig.directory.path + "/notifications.log"
        let server = try ChildProcess("/usr/bin/python3", ["-m", "dbusmock", "--template", "notification_daemon", "-l", log],
                                      environment: rig.bus.environment)
        defer { server.terminate() }
        #expect(waitUntil(timeout: 15) { (try? rig.bus.busctl(["status", "org.freedesktop.Notifications"]).status) == 0 }, "no notification server: \(server.standardError)")
        let remind = try ChildProcess(daemonProduct("qiblactl"), ["remind"], environment: rig.bus.environment)
        defer { remind.terminate() }
        #expect(waitUntil(timeout: 10) { remind.standardError.contains("next Qibla-sun time: \(kind) at \(due)") }, "\(remind.standardError)")
        usleep(1_000_000)
        let switchesAtRest = voluntarySwitches(pid: remind.pid)
        let restStarted = now()
        // Asleep until 2 s before the time.
        while now() + 2_000_000 < due { usleep(200_000) }
        let switchesBeforeTheTime = voluntarySwitches(pid: remind.pid)
        let restSeconds = Double(now() - restStarted) / 1e6
        let notifyLines = { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.contains(" Notify ") } }
        #expect(notifyLines().isEmpty, "a notification before the time: \(notifyLines())")
        #expect(waitUntil(timeout: 10) { !notifyLines().isEmpty }, "no notification: \(remind.standardError)")
        usleep(3_000_000)
        let lines = notifyLines()
        #expect(lines.count == 1, "\(lines)")
        let line = try #require(lines.first)
        let stamp = try #require(Double(line.split(separator: " ").first ?? ""), "\(line)")
        let lateness = stamp - Double(due) / 1e6
        print("Qibla-sun time (\(kind)) at latitude \(latitude), longitude \(longitude): notified \(lateness) s after it; voluntary context switches between: \(switchesBeforeTheTime - switchesAtRest) over \(restSeconds) s")
        #expect(lateness >= 0 && lateness <= 2, "notified \(lateness) s after the time")
        #expect(line.contains(kind == "sun" ? "Face the sun now" : "Your shadow points to the Qibla now"), "\(line)")
        #expect(switchesBeforeTheTime - switchesAtRest == 0, "the reminder woke \(switchesBeforeTheTime - switchesAtRest) times while waiting")
    }
}
