// SPDX-License-Identifier: Apache-2.0
// QiblaGeoClue against the real GeoClue2 (/usr/libexec/geoclue 2.6 on a private system bus, fed
// NMEA through its nmea-socket; see TestSupport/GeoClueHarness.swift). Nothing here imitates GeoClue.
import Foundation
import QiblaCore
import QiblaDBus
import QiblaEventLoop
@testable import QiblaGeoClue
import Testing
import TestSupport

@Suite("GeoCluePositionSource with the real GeoClue2", .serialized)
struct GeoCluePositionSourceTests {
    static let london = (latitude: 51.5074, longitude: -0.1278)
    static let jakarta = (latitude: -6.208763, longitude: 106.845599)

    @Test("A started client gets GeoClue's fixes and follows a move")
    func fixesAndAMove() throws {
        let (env, feeder, harness) = try fedGeoClue(at: Self.london, altitude: 35)
        defer { feeder.stop() }
        harness.source.start()
        #expect(harness.spin(timeout: 20) { harness.startedCount == 1 }, "\(harness.events) \(env.log.suffix(3000))")
        #expect(harness.source.isRunning && harness.source.clientPath?.hasPrefix("/org/freedesktop/GeoClue2/Client/") == true)
        #expect(harness.spin(timeout: 20) { !harness.fixes.isEmpty }, "\(env.log.suffix(3000))")
        let first = try #require(harness.fixes.first)
        #expect(near(first, Self.london.latitude, Self.london.longitude), "\(first)")
        #expect(first.hasAltitude && abs(first.position.heightMetres - 35) < 1e-6)
        #expect(first.horizontalAccuracyMetres.map { $0 >= 0 && $0.isFinite } == true)
        let now = Date().timeIntervalSince1970
        #expect(first.timeUnixSeconds.map { abs($0 - now) < 120 } == true, "GeoClue's timestamp comes from the GGA time")
        // Jitter below the 5 m distance threshold is not signalled; a real move is.
        let before = harness.fixes.count
        feeder.move(latitude: Self.london.latitude + 0.00002, longitude: Self.london.longitude)
        harness.spin(timeout: 1.5)
        #expect(harness.fixes.count == before, "a 2 m move is below DistanceThreshold")
        feeder.move(latitude: Self.jakarta.latitude, longitude: Self.jakarta.longitude)
        #expect(harness.spin(timeout: 20) { harness.fixes.contains { near($0, Self.jakarta.latitude, Self.jakarta.longitude) } })
        #expect(harness.source.statistics.rejected == 0)
        #expect(harness.source.armedTimerCount == 0, "running: no timer")
        harness.source.stop()
    }

    @Test("No bus connection before start() and after stop(); stop() silences events; start() works again")
    func connectionOnlyWhileStarted() throws {
        let (env, feeder, harness) = try fedGeoClue(at: Self.london)
        defer { feeder.stop() }
        harness.spin(timeout: 0.5)
        #expect(!harness.source.hasConnection)
        #expect(env.bus.connections(of: getpid()).isEmpty)
        harness.source.start()
        #expect(harness.spin(timeout: 20) { !harness.fixes.isEmpty })
        #expect(env.bus.connections(of: getpid()).count == 1)
        harness.source.stop()
        #expect(!harness.source.isActive && !harness.source.hasConnection && harness.source.armedTimerCount == 0)
        let eventsAtStop = harness.events.count
        harness.spin(timeout: 1.5)
        #expect(harness.events.count == eventsAtStop)
        #expect(waitUntil(timeout: 5) { env.bus.connections(of: getpid()).isEmpty })
        // GeoClue dropped the client: nothing of ours is left in use.
        harness.source.start()
        #expect(harness.spin(timeout: 20) { harness.startedCount == 2 && harness.fixes.count > 1 })
        // Stopping from inside the event handler is allowed.
        harness.onEvent = { event in if case .fix = event { harness.source.stop() } }
        feeder.move(latitude: Self.jakarta.latitude, longitude: Self.jakarta.longitude)
        #expect(harness.spin(timeout: 20) { !harness.source.isActive })
        let count = harness.events.count
        harness.spin(timeout: 1)
        #expect(harness.events.count == count)
    }

    @Test("GeoClue killed: fix lost and retrying at once; restarted: a new client and fixes")
    func geoClueKilledAndRestarted() throws {
        let (env, feeder, harness) = try fedGeoClue(at: Self.london)
        defer { feeder.stop() }
        harness.source.start()
        #expect(harness.spin(timeout: 20) { !harness.fixes.isEmpty }, "\(env.log.suffix(3000))")
        let killed = ContinuousClock.now
        env.kill()
        #expect(harness.spin(timeout: 5) { harness.fixLostCount == 1 && !harness.unavailable.isEmpty })
        let lost = try #require(harness.events.first { $0.event == .fixLost }?.instant)
        #expect(harness.unavailable.first.map { $0.0 == .vanished && $0.1 } == true, "\(harness.unavailable)")
        #expect(killed.duration(to: lost) < .seconds(5), "\(killed.duration(to: lost))")
        // Retries fail while it is away (not activatable here), without more events per attempt.
        harness.spin(timeout: 2)
        #expect(harness.source.statistics.attempts >= 2)
        let fixesBefore = harness.fixes.count
        let restarted = ContinuousClock.now
        try env.start()
        #expect(harness.spin(timeout: 40) { harness.startedCount == 2 && harness.fixes.count > fixesBefore }, "\(harness.events)")
        if let back = harness.events.last(where: { $0.event == .started })?.instant {
            print("GeoClue killed → fixLost after \(milliseconds(killed.duration(to: lost))) ms; restarted (on the bus) → client started after \(milliseconds(restarted.duration(to: back))) ms (including GeoClue's and its agent's start); attempts \(harness.source.statistics.attempts)")
        }
        harness.source.stop()
    }

    @Test("Access denied by GeoClue's configuration: one accessDenied event, no retry")
    func accessDeniedByConfiguration() throws {
        let env = try GeoClueEnvironment(qiblad: .disallowed)
        let harness = try GeoClueSourceHarness(bus: env.bus.address)
        harness.source.start()
        #expect(harness.spin(timeout: 20) { !harness.denials.isEmpty })
        #expect(harness.denials.first?.contains("disallowed by configuration") == true, "\(harness.denials)")
        harness.spin(timeout: 2)
        #expect(harness.denials.count == 1 && harness.startedCount == 0 && harness.unavailable.isEmpty)
        #expect(harness.source.armedTimerCount == 0 && harness.source.statistics.attempts == 1)
        #expect(harness.source.isActive && !harness.source.isRunning)
        harness.source.stop()
    }

    @Test("GeoClue not on the bus: reported at once under .report, waited for under .waitForIt")
    func notOnTheBus() throws {
        let env = try GeoClueEnvironment(startGeoClue: false)
        let reporting = try GeoClueSourceHarness(bus: env.bus.address, whenMissing: .report)
        reporting.source.start()
        #expect(reporting.spin(timeout: 10) { !reporting.unavailable.isEmpty })
        #expect(reporting.unavailable.first.map { $0.0 == .notOnBus && !$0.1 } == true, "\(reporting.unavailable)")
        #expect(reporting.source.armedTimerCount == 0)
        reporting.source.stop()

        let feeder = NMEAFeeder(env.nmea, latitude: Self.london.latitude, longitude: Self.london.longitude)
        defer { feeder.stop() }
        let waiting = try GeoClueSourceHarness(bus: env.bus.address, whenMissing: .waitForIt)
        waiting.source.start()
        #expect(waiting.spin(timeout: 10) { !waiting.unavailable.isEmpty })
        #expect(waiting.unavailable.first.map { $0.0 == .notOnBus && $0.1 } == true)
        #expect(waiting.unavailable.count == 1, "one event per state change, not per retry")
        // Let the backoff grow past a few seconds: GeoClue's appearance is noticed at once anyway.
        waiting.spin(timeout: 4)
        let appeared = ContinuousClock.now
        try env.start()
        #expect(waiting.spin(timeout: 30) { waiting.startedCount == 1 && !waiting.fixes.isEmpty }, "\(waiting.events)")
        if let started = waiting.events.first(where: { $0.event == .started })?.instant {
            print("GeoClue appeared → client started after \(milliseconds(appeared.duration(to: started))) ms (backoff was \(waiting.source.statistics.attempts) attempts deep)")
        }
        waiting.source.stop()
    }

    @Test("Activatable only: the first call starts GeoClue through the bus")
    func activation() throws {
        let env = try GeoClueEnvironment(activatable: true)
        let feeder = NMEAFeeder(env.nmea, latitude: Self.jakarta.latitude, longitude: Self.jakarta.longitude)
        defer { feeder.stop() }
        #expect(!env.bus.hasOwner("org.freedesktop.GeoClue2"))
        let harness = try GeoClueSourceHarness(bus: env.bus.address, whenMissing: .report)
        harness.source.start()
        // GeoClue 2.6 may hold CreateClient until the agent has registered with the new process.
        #expect(harness.spin(timeout: 40) { !harness.fixes.isEmpty }, "\(harness.events) \(env.bus.daemon.standardOutput.suffix(2000))")
        #expect(harness.unavailable.isEmpty)
        #expect(env.bus.hasOwner("org.freedesktop.GeoClue2"))
        harness.source.stop()
        // The bus started GeoClue (its child, not ours): stop it.
        let owner = try env.bus.busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                        "GetConnectionUnixProcessID", "s", "org.freedesktop.GeoClue2"])
        if let pid = Int32(owner.stdout.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") {
            kill(pid, SIGTERM)
        }
    }

    @Test("GeoClue frozen (SIGSTOP): calls time out, retried with backoff; thawed: recovers")
    func geoClueNeverAnswers() throws {
        let (env, feeder, harness) = try fedGeoClue(at: Self.london, callTimeoutSeconds: 1)
        defer { feeder.stop() }
        let pid = try #require(env.geoclue?.pid)
        kill(pid, SIGSTOP)
        var ticks = 0
        let tick = harness.loop.schedule(after: .milliseconds(100), repeating: .milliseconds(100)) { ticks += 1 }
        harness.source.start()
        #expect(harness.spin(timeout: 10) { !harness.unavailable.isEmpty })
        #expect(harness.unavailable.first.map { if case .noAnswer = $0.0 { $0.1 } else { false } } == true, "\(harness.unavailable)")
        harness.spin(timeout: 2)
        harness.loop.cancel(tick)
        #expect(ticks >= 20, "the loop kept turning while GeoClue hung: \(ticks) ticks in about 3 s")
        kill(pid, SIGCONT)
        #expect(harness.spin(timeout: 40) { harness.startedCount == 1 && !harness.fixes.isEmpty }, "\(harness.events)")
        harness.source.stop()
    }

    @Test("No system bus: reported at once under .report")
    func noSystemBus() throws {
        let harness = try GeoClueSourceHarness(bus: "unix:path=/nonexistent/qiblad-no-bus", whenMissing: .report)
        harness.source.start()
        #expect(harness.unavailable.count == 1)
        #expect(harness.unavailable.first.map { if case .noSystemBus = $0.0 { !$0.1 } else { false } } == true)
        #expect(harness.source.armedTimerCount == 0 && !harness.source.hasConnection)
        harness.source.stop()
    }
}

@Suite struct PositionSourceSelectionTests {
    @Test func theSourcesEachModeStarts() {
        var s = PositionSourceSelection()
        #expect(s.mode == .auto)
        #expect(s.sourcesToStart(gpsdConfigured: true) == [.geoclue, .gpsd], "auto: both at once")
        #expect(s.sourcesToStart(gpsdConfigured: false) == [.geoclue], "gpsd = none: GeoClue2 only")
        #expect(s.whenGeoClueIsMissing == .report)
        s.mode = .geoclue
        #expect(s.sourcesToStart(gpsdConfigured: true) == [.geoclue])
        #expect(s.whenGeoClueIsMissing == .waitForIt)
        s.mode = .gpsd
        #expect(s.sourcesToStart(gpsdConfigured: true) == [.gpsd] && s.sourcesToStart(gpsdConfigured: false).isEmpty)
        s.mode = .none
        #expect(s.sourcesToStart(gpsdConfigured: true).isEmpty)
    }

    @Test func theShippedSnippetIsTheOneTheHintNames() throws {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("dbus/geoclue-qiblad.conf"), encoding: .utf8)
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }.joined(separator: "\n") + "\n"
        #expect(body == GeoClueAuthorization.snippet(desktopId: "qiblad"))
        let hint = GeoClueAuthorization.hint(desktopId: "qiblad", refusal: "'qiblad' disallowed by configuration for UID 0")
        #expect(hint.contains("/etc/geoclue/geoclue.conf") && hint.contains("/etc/geoclue/conf.d/90-qiblad.conf"))
        #expect(hint.contains("[qiblad] allowed=true system=false users=") && !hint.contains("\n"))
    }

    @Test func accuracyLevelsAreGeoClues() {
        #expect(GeoClueAccuracyLevel.exact.rawValue == 8 && GeoClueAccuracyLevel.city.rawValue == 4)
    }
}
