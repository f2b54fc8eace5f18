// SPDX-License-Identifier: Apache-2.0
// always-on and idle-exit with the real qiblad: a heading without a claim, an exit with status 0
// once nobody has claimed for idle-exit seconds (never while a claim is held), and the new keys
// through SIGHUP.
import Foundation
import QiblaCore
import QiblaSimulator
import Testing
import TestSupport

@Suite struct RunPolicyIntegrationTests {
    static let london = "51.5074,-0.1278"

    static func flatScene() throws -> Scene {
        scene(at: try GeodeticPosition(latitudeDegrees: 51.5074, longitudeDegrees: -0.1278),
              orientation: .init(headingDegrees: 100, pitchDegrees: 0, rollDegrees: 0))
    }

    @Test func alwaysOnPublishesAHeadingWithNoClaimUntilAReloadTurnsItOff() throws {
        let rig = try CompassRig(scene: try Self.flatScene(), location: Self.london, configuration: "always-on = true\n", claim: false)
        let q = rig.daemon
        #expect(waitUntil(timeout: 15) { (try? q.bool("HasCompass")) == true }, "\(q.log)")
        #expect(waitUntil(timeout: 10) { (try? q.double("Heading"))?.isFinite == true }, "\(q.log)")
        let truth = try #require(rig.phone.simulator.scene.expectedTrueHeading(at: 0))
        #expect(abs(Angle.normalized180(try q.double("Heading") - truth)) < 5)
        #expect(q.log.contains("always-on: starting sensors"))
        #expect(!q.log.contains("first compass claim"))

        // A claim and its release leave the sensors running.
        #expect(try q.call("ClaimCompass").status == 0)
        #expect(waitUntil(timeout: 10) { q.log.contains("keep running (always-on)") }, "\(q.log)")
        #expect(try q.bool("HasCompass"))

        // SIGHUP with always-on = false: nobody claims, so the sensors stop and the heading is withdrawn.
        try q.stateDirectory.write("always-on = false\n", to: "qiblad.conf")
        q.daemon?.send(SIGHUP)
        #expect(waitUntil(timeout: 10) { q.log.contains("always-on off and no claim: stopping sensors") }, "\(q.log)")
        #expect(waitUntil(timeout: 10) { (try? q.double("Heading"))?.isNaN == true }, "\(q.log)")
    }

    @Test func alwaysOnTurnedOnByAReloadStartsTheSensors() throws {
        let rig = try CompassRig(scene: try Self.flatScene(), location: Self.london, claim: false)
        let q = rig.daemon
        usleep(500_000)
        #expect(try q.bool("HasCompass") == false)
        try q.stateDirectory.write("always-on = yes\n", to: "qiblad.conf")
        q.daemon?.send(SIGHUP)
        #expect(waitUntil(timeout: 15) { (try? q.double("Heading"))?.isFinite == true }, "\(q.log)")
        #expect(q.log.contains("always-on: starting sensors"))
    }

    @Test func idleExitLeavesWithStatusZeroWhenNobodyClaims() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.stateDirectory.write("idle-exit = 2\n", to: "qiblad.conf")
        let started = Date()
        let daemon = try q.start()
        #expect(daemon.wait(timeout: 15) == 0, "\(q.log)")
        #expect(Date().timeIntervalSince(started) >= 1.9)
        #expect(q.log.contains("no compass claim for 2.0 s; releasing io.github.qiblad.Qibla1 (idle-exit)"), "\(q.log)")
        #expect(q.log.contains("exiting (idle-exit)"), "\(q.log)")
    }

    /// idle-exit given by a reload while a client holds a claim: no exit while claimed; 1 s after
    /// the claimant leaves, status 0.
    @Test func idleExitWaitsForTheLastReleaseThenLeavesWithStatusZero() throws {
        let q = try QibladHarness(); defer { q.stop() }
        let daemon = try q.start()
        let monitor = try ChildProcess(product("qiblactl").path, ["monitor"], environment: q.bus.environment)
        defer { monitor.terminate() }
        #expect(waitUntil(timeout: 10) { q.log.contains("first compass claim") }, "\(q.log)")
        try q.stateDirectory.write("idle-exit = 1\n", to: "qiblad.conf")
        daemon.send(SIGHUP)
        #expect(waitUntil(timeout: 10) { q.log.contains("configuration reloaded") })
        sleep(3)
        #expect(daemon.isRunning, "qiblad left while a claim was held: \(q.log)")
        #expect(try q.nameHasOwner())

        monitor.send(SIGINT)
        #expect(monitor.wait(timeout: 10) == 0)
        let released = Date()
        #expect(daemon.wait(timeout: 10) == 0, "\(q.log)")
        #expect(Date().timeIntervalSince(released) >= 0.5)
        #expect(q.log.contains("last compass claim released"))
        #expect(q.log.contains("exiting (idle-exit)"))
    }

    /// The race of every bus-activated daemon: a claim already on its way when the idle-exit timer
    /// fires. qiblad is stopped (SIGSTOP) until its timer is overdue, a claim is sent meanwhile, and
    /// on SIGCONT the claim is read in the same loop iteration in which the timer fires. The claim
    /// must be answered (before, qiblad exited with it unanswered and `busctl` got no reply), the
    /// daemon stays while the claim is held, and leaves with status 0 once its claimant is gone.
    @Test func aClaimArrivingAsTheIdleTimerFiresIsAnsweredAndKeepsTheDaemon() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.stateDirectory.write("idle-exit = 2\n", to: "qiblad.conf")
        let daemon = try q.start()
        usleep(500_000)
        daemon.send(SIGSTOP)
        usleep(2_500_000)  // the idle-exit timer is now overdue
        let claimant = try ChildProcess("busctl", ["--address=\(q.bus.address)", "call", QibladHarness.name,
                                                   QibladHarness.path, QibladHarness.interface, "ClaimCompass"])
        usleep(500_000)  // the call is queued in qiblad's socket
        daemon.send(SIGCONT)
        #expect(claimant.wait(timeout: 10) == 0, "the claim got no answer: \(claimant.standardError)\n\(q.log)")
        #expect(waitUntil(timeout: 5) { q.log.contains("a compass claim arrived while leaving") }, "\(q.log)")
        // busctl has left, so its claim is dropped and the idle-exit count starts again.
        #expect(daemon.wait(timeout: 15) == 0, "\(q.log)")
        #expect(q.log.contains("keeping io.github.qiblad.Qibla1 and staying"), "\(q.log)")
    }

    /// The idle-exit timer is one one-shot timer: a daemon waiting to exit sleeps until then.
    @Test func aDaemonWaitingToExitDoesNotWakeUp() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.stateDirectory.write("idle-exit = 60\n", to: "qiblad.conf")
        try q.start()
        let woke = try IdleTests.wakeups(of: try #require(q.daemon?.pid))
        #expect(woke <= 2, "a qiblad waiting for idle-exit woke up \(woke) times in 3 s")
    }
}
