// SPDX-License-Identifier: Apache-2.0
// `qibla-sim replay`: a sensor log (issue 36) through the daemon — live, written into a simulated
// IIO tree at its recorded pace and read by the real qiblad; or offline, through the daemon's own
// model (`SensorReplay`) as fast as the CPU allows.
import ArgumentParser
import QiblaCore
import QiblaDaemon
import QiblaInterface
import QiblaPlatform
import QiblaSensorLog
import QiblaSimulator
import QiblaState
import Synchronization

struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replay a sensor log through qiblad (live) or through its model (--offline).",
        discussion: """
            The log (README, "Sensor logs"): `# key = value` header lines (latitude, longitude, time), then \
            one sample a line, `TIME KIND X Y Z` with KIND accel (m/s²), gyro (rad/s) or magn (µT), in \
            qiblad's device frame.

            Live: the samples are written into a simulated phone's IIO tree (its magnetometer, \
            accelerometer and gyroscope, raw counts through their scales and mount matrices, so values \
            beyond a chip's range saturate as on the chip) at the log's own pace, and the real qiblad \
            reads them as the demo's; it is stopped when the log ends. Watch it with qiblactl monitor.

            --offline: the daemon's model (calibration, the rest policy, fusion, accuracy) over every \
            instant, as fast as the CPU allows. Prints one line per instant after the first heading: \
            TIME MAGNETIC_HEADING TRUE_HEADING HEADING_ERROR FUSED QW QX QY QZ — TIME as written in the \
            log, headings and error in degrees, FUSED 1 or 0, Q the attitude from the device frame to \
            East-North-Up with north = magnetic north; `nan` where unknown. A summary goes to stderr.
            """)

    @Argument(help: "The sensor log.") var log: String
    @Flag(help: "Run the daemon's model over the log as fast as possible and print its output.") var offline = false
    @Option(parsing: .unconditional, help: "Latitude instead of the log's header (--lat -33.9 or --lat=-33.9).") var lat: String?
    @Option(parsing: .unconditional, help: "Longitude instead of the log's header.") var lon: String?
    @Option(help: "Rest-period reads per second (the daemon's rest-sample-rate; 0 reads every instant).")
    var restSampleRate: Double = 2
    @Option(name: .customLong("setting"),
            help: ArgumentHelp("Offline: one of the model's tuning settings changed, NAME=VALUE (repeatable); NAME is the setting's Swift name under filter., calibrator. or interference. (an unknown NAME lists them).",
                               valueName: "NAME=VALUE"))
    var settings: [String] = []
    @Option(help: "Live: phone preset whose devices carry the samples: pinephone, pinephone-pro, librem5, qualcomm.")
    var phone: PhoneModel = .pinephone
    @Option(help: "Live: the qiblad executable (default: the qiblad next to qibla-sim).") var qiblad: String?
    @Flag(help: "Live: run qiblad with --verbose. Offline: each change of the calibration in use and of the attitude filter's state (seeded, field tracked or held, re-seeded) to stderr.") var verbose = false
    @Option(help: ArgumentHelp("Offline: every SECONDS of the log's time, the attitude filter's inner state to stderr (its field state, gyroscope bias, magnetometer lag, yaw and tilt sigmas, the field's learned reference).",
                               valueName: "SECONDS"))
    var trace: Double?
    @Flag(help: "Offline: eight more columns on each line, what HEADING_ERROR is made of (degrees): the filter's sigma, the calibration's and the declination's terms, then the filter sigma's own parts: its covariance, the gyroscope integration's, the field disagreement's, the reference's and the field-pull floor (the filter's columns `nan` for a heading that is not fused).")
    var sigmaParts = false
    @Option(help: ArgumentHelp("Offline: a state directory, as qiblad's: the magnetometer calibration stored in it is restored before the first sample (as qiblad restores it when the sensor appears) and every fit accepted is written to it. Replays run one after another through one directory are a daemon that kept its calibration from one use to the next.",
                               valueName: "DIR"))
    var stateDirectory: String?

    func validate() throws {
        guard restSampleRate.isFinite, restSampleRate >= 0 else { throw ValidationError("--rest-sample-rate must be ≥ 0") }
        if (lat == nil) != (lon == nil) { throw ValidationError("--lat and --lon go together") }
        if !settings.isEmpty, !offline { throw ValidationError("--setting changes the offline model: use it with --offline") }
        if let trace {
            guard trace.isFinite, trace > 0 else { throw ValidationError("--trace must be a number of seconds > 0") }
            guard offline else { throw ValidationError("--trace follows the offline model: use it with --offline") }
        }
        if sigmaParts, !offline { throw ValidationError("--sigma-parts follows the offline model: use it with --offline") }
        if let stateDirectory {
            guard offline else { throw ValidationError("--state-directory keeps the offline model's calibration: use it with --offline") }
            guard !stateDirectory.isEmpty else { throw ValidationError("--state-directory needs a directory") }
        }
        _ = try modelConfiguration()
    }

    /// The daemon's configuration with `--setting`s applied.
    func modelConfiguration() throws -> DaemonModel.Configuration {
        var configuration = DaemonModel.Configuration()
        for setting in settings {
            do { try ReplaySetting.apply(setting, to: &configuration) } catch { throw ValidationError(error.description) }
        }
        return configuration
    }

    func run() throws {
        // A whole BROAD trial at full rate is about 7 MB; a day at 50 Hz about 200 MB.
        guard let text = FileSystem.readText(log, limit: 1 << 30) else {
            Console.printError("qibla-sim replay: cannot read \(log)")
            throw ExitCode(ExitStatus.invalidValue.rawValue)
        }
        let parsed: SensorLog
        let position: GeodeticPosition?
        let start: Double
        let gyroscopeOutputHertz: Double?
        do {
            parsed = try SensorLog.parse(text)
            position = try lat.flatMap { la in lon.map { (la, $0) } }.map { try simulatorPosition($0.0, $0.1) } ?? parsed.position()
            start = try parsed.startUnixSeconds() ?? WallClock.nowUnixSeconds()
            gyroscopeOutputHertz = try parsed.gyroscopeOutputHertz()
        } catch let error as SensorLogError {
            Console.printError("qibla-sim replay: \(log): \(error)")
            throw ExitCode(ExitStatus.invalidValue.rawValue)
        }
        guard !parsed.instants.isEmpty else {
            Console.printError("qibla-sim replay: \(log) has no samples")
            throw ExitCode(ExitStatus.invalidValue.rawValue)
        }
        if position == nil {
            Console.printError("qibla-sim replay: the log gives no latitude and longitude: no true heading and no expected field")
        }
        if offline {
            replayOffline(parsed, position: position, startUnixSeconds: start, gyroscopeOutputHertz: gyroscopeOutputHertz,
                          configuration: try modelConfiguration())
        } else {
            try replayLive(parsed, position: position)
        }
    }

    /// One line on the calibration in use: its state and quality, and the fit (hard iron in µT,
    /// residual), or the fit set aside for no correction.
    static func describe(_ calibrator: MagnetometerCalibrator) -> String {
        func fitText(_ fit: CalibrationFit) -> String {
            let b = fit.hardIronOffsetMicrotesla
            return "\(fit.kind.rawValue) fit, hard iron (\(SensorLog.decimal(b.x, places: 2)), \(SensorLog.decimal(b.y, places: 2)), "
                + "\(SensorLog.decimal(b.z, places: 2))) µT, residual \(SensorLog.decimal(fit.residualRMSMicrotesla, places: 2)) µT"
        }
        var text = "calibration \(calibrator.state.rawValue)"
        if calibrator.isProvisional, let estimate = calibrator.estimate { text += ", provisional \(fitText(estimate.fit))" }
        if let alternative = calibrator.alternativeFit {
            text += ", no correction in place of the \(fitText(alternative))"
        } else if let fit = calibrator.fit {
            text += ", \(fitText(fit))"
        }
        if calibrator.uncorrectedFieldFitsAsWell { text += "; the uncorrected field fits as well" }
        return text
    }

    /// `--sigma-parts`' columns: HEADING_ERROR's filter, calibration and declination terms, then the
    /// filter sigma's covariance, integration, disagreement, reference and field-pull parts, then
    /// two diagnostics of that covariance: the tilt's sigma and the yaw's sigma given the tilt.
    static func sigmaPartsColumns(_ compass: CompassModel) -> String {
        let terms = compass.lastHeadingErrorTerms
        let parts = compass.lastFusedSigmaParts
        let values = [parts == nil ? nil : terms?.filterDegrees, terms?.calibrationDegrees, terms?.declinationDegrees,
                      parts?.covarianceDegrees, parts?.integrationDegrees, parts?.disagreementDegrees,
                      parts?.referenceDegrees, parts?.fieldPullDegrees, parts?.tiltDegrees, parts?.yawGivenTiltDegrees]
        return values.map { " " + SensorLog.decimal($0 ?? .nan, places: 3) }.joined()
    }

    /// One line on the attitude filter's inner state (`--trace`): tracking or not, the field's
    /// state, the gyroscope bias (°/s, device frame), the magnetometer's lag (ms), the yaw's and
    /// the tilt's one sigma (degrees), and the field's learned reference (µT, dip in degrees).
    static func trace(_ filter: AttitudeFilter, at time: Double) -> String {
        let b = filter.gyroscopeBiasRadiansPerSecond
        let reference = filter.learnedReference.map {
            "\(SensorLog.decimal($0.fieldMicrotesla, places: 2)) µT, dip \(SensorLog.decimal($0.inclinationDegrees, places: 2))°"
        } ?? "none"
        return "trace: \(filter.isTracking(at: time) ? "tracking" : "not tracking"), field \(filter.magneticState.rawValue), "
            + "bias (\(SensorLog.decimal(Angle.degrees(b.x), places: 3)), \(SensorLog.decimal(Angle.degrees(b.y), places: 3)), "
            + "\(SensorLog.decimal(Angle.degrees(b.z), places: 3))) °/s, lag \(SensorLog.decimal(filter.magnetometerLagSeconds * 1000, places: 1)) ms, "
            + "yaw sigma \(SensorLog.decimal(filter.yawSigmaDegrees, places: 2))°, tilt sigma \(SensorLog.decimal(filter.tiltSigmaDegrees, places: 2))°, "
            + "reference \(reference)"
    }

    /// The model over every instant; one line per instant after the first heading.
    func replayOffline(_ log: SensorLog, position: GeodeticPosition?, startUnixSeconds: Double,
                       gyroscopeOutputHertz: Double?, configuration: DaemonModel.Configuration) {
        var replay = SensorReplay(configuration: configuration, position: position, unixSecondsAtStart: startUnixSeconds,
                                  hasGyroscope: log.hasGyroscope, gyroscopeOutputHertz: gyroscopeOutputHertz,
                                  restSampleRateHertz: restSampleRate > 0 ? restSampleRate : nil)
        // The calibration's file is the log's magnetometer's (its `magnetometer` or `device`
        // header), so one directory can serve logs of several devices.
        let store = stateDirectory.map { StateStore(directory: $0) }
        let device = (name: log.headerValue("magnetometer") ?? log.headerValue("device") ?? "replay", path: "qibla-sim replay")
        if let store {
            switch store.loadCalibration(deviceName: device.name, devicePath: device.path) {
            case .success(let stored?):
                replay.restoreCalibration(stored.fit)
                Console.printError("qibla-sim replay: restored the calibration stored in \(store.directory): " + Self.describe(replay.model.compass.calibrator))
            case .success(nil):
                Console.printError("qibla-sim replay: no calibration stored in \(store.directory) for \(device.name)")
            case .failure(let problem):
                Console.printError("qibla-sim replay: calibration file rejected: \(problem)")
            }
        }
        var started = false
        var calibrationGeneration = -1
        var filterState = ""
        var nextTrace = -Double.infinity
        var lines = 0, fusedLines = 0
        var out = ""
        out.reserveCapacity(1 << 16)
        for instant in log.instants {
            let o = replay.apply(timeSeconds: instant.timeSeconds, acceleration: instant.acceleration,
                                 angularVelocity: instant.angularVelocity, magneticField: instant.magneticField)
            if let store, let (fit, generation) = replay.model.compass.fitToPersist {
                let stored = StoredCalibration(deviceName: device.name, devicePath: device.path, fit: fit,
                                               timestampUnixSeconds: startUnixSeconds + instant.timeSeconds - (log.instants.first?.timeSeconds ?? 0))
                do {
                    try store.prepare()
                    try store.saveCalibration(stored)
                } catch {
                    Console.printError("qibla-sim replay: cannot save the calibration in \(store.directory): \(error)")
                }
                // Reported written either way, as qiblad does: one attempt per accepted fit.
                replay.calibrationPersisted(generation: generation)
            }
            if verbose, replay.model.compass.calibrator.calibrationGeneration != calibrationGeneration {
                calibrationGeneration = replay.model.compass.calibrator.calibrationGeneration
                Console.printError("qibla-sim replay: \(instant.timeText) s: " + Self.describe(replay.model.compass.calibrator))
            }
            if verbose {
                let filter = replay.model.compass.attitudeFilter
                let state = "filter \(filter.isTracking(at: instant.timeSeconds) ? "tracking" : "not tracking"), field \(filter.magneticState.rawValue), "
                    + "seeds \(filter.seedCount), kept-yaw seeds \(filter.heldYawSeedCount), wake roll-backs \(filter.wakeRollbackCount), recoveries \(filter.attitudeRecoveryCount), "
                    + "new corrections \(filter.yawReseedCount); interference \(replay.model.compass.calibrator.magneticInterference ? "yes" : "no")"
                if state != filterState {
                    filterState = state
                    Console.printError("qibla-sim replay: \(instant.timeText) s: " + state)
                }
            }
            if let trace, instant.timeSeconds >= nextTrace {
                nextTrace = ((instant.timeSeconds / trace).rounded(.down) + 1) * trace
                Console.printError("qibla-sim replay: \(instant.timeText) s: " + Self.trace(replay.model.compass.attitudeFilter, at: instant.timeSeconds))
            }
            if !started, !o.magneticHeadingDegrees.isFinite { continue }
            started = true
            lines += 1
            if o.fused { fusedLines += 1 }
            let q = o.attitudeENU
            out += instant.timeText
            for value in [o.magneticHeadingDegrees, o.trueHeadingDegrees, o.headingErrorDegrees] {
                out += " " + SensorLog.decimal(value, places: 4)
            }
            out += o.fused ? " 1" : " 0"
            for value in [q?.w, q?.x, q?.y, q?.z] { out += " " + SensorLog.decimal(value ?? .nan, places: 7) }
            if sigmaParts { out += Self.sigmaPartsColumns(replay.model.compass) }
            out += "\n"
            if out.utf8.count > 60_000 { Console.write(out, to: .standardOutput); out.removeAll(keepingCapacity: true) }
        }
        Console.write(out, to: .standardOutput)
        Console.printError("qibla-sim replay: \(log.instants.count) instants, \(lines) with a heading (\(fusedLines) fused), "
            + "\(replay.instantsHeldAtRest) held by the rest policy (\(replay.nearMotionRereads) rest reads read again at once); calibration \(replay.model.compass.state.calibrationState)"
            + " (fits set aside for no correction: \(replay.model.compass.calibrator.fitsSetAsideCount);"
            + " discarded for a changed field: \(replay.model.compass.calibrator.fitsDiscardedForAChangedFieldCount))"
            + (settings.isEmpty ? "" : "; settings \(settings.joined(separator: ", "))"))
    }

    /// The log written into a simulated phone at its pace, read by the real qiblad.
    func replayLive(_ log: SensorLog, position: GeodeticPosition?) throws {
        let executable = try qiblad ?? Demo.qibladNextToThisExecutable()
        guard FileSystem.exists(executable) else {
            throw DemoError("no qiblad at \(executable); build it (swift build) or pass --qiblad PATH")
        }
        let signals = try SignalFD(blocking: [.interrupt, .terminate, .hangup, .child])
        defer { signals.close() }
        let directory = try FileSystem.createTemporaryDirectory(in: Environment.value("TMPDIR") ?? "/tmp", prefix: "qiblad-replay-")
        var bus: SpawnedProcess?
        var simulation: (simulator: Simulator, thread: PlatformThread)?
        defer {
            if let simulation { Demo.stop(simulation.simulator, simulation.thread) }
            if let bus { Demo.stop(bus) }
            do { try FileSystem.removeRecursively(directory) } catch {
                Console.printError("qibla-sim replay: cannot remove \(directory): \(error)")
            }
        }
        let scene = Scene(earthFieldNEDMicrotesla: .zero, trajectory: .flatOnTable(headingDegrees: 0))
        let simulator = try Simulator(phone: phone, scene: scene, sysfsRoot: directory + "/sys", devRoot: directory + "/dev",
                                      gyroscope: log.hasGyroscope)
        let instants = log.instants
        try simulator.step(to: 0, recorded: Self.values(instants[0]))
        Console.printLine("qibla-sim replay: \(instants.count) instants over \(SensorLog.decimal(instants[instants.count - 1].timeSeconds - instants[0].timeSeconds, places: 1)) s "
            + "into a simulated \(phone.rawValue) in \(directory)/sys")
        var environment = Environment.current
        if environment["DBUS_SESSION_BUS_ADDRESS", default: ""].isEmpty {
            let (process, address) = try Demo.startPrivateBus(in: directory)
            bus = process
            environment["DBUS_SESSION_BUS_ADDRESS"] = address
            Console.printLine("qibla-sim replay: no session bus, so it started a private one:\n  export DBUS_SESSION_BUS_ADDRESS=\(address)")
        }
        let finished = Atomic<Bool>(false)
        let thread = try PlatformThread.start { thread in
            defer { finished.store(true, ordering: .releasing) }
            do {
                try Self.writeAtPace(instants, into: simulator, stopping: thread)
            } catch {
                Console.printError("qibla-sim replay: the simulator stopped: \(error)")
            }
        }
        simulation = (simulator, thread)
        var arguments = [executable, "--session", "--no-gpsd", "--sysfs-root", directory + "/sys",
                         "--dev-root", directory + "/dev", "--udev-data-dir", directory + "/udev", "--state-dir", directory + "/state"]
        if let position { arguments.append("--location=\(position.latitudeDegrees),\(position.longitudeDegrees)") }
        if verbose { arguments.append("--verbose") }
        let daemon = try SpawnedProcess.spawn(arguments, environment: environment)
        var stopping = false
        while true {
            if let termination = try daemon.poll() {
                if termination != .exited(0) { Console.printError("qibla-sim replay: qiblad \(termination)") }
                if termination.shellStatus != 0, !stopping { throw ExitCode(termination.shellStatus) }
                return
            }
            if !stopping, finished.load(ordering: .acquiring) {
                Console.printLine("qibla-sim replay: the log ended; stopping qiblad")
                stopping = true
                try? daemon.send(.terminate)
            }
            _ = try signals.fileDescriptor.poll(for: .readable, timeout: .milliseconds(200))
            while let signal = signals.next() {
                if signal != .child { try? daemon.send(signal) }
            }
        }
    }

    static func values(_ instant: SensorLog.Instant) -> RecordedValues {
        RecordedValues(magnetometerMicrotesla: instant.magneticField, accelerometerMetresPerSecondSquared: instant.acceleration,
                       gyroscopeRadiansPerSecond: instant.angularVelocity)
    }

    /// Writes each instant when the monotonic clock reaches its time after the first; an instant
    /// more than 100 ms late is skipped for the latest one due (a register holds its latest reading).
    static func writeAtPace(_ instants: [SensorLog.Instant], into simulator: Simulator, stopping thread: PlatformThread) throws {
        let origin = instants[0].timeSeconds
        let start = MonotonicClock.nowSeconds()
        Console.printLine("qibla-sim replay: log time \(instants[0].timeText) at CLOCK_MONOTONIC \(start) s")
        var index = 1
        while index < instants.count, !thread.isStopRequested {
            var now = MonotonicClock.nowSeconds()
            let due = start + (instants[index].timeSeconds - origin)
            if now < due {
                MonotonicClock.sleep(for: .nanoseconds(Int64(min(due - now, 0.1) * 1e9)))
                continue
            }
            // Late: jump to the latest instant already due.
            now = MonotonicClock.nowSeconds()
            while index + 1 < instants.count, start + (instants[index + 1].timeSeconds - origin) <= now - 0.1 { index += 1 }
            try simulator.step(to: instants[index].timeSeconds - origin, recorded: values(instants[index]))
            index += 1
        }
    }
}
