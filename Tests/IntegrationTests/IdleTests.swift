// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

/// "Zero wakeups when no client needs the sensors": an unclaimed daemon sleeps in poll(2).
@Suite struct IdleTests {
    /// Context switches of every thread of `pid` (voluntary + involuntary), from /proc.
    static func contextSwitches(_ pid: Int32) throws -> Int {
        var total = 0
        for task in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") {
            let status = try String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)
            for line in status.split(separator: "\n") where line.contains("ctxt_switches") {
                total += Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
        }
        return total
    }

    /// The debug line of the one-shot trim a second after the last call handled while unclaimed.
    static let idleCallTrim = "unclaimed: gave back the pages of the calls just handled"

    /// Context switches of `pid` during `seconds` of quiet, after half a second to settle.
    static func wakeups(of pid: Int32, during seconds: UInt32 = 3) throws -> Int {
        usleep(500_000)
        let before = try contextSwitches(pid)
        sleep(seconds)
        return try contextSwitches(pid) - before
    }

    @Test func anUnclaimedDaemonDoesNotWakeUp() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.start()
        #expect(try q.call("SetManualLocation", "dd", ["51.5", "0"]).status == 0)
        // The one timer a call leaves while unclaimed: its pages go back a second later (issue 37).
        #expect(waitUntil(timeout: 10) { q.log.contains(Self.idleCallTrim) })
        let woke = try Self.wakeups(of: try #require(q.daemon?.pid))
        #expect(woke <= 2, "an idle qiblad woke up \(woke) times in 3 s")
    }

    @Test func afterTheLastReleaseTheDaemonIsIdleAgain() throws {
        let sysfs = try TemporaryDirectory(prefix: "qiblad-empty-sysfs"); defer { sysfs.remove() }
        let q = try QibladHarness(arguments: ["--no-gpsd", "--sysfs-root", sysfs.path]); defer { q.stop() }
        try q.start()
        let monitor = try ChildProcess(product("qiblactl").path, ["monitor"], environment: q.bus.environment)
        #expect(waitUntil(timeout: 10) { q.log.contains("first compass claim") })
        monitor.send(SIGINT)
        #expect(monitor.wait(timeout: 10) == 0)
        #expect(waitUntil(timeout: 10) { q.log.contains("last compass claim released") })
        let woke = try Self.wakeups(of: try #require(q.daemon?.pid))
        #expect(woke <= 2, "qiblad kept waking up after the last release: \(woke) in 3 s")
    }

    @Test func unrelatedClientsComingAndGoingDoNotWakeAnUnclaimedDaemon() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.start()
        let pid = try #require(q.daemon?.pid)
        usleep(500_000)
        let before = try Self.contextSwitches(pid)
        // 100 unrelated clients: each busctl call is a new connection with its own unique name,
        // so the bus broadcasts NameOwnerChanged twice for each.
        for _ in 0..<100 {
            #expect(try q.bus.busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId"]).status == 0)
        }
        let woke = try Self.contextSwitches(pid) - before
        #expect(woke <= 2, "an unclaimed qiblad woke \(woke) times while 100 clients came and went")
    }

    @Test func aClaimantThatLeftBeforeItsWatchWasInPlaceIsDropped() throws {
        let q = try QibladHarness(arguments: ["--no-gpsd"]); defer { q.stop() }
        try q.start()
        // busctl claims and exits at once: its name is gone by the time the daemon asks.
        #expect(try q.call("ClaimCompass").status == 0)
        #expect(waitUntil(timeout: 10) { q.log.contains("dropping its compass claim") })
        #expect(waitUntil(timeout: 10) { q.log.contains("last compass claim released") })
    }
}

