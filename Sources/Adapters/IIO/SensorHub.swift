// SPDX-License-Identifier: Apache-2.0
// Owns the drivers for the magnetometer and the (optional) accelerometer and gyroscope: discovery, start/stop,
// fallback from buffered to polling, hot-unplug detection and rediscovery with backoff.
import Logging
import QiblaCore
import QiblaEventLoop
import QiblaPlatform

/// The IIO sensor layer as the daemon sees it.
///
/// Everything runs on `loop`'s thread: call ``start()``/``stop()`` there, and `onEvent` is invoked
/// there (by the loop's holder: see `EventLoop.runWhileAsleep`). Polling drivers read sysfs on one
/// shared pthread (`PollingSampler`) that hands batches over once per
/// ``SensorConfiguration/handOffInterval``, borrowing the sleeping loop or else with `loop.post`.
/// Buffered drivers are read on the loop: when one device node is readable (its watermark, one
/// hand-off interval of scans), every buffered device is read, and their samples go out together
/// in timestamp order.
public final class SensorHub: @unchecked Sendable {
    /// The settings as requested.
    private let requestedConfiguration: SensorConfiguration
    /// The settings the drivers run with: the requested ones, with the gyroscope's sample rate and
    /// hand-off interval when one is read (fixed by the first start: the sampling thread keeps them).
    private var configuration: SensorConfiguration
    private let loop: EventLoop
    private let logger: Logger
    /// Device facts logged once per run (and when they change), not once per claim: shared by
    /// every hub of the process (the daemon makes a new one for each first claim).
    private var facts: FactLog { FactLog.shared }
    private let onEvent: (SensorEvent) -> Void

    private var drivers: [any SensorDriver] = []
    private var running = false
    private var retryToken: EventLoop.Token?
    private var presenceToken: EventLoop.Token?
    private var retryDelay: Duration
    private var droppedTotal = 0
    private var announcedUnavailable: String?
    /// The magnetometer in use (set just before `.available` is reported; nil while none).
    public private(set) var magnetometerDevice: IIODevice?
    /// The gyroscope chip's own output rate, hertz, as its `sampling_frequency` reads once the
    /// drivers run (set just before `.available` is reported; nil without a gyroscope or without
    /// the attribute). A polled chip set faster than it is read gives samples that each stand for
    /// at most one of its own periods (`AttitudeFilter.gyroscopeOutputPeriodSeconds`).
    public private(set) var gyroscopeOutputHertz: Double?
    /// The polling thread stopped most recently (tests check it exits).
    private(set) var stoppedThreads: [PlatformThread] = []
    /// One thread reads every polled sensor; it exists only while a polling driver is active.
    private var sampler: PollingSampler?
    /// Buffered mode: whether the phone rests (the samples of every wakeup, in timestamp order).
    /// Polling mode has its own, on the sampling thread.
    private var rest: RestDetector
    /// The newest sample time the detector has seen, seconds: a follower's scans can arrive on a
    /// later wakeup than the leader's newer ones, and time running backwards would end a rest.
    private var restClockSeconds = -Double.infinity

    public init(configuration: SensorConfiguration, loop: EventLoop, logger: Logger,
                onEvent: @escaping (SensorEvent) -> Void) {
        self.requestedConfiguration = configuration
        self.configuration = configuration
        self.loop = loop
        self.logger = logger
        self.onEvent = onEvent
        retryDelay = configuration.initialRetryDelay
        rest = RestDetector(configuration: configuration.rest)
    }

    deinit {
        for driver in drivers { driver.stop() }
    }

    /// Whether ``start()`` was called without a matching ``stop()`` (true also while waiting for a
    /// vanished sensor to come back).
    public var isRunning: Bool { running }

    /// The reading mode of each active driver, for logs and tests.
    var activeModes: [SensorKind: SensorReadingMode] {
        var modes: [SensorKind: SensorReadingMode] = [:]
        for driver in drivers {
            for kind in driver.kinds { modes[kind] = driver is BufferedDriver ? .buffered : .polling }
        }
        return modes
    }

    /// Gyroscope samples read by the polling thread so far (tests: none while the phone rests).
    var polledGyroscopeReads: Int { sampler?.gyroscopeReads ?? 0 }

    /// The polling thread's periods so far (tests, the daemon's debug log), 0 without one.
    public var polledPeriods: Int { sampler?.readStatistics.periods ?? 0 }

    /// Rest reads the polling thread read again at once because they came near motion (tests, the
    /// daemon's debug log), 0 without one.
    public var polledNearMotionRereads: Int { sampler?.nearMotionRereads ?? 0 }

    /// Buffered mode: whether the gyroscope's scan elements are enabled now (nil: none buffered).
    var bufferedGyroscopeOn: Bool? {
        for case let driver as BufferedDriver in drivers where driver.kinds.contains(.gyroscope) { return driver.gyroscopeOn }
        return nil
    }

    /// Discovers the sensors, opens them and starts reading. Emits `.available` or `.unavailable`.
    public func start() {
        guard !running else { return }
        running = true
        droppedTotal = 0
        announcedUnavailable = nil
        retryDelay = configuration.initialRetryDelay
        rest.reset()
        restClockSeconds = -.infinity
        attemptStart()
    }

    /// Stops every driver, restores the attributes they changed, cancels all timers. After this the hub
    /// causes no wakeups (threads exit after their current read).
    public func stop() {
        guard running else { return }
        running = false
        if let retryToken { loop.cancel(retryToken) }
        retryToken = nil
        stopDrivers()
    }

    // MARK: Lifecycle

    private func attemptStart() {
        retryToken = nil
        guard running else { return }
        let discovery = discoverSensors(sysfsRoot: configuration.sysfsRoot,
                                        preferredMagnetometerName: configuration.preferredMagnetometerName,
                                        preferredAccelerometerName: configuration.preferredAccelerometerName,
                                        preferredGyroscopeName: configuration.preferredGyroscopeName)
        guard let magnetometer = discovery.magnetometer.device else {
            becomeUnavailable(discovery.magnetometer.reason)
            return
        }
        facts.note("magnetometer", discovery.magnetometer.reason, to: logger)
        facts.note("accelerometer", discovery.accelerometer.reason, to: logger)
        facts.note("gyroscope", configuration.gyroscopeEnabled ? discovery.gyroscope.reason : "gyroscope not read (gyroscope = off)",
                   to: logger)
        // The gyroscope's setup is checked first: it sets the rates every driver runs at, and on
        // the accelerometer's device, in buffered mode, one driver reads both from one scan.
        let accelerometer = discovery.accelerometer.device
        var gyroscope: (device: IIODevice, calibration: AxisCalibration)?
        if configuration.gyroscopeEnabled, let device = discovery.gyroscope.device {
            do {
                gyroscope = (device, try calibration(of: device, kind: .gyroscope, onAccelerometerDevice: device == accelerometer))
            } catch {
                logger.warning("gyroscope unusable, continuing without: \(error)")
            }
        }
        if sampler == nil {
            configuration = gyroscope == nil ? requestedConfiguration : requestedConfiguration.withGyroscopeRates
            // Issue 37: without a gyroscope a rest begins sooner (RestDetector.Configuration).
            configuration.rest = requestedConfiguration.rest.forPhone(hasGyroscope: gyroscope != nil)
            if rest.configuration != configuration.rest { rest = RestDetector(configuration: configuration.rest) }
        }
        do {
            try startDriver(for: magnetometer, calibration: calibration(of: magnetometer, kind: .magnetometer))
        } catch {
            stopDrivers()
            becomeUnavailable(error.description)
            return
        }
        if let accelerometer {
            do {
                try startDriver(for: accelerometer, calibration: calibration(of: accelerometer, kind: .accelerometer),
                                companion: gyroscope?.device == accelerometer ? gyroscope?.calibration : nil)
            } catch {
                logger.warning("accelerometer unusable, continuing without: \(error)")
            }
        }
        if let gyroscope, !drivers.contains(where: { $0.kinds.contains(.gyroscope) }) {
            do {
                try startDriver(for: gyroscope.device, calibration: gyroscope.calibration)
            } catch {
                logger.warning("gyroscope unusable, continuing without: \(error)")
            }
        }
        retryDelay = configuration.initialRetryDelay
        announcedUnavailable = nil
        // Polled devices are checked by the reading thread on its own wakeups; only a buffered
        // driver (woken by its device node, which may stay silent) needs the loop's timer.
        if drivers.contains(where: { $0 is BufferedDriver }) {
            presenceToken = loop.schedule(after: .seconds(1), repeating: .seconds(1)) { [weak self] in self?.checkPresence() }
        }
        magnetometerDevice = magnetometer
        announceAvailable(magnetometer: magnetometer)
    }

    /// `.available` with the devices of the drivers running now.
    private func announceAvailable(magnetometer: IIODevice) {
        gyroscopeOutputHertz = drivers.first { $0.kinds.contains(.gyroscope) }
            .flatMap { currentSamplingFrequencyHertz(device: $0.device, kind: .gyroscope) }
        onEvent(.available(magnetometer: magnetometer.name,
                           accelerometer: drivers.first { $0.kinds.contains(.accelerometer) }?.device.name,
                           gyroscope: drivers.first { $0.kinds.contains(.gyroscope) }?.device.name))
    }

    /// Scale, offset and mount matrix of `kind` on `device` (the mount matrix's choice logged once).
    /// A gyroscope on the accelerometer's device takes udev's `ACCEL_MOUNT_MATRIX` as the
    /// accelerometer does: one chip, the same axes.
    private func calibration(of device: IIODevice, kind: SensorKind,
                             onAccelerometerDevice: Bool = false) throws(SensorSetupError) -> AxisCalibration {
        let override = configuration.mountMatrixOverride(for: kind)
        let udevProperty = kind == .gyroscope && onAccelerometerDevice
            ? SensorKind.accelerometer.udevMountMatrixProperty : kind.udevMountMatrixProperty
        let udev = override == nil && udevProperty != nil
            ? UdevDatabase(directory: configuration.udevDataDirectory).properties(of: device) : [:]
        let mount = chooseMountMatrix(devicePath: device.sysfsPath, kind: kind, override: override, udevProperties: udev,
                                      udevProperty: udevProperty)
        facts.note("\(kind.rawValue) mount matrix", "\(device) \(kind.rawValue) mount matrix \(mount.matrix) from \(mount.source)", to: logger)
        return try readAxisCalibration(device: device, kind: kind, mountMatrix: mount.matrix)
    }

    /// Starts a driver for `calibration` on `device` (buffered when configured and possible, else
    /// polling). `companion`: a second channel set on the same device; buffered, one driver reads
    /// both from one scan; polled, it gets a driver of its own.
    private func startDriver(for device: IIODevice, calibration: AxisCalibration,
                             companion: AxisCalibration? = nil) throws(SensorSetupError) {
        if configuration.mode == .buffered {
            // The magnetometer leads (its samples make the heading); another buffered device is read
            // on its wakeups, with a watermark that is only a backstop.
            let follower = drivers.contains { $0 is BufferedDriver }
            let driver = BufferedDriver(device: device, calibration: calibration, companion: companion,
                                        configuration: configuration, loop: loop, logger: logger, facts: facts,
                                        sink: sink(for: calibration.kind), follower: follower)
            do {
                try driver.start()
                drivers.append(driver)
                return
            } catch {
                logger.warning("\(error); falling back to polling")
            }
        }
        let driver = makePollingDriver(device: device, calibration: calibration)
        try driver.start()
        drivers.append(driver)
        if let companion {
            let second = makePollingDriver(device: device, calibration: companion)
            do { try second.start() } catch {
                logger.warning("\(companion.kind.rawValue) unusable, continuing without: \(error)")
                return
            }
            drivers.append(second)
        }
    }

    private func makePollingDriver(device: IIODevice, calibration: AxisCalibration) -> PollingDriver {
        PollingDriver(device: device, calibration: calibration, configuration: configuration,
                      sampler: pollingSampler(), logger: logger, facts: facts)
    }

    private func pollingSampler() -> PollingSampler {
        if let sampler { return sampler }
        let sampler = PollingSampler(loop: loop, sampleRateHertz: configuration.effectiveSampleRateHertz,
                                     restSampleRateHertz: configuration.restSampleRateHertz, rest: configuration.rest,
                                     handOffInterval: configuration.handOffInterval,
                                     hook: configuration.beforeAttributeRead)
        sampler.sink = PollingSamplerSink(
            deliver: { [weak self] batch in
                guard let self, self.running else { return }
                self.onEvent(.samples(batch))
            },
            dropped: { [weak self] kind, count in self?.sink(for: kind).dropped(count) },
            restChanged: { [weak self] resting in
                guard let self, self.running else { return }
                self.onEvent(.resting(resting))
            },
            failed: { [weak self] kind, reason in
                guard let self else { return }
                for case let driver as PollingDriver in drivers where driver.calibration.kind == kind { driver.readerFailed() }
                driverFailed(kind: kind, reason: reason)
            })
        self.sampler = sampler
        return sampler
    }

    private func sink(for kind: SensorKind) -> SensorDriverSink {
        SensorDriverSink(
            readable: { [weak self] readiness in self?.buffersReadable(kind, readiness) },
            dropped: { [weak self] count in
                guard let self, self.running else { return }
                self.droppedTotal += count
                self.onEvent(.droppedValue(count: self.droppedTotal))
            },
            stalled: { [weak self] in self?.driverStalled(kind: kind) })
    }

    /// One buffered device's node woke the loop: read it, and read what every other buffered device
    /// holds now (a non-blocking read; the kernel returns scans waiting below the watermark), so
    /// that the follower's own watermark (`BufferedDriver.followerWatermark`, two intervals) is
    /// seldom reached: with both sensors buffered at one rate the loop wakes about once per hand-off
    /// interval instead of once per device, whatever the phase of their triggers. Then hand the
    /// samples over in timestamp order, in fixed-capacity batches (no heap allocation), and report a
    /// driver that failed after the samples it read before failing.
    /// (Index loops over `drivers`, not `for … in`: in an unoptimised build, where the allocation
    /// test runs, an array's iterator reads each element through a coroutine that allocates.)
    func buffersReadable(_ woken: SensorKind, _ readiness: EventLoop.Readiness) {
        guard running else { return }
        var index = 0
        while index < drivers.count {
            if let driver = drivers[index] as? BufferedDriver {
                driver.readAvailable(driver.calibration.kind == woken ? readiness : nil)
            }
            index += 1
        }
        // Motion-aware rate: every sample goes through the rest detector; while the phone rests only
        // the newest pair goes on, and only when it drifted (`RestDetector.shouldHandOver`).
        let restHertz = configuration.restSampleRateHertz.flatMap { $0 < configuration.effectiveSampleRateHertz ? $0 : nil }
        let wasResting = restHertz != nil && rest.isResting
        var batch = SensorSampleBatch()
        var newest = (acceleration: SensorSample?.none, field: SensorSample?.none)
        while running, let next = oldestPendingDriver() {
            let sample = next.takePending()
            if restHertz != nil {
                restClockSeconds = max(restClockSeconds, Double(sample.timestampNanoseconds) * 1e-9)
                switch sample.kind {
                case .accelerometer: rest.addAcceleration(sample.vector, time: restClockSeconds)
                case .magnetometer: rest.addField(sample.vector, time: restClockSeconds)
                case .gyroscope: break  // the rest is told by the two read at rest
                }
            }
            if wasResting {
                switch sample.kind {
                case .accelerometer: newest.acceleration = sample
                case .magnetometer: newest.field = sample
                case .gyroscope: break  // scans read before its channels went off
                }
                continue
            }
            batch.append(sample)
            if batch.isFull {
                onEvent(.samples(batch))
                batch.removeAll()
            }
        }
        if restHertz != nil, running, rest.shouldHandOver(), wasResting {
            // The accelerometer first: the field is tilt-compensated with it. At rest the still
            // stretch's means go on, with the newest samples' times (RestDetector).
            if let acceleration = newest.acceleration { batch.append(acceleration.resting(rest)) }
            if let field = newest.field { batch.append(field.resting(rest)) }
        }
        if running, !batch.isEmpty { onEvent(.samples(batch)) }
        if let restHertz, running, rest.isResting != wasResting { changeRates(restingAtHertz: rest.isResting ? restHertz : nil) }
        index = 0
        while running, index < drivers.count {
            // A failure reported earlier in this loop stops or removes the others.
            if let driver = drivers[index] as? BufferedDriver, let reason = driver.failure {
                driverFailed(kind: driver.calibration.kind, reason: reason)
                index = 0
                continue
            }
            index += 1
        }
    }

    /// The phone began or ended a rest: every buffered driver switches its rate and watermark
    /// together (their batches stay paired in time), and the daemon hears of it.
    private func changeRates(restingAtHertz restHertz: Double?) {
        var index = 0
        while index < drivers.count {
            if let driver = drivers[index] as? BufferedDriver {
                let line = driver.changeRate(restingAtHertz: restHertz)  // not inside the log call: its message is lazy
                logger.debug("\(line)")
            }
            index += 1
        }
        onEvent(.resting(restHertz != nil))
    }

    /// The buffered driver whose oldest pending sample is the oldest of all; on a tie the
    /// accelerometer, so that the magnetometer's sample of the same instant is tilt-compensated with it.
    private func oldestPendingDriver() -> BufferedDriver? {
        var oldest: BufferedDriver?
        var oldestTimestamp = Int64.max
        var index = 0
        while index < drivers.count {
            if let driver = drivers[index] as? BufferedDriver, let timestamp = driver.pendingTimestamp,
               oldest == nil || timestamp < oldestTimestamp
                || (timestamp == oldestTimestamp && driver.calibration.kind == .accelerometer) {
                oldest = driver
                oldestTimestamp = timestamp
            }
            index += 1
        }
        return oldest
    }

    private func driverFailed(kind: SensorKind, reason: String) {
        guard running else { return }
        if kind != .magnetometer, let magnetometer = drivers.first(where: { $0.calibration.kind == .magnetometer }),
           Sysfs.exists(magnetometer.device.sysfsPath + "/name") {
            // The magnetometer alone still gives a heading (tilt-uncompensated); say what is gone
            // (a buffered accelerometer takes a gyroscope on its device with it).
            logger.warning("\(kind.rawValue) failed, continuing without: \(reason)")
            for driver in drivers where driver.calibration.kind == kind { driver.stop() }
            drivers.removeAll { $0.calibration.kind == kind }
            announceAvailable(magnetometer: magnetometer.device)
            return
        }
        stopDrivers()
        becomeUnavailable(reason)
    }

    private func driverStalled(kind: SensorKind) {
        guard running, let index = drivers.firstIndex(where: { $0.calibration.kind == kind }) else { return }
        let old = drivers[index]
        logger.warning("\(old.device): no data from the IIO buffer within \(configuration.bufferWatchdog); falling back to polling")
        old.stop()
        let replacement = makePollingDriver(device: old.device, calibration: old.calibration)
        do {
            try replacement.start()
            drivers[index] = replacement
        } catch {
            drivers.remove(at: index)
            driverFailed(kind: kind, reason: error.description)
            return
        }
        // A gyroscope that shared the buffered device is polled on its own.
        if let buffered = old as? BufferedDriver, buffered.channelSets.count > 1 {
            for companion in buffered.channelSets.dropFirst() {
                let second = makePollingDriver(device: old.device, calibration: companion)
                do { try second.start(); drivers.append(second) } catch {
                    logger.warning("\(companion.kind.rawValue) unusable, continuing without: \(error)")
                }
            }
        }
    }

    /// Sysfs device directories vanish on unbind/unplug; open files may keep working meanwhile.
    /// (Polled devices: `PollingSampler` checks them on its thread, once a second.)
    private func checkPresence() {
        guard running else { return }
        for driver in drivers where !Sysfs.exists(driver.device.sysfsPath + "/name") {
            driverFailed(kind: driver.calibration.kind, reason: "\(driver.device) disappeared from sysfs")
            return
        }
    }

    private func stopDrivers() {
        if let presenceToken { loop.cancel(presenceToken) }
        presenceToken = nil
        let thread = sampler?.readingThread
        for driver in drivers { driver.stop() }
        drivers.removeAll()
        stoppedThreads = thread.map { [$0] } ?? []
    }

    private func becomeUnavailable(_ reason: String) {
        magnetometerDevice = nil
        gyroscopeOutputHertz = nil
        if announcedUnavailable != reason {
            logger.warning("\(reason); retrying discovery")
            announcedUnavailable = reason
            onEvent(.unavailable(reason: reason))
        }
        let delay = retryDelay
        retryDelay = min(retryDelay * 2, .seconds(4))
        retryToken = loop.schedule(after: delay) { [weak self] in self?.attemptStart() }
    }
}
