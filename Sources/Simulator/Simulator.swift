// SPDX-License-Identifier: Apache-2.0
// The simulator's driver: samples a Scene and writes both sensors' files.
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
}

/// Drives a magnetometer and an accelerometer from a ``Scene``.
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
        var magnetometer: SimulatedDevice?
        var accelerometer: SimulatedDevice?
        var lastSample: SimulatorSample?
        var steps = 0
    }

    private let state: Mutex<State>
    private let stopRequested = Atomic<Bool>(false)

    /// Added to scene time (converted to ns) for the scans' `in_timestamp`.
    public let timestampOriginNanoseconds: Int64
    public let magnetometerConfiguration: SimulatedDevice.Configuration?
    public let accelerometerConfiguration: SimulatedDevice.Configuration?
    /// `<sysfsRoot>/bus/iio/devices/iio:deviceN` of each sensor.
    public let magnetometerDirectory: String?
    public let accelerometerDirectory: String?

    /// Creates the devices' sysfs trees (and FIFOs in buffered mode) and a simulator over them.
    /// - Parameters:
    ///   - seed: the noise generator's seed; same seed and same steps → same files.
    ///   - timestampOriginNanoseconds: scan timestamp at scene time 0.
    public init(scene: Scene, magnetometer: SimulatedDevice.Configuration?, accelerometer: SimulatedDevice.Configuration?,
                sysfsRoot: String, devRoot: String, seed: UInt64 = 0x5EED, timestampOriginNanoseconds: Int64 = 0)
        throws(SimulatorError) {
        if let m = magnetometer, m.style.kind != .magnetometer {
            throw .invalidArgument("\(m.style) is not a magnetometer")
        }
        if let a = accelerometer, a.style.kind != .accelerometer {
            throw .invalidArgument("\(a.style) is not an accelerometer")
        }
        let magnetometerDevice = try magnetometer.map { c throws(SimulatorError) in
            try SimulatedDevice(configuration: c, sysfsRoot: sysfsRoot, devRoot: devRoot)
        }
        let accelerometerDevice = try accelerometer.map { c throws(SimulatorError) in
            try SimulatedDevice(configuration: c, sysfsRoot: sysfsRoot, devRoot: devRoot)
        }
        magnetometerConfiguration = magnetometer
        accelerometerConfiguration = accelerometer
        magnetometerDirectory = magnetometerDevice?.directory
        accelerometerDirectory = accelerometerDevice?.directory
        self.timestampOriginNanoseconds = timestampOriginNanoseconds
        state = Mutex(State(scene: scene, noise: GaussianNoise(seed: seed),
                            magnetometer: magnetometerDevice, accelerometer: accelerometerDevice))
    }

    /// A simulator for a phone preset (see ``PhoneModel``), including its unrelated IIO devices.
    public convenience init(phone: PhoneModel, scene: Scene, sysfsRoot: String, devRoot: String, buffered: Bool = false,
                            seed: UInt64 = 0x5EED, timestampOriginNanoseconds: Int64 = 0) throws(SimulatorError) {
        try phone.createUnrelatedDevices(sysfsRoot: sysfsRoot)
        try self.init(scene: scene, magnetometer: phone.magnetometer(buffered: buffered),
                      accelerometer: phone.accelerometer(buffered: buffered), sysfsRoot: sysfsRoot, devRoot: devRoot,
                      seed: seed, timestampOriginNanoseconds: timestampOriginNanoseconds)
    }

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
    /// deviates per step (none when the corresponding σ is 0).
    /// - Throws: ``SimulatorError/invalidArgument(_:)`` for a non-finite or out-of-range time, file errors.
    @discardableResult
    public func step(to timeSeconds: Double) throws(SimulatorError) -> SimulatorSample {
        guard timeSeconds.isFinite, abs(timeSeconds) < 1e9 else {
            throw .invalidArgument("scene time \(timeSeconds) s is not finite or out of range")
        }
        let timestamp = timestampOriginNanoseconds &+ Int64((timeSeconds * 1e9).rounded())
        return try state.withLock { s throws(SimulatorError) -> SimulatorSample in
            var sample = SimulatorSample(timeSeconds: timeSeconds, timestampNanoseconds: timestamp)
            if let device = s.magnetometer {
                let noise = s.noise.nextVector(standardDeviation: s.scene.magnetometerNoiseMicrotesla)
                let value = s.scene.magnetometerReadingMicrotesla(at: timeSeconds, noiseMicrotesla: noise)
                sample.magnetometerMicrotesla = value
                sample.magnetometerRaw = try device.stageSample(value, timestampNanoseconds: timestamp)
            }
            if let device = s.accelerometer {
                let noise = s.noise.nextVector(standardDeviation: s.scene.accelerometerNoiseMetresPerSecondSquared)
                let value = s.scene.accelerometerReadingMetresPerSecondSquared(at: timeSeconds, noise: noise)
                sample.accelerometerMetresPerSecondSquared = value
                sample.accelerometerRaw = try device.stageSample(value, timestampNanoseconds: timestamp)
            }
            // Both scans of this instant reach their FIFOs back to back (sensors sampled together),
            // not a device's sysfs writes apart.
            try s.magnetometer?.flushScans()
            try s.accelerometer?.flushScans()
            s.lastSample = sample
            s.steps += 1
            return sample
        }
    }

    /// Steps in real time at `rateHertz` (scene time tₖ = start + k / rate, written when the monotonic clock
    /// reaches it) until `durationSeconds` of scene time have passed (nil: until ``stop()``). Blocks the
    /// calling thread; sleeps in slices of at most 100 ms so ``stop()`` takes effect promptly. If the
    /// thread falls more than a second behind, it skips ahead instead of bursting.
    /// - Throws: ``SimulatorError/invalidArgument(_:)`` for a rate that is not finite and > 0 (or > 10 kHz),
    ///   file errors from ``step(to:)``.
    public func run(rateHertz: Double = 20, durationSeconds: Double? = nil, startTimeSeconds: Double = 0)
        throws(SimulatorError) {
        guard rateHertz.isFinite, rateHertz > 0, rateHertz <= 10_000 else {
            throw .invalidArgument("rate \(rateHertz) Hz must be in (0, 10000]")
        }
        if let d = durationSeconds, !(d.isFinite && d >= 0) {
            throw .invalidArgument("duration \(d) s must be finite and ≥ 0")
        }
        let period = 1 / rateHertz
        let start = Self.monotonicSeconds()
        var k = 0
        while !stopRequested.load(ordering: .acquiring) {
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

    /// Makes ``run(rateHertz:durationSeconds:startTimeSeconds:)`` return after its current step (and any
    /// later call return at once). Thread-safe.
    public func stop() { stopRequested.store(true, ordering: .releasing) }

    /// Closes the FIFOs (consumers see end-of-file). Attribute files stay.
    public func close() {
        state.withLock { s in
            s.magnetometer?.close()
            s.accelerometer?.close()
        }
    }

    /// Scans dropped because a FIFO was full (magnetometer + accelerometer).
    public var droppedScans: Int {
        state.withLock { ($0.magnetometer?.droppedScans ?? 0) + ($0.accelerometer?.droppedScans ?? 0) }
    }

    private static func monotonicSeconds() -> Double { MonotonicClock.nowSeconds() }

    private static func sleep(seconds: Double) {
        guard seconds > 0 else { return }
        MonotonicClock.sleep(for: .nanoseconds(Int64(seconds * 1e9)))
    }
}
