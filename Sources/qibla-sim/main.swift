// SPDX-License-Identifier: Apache-2.0
// qibla-sim: builds and drives a fake IIO sensor tree that qiblad reads with --sysfs-root/--dev-root.
import ArgumentParser
import QiblaCore
import QiblaInterface
import QiblaPlatform
import QiblaSimulator

extension PhoneModel: ExpressibleByArgument {}
extension PersonScene: ExpressibleByArgument {}

/// A vector argument "x,y,z" (`--hard-iron -1,2,3` or `--hard-iron=-1,2,3`).
struct VectorArgument: ExpressibleByArgument, Sendable {
    var vector: Vector3
    init?(argument: String) {
        let parts = argument.split(separator: ",").map { parseFiniteDouble($0) }
        guard parts.count == 3, let x = parts[0], let y = parts[1], let z = parts[2],
              x.isFinite, y.isFinite, z.isFinite else { return nil }
        vector = Vector3(x, y, z)
    }
}

/// A 3×3 matrix argument, nine comma-separated values row by row.
struct MatrixArgument: ExpressibleByArgument, Sendable {
    var matrix: Matrix3
    init?(argument: String) {
        let v = argument.split(separator: ",").compactMap { parseFiniteDouble($0) }
        guard v.count == 9 else { return nil }
        matrix = Matrix3(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8])
    }
}

struct TreeOptions: ParsableArguments {
    @Option(help: "Root of the fake sysfs (devices go to ROOT/bus/iio/devices).")
    var root: String
    @Option(help: "Directory for the buffered-mode FIFOs iio:deviceN (default: ROOT/dev).")
    var devRoot: String?
    @Option(help: "Phone preset: pinephone, pinephone-pro, librem5, qualcomm.")
    var phone: PhoneModel
    @Flag(help: "Create scan elements, buffer, trigger and a FIFO per device (triggered-buffer mode).")
    var buffered = false
    @Flag(help: "Leave the phone's gyroscope out (a unit without one).")
    var noGyro = false

    var resolvedDevRoot: String { devRoot ?? "\(root)/dev" }
}


/// `--lat`/`--lon` checked like every coordinate of the three executables (`CoordinateWords`);
/// a bad value exits with `ExitStatus.invalidValue` and a message on stderr.
func simulatorPosition(_ lat: String, _ lon: String) throws -> GeodeticPosition {
    switch CoordinateWords.position(latitude: lat, longitude: lon) {
    case .success(let position): return position
    case .failure(let problem):
        Console.printError("qibla-sim: \(problem.message)")
        throw ExitCode(ExitStatus.invalidValue.rawValue)
    }
}

struct QiblaSim: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "qibla-sim",
        abstract: "Simulated IIO magnetometer, accelerometer and gyroscope for qiblad.",
        discussion: """
            Exit statuses (shared with qiblad and qiblactl):
            \(ExitStatus.table)
            """,
        version: qiblaVersion,
        subcommands: [Create.self, Run.self, Demo.self, Replay.self])
}

struct Create: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create the fake sysfs tree of a phone (values zero) and exit.")
    @OptionGroup var tree: TreeOptions

    func run() throws {
        let scene = Scene(earthFieldNEDMicrotesla: .zero, trajectory: .flatOnTable(headingDegrees: 0))
        let simulator = try Simulator(phone: tree.phone, scene: scene, sysfsRoot: tree.root,
                                      devRoot: tree.resolvedDevRoot, buffered: tree.buffered, gyroscope: !tree.noGyro)
        describe(simulator)
        simulator.close()
    }
}

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create the tree, then write samples of a simulated scene in real time.")
    @OptionGroup var tree: TreeOptions
    @Option(parsing: .unconditional, help: "Latitude, degrees north (--lat -33.9 or --lat=-33.9).") var lat: String
    @Option(parsing: .unconditional, help: "Longitude, degrees east (--lon -0.12 or --lon=-0.12).") var lon: String
    @Option(parsing: .unconditional, help: "Height above the WGS84 ellipsoid, metres.") var heightM: Double = 0
    @Option(parsing: .unconditional, help: "True heading of the top edge, degrees (the base heading with --turning; the target with --scene, default the Qibla).") var headingDeg: Double?
    @Option(parsing: .unconditional, help: "Pitch, degrees (top edge up positive).") var pitchDeg: Double = 0
    @Option(parsing: .unconditional, help: "Roll, degrees (right edge down positive).") var rollDeg: Double = 0
    @Flag(help: "Turn slowly in the hand: heading ± 20° over 20 s with a small tilt wobble.") var turning = false
    @Option(help: "A person using the phone: seek-qibla, walk, magnet, table, gyro-drift, first-use (seeded by --seed; the target is --heading-deg or the Qibla).")
    var scene: PersonScene?
    @Option(parsing: .unconditional, help: "Gyroscope bias, °/s on each axis (signs +, −, +), drifting by half as much again over a 60 s warm-up.")
    var gyroBias: Double?
    @Option(help: "Gyroscope noise standard deviation, °/s per axis.") var gyroNoise: Double = 0.05
    @Option(help: "Samples per second.") var rate: Double = 20
    @Option(help: "Seconds to run (default: until killed).") var duration: Double?
    @Option(help: "Magnetometer noise standard deviation, µT per axis.") var noiseUt: Double = 0.5
    @Option(help: "Accelerometer noise standard deviation, m/s² per axis.") var accelNoise: Double = 0.02
    @Option(parsing: .unconditional, help: "Hard-iron offset x,y,z in µT, device frame.")
    var hardIron: VectorArgument?
    @Option(parsing: .unconditional, help: "Soft-iron matrix S (measured = S·field + hard iron), nine values row by row, e.g. 1.04,0.02,-0.01,0.02,0.97,0.015,-0.01,0.015,1.02.")
    var softIron: MatrixArgument?
    @Option(help: "Scene time (s) at which a magnet appears near the phone.") var interferenceAt: Double?
    @Option(help: "How long the interference lasts, s.") var interferenceDuration: Double = 5
    @Option(parsing: .unconditional, help: "Interference field x,y,z, µT, device frame.") var interferenceUt: VectorArgument?
    @Option(parsing: .unconditional, help: "Earth field N,E,D in µT instead of WMM2025 (e.g. for tests).") var fieldUt: VectorArgument?
    @Option(help: "Decimal year for WMM2025 (default: now).") var decimalYear: Double?
    @Option(help: "Noise seed.") var seed: UInt64 = 0x5EED

    func validate() throws {
        _ = try simulatorPosition(lat, lon)
        guard rate.isFinite, rate > 0, rate <= 10_000 else { throw ValidationError("--rate must be in (0, 10000]") }
        if let duration, !(duration.isFinite && duration >= 0) { throw ValidationError("--duration must be ≥ 0") }
        if scene != nil, turning { throw ValidationError("--scene and --turning are alternatives") }
        if let gyroBias, !(gyroBias.isFinite && abs(gyroBias) <= 100) { throw ValidationError("--gyro-bias must be in -100...100 °/s") }
        guard noiseUt.isFinite, noiseUt >= 0, accelNoise.isFinite, accelNoise >= 0, gyroNoise.isFinite, gyroNoise >= 0 else {
            throw ValidationError("noise must be a finite number ≥ 0")
        }
        for value: Double in [headingDeg ?? 0, pitchDeg, rollDeg, interferenceAt ?? 0, interferenceDuration, heightM]
        where !value.isFinite { throw ValidationError("angles and times must be finite") }
    }

    func run() throws {
        var position = try simulatorPosition(lat, lon)
        position.heightMetres = heightM
        let trajectory: OrientationTrajectory = turning
            ? .turningInHand(baseHeadingDegrees: headingDeg ?? 0)
            : .constant(DeviceOrientation(headingDegrees: headingDeg ?? 0, pitchDegrees: pitchDeg, rollDegrees: rollDeg))
        var interferences: [Interference] = []
        if let at = interferenceAt {
            interferences.append(Interference(startSeconds: at, durationSeconds: interferenceDuration,
                                              fieldMicrotesla: interferenceUt?.vector ?? Vector3(40, -25, 10)))
        }
        var scene: Scene
        if let field = fieldUt {
            scene = Scene(earthFieldNEDMicrotesla: field.vector, trajectory: trajectory, position: position)
        } else {
            let year = decimalYear ?? DecimalYear.from(unixSeconds: WallClock.nowUnixSeconds())
            scene = Scene(position: position, decimalYear: year, trajectory: trajectory)
        }
        scene.magnetometerNoiseMicrotesla = noiseUt
        scene.accelerometerNoiseMetresPerSecondSquared = accelNoise
        scene.hardIronOffsetMicrotesla = hardIron?.vector ?? .zero
        if let softIron { scene.softIronMatrix = softIron.matrix }
        scene.interferences = interferences
        scene.gyroscope.noiseDegreesPerSecond = gyroNoise
        if let kind = self.scene {
            let target = headingDeg ?? Qibla().solve(from: position).greatCircleBearing.value ?? 0
            let person = PersonSceneMotion(kind, targetHeadingDegrees: target, seed: seed,
                                           durationSeconds: duration.map { $0 + 1 } ?? 3600)
            scene = person.scene(from: scene)
            Console.printLine("scene \(kind.rawValue): target true heading \(target)°, \(person.turns.count) turns, "
                + "\(person.interferences.count) magnets, seed \(seed)")
        }
        if let gyroBias {
            var errors = PersonSceneMotion.drifting(biasDegreesPerSecond: gyroBias)
            errors.noiseDegreesPerSecond = gyroNoise
            scene.gyroscope = errors
        }

        let origin = WallClock.nowUnixNanoseconds()
        let simulator = try Simulator(phone: tree.phone, scene: scene, sysfsRoot: tree.root, devRoot: tree.resolvedDevRoot,
                                      buffered: tree.buffered, gyroscope: !tree.noGyro, seed: seed, timestampOriginNanoseconds: origin)
        describe(simulator)
        let f = scene.earthFieldNEDMicrotesla
        Console.printLine("earth field N,E,D µT: \(f.x), \(f.y), \(f.z); declination: \(scene.declinationDegrees.map { "\($0)°" } ?? "undefined")")
        if let h = scene.expectedMagneticHeading(at: 0) { Console.printLine("expected magnetic heading at t=0: \(h)°") }
        if let h = scene.expectedBackCameraHeading(at: 0) { Console.printLine("expected back-camera magnetic heading at t=0: \(h)°") }
        try simulator.run(rateHertz: rate, durationSeconds: duration) { start in
            // The mapping a test needs to compare a reading with the truth of its instant.
            Console.printLine("scene time 0 at CLOCK_MONOTONIC \(start) s (scene time = monotonic − \(start))")
        }
    }
}

func describe(_ simulator: Simulator) {
    if let c = simulator.magnetometerConfiguration, let d = simulator.magnetometerDirectory {
        Console.printLine("magnetometer \(c.name) (\(c.style.rawValue)\(c.isBuffered ? ", buffered" : "")): \(d)")
    } else {
        Console.printLine("magnetometer: none")
    }
    if let c = simulator.accelerometerConfiguration, let d = simulator.accelerometerDirectory {
        Console.printLine("accelerometer \(c.name) (\(c.style.rawValue)\(c.isBuffered ? ", buffered" : "")): \(d)")
    }
    if let c = simulator.gyroscopeConfiguration, let d = simulator.gyroscopeDirectory {
        Console.printLine("gyroscope \(c.name) (\(c.style.rawValue)\(c.isBuffered ? ", buffered" : "")): \(d)")
    } else if let c = simulator.accelerometerConfiguration, c.includesGyroscope, let d = simulator.gyroscopeDirectory {
        Console.printLine("gyroscope on the accelerometer's device \(c.name): \(d)")
    } else {
        Console.printLine("gyroscope: none")
    }
}
QiblaSim.main()
