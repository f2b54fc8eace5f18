#if canImport(Glibc)
import Glibc
#endif
import Logging
import QiblaCore
import QiblaDBus
import QiblaSimulator

/// `qiblad --demo`: a simulated PinePhone turning slowly in the hand, written as a fake IIO sysfs
/// tree that the daemon reads through its normal IIO code path; a manual location (London, or
/// `--location`); and, when there is no session bus, a private `dbus-daemon` whose address is
/// printed for `qiblactl` and `busctl`.
final class DemoSession {
    private let simulator: Simulator
    private let directory: String
    private var busDaemonPID: pid_t?
    private var thread: pthread_t?
    private let logger: Logger

    /// London, as in the README.
    static let defaultLocation = GeodeticPosition(uncheckedLatitude: 51.5074, longitude: -0.1278)

    private init(simulator: Simulator, directory: String, busDaemonPID: pid_t?, logger: Logger) {
        self.simulator = simulator
        self.directory = directory
        self.busDaemonPID = busDaemonPID
        self.logger = logger
    }

    static func start(options: inout Daemon.Options, environment: [String: String], logger: Logger) throws -> DemoSession {
        var template = Array("/tmp/qiblad-demo-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw DemoError("cannot create a temporary directory: errno \(errno)") }
        let directory = String(cString: made)
        let location = options.runLocation ?? defaultLocation
        options.runLocation = location
        options.configuration.gpsdEnabled = false
        options.overrides.noGpsd = true
        options.sensorConfiguration.sysfsRoot = directory + "/sys"
        options.sensorConfiguration.devRoot = directory + "/dev"
        if options.stateDirectory == StateDirectoryDefault.marker { options.stateDirectory = directory + "/state" }

        let year = DecimalYear.from(unixSeconds: WallClock.nowUnixSeconds())
        // The phone points roughly at the Qibla and sways ±40° around it, slightly tilted.
        let qibla = Qibla().solve(from: location).greatCircleBearing.value ?? 0
        let scene = Scene(position: location, decimalYear: year,
                          trajectory: .turningInHand(baseHeadingDegrees: qibla, amplitudeDegrees: 40, periodSeconds: 30,
                                                     basePitchDegrees: 15, wobbleDegrees: 4),
                          magnetometerNoiseMicrotesla: 0.3, accelerometerNoiseMetresPerSecondSquared: 0.05)
        let simulator: Simulator
        do {
            simulator = try Simulator(phone: .pinephone, scene: scene, sysfsRoot: directory + "/sys", devRoot: directory + "/dev")
            _ = try simulator.step(to: 0)
        } catch {
            throw DemoError("cannot build the simulated phone: \(error)")
        }

        var busPID: pid_t?
        if options.bus.isSession, environment["DBUS_SESSION_BUS_ADDRESS"] == nil {
            let address = "unix:path=\(directory)/bus"
            busPID = try spawn(["dbus-daemon", "--session", "--nofork", "--address=\(address)"])
            var waited = 0
            while access(directory + "/bus", F_OK) != 0 && waited < 100 { usleep(50_000); waited += 1 }
            usleep(100_000) // the socket file appears just before dbus-daemon accepts connections
            setenv("DBUS_SESSION_BUS_ADDRESS", address, 1)
            let hint = """
                qiblad demo: no session bus, so it started a private one. In another terminal run:
                  export DBUS_SESSION_BUS_ADDRESS=\(address)
                  qiblactl monitor

                """
            _ = hint.withCString { write(1, $0, strlen($0)) }
        }
        logger.info("demo: simulated PinePhone in \(directory)/sys at \(location), turning around the Qibla (\(qibla)°)")
        return DemoSession(simulator: simulator, directory: directory, busDaemonPID: busPID, logger: logger)
    }

    /// Starts writing samples (20 Hz) on a background thread once the daemon is up.
    func didStart(daemon: Daemon) {
        let box = Unmanaged.passRetained(SimulatorBox(simulator: simulator, logger: logger))
        var handle = pthread_t()
        let result = pthread_create(&handle, nil, { raw in
            let box = Unmanaged<SimulatorBox>.fromOpaque(raw!).takeRetainedValue()
            do { try box.simulator.run(rateHertz: 20) } catch { box.logger.error("demo simulator stopped: \(error)") }
            return nil
        }, box.toOpaque())
        if result == 0 { thread = handle } else { box.release(); logger.error("cannot start the demo simulator thread") }
    }

    func stop() {
        simulator.stop()
        if let thread { pthread_join(thread, nil) }
        thread = nil
        if let pid = busDaemonPID {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            busDaemonPID = nil
        }
        // The fake sysfs tree, the bus socket and the demo's state go with the demo.
        if let pid = try? Self.spawn(["rm", "-rf", "--", directory]) {
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
    }

    private static func spawn(_ argv: [String]) throws -> pid_t {
        var pid = pid_t()
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        // qiblad blocks SIGTERM/SIGINT/SIGHUP (read through signalfd); the child must not inherit that.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let result = posix_spawnp(&pid, argv[0], nil, &attributes, &cArgs, environ)
        guard result == 0 else { throw DemoError("cannot start \(argv[0]): error \(result)") }
        return pid
    }
}

private final class SimulatorBox: @unchecked Sendable {
    // Immutable after init; Simulator and Logger are Sendable themselves.
    let simulator: Simulator
    let logger: Logger
    init(simulator: Simulator, logger: Logger) { self.simulator = simulator; self.logger = logger }
}

struct DemoError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// `--state-dir` not given: the demo keeps its state in its temporary directory, not the user's.
enum StateDirectoryDefault {
    static let marker = "\u{0}default"
}

extension BusAddress {
    var isSession: Bool { if case .session = self { true } else { false } }
}
