// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import Testing
import TestSupport

/// qiblad against a real gpsd (started by gpsfake from the NMEA logs in Logs/, made by
/// scripts/generate_nmea.py). Claims come from a real client (`qiblactl monitor`).
@Suite(.serialized) struct GPSDIntegrationTests {
    static let logs = repositoryRoot.appendingPathComponent("Tests/IntegrationTests/Logs")
    static let gpsdLogs = repositoryRoot.appendingPathComponent("Tests/QiblaGPSDTests/Logs")

    /// qiblad's established TCP connections to `port` (from `ss`), i.e. whether it watches gpsd.
    static func connections(of pid: Int32, to port: Int) throws -> Int {
        let r = try run("ss", ["-tnpH", "state", "established", "( dport = :\(port) )"])
        return r.stdout.split(separator: "\n").filter { $0.contains("pid=\(pid),") }.count
    }

    static func expected(_ log: String) throws -> (lat: Double, lon: Double, height: Double) {
        let text = try String(contentsOf: logs.appendingPathComponent(log.replacingOccurrences(of: ".log", with: ".expected.csv")), encoding: .utf8)
        let cells = text.split(separator: "\n")[1].split(separator: ",", omittingEmptySubsequences: false)
        return (Double(cells[1])!, Double(cells[2])!, Double(cells[3])!)
    }

    @Test(arguments: ["city-london.log", "city-new-york.log", "city-jakarta.log", "city-sydney.log", "city-fiji.log"])
    func aLiveFixDrivesTheQiblaProperties(log: String) throws {
        let port = freePort()
        let gpsd = try GPSFake(logPath: Self.logs.appendingPathComponent(log).path, port: port); defer { gpsd.kill() }
        let q = try QibladHarness(arguments: ["--gpsd", "127.0.0.1:\(port)", "--sysfs-root", "/nonexistent"]); defer { q.stop() }
        try q.start()
        let claim = try ChildProcess(product("qiblactl").path, ["monitor"], environment: q.bus.environment)
        defer { claim.terminate() }
        #expect(waitUntil(timeout: 20) { (try? q.string("LocationSource")) == "gpsd" }, "\(q.log)")
        let truth = try Self.expected(log)
        // gpsd reports each second's RMC (2D, no height) before its GGA (3D): the first fix may be
        // published without the height, which follows a sentence later.
        #expect(waitUntil(timeout: 5 + 2 * gpsd.logCycleSeconds) { abs(((try? q.double("Altitude")) ?? .nan) - truth.height) < 0.01 },
                "Altitude \((try? q.double("Altitude")) ?? .nan), expected \(truth.height)")
        #expect(abs(try q.double("Latitude") - truth.lat) < 1e-6)
        #expect(abs(try q.double("Longitude") - truth.lon) < 1e-6)
        // The published values are QiblaCore's for that position.
        let position = try GeodeticPosition(latitudeDegrees: truth.lat, longitudeDegrees: truth.lon, heightMetres: truth.height)
        let solution = Qibla().solve(from: position)
        #expect(abs(try q.double("QiblaBearing") - solution.greatCircleBearing.value!) < 1e-9)
        #expect(abs(try q.double("QiblaBearingGeodesic") - solution.geodesicBearing.value!) < 1e-9)
        #expect(abs(try q.double("KaabaDistance") - solution.distanceMetres) < 1e-6)
        let year = DecimalYear.from(unixSeconds: Date().timeIntervalSince1970)
        let declination = MagneticModel.wmm2025.field(at: position, decimalYear: year).declinationDegrees
        #expect(abs(try q.double("Declination") - declination) < 0.01)
        // gpsd's own magnetic variation is never used; the timestamp is the fix's.
        #expect(try q.uint64("LocationTimestamp") > 0)
        // gpsd listened at the first attempt: libgps was opened once (issue 37).
        // A libgps session only for a connect gpsd answered: one, and one more for each time gpsd
        // closed it (gpsfake now and then drops its first client while its device comes up).
        let sessions = q.log.components(separatedBy: "opening a libgps session").count - 1
        let closed = q.log.components(separatedBy: "disconnected from gpsd").count - 1
        #expect(sessions == 1 + closed, "\(q.log)")
    }

    /// Issue 37: with gpsd absent (nothing listens on its port) a claim's attempt is one refused
    /// non-blocking connect on the loop's thread: no thread, no libgps; the next comes after 30 s,
    /// not at 0.5, 1.5, 3.5 s as the doubling backoff did.
    @Test func anAbsentGpsdCostsOneRefusedConnectAClaim() throws {
        let port = freePort()   // nobody listens there
        let q = try QibladHarness(arguments: ["--gpsd", "127.0.0.1:\(port)", "--sysfs-root", "/nonexistent"]); defer { q.stop() }
        try q.start()
        let pid = try #require(q.daemon?.pid)
        let tasks = { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").count) ?? 0 }
        let threadsIdle = tasks()
        let claim = try ChildProcess(product("qiblactl").path, ["monitor"], environment: q.bus.environment)
        defer { claim.terminate() }
        #expect(waitUntil(timeout: 10) { q.log.contains("first compass claim") }, "\(q.log)")
        var mostThreads = 0
        let until = Date().addingTimeInterval(4)
        while Date() < until {
            mostThreads = max(mostThreads, tasks())
            usleep(5_000)
        }
        let attempts = q.log.split(separator: "\n").filter { $0.contains("cannot connect to gpsd") || $0.contains("gpsd connect attempt failed") }
        #expect(attempts.count == 1, "one attempt in the claim's first 4 s: \(attempts)")
        #expect(attempts.first?.contains("nothing accepts connections on 127.0.0.1 port \(port)") == true, "\(attempts)")
        #expect(!q.log.contains("opening a libgps session"), "\(q.log)")
        #expect(mostThreads <= threadsIdle, "no thread for an attempt: \(mostThreads) threads seen, \(threadsIdle) idle")
    }

    /// Issue 37: gpsd absent when the claim begins is watched for, not asked every 30 s. Its control
    /// socket appearing in `gpsd-socket-directory` (here gpsfake's, whose `TMPDIR` is that
    /// directory; Debian's `gpsd.socket` creates `/run/gpsd.sock`) starts an attempt at once. Counted:
    /// one refused attempt at the claim's start, one appearance (another name created there asks
    /// nothing), then a handful of attempts at most while gpsd binds its port; without the watch
    /// the next attempt would come only after 5 minutes, far past the test's wait (gpsfake is
    /// ready, its device listed, when `GPSFake` returns).
    @Test func aGpsdStartedDuringTheClaimIsUsedWhenItsSocketAppears() throws {
        let port = freePort()   // nobody listens there yet
        let sockets = try TemporaryDirectory(prefix: "gpsd-run")
        defer { sockets.remove() }
        let q = try QibladHarness(arguments: ["--gpsd", "127.0.0.1:\(port)", "--sysfs-root", "/nonexistent"]); defer { q.stop() }
        try q.stateDirectory.write("gpsd-socket-directory = \(sockets.path)\n", to: "qiblad.conf")
        try q.start()
        let claim = try ChildProcess(product("qiblactl").path, ["monitor"], environment: q.bus.environment)
        defer { claim.terminate() }
        let attempts = { q.log.split(separator: "\n").filter { $0.contains("cannot connect to gpsd") || $0.contains("gpsd connect attempt failed") }.count }
        // Both lines are written by the daemon's loop, one after the other: wait for both (the
        // log is read while it is written), then count.
        #expect(waitUntil(timeout: 10) { q.log.contains("watching \(sockets.path) for its socket") && attempts() >= 1 }, "\(q.log)")
        #expect(attempts() == 1, "\(q.log)")
        try "1\n".write(toFile: sockets.path + "/gpsd.pid", atomically: false, encoding: .utf8)
        let gpsd = try GPSFake(logPath: Self.logs.appendingPathComponent("city-london.log").path, port: port, socketDirectory: sockets)
        defer { gpsd.kill() }
        #expect(waitUntil(timeout: 60) { (try? q.string("LocationSource")) == "gpsd" }, "\(q.log)")
        let appearances = q.log.components(separatedBy: "a socket appeared in \(sockets.path)").count - 1
        #expect(appearances == 1, "gpsfake's control socket, not gpsd.pid: \(q.log)")
        #expect(attempts() <= 1 + 4, "the claim's attempt, then at most 4 while gpsd binds its port: \(q.log)")
        // A libgps session only for a connect gpsd answered: one, and one more for each time gpsd
        // closed it (gpsfake now and then drops its first client while its device comes up).
        let sessions = q.log.components(separatedBy: "opening a libgps session").count - 1
        let closed = q.log.components(separatedBy: "disconnected from gpsd").count - 1
        #expect(sessions == 1 + closed, "\(q.log)")
    }

    @Test func withoutAClaimTheDaemonDoesNotTouchGpsd() throws {
        let port = freePort()
        let gpsd = try GPSFake(logPath: Self.logs.appendingPathComponent("city-london.log").path, port: port); defer { gpsd.kill() }
        let q = try QibladHarness(arguments: ["--gpsd", "127.0.0.1:\(port)", "--sysfs-root", "/nonexistent"]); defer { q.stop() }
        try q.start()
        let pid = try #require(q.daemon?.pid)
        sleep(2)
        #expect(try Self.connections(of: pid, to: port) == 0)
        #expect(try q.string("LocationSource") == "none")
        // Claim: it connects and publishes the fix.
        let claim = try ChildProcess(product("qiblactl").path, ["monitor"], environment: q.bus.environment)
        #expect(waitUntil(timeout: 20) { (try? q.string("LocationSource")) == "gpsd" })
        #expect(try Self.connections(of: pid, to: port) == 1)
        // Release: it disconnects, and the values stay at the last known position.
        claim.send(SIGINT)
        #expect(claim.wait(timeout: 10) == 0)
        #expect(waitUntil(timeout: 10) { (try? Self.connections(of: pid, to: port)) == 0 })
        #expect(try q.string("LocationSource") == "last-known")
        #expect(abs(try q.double("Latitude") - 51.5074) < 1e-6)
    }

    @Test func gpsdKilledAndRestartedFallsBackAndRecovers() throws {
        let port = freePort()
        var gpsd: GPSFake? = try GPSFake(logPath: Self.logs.appendingPathComponent("city-sydney.log").path, port: port)
        let q = try QibladHarness(arguments: ["--gpsd", "127.0.0.1:\(port)", "--sysfs-root", "/nonexistent"]); defer { q.stop() }
        try q.start()
        #expect(try q.call("SetManualLocation", "dd", ["51.5074", "-0.1278"]).status == 0)
        let claim = try ChildProcess(product("qiblactl").path, ["monitor"], environment: q.bus.environment)
        defer { claim.terminate() }
        #expect(waitUntil(timeout: 20) { (try? q.string("LocationSource")) == "gpsd" }, "\(q.log)")
        #expect(abs(try q.double("Latitude") - -33.86882) < 1e-6)

        gpsd?.kill(); gpsd = nil
        let killed = Date()
        #expect(waitUntil(timeout: 15) { (try? q.string("LocationSource")) == "manual" }, "\(q.log)")
        let fallback = Date().timeIntervalSince(killed)
        #expect(abs(try q.double("Latitude") - 51.5074) < 1e-6)
        #expect(q.daemon?.isRunning == true)

        let restart = try GPSFake(logPath: Self.logs.appendingPathComponent("city-jakarta.log").path, port: port)
        defer { restart.kill() }
        let restarted = Date()
        // gpsd is listening with its device now; qiblad's next attempt comes within one backoff
        // interval (30 s at most), then gpsd opens the device and the log's first fix follows.
        #expect(waitUntil(timeout: 30 + 10 + 2 * restart.logCycleSeconds) { (try? q.string("LocationSource")) == "gpsd" },
                "\(q.log)")
        let recovery = Date().timeIntervalSince(restarted)
        #expect(abs(try q.double("Latitude") - -6.208763) < 1e-6)
        print("gpsd killed → fallback published after \(Int(fallback * 1000)) ms; restarted → live fix after \(Int(recovery * 1000)) ms")
        // One log line per state change, not one per retry.
        let lostLines = q.log.components(separatedBy: "live fix lost").count - 1
        #expect(lostLines == 1, "\(q.log)")
    }

    @Test func aFixThatDegradesToNoFixFallsBackAndReturns() throws {
        let port = freePort()
        let gpsd = try GPSFake(logPath: Self.gpsdLogs.appendingPathComponent("fix_lost.log").path, port: port, cycleSeconds: 0.2)
        defer { gpsd.kill() }
        let q = try QibladHarness(arguments: ["--gpsd", "127.0.0.1:\(port)", "--sysfs-root", "/nonexistent"]); defer { q.stop() }
        try q.start()
        let monitor = try q.monitor(); defer { monitor.terminate() }
        let claim = try ChildProcess(product("qiblactl").path, ["monitor"], environment: q.bus.environment)
        defer { claim.terminate() }
        // The log alternates fixes (Istanbul, Cairo) with no-fix stretches: the source goes
        // gpsd → last-known → gpsd.
        #expect(waitUntil(timeout: 30) {
            let out = monitor.standardOutput
            guard let first = out.range(of: "\"gpsd\"") else { return false }
            guard let fallback = out.range(of: "\"last-known\"", range: first.upperBound..<out.endIndex) else { return false }
            return out.range(of: "\"gpsd\"", range: fallback.upperBound..<out.endIndex) != nil
        }, "\(monitor.standardOutput.suffix(2000))")
        #expect(q.daemon?.isRunning == true)
    }

    @Test func garbageOnTheStreamDoesNotPoisonPublishedValues() throws {
        let port = freePort()
        let gpsd = try GPSFake(logPath: Self.gpsdLogs.appendingPathComponent("garbage.log").path, port: port); defer { gpsd.kill() }
        let q = try QibladHarness(arguments: ["--gpsd", "127.0.0.1:\(port)", "--sysfs-root", "/nonexistent"]); defer { q.stop() }
        try q.start()
        let claim = try ChildProcess(product("qiblactl").path, ["monitor"], environment: q.bus.environment)
        defer { claim.terminate() }
        #expect(waitUntil(timeout: 20) { (try? q.string("LocationSource")) == "gpsd" }, "\(q.log)")
        // Every bad line of the log goes past at least once more.
        usleep(useconds_t(1.5 * gpsd.logCycleSeconds * 1e6))
        #expect(q.daemon?.isRunning == true)
        // garbage.expected.csv: the only valid fix in the log (at the Kaaba's doorstep, 21.422487, 39.826206).
        #expect(abs(try q.double("Latitude") - 21.422487) < 1e-6)
        for name in ["Latitude", "Longitude", "KaabaDistance", "Declination"] {
            #expect(try q.double(name).isFinite, "\(name)")
        }
    }

    @Test func theLastKnownFixSurvivesARestart() throws {
        let port = freePort()
        let gpsd = try GPSFake(logPath: Self.logs.appendingPathComponent("city-new-york.log").path, port: port); defer { gpsd.kill() }
        let q = try QibladHarness(arguments: ["--gpsd", "127.0.0.1:\(port)", "--sysfs-root", "/nonexistent"]); defer { q.stop() }
        try q.start()
        let claim = try ChildProcess(product("qiblactl").path, ["monitor"], environment: q.bus.environment)
        #expect(waitUntil(timeout: 20) { (try? q.string("LocationSource")) == "gpsd" })
        claim.terminate()
        q.daemon?.send(SIGTERM)
        #expect(q.daemon?.wait(timeout: 10) == 0)
        try q.start(["--no-gpsd"])
        #expect(try q.string("LocationSource") == "last-known")
        #expect(abs(try q.double("Latitude") - 40.712776) < 1e-6)
        #expect(abs(try q.double("QiblaBearing") - 58.48) < 0.01)
    }
}
