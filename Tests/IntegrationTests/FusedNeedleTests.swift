// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import QiblaPlatform
import QiblaSimulator
import Testing
import TestSupport

/// Issue 30 through the real daemon: a simulated phone with a gyroscope (the PinePhone's MPU-6050
/// carries accelerometer and gyroscope on one IIO device) moved by a model of a person
/// (QiblaSimulator's `PersonSceneMotion`: minimum-jerk turns, tremor, hand acceleration — nothing
/// of the attitude filter's own model), read by qiblad through its IIO code, and the heading
/// group's signals recorded by a claimed client (`NeedleRecorder`). The truth is the scene's at the
/// instant of each read, mapped from the monotonic clock (`Simulator.sceneTime`); the scores come
/// from `NeedleScore`, which finds turns and holds from the truth's own rate.
@Suite(.serialized) struct FusedNeedleTests {
    struct Site: Sendable, CustomStringConvertible {
        var name: String
        var latitude: Double
        var longitude: Double
        var description: String { name }
        var position: GeodeticPosition { try! GeodeticPosition(latitudeDegrees: latitude, longitudeDegrees: longitude) }
        var dipDegrees: Double {
            MagneticModel.wmm2025.field(at: position, decimalYear: CalibrationIntegrationTests.now).inclinationDegrees
        }
    }

    /// A low dip (Bengaluru, about 10° by WMM2025) and a high one (Stockholm, about 73°).
    static let lowDip = Site(name: "Bengaluru", latitude: 12.97, longitude: 77.59)
    static let highDip = Site(name: "Stockholm", latitude: 59.33, longitude: 18.07)
    /// Issue 36's new user (dip about 35°).
    static let karachi = Site(name: "Karachi", latitude: 24.86, longitude: 67.01)
    /// South of the magnetic equator (dip about −29°).
    static let jakarta = Site(name: "Jakarta", latitude: -6.2, longitude: 106.8)
    /// A high dip where 20 s of a new user's waving gets the calibration accepted (67°).
    static let london = Site(name: "London", latitude: 51.5, longitude: -0.13)

    /// The settings the needle is measured with: qiblad's defaults, which with a gyroscope are a
    /// sample rate of 50 Hz and up to 50 heading signals a second (issue 30's table was measured
    /// with `max-signal-rate = 50`).
    static let measuring = ""
    /// `FUSED_NEEDLE_BUFFERED=1` runs every scene with the devices' IIO buffers (a measurement):
    /// each scan carries its scene time as its timestamp, where a polled register's value is 0–10 ms
    /// older than the time it is read.
    static let bufferedByRequest = ProcessInfo.processInfo.environment["FUSED_NEEDLE_BUFFERED"] == "1"

    struct Run {
        var score: NeedleScore
        var fused: Bool?
        var log: String
        /// `CalibrationState` and `CompassAccuracy` at the end.
        var calibration: String
        /// qiblad's CPU time over the scored run, percent of one core (debug build).
        var cpuPercent: Double
    }

    /// Runs `kind` for `seconds` (after `warmUp` seconds the scoring starts) and scores the needle.
    static func run(_ kind: PersonScene, at site: Site, seconds: Double, warmUp: Double = 6,
                    configuration: String = measuring, seed: UInt64 = 3, buffered: Bool = bufferedByRequest,
                    unit: (Scene) -> Scene = { $0 }) throws -> Run {
        let position = site.position
        let qibla = try #require(GreatCircle.initialBearingDegrees(from: position, to: Qibla.defaultKaaba))
        // A first use ends with its magnet: the scene lasts exactly as long as the run.
        let motion = PersonSceneMotion(kind, targetHeadingDegrees: qibla, seed: seed,
                                       durationSeconds: kind == .firstUse ? warmUp + seconds : seconds + warmUp + 30)
        let base = Scene(position: position, decimalYear: CalibrationIntegrationTests.now,
                         trajectory: .constant(.init(headingDegrees: qibla)), magnetometerNoiseMicrotesla: 0.4,
                         accelerometerNoiseMetresPerSecondSquared: 0.04)
        let scene = unit(motion.scene(from: base))
        let rig = try CompassRig(scene: scene, location: "\(site.latitude),\(site.longitude)",
                                 configuration: (buffered ? "sensor-mode = buffered\n" : "") + configuration,
                                 rate: 100, claim: false, buffered: buffered, gyroscope: true)
        let recorder = try NeedleRecorder(bus: rig.daemon.bus)
        defer { recorder.stop() }
        let simulator = rig.phone.simulator
        Thread.sleep(forTimeInterval: warmUp)
        let pid = try #require(rig.daemon.daemon?.pid)
        let cpuBefore = Self.cpuSeconds(of: pid)
        let start = MonotonicClock.nowSeconds() - warmUp
        Thread.sleep(forTimeInterval: seconds)
        let end = MonotonicClock.nowSeconds()
        let cpuPercent = (Self.cpuSeconds(of: pid) - cpuBefore) / seconds * 100
        let truth: (Double) -> Double? = { monotonic in
            guard let t = simulator.sceneTime(atMonotonicSeconds: monotonic) else { return nil }
            let axis: HeadingAxis = scene.orientation(at: t).pitchDegrees > 50 ? .back : .top
            return scene.expectedMagneticHeading(of: axis, at: t)
        }
        let disturbed: (Double) -> Bool = { monotonic in
            guard let t = simulator.sceneTime(atMonotonicSeconds: monotonic) else { return false }
            // A magnet's effect is scored from its arrival to 0.5 s after it left.
            return scene.interferences.contains { t >= $0.startSeconds && t < $0.startSeconds + $0.durationSeconds + 0.5 }
        }
        let score = NeedleScore.score(recorder.all, truth: truth, from: start + warmUp, to: end, readIntervalSeconds: 0.01,
                                      disturbed: disturbed)
        let calibration = "\((try? rig.daemon.string("CalibrationState")) ?? "?"), \((try? rig.daemon.string("CompassAccuracy")) ?? "?")"
        return Run(score: score, fused: recorder.fused, log: rig.daemon.log, calibration: calibration, cpuPercent: cpuPercent)
    }

    /// utime + stime of a process, seconds (proc(5): fields 14 and 15 of /proc/PID/stat, in clock ticks of 1/100 s).
    static func cpuSeconds(of pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return .nan }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return .nan }
        return (user + system) / 100
    }

    /// The holds' RMS allowed through the real daemon in real time, degrees. Issue 30's goal (1°)
    /// is checked where it is deterministic, in simulated time: `FusionSweepTests` (every scene
    /// and dip at 50 Hz) and `FirstUseSceneTests` (the first-use scenes through the daemon's model).
    /// In real time the same 25-s statistic is random: the test's simulator writes at 100 Hz and
    /// the daemon polls at 50 Hz on clocks that slip, so each sample is 0–10 ms older than its
    /// stamp, as a real sensor register's is within its period. Through the daemon's model in
    /// simulated time that alone moves the gyroscope-drift scene's holds from 0.84–0.94° to
    /// 0.76–1.37° (`QIBLAD_NEEDLE_TIMING=1 swift test --filter FusedNeedleTimingSweep`), and 18
    /// real-time runs on this 2-core machine gave 0.79–2.37° at any priority, with no sample lost
    /// (issue 39, third session). Here the bound catches the daemon's wiring (a wrong axis, unit,
    /// frame or stale sample is tens of degrees); honesty (3σ) is checked at the model's share.
    static let realTimeHoldRMSDegrees = 3.0

    /// Issue 30's table: a person turning to find the Qibla (turns of 30–150° at up to 150°/s,
    /// holds of 1–2 s with tremor, hand acceleration), at a low and a high dip.
    @Test(arguments: [lowDip, highDip])
    func thePersonSeekingTheQiblaIsFollowed(site: Site) throws {
        let run = try Self.run(.seekQibla, at: site, seconds: 30)
        print("fused needle, seek-qibla at \(site) (dip \(String(format: "%.0f", site.dipDegrees))°): \(run.score); \(run.calibration)")
        #expect(run.fused == true, "HeadingFused")
        #expect(run.score.reads > 1000)
        #expect(run.score.holdRMSDegrees <= Self.realTimeHoldRMSDegrees, "\(run.score)")
        #expect(run.score.turnP95Degrees <= 5, "\(run.score)")
        #expect(run.score.settleMedianMilliseconds <= 150, "\(run.score)")
        // HeadingError never claims too much. (It may claim too little here: this sensor reads the
        // Earth's field exactly and is not fitted, and an unfitted sensor that matches is allowed
        // 1 µT of unknown offset, about 4° against Stockholm's 15 µT of horizontal field; the
        // filter's own sigma is held to 55–90 % in FusionSweepTests.)
        #expect(run.score.withinOneSigma >= 0.55, "\(run.score)")
        #expect(run.score.withinThreeSigma >= 0.97, "\(run.score)")
    }

    /// Issue 36, section 1, through the real daemon: a new user's uncalibrated unit (40 µT of hard
    /// iron, a few per cent of soft iron, a gyroscope biased by about 0.7 °/s; `FirstUseSceneTests.unit`)
    /// waved for 20 s, then turned to find the Qibla, then held still while a magnet comes near
    /// (`PersonScene.firstUse`), at two dips; scored after the waving against issue 30's goals.
    @Test(arguments: [karachi, jakarta, london])
    func aNewUsersUncalibratedPhoneFindsTheQibla(site: Site) throws {
        // Seed 3, or `FIRST_USE_SEED` (the model's worst seeds through the daemon, BENCHMARKS.md).
        let seed = ProcessInfo.processInfo.environment["FIRST_USE_SEED"].flatMap { UInt64($0) } ?? 3
        let run = try Self.run(.firstUse, at: site, seconds: 32, warmUp: PersonSceneMotion.firstUseCalibrationSeconds + 1,
                               seed: seed, unit: FirstUseSceneTests.unit)
        print("fused needle, first use at \(site) (dip \(String(format: "%.0f", site.dipDegrees))°), seed \(seed): \(run.score); \(run.calibration)")
        #expect(run.fused == true, "HeadingFused")
        #expect(run.calibration.hasPrefix("calibrated"), "the calibration was accepted: \(run.calibration)")
        #expect(run.score.holdRMSDegrees <= Self.realTimeHoldRMSDegrees, "\(run.score)")
        #expect(run.score.turnP95Degrees <= 5, "\(run.score)")
        #expect(run.score.settleMedianMilliseconds <= 150, "\(run.score)")
        #expect(run.score.worstDuringDisturbanceDegrees <= 3, "\(run.score)")
        // Read every 10 ms like a client, a signal is at least up to 20 ms old in a turn of 150 °/s
        // (more when the machine is busy), which HeadingError does not claim to cover: the model's
        // 97 % and the issue's rule (never `medium` or `high` beyond 3×) are checked in simulated
        // time, where the accuracy is seen with each heading, in FirstUseSceneTests. Here, as for
        // the holds, a wiring check: 4 out of 5 (Jakarta: 94–98 % in real time on 2 busy cores).
        #expect(run.score.withinThreeSigma >= 0.80, "\(run.score)")
    }

    /// A magnet near the still phone for 3 s: the heading holds on the gyroscope.
    @Test func aMagnetDoesNotDragTheNeedle() throws {
        let run = try Self.run(.magnet, at: Self.highDip, seconds: 22, warmUp: 2)
        print("fused needle, magnet at \(Self.highDip): \(run.score); \(run.calibration)")
        #expect(run.fused == true)
        #expect(run.score.worstDuringDisturbanceDegrees <= 3, "\(run.score)")
        #expect(run.score.withinThreeSigma >= 0.97, "\(run.score)")
    }

    /// Walking with the phone in front, put down on a table and picked up, a gyroscope whose bias
    /// drifts with temperature: HeadingError never claims too much, and the holds meet the goal.
    @Test(arguments: [PersonScene.walk, .table, .gyroscopeDrift])
    func otherScenesStayHonest(kind: PersonScene) throws {
        let run = try Self.run(kind, at: kind == .walk ? Self.lowDip : Self.highDip, seconds: 25)
        print("fused needle, \(kind.rawValue): \(run.score); \(run.calibration)")
        #expect(run.score.reads > 800)
        #expect(run.score.withinOneSigma >= 0.55, "\(run.score)")
        #expect(run.score.withinThreeSigma >= 0.97, "\(run.score)")
        #expect(run.score.holdRMSDegrees <= Self.realTimeHoldRMSDegrees, "\(run.score)")
    }

    /// `gyroscope = off`: the magnetometer and accelerometer alone, as before issue 30 (the moving
    /// average lags a turn); the heading is not fused and stays honest enough.
    @Test func withoutAGyroscopeTheNeedleIsTheTiltCompensatedOne() throws {
        let run = try Self.run(.seekQibla, at: Self.highDip, seconds: 20, configuration: Self.measuring + "gyroscope = off\n")
        print("unfused needle (gyroscope = off), seek-qibla at \(Self.highDip): \(run.score)")
        #expect(run.fused != true)
        #expect(run.score.turnP95Degrees > 5, "the moving average lags a turn: \(run.score)")
    }
}

/// The rate/accuracy/cost trade of a fused needle (issue 30), through the real daemon: the
/// seek-qibla scene at each `sample-rate` × `max-signal-rate`, scored as `FusedNeedleTests` does,
/// with qiblad's CPU time over the run. A benchmark, not a test: it runs only with
/// `QIBLAD_NEEDLE_SWEEP=1` (`scripts/measure-fused-needle.sh` writes its table into BENCHMARKS.md).
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["QIBLAD_NEEDLE_SWEEP"] == "1"))
struct FusedNeedleRateSweep {
    @Test func sweep() throws {
        let seconds = Double(ProcessInfo.processInfo.environment["QIBLAD_NEEDLE_SECONDS"] ?? "") ?? 30
        var rows: [String] = []
        for site in [FusedNeedleTests.lowDip, FusedNeedleTests.highDip] {
            for sampleRate in [20, 50, 100] {
                for signalRate in [10, 25, 50] {
                    let configuration = "max-signal-rate = \(signalRate)\nsample-rate = \(sampleRate)\n"
                    let run = try FusedNeedleTests.run(.seekQibla, at: site, seconds: seconds, configuration: configuration)
                    let s = run.score
                    let row = String(format: "| %@ | %d | %d | %.2f | %.1f | %.0f | %.0f %% | %.0f %% | %.2f %% |",
                                     site.name, sampleRate, signalRate, s.holdRMSDegrees, s.turnP95Degrees,
                                     s.settleMedianMilliseconds, s.withinOneSigma * 100, s.withinThreeSigma * 100,
                                     run.cpuPercent)
                    print("NEEDLE-ROW \(row)")
                    rows.append(row)
                }
            }
        }
        #expect(rows.count == 18)
    }
}
