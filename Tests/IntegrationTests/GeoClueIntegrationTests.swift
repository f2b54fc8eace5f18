// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import Testing
import TestSupport

/// qiblad against the real GeoClue2 (/usr/libexec/geoclue on a private system bus, fed NMEA
/// through its nmea-socket; TestSupport/GeoClueHarness.swift). qiblad runs on its own session bus
/// with DBUS_SYSTEM_BUS_ADDRESS pointing at that system bus; claims come from `qiblactl monitor`.
@Suite(.serialized) struct GeoClueIntegrationTests {
    static let london = (latitude: 51.5074, longitude: -0.1278)
    static let jakarta = (latitude: -6.208763, longitude: 106.845599)
    static let cairo = (latitude: 30.0444, longitude: 31.2357)

    func qiblad(_ env: GeoClueEnvironment, arguments: [String] = ["--no-gpsd", "--sysfs-root", "/nonexistent"],
                configuration: String = "") throws -> QibladHarness {
        let q = try QibladHarness(arguments: arguments)
        q.environment = env.bus.environment
        try q.stateDirectory.write(configuration, to: "qiblad.conf")
        return q
    }

    /// gpsd (gpsfake over one of Logs/) and a qiblad in `auto` with that gpsd in its configuration
    /// file, so not forced by `--gpsd`.
    func qibladWithGpsd(_ env: GeoClueEnvironment, log: String) throws -> (GPSFake, QibladHarness) {
        let port = freePort()
        let gpsd = try GPSFake(logPath: repositoryRoot.appendingPathComponent("Tests/IntegrationTests/Logs/\(log)").path, port: port)
        let q = try qiblad(env, arguments: ["--sysfs-root", "/nonexistent"], configuration: "gpsd = 127.0.0.1:\(port)\n")
        return (gpsd, q)
    }

    func claim(_ q: QibladHarness) throws -> ChildProcess {
        try ChildProcess(product("qiblactl").path, ["monitor"], environment: q.bus.environment)
    }

    @Test func aGeoClueFixDrivesTheQiblaPropertiesFollowsAMoveAndSurvivesAGeoClueRestart() throws {
        let env = try GeoClueEnvironment()
        let feeder = NMEAFeeder(env.nmea, latitude: Self.london.latitude, longitude: Self.london.longitude, altitude: 35)
        defer { feeder.stop() }
        let q = try qiblad(env); defer { q.stop() }
        try q.start()
        #expect(try q.call("SetManualLocation", "dd", ["\(Self.cairo.latitude)", "\(Self.cairo.longitude)"]).status == 0)
        let claim = try claim(q); defer { claim.terminate() }

        // A first fix (location-source = auto, GeoClue2 present on the system bus).
        #expect(waitUntil(timeout: 30) { (try? q.string("LocationSource")) == "geoclue" }, "\(q.log)\n\(env.log.suffix(2000))")
        #expect(abs(try q.double("Latitude") - Self.london.latitude) < 1e-6)
        #expect(abs(try q.double("Longitude") - Self.london.longitude) < 1e-6)
        #expect(abs(try q.double("Altitude") - 35) < 1e-6)
        #expect(try q.double("LocationAccuracy") >= 0)
        let position = try GeodeticPosition(latitudeDegrees: Self.london.latitude, longitudeDegrees: Self.london.longitude,
                                            heightMetres: 35)
        #expect(abs(try q.double("QiblaBearing") - Qibla().solve(from: position).greatCircleBearing.value!) < 1e-9)
        #expect(q.log.contains("live fix from geoclue"))

        // A move.
        feeder.move(latitude: Self.jakarta.latitude, longitude: Self.jakarta.longitude)
        #expect(waitUntil(timeout: 20) { abs(((try? q.double("Latitude")) ?? 0) - Self.jakarta.latitude) < 1e-6 })
        #expect(abs(try q.double("Longitude") - Self.jakarta.longitude) < 1e-6)
        #expect(try q.string("LocationSource") == "geoclue")

        // GeoClue2 stopped: the manual location is published.
        let killed = Date()
        env.kill()
        #expect(waitUntil(timeout: 10) { (try? q.string("LocationSource")) == "manual" }, "\(q.log)")
        let fallback = Date().timeIntervalSince(killed)
        #expect(fallback < 5, "fallback after \(fallback) s")
        #expect(abs(try q.double("Latitude") - Self.cairo.latitude) < 1e-6)
        #expect(q.daemon?.isRunning == true)

        // GeoClue2 back: re-acquired.
        let restarted = Date()
        try env.start()
        let onBus = Date()
        #expect(waitUntil(timeout: 40) { (try? q.string("LocationSource")) == "geoclue" }, "\(q.log)")
        let recovery = Date().timeIntervalSince(onBus)
        #expect(abs(try q.double("Latitude") - Self.jakarta.latitude) < 1e-6)
        print("GeoClue2 killed → fallback published after \(Int(fallback * 1000)) ms; restarted (on the bus and its agent registered \(Int(onBus.timeIntervalSince(restarted) * 1000)) ms after launch) → live fix after \(Int(recovery * 1000)) ms")
        // One log line per state change, not one per retry.
        #expect(q.log.components(separatedBy: "live fix lost").count - 1 == 1, "\(q.log)")
        #expect(q.log.components(separatedBy: "GeoClue2 left the system bus").count - 1 == 1, "\(q.log)")
    }

    @Test func accessDeniedByConfigurationFallsBackToGpsdAndIsLoggedOnce() throws {
        let env = try GeoClueEnvironment(qiblad: .disallowed)
        let (gpsd, q) = try qibladWithGpsd(env, log: "city-sydney.log")
        defer { gpsd.kill(); q.stop() }
        try q.start()
        var claim = try claim(q)
        #expect(waitUntil(timeout: 30) { (try? q.string("LocationSource")) == "gpsd" }, "\(q.log)")
        #expect(abs(try q.double("Latitude") - -33.86882) < 1e-6)
        func warnings() -> [Substring] {
            q.log.split(separator: "\n").filter { ($0.hasPrefix("<4>") || $0.hasPrefix("warning: ")) && $0.contains("denied access") }
        }
        #expect(warnings().count == 1, "\(q.log)")
        let line = String(warnings().first ?? "")
        #expect(line.contains("disallowed by configuration") && line.contains("/etc/geoclue/geoclue.conf")
                && line.contains("[qiblad] allowed=true system=false users=") && line.contains("using gpsd"), "\(line)")
        // A second claim is refused again, but the fix is not logged again.
        claim.send(SIGINT)
        #expect(claim.wait(timeout: 10) == 0)
        #expect(waitUntil(timeout: 10) { q.log.contains("last compass claim released") })
        claim = try self.claim(q); defer { claim.terminate() }
        #expect(waitUntil(timeout: 30) { (try? q.string("LocationSource")) == "gpsd" })
        #expect(waitUntil(timeout: 10) { q.log.components(separatedBy: "denied access").count - 1 == 2 })
        #expect(warnings().count == 1, "\(q.log)")
    }

    @Test func accessDeniedWithoutGpsdKeepsTheManualLocation() throws {
        let env = try GeoClueEnvironment(qiblad: .disallowed)
        let q = try qiblad(env); defer { q.stop() }
        try q.start()
        #expect(try q.call("SetManualLocation", "dd", ["\(Self.cairo.latitude)", "\(Self.cairo.longitude)"]).status == 0)
        let claim = try claim(q); defer { claim.terminate() }
        #expect(waitUntil(timeout: 30) { q.log.contains("denied access") }, "\(q.log)")
        #expect(q.log.contains("no live position (manual or last known location only)"))
        #expect(try q.string("LocationSource") == "manual")
        #expect(q.log.split(separator: "\n").filter { $0.contains("denied access") }.count == 1, "\(q.log)")
    }

    @Test func withoutGeoClueOnTheBusAutoUsesGpsd() throws {
        let env = try GeoClueEnvironment(startGeoClue: false)
        let (gpsd, q) = try qibladWithGpsd(env, log: "city-london.log")
        defer { gpsd.kill(); q.stop() }
        try q.start()
        let claim = try claim(q); defer { claim.terminate() }
        #expect(waitUntil(timeout: 30) { (try? q.string("LocationSource")) == "gpsd" }, "\(q.log)")
        #expect(q.log.contains("GeoClue2 is not available (org.freedesktop.GeoClue2 is neither running nor activatable"))
    }

    @Test func locationSourceGeoclueWaitsForGeoClueToAppear() throws {
        let env = try GeoClueEnvironment(startGeoClue: false)
        let feeder = NMEAFeeder(env.nmea, latitude: Self.jakarta.latitude, longitude: Self.jakarta.longitude)
        defer { feeder.stop() }
        let q = try qiblad(env, configuration: "location-source = geoclue\n"); defer { q.stop() }
        try q.start()
        let claim = try claim(q); defer { claim.terminate() }
        #expect(waitUntil(timeout: 10) { q.log.contains("retrying with backoff") }, "\(q.log)")
        sleep(2)
        try env.start()
        #expect(waitUntil(timeout: 30) { (try? q.string("LocationSource")) == "geoclue" }, "\(q.log)")
    }

    @Test func withoutAClaimQibladHasNoSystemBusConnection() throws {
        let env = try GeoClueEnvironment()
        let feeder = NMEAFeeder(env.nmea, latitude: Self.london.latitude, longitude: Self.london.longitude)
        defer { feeder.stop() }
        // Without a raw magnetometer `auto` would also claim iio-sensor-proxy's compass on its own
        // connection (SensorProxyIntegrationTests counts that one): here only GeoClue2's is counted.
        let q = try qiblad(env, configuration: "heading-source = magnetometer\n"); defer { q.stop() }
        try q.start()
        let pid = try #require(q.daemon?.pid)
        sleep(1)
        #expect(env.bus.connections(of: pid).isEmpty)
        #expect(try q.string("LocationSource") == "none")
        let claim = try claim(q)
        #expect(waitUntil(timeout: 30) { (try? q.string("LocationSource")) == "geoclue" })
        #expect(env.bus.connections(of: pid).count == 1)
        claim.send(SIGINT)
        #expect(claim.wait(timeout: 10) == 0)
        #expect(waitUntil(timeout: 10) { env.bus.connections(of: pid).isEmpty })
        let trims = { q.log.components(separatedBy: IdleTests.idleCallTrim).count - 1 }
        let trimmed = trims()
        #expect(try q.string("LocationSource") == "last-known")
        // That call's pages go back a second later (issue 37): the one timer it leaves.
        #expect(waitUntil(timeout: 10) { trims() > trimmed }, "\(q.log)")
        let woke = try IdleTests.wakeups(of: pid)
        #expect(woke <= 2, "qiblad kept waking up after the last release: \(woke) in 3 s")
    }

    // MARK: Issue 23: GeoClue2 and gpsd together

    /// Seconds since `start`.
    static func since(_ start: Date) -> Double { Date().timeIntervalSince(start) }

    /// GeoClue 2.6 on the bus but no agent for our uid (sway, i3, a server): it holds CreateClient
    /// without a limit. gpsd with a fix serves within 5 s of the claim all the same; the silent
    /// GeoClue2 is reported once; the release leaves no system-bus connection and no gpsd socket.
    @Test func withoutAGeoClueAgentGpsdServesWithinFiveSecondsOfTheClaim() throws {
        let env = try GeoClueEnvironment(agent: false)
        let feeder = NMEAFeeder(env.nmea, latitude: Self.jakarta.latitude, longitude: Self.jakarta.longitude)
        defer { feeder.stop() }
        let (gpsd, q) = try qibladWithGpsd(env, log: "city-london.log")
        defer { gpsd.kill(); q.stop() }
        try q.start()
        let pid = try #require(q.daemon?.pid)
        let claimed = Date()
        let claim = try claim(q)
        #expect(waitUntil(timeout: 15) { (try? q.string("LocationSource")) == "gpsd" }, "\(q.log)")
        let firstFix = Self.since(claimed)
        #expect(firstFix <= 5, "gpsd's fix after \(firstFix) s")
        #expect(waitUntil(timeout: 10) { q.log.contains("GeoClue2 has not answered") }, "\(q.log)")
        let sources = try q.string("LocationSources")
        #expect(sources.contains("geoclue=waiting") && sources.contains("gpsd=live"), "\(sources)")
        let status = try run(product("qiblactl").path, ["status"], environment: q.bus.environment)
        #expect(status.stdout.contains("geoclue=waiting"), "qiblactl status shows each source: \(status.stdout)")
        claim.send(SIGINT)
        #expect(claim.wait(timeout: 10) == 0)
        let released = Date()
        #expect(waitUntil(timeout: 3) {
            env.bus.connections(of: pid).isEmpty && ((try? GPSDIntegrationTests.connections(of: pid, to: gpsd.port)) ?? 1) == 0
        }, "\(q.log)")
        print("sources: no GeoClue agent: gpsd's fix published \(Int(firstFix * 1000)) ms after the claim; "
              + "system bus and gpsd released \(Int(Self.since(released) * 1000)) ms after the release")
    }

    /// Both serving: GeoClue2 fed NMEA with a small HDOP and gpsd: the more accurate fix is
    /// published; GeoClue2 turned coarse (as a Wi-Fi or GeoIP fix would be) hands over to gpsd; the
    /// faults (GeoClue2 killed, restarted; gpsd killed) leave no gap over 2 s in a live
    /// `LocationSource`, and never `last-known` while a live source has a fix.
    @Test func bothServingTheBetterFixWinsAndFaultsLeaveNoGap() throws {
        let env = try GeoClueEnvironment()
        let feeder = NMEAFeeder(env.nmea, latitude: Self.london.latitude + 0.001, longitude: Self.london.longitude)
        defer { feeder.stop() }
        feeder.setHDOP(0.1)
        let (gpsd, q) = try qibladWithGpsd(env, log: "city-london.log")
        defer { gpsd.kill(); q.stop() }
        try q.start()
        let claim = try claim(q); defer { claim.terminate() }
        #expect(waitUntil(timeout: 30) {
            let s = (try? q.string("LocationSources")) ?? ""
            return s.contains("geoclue=live") && s.contains("gpsd=live")
        }, "\(q.log)")
        let both = try q.string("LocationSource")
        let accuracy = try q.double("LocationAccuracy")
        print("sources: both live, published \(both) ±\(accuracy) m; \(q.log.split(separator: "\n").filter { $0.contains("live fix from") })")
        #expect(both == "geoclue", "HDOP 0.1 through GeoClue2 beats gpsd's log: \(q.log)")

        // GeoClue2 coarse (HDOP 400: kilometres, and 2 km off, past the client's distance
        // threshold, so GeoClue2 reports it): gpsd takes over at its next fix.
        feeder.setHDOP(400)
        feeder.move(latitude: Self.london.latitude + 0.02, longitude: Self.london.longitude)
        // The hand-over counts from the coarse fix's publication (GeoClue2's own latency before
        // it reports the new sentence is not qiblad's).
        var coarseSeen: Date?
        #expect(waitUntil(timeout: 15) {
            let source = (try? q.string("LocationSource")) ?? ""
            if coarseSeen == nil, source == "geoclue", ((try? q.double("LocationAccuracy")) ?? 0) > 100 { coarseSeen = Date() }
            return source == "gpsd"
        }, "\(q.log)")
        let handOver = coarseSeen.map(Self.since) ?? 0

        // Watch LocationSource through the faults, every 100 ms.
        func watch(_ seconds: Double) throws -> (gapSeconds: Double, sawLastKnown: Bool) {
            var gap = 0.0, longest = 0.0, lastKnown = false
            let start = Date()
            while Self.since(start) < seconds {
                let source = try q.string("LocationSource")
                if source == "gpsd" || source == "geoclue" { gap = 0 } else { gap += 0.1; longest = max(longest, gap) }
                if source == "last-known" { lastKnown = true }
                usleep(100_000)
            }
            return (longest, lastKnown)
        }
        feeder.setHDOP(0.1)
        feeder.move(latitude: Self.london.latitude + 0.001, longitude: Self.london.longitude)
        #expect(waitUntil(timeout: 10) { (try? q.string("LocationSource")) == "geoclue" }, "\(q.log)")
        env.kill()  // the published source dies: gpsd at once
        let afterKill = try watch(3)
        #expect(try q.string("LocationSource") == "gpsd")
        try env.start()
        let afterRestart = try watch(3)
        gpsd.kill()  // gpsd dies (GeoClue2 back and live, or coming back)
        let afterGpsd = try watch(10)
        #expect(waitUntil(timeout: 30) { (try? q.string("LocationSource")) == "geoclue" }, "\(q.log)")
        print("sources: GeoClue2 coarse → gpsd after \(Int(handOver * 1000)) ms; longest gap without a live source: "
              + "GeoClue2 killed \(afterKill.gapSeconds) s, restarted \(afterRestart.gapSeconds) s, gpsd killed \(afterGpsd.gapSeconds) s")
        #expect(handOver <= 2, "\(handOver) s")
        #expect(afterKill.gapSeconds <= 2 && !afterKill.sawLastKnown)
        #expect(afterRestart.gapSeconds <= 2 && !afterRestart.sawLastKnown)
        #expect(afterGpsd.gapSeconds <= 2 && !afterGpsd.sawLastKnown, "\(q.log)")
    }

    /// gpsd, the better source, loses its fix again and again (mode 1 stretches in the log) while
    /// GeoClue2 serves a coarse fix: GeoClue2's takes over at each loss, never `last-known`, no gap
    /// over 2 s, and gpsd's is back when it has one.
    @Test func gpsdLosingItsFixHandsOverToGeoClueWithoutAGap() throws {
        let env = try GeoClueEnvironment()
        let feeder = NMEAFeeder(env.nmea, latitude: Self.london.latitude, longitude: Self.london.longitude)
        defer { feeder.stop() }
        feeder.setHDOP(400)
        let port = freePort()
        let gpsd = try GPSFake(logPath: GPSDIntegrationTests.gpsdLogs.appendingPathComponent("fix_lost.log").path, port: port,
                               cycleSeconds: 0.2)
        let q = try qiblad(env, arguments: ["--sysfs-root", "/nonexistent"], configuration: "gpsd = 127.0.0.1:\(port)\n")
        defer { gpsd.kill(); q.stop() }
        try q.start()
        let claim = try claim(q); defer { claim.terminate() }
        #expect(waitUntil(timeout: 30) { ((try? q.string("LocationSources")) ?? "").contains("geoclue=live") }, "\(q.log)")
        var sequence: [String] = [], gap = 0.0, longest = 0.0, sawLastKnown = false
        let start = Date()
        while Self.since(start) < 25 {
            let source = try q.string("LocationSource")
            if sequence.last != source { sequence.append(source) }
            if source == "gpsd" || source == "geoclue" { gap = 0 } else { gap += 0.1; longest = max(longest, gap) }
            if source == "last-known" { sawLastKnown = true }
            usleep(100_000)
        }
        let handOvers = zip(sequence, sequence.dropFirst()).filter { $0 == ("gpsd", "geoclue") }.count
        print("sources: gpsd losing its fix with GeoClue2 live: published \(sequence.joined(separator: " → ")); "
              + "longest gap \(longest) s")
        #expect(handOvers >= 1, "gpsd's losses hand over to GeoClue2: \(sequence) \(q.log)")
        #expect(sequence.contains("gpsd"))
        #expect(longest <= 2 && !sawLastKnown, "\(sequence)")
    }
}
