// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Logging
import QiblaConfiguration
import QiblaCore
import QiblaDBus
import QiblaEventLoop
import QiblaIIO
import QiblaInterface
import QiblaPlatform
import QiblaState

@main
struct QibladCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "qiblad",
        abstract: "The Qibla compass service: Qibla bearing, distance, true heading and compass accuracy on D-Bus.",
        discussion: """
            Serves io.github.qiblad.Qibla1 at /io/github/qiblad/Qibla1. Position from GeoClue2 or gpsd (location-source; only while a client holds a compass claim), else the manual location, else the last known one. Sensors: IIO magnetometer and accelerometer under --sysfs-root. Configuration: /etc/qiblad/qiblad.conf, then $XDG_CONFIG_HOME/qiblad/qiblad.conf (or --config), merged key by key; SIGHUP reloads both. Try it without hardware: qibla-sim demo, then qiblactl monitor.

            Exit statuses (shared with qiblactl and qibla-sim):
            \(ExitStatus.table)
            """,
        version: qiblaVersion)

    @Flag(name: .long, help: "Use the session bus (default).") var session = false
    @Flag(name: .long, help: "Use the system bus.") var system = false
    @Option(name: .long, help: "Configuration file, read over /etc/qiblad/qiblad.conf key by key (default: $XDG_CONFIG_HOME/qiblad/qiblad.conf).") var config: String?
    @Option(name: .long, help: ArgumentHelp("Directory of the system-wide qiblad/qiblad.conf (default /etc); for tests and packagers.", valueName: "dir"))
    var sysconfdir: String?
    @Option(name: .long, help: "State directory (default: $STATE_DIRECTORY from systemd, else $XDG_STATE_HOME/qiblad).") var stateDir: String?
    @Option(name: .long, parsing: .unconditional,
            help: "Manual location for this run, LAT,LON in degrees (--location -33.9,18.4 or --location=-33.9,18.4).")
    var location: String?
    @Option(name: .long, help: "gpsd to watch, HOST:PORT (default localhost:2947).") var gpsd: String?
    @Flag(name: .long, help: "Do not use gpsd.") var noGpsd = false
    @Option(name: .long, help: "Root of the sysfs tree with IIO devices (default /sys).") var sysfsRoot: String?
    @Option(name: .long, help: "Root of the device nodes for buffered IIO reads (default /dev).") var devRoot: String?
    @Option(name: .long, help: ArgumentHelp("udev's device database, for hwdb's ACCEL_MOUNT_MATRIX (default /run/udev/data).", valueName: "dir"))
    var udevDataDir: String?
    @Option(name: .long, help: "Sensor reading mode: polling or buffered.") var sensorMode: String?
    @Flag(name: .long, help: "Log debug messages.") var verbose = false
    @Option(name: .long, help: ArgumentHelp("Record the sensors into a sensor log instead of serving (README, \"Recording a sensor log\"); with --location the log names the place.", valueName: "file"))
    var record: String?
    @Option(name: .long, help: "With --record: seconds to record (default 60; Ctrl-C ends it earlier).") var recordSeconds: Double = 60

    /// Options that exclude each other are usage errors (64); values qiblad cannot take are invalid values (2).
    func validate() throws {
        if session && system { throw ValidationError("--session and --system exclude each other") }
        if let location, case .failure(let problem) = CoordinateWords.position(commaSeparated: location) {
            throw invalidValue("--location: \(problem.message)")
        }
        if let gpsd, parseHostPort(gpsd) == nil { throw invalidValue("--gpsd takes HOST:PORT, got '\(gpsd)'") }
        if record != nil, !(recordSeconds.isFinite && recordSeconds > 0 && recordSeconds <= 86_400) {
            throw invalidValue("--record-seconds must be in (0, 86400], got \(recordSeconds)")
        }
        if let sensorMode, SensorReadingMode(rawValue: sensorMode) == nil {
            throw invalidValue("--sensor-mode is polling or buffered, got '\(sensorMode)'")
        }
    }

    private func invalidValue(_ message: String) -> ExitCode {
        Console.printError("qiblad: \(message)")
        return ExitCode(ExitStatus.invalidValue.rawValue)
    }

    func run() throws {
        // A large block goes back to the kernel when freed (issue 33: one message near the bus's
        // limit raised glibc's mmap threshold, and the next 20 MiB one stayed resident). 512 KiB,
        // not glibc's 128 KiB start: the claim's own buffers (the calibrator's, 150 kB) stay in
        // the heap, as with the dynamic threshold, instead of being mapped and unmapped per claim
        // (at 128 KiB the short soak's resident set swung by up to 2.6 MB between claims).
        Heap.returnLargeBlocksWhenFreed(mmapThresholdBytes: 512 << 10, trimBytes: 512 << 10)
        // Signals are blocked before anything is logged and before any thread starts, then read
        // through a signalfd on the loop. SIGPIPE too: a write to a closed pipe (a log reader
        // gone) answers EPIPE instead of killing the daemon.
        let signals: SignalWatcher
        do { signals = try SignalWatcher([.terminate, .interrupt, .hangup, .pipe]) } catch {
            Console.printError("qiblad: cannot block signals: \(error)")
            throw ExitCode(1)
        }
        let level: Logger.Level = verbose ? .debug : .info
        let environment = Environment.current
        let journal = SyslogLogHandler.standardErrorIsJournal(environment: environment)
        LoggingSystem.bootstrap { SyslogLogHandler(label: $0, level: level, journalPrefixes: journal) }
        let logger = Logger(label: "qiblad")

        // Configuration: /etc/qiblad/qiblad.conf, then the user's file or --config, then command-line overrides.
        let configFiles = ConfigurationFiles(environment: environment, explicit: config, systemDirectory: sysconfdir)
        var configuration: DaemonConfiguration
        switch ConfigurationLoader.load(configFiles, logger: logger) {
        case .success(let c): configuration = c
        case .failure(let problem):
            logger.error("invalid configuration: \(problem)")
            throw ExitCode(ExitStatus.invalidValue.rawValue)
        }
        var overrides = ConfigurationOverrides()
        overrides.gpsd = gpsd.flatMap(parseHostPort).map { (host: $0.0, port: $0.1) }
        overrides.noGpsd = noGpsd
        overrides.sensorMode = sensorMode.flatMap(SensorReadingMode.init(rawValue:))
        overrides.sysfsRoot = sysfsRoot
        overrides.devRoot = devRoot
        overrides.udevDataDirectory = udevDataDir
        overrides.apply(to: &configuration)

        let options = Daemon.Options(
            bus: system ? .system : .session,
            stateDirectory: stateDir ?? Self.stateDirectory(environment),
            configFiles: configFiles,
            configuration: configuration,
            overrides: overrides,
            runLocation: location.flatMap { try? CoordinateWords.position(commaSeparated: $0).get() })

        let loop: EventLoop
        do { loop = try EventLoop() } catch {
            logger.critical("cannot set up the event loop: \(error)")
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        if let record {
            try recordSensors(into: record, configuration: configuration, position: options.runLocation, loop: loop,
                              signals: signals, logger: logger)
            return
        }

        let daemon = Daemon(options: options, loop: loop, logger: logger)
        do {
            try daemon.start()
        } catch {
            logger.critical("\(error)")
            daemon.shutdown()
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        signals.attach(to: loop) { signal in
            switch signal {
            case Signal.hangup.rawValue:
                daemon.reloadConfiguration()
            case Signal.pipe.rawValue:
                break
            default:
                logger.info("received signal \(signal); shutting down")
                daemon.requestExit(status: 0)
            }
        }

        do {
            try loop.run()
        } catch {
            logger.critical("event loop failed: \(error)")
            daemon.shutdown()
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        daemon.shutdown()
        if daemon.exitStatus != 0 { throw ExitCode(daemon.exitStatus) }
    }

    /// `--record FILE`: the sensors into a sensor log for `recordSeconds` or until SIGINT/SIGTERM.
    private func recordSensors(into path: String, configuration: DaemonConfiguration, position: GeodeticPosition?,
                               loop: EventLoop, signals: SignalWatcher, logger: Logger) throws {
        let recorder: SensorRecorder
        do { recorder = try SensorRecorder(path: path, loop: loop, logger: logger) } catch {
            Console.printError("qiblad: cannot write \(path): \(error)")
            throw ExitCode(ExitStatus.invalidValue.rawValue)
        }
        signals.attach(to: loop) { signal in
            if signal != Signal.pipe.rawValue, signal != Signal.hangup.rawValue { loop.stop() }
        }
        _ = loop.schedule(after: .seconds(recordSeconds)) { loop.stop() }
        var sensors = configuration.sensors
        sensors.sampleRateHertz = sensors.gyroscopeSampleRateHertz ?? sensors.sampleRateHertz
        recorder.start(configuration: sensors, position: position, qiblaVersion: qiblaVersion)
        logger.info("recording the sensors into \(path) for \(recordSeconds) s (Ctrl-C ends it)")
        do { try loop.run() } catch {
            recorder.stop()
            logger.critical("event loop failed: \(error)")
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        recorder.stop()
        if let failure = recorder.failure {
            Console.printError("qiblad: recording failed: \(failure)")
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        logger.info("recorded \(recorder.sampleCount) samples into \(path)")
    }

    /// `$STATE_DIRECTORY` when systemd made it (`StateDirectory=qiblad`; the first of a
    /// colon-separated list), else `$XDG_STATE_HOME/qiblad` or `~/.local/state/qiblad`.
    static func stateDirectory(_ environment: [String: String]) -> String {
        if let first = environment["STATE_DIRECTORY"]?.split(separator: ":").first, first.hasPrefix("/") {
            return String(first)
        }
        return StateStore.defaultDirectory(environment: environment)
    }
}
