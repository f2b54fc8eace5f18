// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import QiblaDaemon
import QiblaSensorLog
import QiblaSimulator
import Testing
import TestSupport

/// Issue 36: sensor logs through the real daemon — a BROAD recording (real sensors, optical truth)
/// replayed live into a simulated phone's IIO tree and read by qiblad, and `qiblad --record`
/// writing what a phone's IIO devices read.
@Suite(.serialized) struct ReplayIntegrationTests {
    static let recordings = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Recordings/BROAD")

    /// The optical truth's heading of the top edge (device +y) at log time `time` (from the `.truth`
    /// file: device → ENU, magnetic north), degrees.
    static func truthTopEdgeHeading(_ truth: String, atLogTime time: Double) -> Double? {
        var best: (Double, Quaternion)?
        for line in truth.split(separator: "\n") where !line.hasPrefix("#") {
            let f = line.split(separator: " ").compactMap { Double($0) }
            guard f.count == 6 else { continue }
            let q = Quaternion(w: f[1], x: f[2], y: f[3], z: f[4])
            guard q.isFinite else { continue }
            if best == nil || abs(f[0] - time) < abs(best!.0 - time) { best = (f[0], q) }
        }
        guard let (_, q) = best, let unit = q.normalized else { return nil }
        let top = unit.rotate(Vector3(0, 1, 0))  // east, north, up
        return Angle.normalized360(Angle.degrees(atan2(top.x, top.y)))
    }

    /// `qibla-sim replay --offline` over a committed fixture, plain and with `flags`.
    static func offlineReplay(_ fixture: String, with flags: [String]) throws
        -> (plain: (status: Int32, stdout: String, stderr: String), flagged: (status: Int32, stdout: String, stderr: String)) {
        let path = recordings.appendingPathComponent(fixture + ".log").path
        let sim = product("qibla-sim").path
        return (try run(sim, ["replay", "--offline", path], timeout: 120),
                try run(sim, ["replay", "--offline"] + flags + [path], timeout: 120))
    }

    /// CI replays a real recording through the daemon: BROAD trial 09's first seconds (the IMU
    /// lying still before its motion) written live into a simulated PinePhone's IIO devices, read
    /// by qiblad, claimed by `qiblactl monitor`; the published magnetic heading is compared with
    /// the optical truth, and the replay stops qiblad and cleans up when asked.
    @Test func aRealRecordingReplayedLiveReachesTheBusNearItsOpticalTruth() throws {
        let bus = try PrivateBus()
        let tmp = try TemporaryDirectory(prefix: "qibla-replay-tmpdir"); defer { tmp.remove() }
        let name = "09_undisturbed_fast_rotation_with_breaks_B"
        let replay = try ChildProcess(product("qibla-sim").path, ["replay", Self.recordings.appendingPathComponent(name + ".log").path],
                                      environment: bus.environment.merging(["TMPDIR": tmp.path]) { $1 })
        defer { replay.terminate() }
        let q = try QibladHarness(bus: bus)
        #expect(waitUntil(timeout: 20) { (try? q.nameHasOwner()) == true || !replay.isRunning }, "\(replay.standardError)")
        let monitor = try ChildProcess(product("qiblactl").path, ["monitor"], environment: bus.environment)
        defer { monitor.terminate() }
        var heading = Double.nan
        #expect(waitUntil(timeout: 20) { heading = (try? q.double("MagneticHeading")) ?? .nan; return heading.isFinite },
                "no heading: \(replay.standardOutput)\n\(replay.standardError)")
        // The log's clock: "log time T at CLOCK_MONOTONIC M s".
        let marker = " at CLOCK_MONOTONIC "
        let line = try #require(replay.standardOutput.split(separator: "\n").first { $0.contains("log time") && $0.contains(marker) })
        let monotonicAtStart = try #require(Double(line.components(separatedBy: marker)[1].split(separator: " ")[0]))
        let truth = try String(contentsOf: Self.recordings.appendingPathComponent(name + ".truth"), encoding: .utf8)
        var errors: [Double] = []
        for _ in 0..<5 {
            let published = (try? q.double("MagneticHeading")) ?? .nan
            let logTime = ProcessInfo.processInfo.systemUptime - monotonicAtStart  // CLOCK_MONOTONIC on Linux
            if let expected = Self.truthTopEdgeHeading(truth, atLogTime: logTime), logTime < 25 {
                errors.append(abs(Angle.normalized180(published - expected)))
            }
            usleep(400_000)
        }
        print("live replay of BROAD \(name): magnetic heading against the optical truth at rest: \(errors.map { String(format: "%.1f", $0) })°")
        #expect(errors.count >= 3 && errors.allSatisfy { $0 < 8 }, "\(errors)")
        replay.send(SIGTERM)
        #expect(replay.wait(timeout: 20) == 0, "\(replay.standardError)")
        #expect(waitUntil(timeout: 5) { (try? q.nameHasOwner()) == false })
        #expect((try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) == [], "the replay left files behind")
    }

    /// `replay --offline --verbose` says on stderr, with the log's time, when the calibration in
    /// use changes — here fixture 30's fits set aside for no correction — and when the attitude
    /// filter's state does; stdout is the same as without it.
    @Test func theVerboseOfflineReplaySaysWhatChanged() throws {
        let (plain, verbose) = try Self.offlineReplay("30_disturbed_stationary_magnet_C", with: ["--verbose"])
        #expect(plain.status == 0 && verbose.status == 0, "\(verbose.stderr)")
        #expect(verbose.stdout == plain.stdout)
        let lines = verbose.stderr.split(separator: "\n")
        #expect(lines.contains { $0.contains(" s: calibration calibrated, no correction in place of the ellipsoid fit, hard iron (") },
                "\(verbose.stderr)")
        #expect(lines.contains { $0.contains(" s: filter tracking, field holding, seeds ") }, "\(verbose.stderr)")
        // The accepted fit and the refit of 5 s later (`freshFitSeconds`), both set aside.
        #expect(verbose.stderr.contains("(fits set aside for no correction: 2; discarded for a changed field: 0)"), "\(verbose.stderr)")
        #expect(!plain.stderr.contains(" s: calibration "))
    }

    /// `replay --offline --trace SECONDS` prints the attitude filter's inner state to stderr every
    /// SECONDS of the log's time (how this session found trial 36's learned reference and trial
    /// 35's tilt); stdout is the same as without it.
    @Test func theTraceFollowsTheFilterEverySoManySecondsOfTheLog() throws {
        let (plain, traced) = try Self.offlineReplay("30_disturbed_stationary_magnet_C", with: ["--trace", "10"])
        #expect(plain.status == 0 && traced.status == 0, "\(traced.stderr)")
        #expect(traced.stdout == plain.stdout)
        // The log's last instant, from its last line: one trace at 0 s and one every 10 s after.
        let last = plain.stdout.split(separator: "\n").last.flatMap { $0.split(separator: " ").first }.flatMap { Double($0) } ?? 0
        #expect(last > 60, "\(last)")
        let traces = traced.stderr.split(separator: "\n").filter { $0.contains(" s: trace: ") }
        #expect(traces.count == Int(last / 10) + 1, "\(traces.count) traces over \(last) s")
        #expect(traces.first?.hasPrefix("qibla-sim replay: 0.000000 s: trace: ") == true, "\(traces.first ?? "")")
        // The magnet beside the phone: the filter holds the field at some trace, with its yaw's
        // sigma grown, and the learned reference is the lab's field (BROAD's lab: 43–45 µT).
        #expect(traces.contains { $0.contains("trace: tracking, field holding, bias (") }, "\(traced.stderr)")
        let references = traces.compactMap { line -> Double? in
            guard let range = line.range(of: "reference ") else { return nil }
            return Double(line[range.upperBound...].prefix { $0 != " " })
        }
        #expect(!references.isEmpty && references.allSatisfy { (40...48).contains($0) }, "\(references)")
        #expect(!plain.stderr.contains(" s: trace: "))
    }

    /// `replay --offline --sigma-parts` adds what HEADING_ERROR is made of to every line (how this
    /// session found the filter's covariance, not the calibration's floor, to be most of the sigma
    /// on BROAD): the nine columns stay as they were, the three terms add up to HEADING_ERROR and
    /// the filter's five parts to its sigma, and a fit changes the calibration's term; the two
    /// diagnostics follow.
    @Test func theSigmaPartsAddUpToTheHeadingError() throws {
        let (plain, parted) = try Self.offlineReplay("30_disturbed_stationary_magnet_C", with: ["--sigma-parts"])
        #expect(plain.status == 0 && parted.status == 0, "\(parted.stderr)")
        let plainLines = plain.stdout.split(separator: "\n")
        let lines = parted.stdout.split(separator: "\n")
        #expect(lines.count == plainLines.count && lines.count > 1000)
        var fused = 0, worstTotal = 0.0, worstFilter = 0.0
        var calibrationTerms = Set<String>(), withPull = 0, withIntegration = 0, withTilt = 0, worstBelowFloor = -Double.infinity
        for (line, plainLine) in zip(lines, plainLines) {
            let f = line.split(separator: " ").map(String.init)
            guard f.count == 19 else { Issue.record("\(f.count) columns: \(line)"); break }
            #expect(f[0..<9].joined(separator: " ") == plainLine, "\(line)")
            let v = f.map { Double($0) ?? .nan }
            guard v[4] == 1 else {
                #expect(v[9].isNaN && v[12].isNaN, "a heading not fused has no filter parts: \(line)")
                continue
            }
            fused += 1
            calibrationTerms.insert(f[10])
            // HEADING_ERROR = √(filter² + calibration² + declination²), capped at 180.
            let total = min(180, (v[9] * v[9] + v[10] * v[10] + v[11] * v[11]).squareRoot())
            worstTotal = max(worstTotal, abs(total - v[3]))
            // The filter's sigma = max(√(P² + integration² + disagreement² + reference²), pull).
            let filter = max((v[12] * v[12] + v[13] * v[13] + v[14] * v[14] + v[15] * v[15]).squareRoot(), v[16])
            if v[9] < 180 { worstFilter = max(worstFilter, abs(filter - v[9])) }
            // The diagnostics: the tilt's sigma, and the yaw's given the tilt, which the
            // covariance part never falls below by more than the innovations' floor (half).
            if v[17] > 0 { withTilt += 1 }
            worstBelowFloor = max(worstBelowFloor, 0.5 * v[18] - v[12])
            if v[16] > 0.1 { withPull += 1 }
            if v[13] > 0.1 { withIntegration += 1 }
        }
        #expect(fused > 1000, "\(fused) fused lines")
        #expect(worstTotal < 0.005, "HEADING_ERROR off its terms by \(worstTotal)°")
        #expect(worstFilter < 0.005, "the filter's sigma off its parts by \(worstFilter)°")
        #expect(calibrationTerms.count > 1, "the fit at 40 s changes the calibration's term: \(calibrationTerms)")
        #expect(withPull > 0 && withIntegration > 0, "pull \(withPull), integration \(withIntegration)")
        #expect(withTilt == fused && worstBelowFloor < 0.005, "tilt \(withTilt) of \(fused); below the floor by \(worstBelowFloor)°")
        let refused = try run(product("qibla-sim").path,
                              ["replay", "--sigma-parts", Self.recordings.appendingPathComponent("30_disturbed_stationary_magnet_C.log").path])
        #expect(refused.status == 64 && refused.stderr.contains("--sigma-parts follows the offline model"), "\(refused.stderr)")
    }

    /// `replay --offline --setting NAME=VALUE` changes one of the model's settings for an
    /// experiment (BENCHMARKS.md's "tried and left out" figures): another value changes the
    /// output, the default value leaves it as it was, and a bad setting is refused with a message
    /// that names the known ones.
    @Test func aSettingChangesTheOfflineModelAndABadOneIsRefused() throws {
        let log = Self.recordings.appendingPathComponent("09_undisturbed_fast_rotation_with_breaks_B.log").path
        let sim = product("qibla-sim").path
        let plain = try run(sim, ["replay", "--offline", log], timeout: 120)
        #expect(plain.status == 0, "\(plain.stderr)")
        let noisier = try run(sim, ["replay", "--offline", log, "--setting", "filter.magnetometerNoiseMicrotesla=5"], timeout: 120)
        #expect(noisier.status == 0, "\(noisier.stderr)")
        #expect(noisier.stdout != plain.stdout && noisier.stdout.split(separator: "\n").count > 1000)
        #expect(noisier.stderr.contains("settings filter.magnetometerNoiseMicrotesla=5"), "\(noisier.stderr)")
        let asDefault = try run(sim, ["replay", "--offline", log, "--setting", "filter.magnetometerNoiseMicrotesla=0.6",
                                      "--setting", "filter.keepsYawAcrossUntiltedGap=true"], timeout: 120)
        #expect(asDefault.stdout == plain.stdout, "the defaults, set explicitly, change nothing")
        for (arguments, message) in [(["--offline", "--setting", "filter.nope=1"], "no setting \"filter.nope\"; known: filter."),
                                     (["--offline", "--setting", "filter.fieldPullSeconds=-1"], "is not a finite number ≥ 0"),
                                     (["--offline", "--setting", "filter.fieldPullSeconds"], "expected NAME=VALUE"),
                                     (["--setting", "filter.fieldPullSeconds=1"], "use it with --offline"),
                                     (["--offline", "--trace", "0"], "--trace must be a number of seconds > 0"),
                                     (["--trace", "1"], "--trace follows the offline model")] {
            let r = try run(sim, ["replay", log] + arguments)
            #expect(r.status == 64 && r.stderr.contains(message), "\(arguments): \(r.status) \(r.stderr)")
            #expect(r.stdout.isEmpty)
        }
    }

    /// `replay --offline --state-directory DIR` keeps the calibration as qiblad keeps it: the
    /// first replay of trial 30 (which accepts a fit) stores it, the second restores it before its
    /// first sample and so starts from it (its output differs); without --offline it is refused.
    @Test func aStateDirectoryCarriesTheCalibrationToTheNextReplay() throws {
        let log = Self.recordings.appendingPathComponent("30_disturbed_stationary_magnet_C.log").path
        let sim = product("qibla-sim").path
        let tmp = try TemporaryDirectory(prefix: "qibla-replay-state"); defer { tmp.remove() }
        let state = tmp.path + "/state"
        let first = try run(sim, ["replay", "--offline", "--state-directory", state, log], timeout: 120)
        #expect(first.status == 0 && first.stderr.contains("no calibration stored in \(state)"), "\(first.stderr)")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: state)) ?? []
        #expect(files.count == 1 && files.allSatisfy { $0.hasPrefix("calibration-") }, "\(files)")
        let stored = try String(contentsOfFile: state + "/" + (files.first ?? "none"), encoding: .utf8)
        #expect(stored.contains("device-path = qibla-sim replay") && stored.contains("hard-iron-offset-ut = "), "\(stored)")
        let second = try run(sim, ["replay", "--offline", "--state-directory", state, log], timeout: 120)
        #expect(second.status == 0 && second.stderr.contains("restored the calibration stored in \(state): calibration unvalidated"),
                "\(second.stderr)")
        #expect(second.stdout != first.stdout && second.stdout.split(separator: "\n").count > 1000)
        let refused = try run(sim, ["replay", "--state-directory", state, log])
        #expect(refused.status == 64 && refused.stderr.contains("use it with --offline"), "\(refused.stderr)")
    }

    /// `qiblad --record` on a simulated phone lying still: the log carries the place, the three
    /// sensors with the mount matrices and scales applied (the values the scene wrote, within the
    /// chips' resolution), and replayed offline it gives the scene's heading.
    @Test func recordingAPhoneWritesWhatItsSensorsRead() throws {
        let london = GeodeticPosition(uncheckedLatitude: 51.5, longitude: -0.13)
        let orientation = QiblaSimulator.DeviceOrientation(headingDegrees: 30, pitchDegrees: 10, rollDegrees: -5)
        let phone = try SimulatedPhone(scene: scene(at: london, orientation: orientation, noise: 0), gyroscope: true)
        phone.start(rate: 50)
        defer { phone.stop() }
        let tmp = try TemporaryDirectory(prefix: "qibla-record"); defer { tmp.remove() }
        let path = tmp.path + "/phone.log"
        let r = try run(product("qiblad").path, ["--record", path, "--record-seconds", "2", "--sysfs-root", phone.sysfsRoot,
                                                 "--dev-root", phone.devRoot, "--udev-data-dir", tmp.path + "/udev",
                                                 "--location=51.5,-0.13"])
        #expect(r.status == 0, "\(r.stderr)")
        let log = try SensorLog.parse(String(contentsOfFile: path, encoding: .utf8))
        #expect(try log.position() == london)
        let start = try #require(try log.startUnixSeconds(), "the log's time header")
        #expect(abs(start - Date().timeIntervalSince1970) < 60, "time = \(log.headerValue("time") ?? "")")
        #expect(log.headerValue("magnetometer") == "lis3mdl" && log.headerValue("gyroscope") == "mpu6050")
        // The chip's own output rate, as its sampling_frequency reads once the recorder set it:
        // polled at 50 Hz, the chip is asked for 4× that (PollingDriver.chipRateOversampling).
        #expect(try log.gyroscopeOutputHertz() == 200, "gyroscope_rate = \(log.headerValue("gyroscope_rate") ?? "none")")
        let magnetic = log.instants.compactMap(\.magneticField), acceleration = log.instants.compactMap(\.acceleration)
        let rates = log.instants.compactMap(\.angularVelocity)
        #expect(magnetic.count >= 60 && acceleration.count >= 60 && rates.count >= 60, "\(magnetic.count), \(acceleration.count), \(rates.count)")
        let truth = phone.simulator.scene
        let m = truth.magnetometerReadingMicrotesla(at: 0), a = truth.accelerometerReadingMetresPerSecondSquared(at: 0)
        #expect(magnetic.allSatisfy { ($0 - m).length < 0.05 }, "magnetometer \(magnetic.first!) against \(m)")
        #expect(acceleration.allSatisfy { ($0 - a).length < 0.15 }, "accelerometer (σ 0.02 m/s² per axis) \(acceleration.first!) against \(a)")
        #expect(rates.allSatisfy { $0.length < 0.02 }, "a still phone's gyroscope reads its bias only")
        // Back through the daemon's model: the scene's magnetic heading.
        var replay = SensorReplay(position: london, unixSecondsAtStart: try log.startUnixSeconds() ?? 0, hasGyroscope: true)
        var last: SensorReplay.Output?
        for instant in log.instants {
            last = replay.apply(timeSeconds: instant.timeSeconds, acceleration: instant.acceleration,
                                angularVelocity: instant.angularVelocity, magneticField: instant.magneticField)
        }
        let expected = try #require(truth.expectedMagneticHeading(at: 0))
        let heading = try #require(last?.magneticHeadingDegrees)
        #expect(abs(Angle.normalized180(heading - expected)) < 1, "\(heading)° against \(expected)°")
    }
}
