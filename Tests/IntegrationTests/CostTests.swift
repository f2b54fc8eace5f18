// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import Testing
import TestSupport

/// Issue 12: while a client holds the compass, qiblad wakes about once per sample (one sampling
/// thread for both sensors, which hands its samples over by borrowing the sleeping loop instead of
/// waking it). The bound here is twice the goal, so a loaded CI machine cannot break it at random;
/// the goal itself is measured by scripts/bench-daemon.sh.
@Suite struct CostTests {
    @Test func aClaimedDaemonWakesAtMostTwicePerSample() throws {
        let london = try GeodeticPosition(latitudeDegrees: 51.5074, longitudeDegrees: -0.1278)
        let phone = try SimulatedPhone(phone: .pinephone, scene: scene(at: london, orientation: .init(headingDegrees: 10)))
        defer { phone.stop() }
        let q = try QibladHarness(arguments: ["--no-gpsd", "--sysfs-root", phone.sysfsRoot, "--location=51.5074,-0.1278"])
        defer { q.stop() }
        try q.start()
        phone.start(rate: 20)
        let claim = try ChildProcess(product("qiblactl").path, ["monitor"], environment: q.bus.environment)
        defer { claim.terminate() }
        #expect(waitUntil(timeout: 15) { ((try? q.double("Heading")) ?? .nan).isFinite })
        let pid = try #require(q.daemon?.pid)
        let seconds: UInt32 = 4
        let loopBefore = try Self.voluntarySwitches(pid, thread: pid)
        let woke = try IdleTests.wakeups(of: pid, during: seconds)
        let loopWoke = try Self.voluntarySwitches(pid, thread: pid) - loopBefore
        let perSample = Double(woke) / Double(seconds) / 20
        print("claimed qiblad at 20 Hz: \(woke) context switches in \(seconds) s = \(perSample) per sample; the loop's thread slept \(loopWoke) times")
        #expect(perSample <= 2, "a claimed qiblad switched \(woke) times in \(seconds) s (\(perSample) per sample)")
        // Samples reach the model without waking the loop's thread: over 80+ samples and 40 hand-offs
        // it sleeps only for the odd timer or bus message (posting every hand-off: 40 or more).
        #expect(loopWoke <= 12, "the event loop's thread woke \(loopWoke) times in \(seconds) s while only samples arrived")
    }

    /// Voluntary context switches (sleeps) of one thread of `pid`, from /proc.
    static func voluntarySwitches(_ pid: Int32, thread: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8)
        for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
            return Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
        }
        return 0
    }
}
