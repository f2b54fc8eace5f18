// SPDX-License-Identifier: Apache-2.0
// The simulator's driver: samples a Scene and writes the sensors' files.
import QiblaCore
import QiblaPlatform
import Synchronization

/// What one ``Simulator/step(to:)`` wrote.
public struct SimulatorSample: Sendable, Equatable {
    /// Scene time, seconds.
    public var timeSeconds: Double
    /// The `in_timestamp` value of the scans, nanoseconds (origin + time).
    public var timestampNanoseconds: Int64
    /// The magnetometer's measured field (with errors and noise), device frame, microtesla; nil without one.
    public var magnetometerMicrotesla: Vector3?
    /// Raw counts written to `in_magn_{x,y,z}_raw`.
    public var magnetometerRaw: [Int]?
    /// The accelerometer's specific force (with noise), device frame, m/s²; nil without one.
    public var accelerometerMetresPerSecondSquared: Vector3?
    /// Raw counts written to `in_accel_{x,y,z}_raw`.
    public var accelerometerRaw: [Int]?
    /// The gyroscope's angular velocity (with bias, scale error and noise), device frame, rad/s; nil without one.
    public var gyroscopeRadiansPerSecond: Vector3?
    /// Raw counts written to `in_anglvel_{x,y,z}_raw`.
    public var gyroscopeRaw: [Int]?
    /// The true angular velocity at this instant, device frame, rad/s (``Scene/angularVelocityRadiansPerSecond(at:)``);
    /// nil without a gyroscope.
    public var trueAngularVelocityRadiansPerSecond: Vector3?
}

/// Values recorded on a phone for one instant (``Simulator/step(to:recorded:)``), device frame; nil
/// where the instant has no sample of that sensor.
public struct RecordedValues: Sendable, Equatable {
    public var magnetometerMicrotesla: Vector3?
    public var accelerometerMetresPerSecondSquared: Vector3?
    public var gyroscopeRadiansPerSecond: Vector3?

    public init(magnetometerMicrotesla: Vector3?, accelerometerMetresPerSecondSquared: Vector3?, gyroscopeRadiansPerSecond: Vector3?) {
        self.magnetometerMicrotesla = magnetometerMicrotesla
        self.accelerometerMetresPerSecondSquared = accelerometerMetresPerSecondSquared
        self.gyroscopeRadiansPerSecond = gyroscopeRadiansPerSecond
    }
}

/// Drives a magnetometer, an accelerometer and a gyroscope from a ``Scene``.
///
/// Thread safety: `Sendable` and checked by the compiler — all mutable state (the scene, the noise
/// generator, the devices with their FIFO descriptors) lives in a `Mutex` (Synchronization), and the
/// stop flag is an `Atomic`. ``step(to:)`` holds the lock while it writes the files, so steps from
/// different threads never interleave; the intended use is one background thread running ``run(rateHertz:durationSeconds:startTimeSeconds:)``
/// while other threads call ``updateScene(_:)``, ``stop()`` or read ``lastSample``.
public final class Simulator: Sendable {
    private struct State {
        var scene: Scene
        var noise: GaussianNoise
        /// The gyroscope's own noise: adding a gyroscope leaves the other sensors' noise as it was.
        var gyroscopeNoise: GaussianNoise
        var magnetometer: SimulatedDevice?
        var accelerometer: SimulatedDevice?
        /// A gyroscope on a device of its own (one on the accelerometer's device is written with it).
        var gyroscope: SimulatedDevice?
        var lastSample: SimulatorSample?
        var steps = 0
        /// `CLOCK_MONOTONIC` seconds and scene time at the start of ``run(rateHertz:durationSeconds:startTimeSeconds:)``.
        var runOrigin: (monotonicSeconds: Double, sceneSeconds: Double)?
    }

    private let state: Mutex<State>
    private let stopRequested = Atomic<Bool>(false)

    /// Added to scene time (converted to ns) for the scans' `in_timestamp`.
    public let timestampOriginNanoseconds: Int64
    public let magnetometerConfiguration: SimulatedDevice.Configuration?
    public let accelerometerConfiguration: SimulatedDevice.Configuration?
    /// The gyroscope on a device of its own (nil: none, or on the accelerometer's device, see
    /// ``SimulatedDevice/Configuration/includesGyroscope``).
    public let gyroscopeConfiguration: SimulatedDevice.Configuration?
    /// `<sysfsRoot>/bus/iio/devices/iio:deviceN` of each sensor.
    public let magnetometerDirectory: String?
    public let accelerometerDirectory: String?
    /// The gyroscope's device directory: its own, or the accelerometer's; nil without a gyroscope.
    public let gyroscopeDirectory: String?

    /// Creates the devices' sysfs trees (and FIFOs in buffered mode) and a simulator over them.
    /// - Parameters:
    ///   - seed: the noise generator's seed; same seed and same steps → same files.
    ///   - timestampOriginNanoseconds: scan timestamp at scene time 0.
    ///   - gyroscope: a gyroscope on a device of its own; one on the accelerometer's device is
    ///     configured there (``SimulatedDevice/Configuration/includesGyroscope``).
    public init(scene: Scene, magnetometer: SimulatedDevice.Configuration?, accelerometer: SimulatedDevice.Configuration?,
                gyroscope: SimulatedDevice.Configuration? = nil,
                sysfsRoot: String, devRoot: String, seed: UInt64 = 0x5EED, timestampOriginNanoseconds: Int64 = 0)
        throws(SimulatorError) {
        if let m = magnetometer, m.style.kind != .magnetometer {
            throw .invalidArgument("\(m.style) is not a magnetometer")
        }
        if let a = accelerometer, a.style.kind != .accelerometer {
            throw .invalidArgument("\(a.style) is not an accelerometer")
        }
        if let g = gyroscope, g.style.kind != .gyroscope {
            throw .invalidArgument("\(g.style) is not a gyroscope")
        }
        if gyroscope != nil, accelerometer?.includesGyroscope == true {
            throw .invalidArgument("two gyroscopes: the accelerometer's device carries one already")
        }
        let magnetometerDevice = try magnetometer.map { c throws(SimulatorError) in
            try SimulatedDevice(configuration: c, sysfsRoot: sysfsRoot, devRoot: devRoot)
        }
        let accelerometerDevice = try accelerometer.map { c throws(SimulatorError) in
            try SimulatedDevice(configuration: c, sysfsRoot: sysfsRoot, devRoot: devRoot)
        }
        let gyroscopeDevice = try gyroscope.map { c throws(SimulatorError) in
            try SimulatedDevice(configuration: c, sysfsRoot: sysfsRoot, devRoot: devRoot)
        }
        magnetometerConfiguration = magnetometer
        accelerometerConfiguration = accelerometer
        gyroscopeConfiguration = gyroscope
        magnetometerDirectory = magnetometerDevice?.directory
        accelerometerDirectory = accelerometerDevice?.directory
        gyroscopeDirectory = gyroscopeDevice?.directory ?? (accelerometerDevice?.carriesGyroscope == true ? accelerometerDevice?.directory : nil)
        self.timestampOriginNanoseconds = timestampOriginNanoseconds
        state = Mutex(State(scene: scene, noise: GaussianNoise(seed: seed), gyroscopeNoise: GaussianNoise(seed: seed ^ 0x6_7720),
                            magnetometer: magnetometerDevice, accelerometer: accelerometerDevice, gyroscope: gyroscopeDevice))
    }

    /// Whether the simulated phone has a gyroscope.
    public var hasGyroscope: Bool { gyroscopeDirectory != nil }

    /// A simulator for a phone preset (see ``PhoneModel``), including its unrelated IIO devices.
    /// - Parameters:
    ///   - gyroscope: false leaves the phone's gyroscope out (a unit without one).
    ///   - motionEvents: the accelerometer's wake-on-motion event (issue 37; an inv_mpu6050-style
    ///     accelerometer: the PinePhone Pro's MPU-6500 has it in the kernel, the PinePhone's
    ///     MPU-6050 does not).
    public convenience init(phone: PhoneModel, scene: Scene, sysfsRoot: String, devRoot: String, buffered: Bool = false,
                            gyroscope: Bool = true, motionEvents: Bool = false, seed: UInt64 = 0x5EED,
                            timestampOriginNanoseconds: Int64 = 0)
        throws(SimulatorError) {
        try phone.createUnrelatedDevices(sysfsRoot: sysfsRoot)
        var accelerometer = phone.accelerometer(buffered: buffered)
        accelerometer.motionEvents = motionEvents
        if !gyroscope {
            accelerometer.includesGyroscope = false
            accelerometer.mountMatrixAttribute = accelerometer.style.defaultMountMatrixAttribute
        }
        try self.init(scene: scene, magnetometer: phone.magnetometer(buffered: buffered),
                      accelerometer: accelerometer, gyroscope: gyroscope ? phone.gyroscope(buffered: buffered) : nil,
                      sysfsRoot: sysfsRoot, devRoot: devRoot,
                      seed: seed, timestampOriginNanoseconds: timestampOriginNanoseconds)
    }

    /// Motion event records written so far (``SimulatedDevice/writtenMotionEvents``).
    public var writtenMotionEvents: Int { state.withLock { $0.accelerometer?.writtenMotionEvents ?? 0 } }

    /// The current scene (a copy).
    public var scene: Scene { state.withLock { $0.scene } }

    /// Changes the scene for the following steps (e.g. a new heading in the demo).
    public func updateScene(_ body: (inout Scene) -> Void) {
        state.withLock { body(&$0.scene) }
    }

    /// The last sample written, if any.
    public var lastSample: SimulatorSample? { state.withLock { $0.lastSample } }

    /// Number of completed steps.
    public var stepCount: Int { state.withLock { $0.steps } }

    /// Writes one sample of each sensor for scene time `timeSeconds`: deterministic given the seed and
    /// the sequence of steps (no clock). Noise draws: 3 magnetometer deviates then 3 accelerometer
    /// deviates per step (none when the corresponding σ is 0), and 3 gyroscope deviates from a
    /// generator of their own (seeded `seed ^ 0x67720`), so that a gyroscope changes nothing else.
    /// - Throws: ``SimulatorError/invalidArgument(_:)`` for a non-finite or out-of-range time, file errors.
    @discardableResult
    public func step(to timeSeconds: Double) throws(SimulatorError) -> SimulatorSample {
        try step(to: timeSeconds, recorded: nil)
    }

    /// Writes recorded values (device frame: µT, m/s², rad/s; a sensor log's instant, issue 36)
    /// instead of the scene's for scene time `timeSeconds`; a sensor the instant lacks keeps its
    /// last value, as a register holds its latest reading. No noise is added.
    @discardableResult
    public func step(to timeSeconds: Double, recorded: RecordedValues) throws(SimulatorError) -> SimulatorSample {
        try step(to: timeSeconds, recorded: Optional(recorded))
    }

    private func step(to timeSeconds: Double, recorded: RecordedValues?) throws(SimulatorError) -> SimulatorSample {
        guard timeSeconds.isFinite, abs(timeSeconds) < 1e9 else {
            throw .invalidArgument("scene time \(timeSeconds) s is not finite or out of range")
        }
        let timestamp = timestampOriginNanoseconds &+ Int64((timeSeconds * 1e9).rounded())
        return try state.withLock { s throws(SimulatorError) -> SimulatorSample in
            var sample = SimulatorSample(timeSeconds: timeSeconds, timestampNanoseconds: timestamp)
            if let device = s.magnetometer {
                let value: Vector3
                if let recorded {
                    value = recorded.magnetometerMicrotesla ?? s.lastSample?.magnetometerMicrotesla ?? .zero
                } else {
                    let noise = s.noise.nextVector(standardDeviation: s.scene.magnetometerNoiseMicrotesla)
                    value = s.scene.magnetometerReadingMicrotesla(at: timeSeconds, noiseMicrotesla: noise)
                }
                sample.magnetometerMicrotesla = value
                sample.magnetometerRaw = try device.stageSample(value, timestampNanoseconds: timestamp)
            }
            var accelerometerValue: Vector3?
            if s.accelerometer != nil {
                if let recorded {
                    accelerometerValue = recorded.accelerometerMetresPerSecondSquared
                        ?? s.lastSample?.accelerometerMetresPerSecondSquared ?? Vector3(0, 0, TiltCompensation.standardGravity)
                } else {
                    let noise = s.noise.nextVector(standardDeviation: s.scene.accelerometerNoiseMetresPerSecondSquared)
                    accelerometerValue = s.scene.accelerometerReadingMetresPerSecondSquared(at: timeSeconds, noise: noise)
                }
                sample.accelerometerMetresPerSecondSquared = accelerometerValue
            }
            if s.gyroscope != nil || s.accelerometer?.carriesGyroscope == true {
                if let recorded {
                    sample.gyroscopeRadiansPerSecond = recorded.gyroscopeRadiansPerSecond
                        ?? s.lastSample?.gyroscopeRadiansPerSecond ?? .zero
                } else {
                    let noise = s.gyroscopeNoise.nextVector(standardDeviation: s.scene.gyroscope.noiseDegreesPerSecond * .pi / 180)
                    // The mean rate since the previous step, as a gyroscope's decimation filter gives it.
                    let period = s.lastSample.map { timeSeconds - $0.timeSeconds }.flatMap { $0 > 0 && $0 <= 1 ? $0 : nil } ?? 0
                    sample.gyroscopeRadiansPerSecond = s.scene.gyroscopeReadingRadiansPerSecond(at: timeSeconds, periodSeconds: period,
                                                                                                noise: noise)
                    sample.trueAngularVelocityRadiansPerSecond = s.scene.angularVelocityRadiansPerSecond(at: timeSeconds)
                }
            }
            if let device = s.accelerometer, let value = accelerometerValue {
                sample.accelerometerRaw = try device.stageSample(value, gyroscope: sample.gyroscopeRadiansPerSecond,
                                                                 timestampNanoseconds: timestamp)
                if device.carriesGyroscope { sample.gyroscopeRaw = device.lastGyroscopeRaw }
            }
            if let device = s.gyroscope, let value = sample.gyroscopeRadiansPerSecond {
                sample.gyroscopeRaw = try device.stageSample(value, timestampNanoseconds: timestamp)
            }
            // Every scan of this instant reaches its FIFO back to back (sensors sampled together),
            // not a device's sysfs writes apart.
            try s.magnetometer?.flushScans()
            try s.accelerometer?.flushScans()
            try s.gyroscope?.flushScans()
            s.lastSample = sample
            s.steps += 1
            return sample
        }
    }

    /// Steps in real time at `rateHertz` (scene time tₖ = start + k / rate, written when the monotonic clock
    /// reaches it) until `durationSeconds` of scene time have passed (nil: until ``stop()``). Blocks the
    /// calling thread; sleeps in slices of at most 100 ms so ``stop()`` takes effect promptly. A step
    /// that comes more than a period late (a loaded machine) writes the latest step due and the
    /// missed steps are skipped, never written in a burst — unless a device's buffer is enabled:
    /// a sensor's FIFO keeps every sample with its timestamp however late its reader is, so the
    /// missed steps are written then, at once (up to a second of them).
    /// - Throws: ``SimulatorError/invalidArgument(_:)`` for a rate that is not finite and > 0 (or > 10 kHz),
    ///   file errors from ``step(to:)``.
    /// - Parameter onStart: called once, on the calling thread, with the `CLOCK_MONOTONIC` seconds
    ///   at scene time `startTimeSeconds` (before the first step), e.g. to print the mapping.
    public func run(rateHertz: Double = 20, durationSeconds: Double? = nil, startTimeSeconds: Double = 0,
                    onStart: ((Double) -> Void)? = nil) throws(SimulatorError) {
        guard rateHertz.isFinite, rateHertz > 0, rateHertz <= 10_000 else {
            throw .invalidArgument("rate \(rateHertz) Hz must be in (0, 10000]")
        }
        if let d = durationSeconds, !(d.isFinite && d >= 0) {
            throw .invalidArgument("duration \(d) s must be finite and ≥ 0")
        }
        let period = 1 / rateHertz
        let start = Self.monotonicSeconds()
        state.withLock { $0.runOrigin = (start, startTimeSeconds) }
        onStart?(start)
        var k = 0
        while !stopRequested.load(ordering: .acquiring) {
            // A step that comes more than a period late writes the latest step due (a sensor's
            // register holds its latest reading) and the steps it missed are skipped: no burst of
            // old values for a reader to take for the present. Scene times stay on the k / rate grid.
            // With a buffer enabled the missed steps are written instead: their scans carry their
            // own timestamps, as a sensor's FIFO does, so nothing is taken for the present and
            // what the reader gets does not depend on this thread's punctuality.
            let due = ((Self.monotonicSeconds() - start) / period).rounded(.down)
            if due > Double(k), due - Double(k) < rateHertz, !buffersEnabled { k = Int(due) }
            let elapsed = Double(k) * period
            if let d = durationSeconds, elapsed > d + 1e-9 { break }
            try step(to: startTimeSeconds + elapsed)
            k += 1
            let deadline = start + Double(k) * period
            var now = Self.monotonicSeconds()
            if now - deadline > 1 { k = Int(((now - start) / period).rounded(.up)); continue }
            while now < deadline, !stopRequested.load(ordering: .acquiring) {
                Self.sleep(seconds: min(deadline - now, 0.1))
                now = Self.monotonicSeconds()
            }
        }
    }

    /// Whether a device's IIO buffer is enabled (its reader takes timestamped scans, not the
    /// `_raw` attributes).
    private var buffersEnabled: Bool {
        state.withLock { s in
            s.magnetometer?.isBufferEnabled == true || s.accelerometer?.isBufferEnabled == true || s.gyroscope?.isBufferEnabled == true
        }
    }

    /// The scene time at `CLOCK_MONOTONIC` instant `monotonicSeconds` while (or after)
    /// ``run(rateHertz:durationSeconds:startTimeSeconds:)`` runs: start + (now − run's start), the
    /// instant whose truth (``Scene/expectedMagneticHeading(at:)``) a reading taken at
    /// `monotonicSeconds` should be compared with. (Sample k, at scene time start + k / rate, is
    /// written when the clock reaches run's start + k / rate; a run that fell more than a second
    /// behind skips ahead on the same line.) nil before ``run(rateHertz:durationSeconds:startTimeSeconds:)``
    /// started. Thread-safe.
    public func sceneTime(atMonotonicSeconds monotonicSeconds: Double) -> Double? {
        state.withLock { s in s.runOrigin.map { $0.sceneSeconds + (monotonicSeconds - $0.monotonicSeconds) } }
    }

    /// The scene time now (``sceneTime(atMonotonicSeconds:)`` at `CLOCK_MONOTONIC` now). Thread-safe.
    public var sceneTimeNow: Double? { sceneTime(atMonotonicSeconds: Self.monotonicSeconds()) }

    /// The scene time of a scan's `in_timestamp` (nanoseconds): (timestamp − origin) / 10⁹.
    public func sceneTime(atTimestampNanoseconds timestamp: Int64) -> Double {
        Double(timestamp &- timestampOriginNanoseconds) * 1e-9
    }

    /// `CLOCK_MONOTONIC` seconds at scene time 0 of the current run, nil before it started.
    public var monotonicSecondsAtSceneZero: Double? {
        state.withLock { s in s.runOrigin.map { $0.monotonicSeconds - $0.sceneSeconds } }
    }

    /// Makes ``run(rateHertz:durationSeconds:startTimeSeconds:)`` return after its current step (and any
    /// later call return at once). Thread-safe.
    public func stop() { stopRequested.store(true, ordering: .releasing) }

    /// Closes the FIFOs (consumers see end-of-file). Attribute files stay.
    public func close() {
        state.withLock { s in
            s.magnetometer?.close()
            s.accelerometer?.close()
            s.gyroscope?.close()
        }
    }

    /// Scans dropped because a FIFO was full (every device).
    public var droppedScans: Int {
        state.withLock { ($0.magnetometer?.droppedScans ?? 0) + ($0.accelerometer?.droppedScans ?? 0) + ($0.gyroscope?.droppedScans ?? 0) }
    }

    private static func monotonicSeconds() -> Double { MonotonicClock.nowSeconds() }

    private static func sleep(seconds: Double) {
        guard seconds > 0 else { return }
        MonotonicClock.sleep(for: .nanoseconds(Int64(seconds * 1e9)))
    }
}
