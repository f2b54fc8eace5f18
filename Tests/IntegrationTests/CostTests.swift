// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import Testing
import TestSupport

/// Issue 12: while a client holds the compass, qiblad wakes about once per sample (one sampling
/// thread for both sensors; the loop woken once per hand-off, not per reading). The bound here is
/// twice the goal, so a loaded CI machine cannot break it at random; the goal itself is measured
/// by scripts/bench-daemon.sh.
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
        let woke = try IdleTests.wakeups(of: pid, during: seconds)
        let perSample = Double(woke) / Double(seconds) / 20
        print("claimed qiblad at 20 Hz: \(woke) context switches in \(seconds) s = \(perSample) per sample")
        #expect(perSample <= 2, "a claimed qiblad switched \(woke) times in \(seconds) s (\(perSample) per sample)")
    }
}
