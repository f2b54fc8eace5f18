// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import Testing
import TestSupport

/// Issue 12: while a client holds the compass, qiblad wakes about once per sample (one sampling
/// thread for both sensors, which hands its samples over by borrowing the sleeping loop instead of
/// waking it). The bound here is twice the goal; the goal itself is measured by
/// scripts/bench-daemon.sh.
///
/// Issue 33: counts within one run, so a loaded machine cannot change the verdict. A wakeup is a
/// voluntary context switch (a sleep ended by an event); involuntary ones are preemptions by the
/// machine's other load and say nothing of the daemon. The window is not a wall-clock time but a
/// number of sampling periods: the sampling thread sleeps once per period, and the window lasts
/// until it has slept 80 times, however long a loaded machine takes for that.
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
        usleep(500_000)
        let before = try Self.voluntarySwitchesByThread(pid)
        // The sampling thread: the one (not the loop's) that sleeps the most.
        var sampler: Int32 = 0, periods = 0, now: [Int32: Int] = before
        let counted = waitUntil(timeout: 60) {
            now = (try? Self.voluntarySwitchesByThread(pid)) ?? now
            let growth = now.filter { $0.key != pid }.map { ($0.key, $0.value - (before[$0.key] ?? 0)) }
            guard let busiest = growth.max(by: { $0.1 < $1.1 }) else { return false }
            (sampler, periods) = busiest
            return periods >= 80
        }
        #expect(counted, "the sampling thread slept only \(periods) times in 60 s")
        let woke = now.map { $0.value - (before[$0.key] ?? 0) }.reduce(0, +)
        let loopWoke = (now[pid] ?? 0) - (before[pid] ?? 0)
        let perSample = Double(woke) / Double(max(1, periods))
        print("claimed qiblad at 20 Hz: \(woke) sleeps of all threads over \(periods) sampling periods (thread \(sampler)) = "
              + "\(perSample) per sample; the loop's thread slept \(loopWoke) times")
        #expect(perSample <= 2, "a claimed qiblad slept \(woke) times over \(periods) samples (\(perSample) per sample)")
        // Samples reach the model without waking the loop's thread: over 80 samples and 40
        // hand-offs it sleeps 1–3 times on a quiet machine (the odd timer or bus message), 11–25
        // times beside two busy loops at a load of 10 (a hand-off that finds the loop's thread
        // awake, preempted, posts instead of borrowing, and the posts keep it awake for the next);
        // posting every hand-off would be at least one per hand-off, half the periods.
        #expect(loopWoke < periods / 2, "the event loop's thread woke \(loopWoke) times over \(periods) samples while only samples arrived")
    }

    /// Voluntary context switches (sleeps) of one thread of `pid`, from /proc.
    static func voluntarySwitches(_ pid: Int32, thread: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8)
        for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
            return Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
        }
        return 0
    }

    /// Voluntary context switches of every thread of `pid`, by thread id.
    static func voluntarySwitchesByThread(_ pid: Int32) throws -> [Int32: Int] {
        var switches: [Int32: Int] = [:]
        for task in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") {
            guard let thread = Int32(task) else { continue }
            switches[thread] = try? voluntarySwitches(pid, thread: thread)
        }
        return switches
    }
}
