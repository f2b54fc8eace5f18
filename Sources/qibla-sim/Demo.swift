// SPDX-License-Identifier: Apache-2.0
// `qibla-sim demo`: the production qiblad on a simulated phone. The simulator writes a fake IIO
// sysfs tree; qiblad is started with flags it has anyway (--sysfs-root, --dev-root, --state-dir,
// --location, --no-gpsd), so the daemon links no test assets.
import ArgumentParser
import QiblaCore
import QiblaInterface
import QiblaPlatform
import QiblaSimulator

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run qiblad on a simulated phone in the hand of a person looking for the Qibla (no sensors, GPS or bus needed).",
        discussion: """
            Writes a simulated PinePhone (20 samples per second, magnetometer, accelerometer and gyroscope; \
            a person turning to find the Qibla: turns of 30–150° with holds of 1–2 s, hand tremor and hand acceleration) \
            to a temporary directory, starts a private dbus-daemon when there is no session bus (and prints \
            the export line for qiblactl and busctl), then runs qiblad with --session --no-gpsd --sysfs-root, \
            --dev-root, --udev-data-dir, --state-dir in that directory and --location. Ctrl-C (SIGINT) or SIGTERM is passed \
            on to qiblad; when it has exited the bus is stopped and the temporary directory removed.
            """)

    @Option(parsing: .unconditional, help: "Latitude, degrees north (default: London); --lat -33.9 or --lat=-33.9.")
    var lat: String = "\(Self.london.latitudeDegrees)"
    @Option(parsing: .unconditional, help: "Longitude, degrees east (default: London); --lon -0.13 or --lon=-0.13.")
    var lon: String = "\(Self.london.longitudeDegrees)"
    @Option(help: "Phone preset: pinephone, pinephone-pro, librem5, qualcomm.")
    var phone: PhoneModel = .pinephone
    @Option(help: "The qiblad executable (default: the qiblad next to qibla-sim).")
    var qiblad: String?
    @Flag(help: "Run qiblad with --verbose.")
    var verbose = false

    /// London, as in the README.
    static let london = GeodeticPosition(uncheckedLatitude: 51.5074, longitude: -0.1278)

    func validate() throws { _ = try simulatorPosition(lat, lon) }

    func run() throws {
        let position = try simulatorPosition(lat, lon)
        let executable = try qiblad ?? Self.qibladNextToThisExecutable()
        guard FileSystem.exists(executable) else {
            throw DemoError("no qiblad at \(executable); build it (swift build) or pass --qiblad PATH")
        }
        // Signals are read through a signalfd: block them before any thread starts. SIGCHLD wakes
        // the wait when qiblad (or the bus) exits. Children get an empty mask (SpawnedProcess).
        let signals = try SignalFD(blocking: [.interrupt, .terminate, .hangup, .child])
        defer { signals.close() }

        let directory = try FileSystem.createTemporaryDirectory(in: Environment.value("TMPDIR") ?? "/tmp",
                                                                prefix: "qiblad-demo-")
        var bus: SpawnedProcess?
        var simulation: (simulator: Simulator, thread: PlatformThread)?
        defer {
            if let simulation { Self.stop(simulation.simulator, simulation.thread) }
            if let bus { Self.stop(bus) }
            do { try FileSystem.removeRecursively(directory) } catch {
                Console.printError("qibla-sim demo: cannot remove \(directory): \(error)")
            }
        }

        let simulator = try Self.simulatedPhone(phone, at: position, in: directory)
        var environment = Environment.current
        if environment["DBUS_SESSION_BUS_ADDRESS", default: ""].isEmpty {
            let (process, address) = try Self.startPrivateBus(in: directory)
            bus = process
            environment["DBUS_SESSION_BUS_ADDRESS"] = address
            Console.printLine("""
                qibla-sim demo: no session bus, so it started a private one. In another terminal run:
                  export DBUS_SESSION_BUS_ADDRESS=\(address)
                  qiblactl monitor

                """)
        }
        let thread = try PlatformThread.start { _ in
            do {
                try simulator.run(rateHertz: 20) { start in
                    // For comparing a reading with the scene's truth at its instant (DemoTests).
                    Console.printLine("qibla-sim demo: scene time 0 at CLOCK_MONOTONIC \(start) s")
                }
            } catch {
                Console.printError("qibla-sim demo: the simulator stopped: \(error)")
            }
        }
        simulation = (simulator, thread)

        var arguments = [executable, "--session", "--no-gpsd", "--sysfs-root", directory + "/sys",
                         "--dev-root", directory + "/dev", "--udev-data-dir", directory + "/udev", "--state-dir", directory + "/state",
                         "--location=\(position.latitudeDegrees),\(position.longitudeDegrees)"]
        if verbose { arguments.append("--verbose") }
        let daemon = try SpawnedProcess.spawn(arguments, environment: environment)
        let termination = try Self.waitForExit(of: daemon, forwarding: signals, bus: &bus)
        if termination != .exited(0) { Console.printError("qibla-sim demo: qiblad \(termination)") }
        if termination.shellStatus != 0 { throw ExitCode(termination.shellStatus) }
    }

    /// `<directory of /proc/self/exe>/qiblad`.
    static func qibladNextToThisExecutable() throws -> String {
        let me = try SpawnedProcess.currentExecutablePath()
        return String(me[..<(me.lastIndex(of: "/") ?? me.startIndex)]) + "/qiblad"
    }

    /// The fake sysfs tree under `directory/sys` and `directory/dev`, first sample written. A person
    /// looks for the Qibla (``PersonScene/seekQibla``, an hour of turns and holds), with the phone's
    /// gyroscope where it has one (bias, drift and noise as ``GyroscopeErrors``' defaults).
    static func simulatedPhone(_ phone: PhoneModel, at position: GeodeticPosition, in directory: String) throws -> Simulator {
        let year = DecimalYear.from(unixSeconds: WallClock.nowUnixSeconds())
        let qibla = Qibla().solve(from: position).greatCircleBearing.value ?? 0
        let base = Scene(position: position, decimalYear: year, trajectory: .flatOnTable(headingDegrees: qibla),
                         magnetometerNoiseMicrotesla: 0.3, accelerometerNoiseMetresPerSecondSquared: 0.05)
        let person = PersonSceneMotion(.seekQibla, targetHeadingDegrees: qibla, seed: 0x5EED, durationSeconds: 3600)
        let simulator = try Simulator(phone: phone, scene: person.scene(from: base), sysfsRoot: directory + "/sys",
                                      devRoot: directory + "/dev")
        try simulator.step(to: 0)
        Console.printLine("qibla-sim demo: simulated \(phone.rawValue) in \(directory)/sys at \(position)"
            + (simulator.hasGyroscope ? " with a gyroscope" : "") + ", a person turning to find the Qibla (\(fixed(qibla))°)")
        return simulator
    }

    /// `dbus-daemon --session --nofork` on `directory/bus`; returns once it prints its address
    /// (it accepts connections from then on; the socket file appears a little earlier).
    static func startPrivateBus(in directory: String) throws -> (SpawnedProcess, String) {
        let address = "unix:path=\(directory)/bus"
        let printed = directory + "/bus-address"
        let bus = try SpawnedProcess.spawn(["dbus-daemon", "--session", "--nofork", "--address=\(address)", "--print-address=1"],
                                           standardOutput: printed)
        let deadline = MonotonicClock.nowSeconds() + 10
        while FileSystem.readText(printed)?.contains("unix:") != true {
            if let ended = try bus.poll() { throw DemoError("dbus-daemon \(ended)") }
            guard MonotonicClock.nowSeconds() < deadline else {
                stop(bus)
                throw DemoError("dbus-daemon did not start within 10 s")
            }
            MonotonicClock.sleep(for: .milliseconds(20))
        }
        return (bus, address)
    }

    /// Waits for qiblad to exit, passing SIGINT, SIGTERM and SIGHUP on to it; reaps the bus if it dies first.
    static func waitForExit(of daemon: SpawnedProcess, forwarding signals: SignalFD,
                            bus: inout SpawnedProcess?) throws -> SpawnedProcess.Termination {
        while true {
            if let termination = try daemon.poll() { return termination }
            if let running = bus, let ended = try running.poll() {
                Console.printError("qibla-sim demo: dbus-daemon \(ended)")
                bus = nil
            }
            _ = try signals.fileDescriptor.poll(for: .readable, timeout: .seconds(1))
            while let signal = signals.next() {
                if signal != .child { try? daemon.send(signal) }
            }
        }
    }

    static func stop(_ simulator: Simulator, _ thread: PlatformThread) {
        simulator.stop()
        thread.requestStop()
        if !thread.waitForExit(timeout: .seconds(5)) { Console.printError("qibla-sim demo: the simulator thread did not stop") }
        simulator.close()
    }

    static func stop(_ process: SpawnedProcess) {
        try? process.send(.terminate)
        _ = try? process.wait()
    }

    static func fixed(_ degrees: Double) -> String { String(Double(Int((degrees * 10).rounded())) / 10) }
}

struct DemoError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
