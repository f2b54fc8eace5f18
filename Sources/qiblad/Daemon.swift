// SPDX-License-Identifier: Apache-2.0
import Logging
import QiblaConfiguration
import QiblaCore
import QiblaDaemon
import QiblaDBus
import QiblaEventLoop
import QiblaGeoClue
import QiblaGPSD
import QiblaIIO
import QiblaInterface
import QiblaPlatform
import QiblaSensorProxy
import QiblaState

/// The wiring: connects the adapters (bus, gpsd, GeoClue2, IIO, iio-sensor-proxy, state files) to
/// the ``DaemonModel`` and the ``PropertyPublisher``. Every event becomes an input to the model;
/// after each, the model's properties go to the bus service and the publisher says what to signal.
/// No policy lives here: what to publish, when a fix matters, which heading source serves, how the
/// heading and its accuracy are made, which transition is worth a journal line (``DaemonLog``) is
/// decided in QiblaDaemon and QiblaCore. This file holds start and stop, requests, claims, the
/// live sources and the sample loop, publishing and reload; each outside world's wiring is an
/// extension beside it (`Daemon+PositionSources`, `Daemon+HeadingSources`, `Daemon+StateFiles`,
/// `Daemon+IdleExit`).
///
/// Confined to the event loop: run by the loop's thread, or by the sampling thread while it
/// borrows the sleeping loop (`EventLoop.runWhileAsleep`), never by two at once; other threads
/// (the state writer) reach it only through `loop.post`, hence `@unchecked Sendable`.
final class Daemon: @unchecked Sendable {
    struct Options {
        var bus: BusAddress = .session
        var stateDirectory: String
        /// The configuration files, lowest layer first (read again on SIGHUP).
        var configFiles = ConfigurationFiles(paths: [])
        var configuration = DaemonConfiguration()
        /// Command-line settings that win over the configuration file, also after a reload.
        var overrides = ConfigurationOverrides()
        /// `--location`: a manual location for this run only (not persisted).
        var runLocation: GeodeticPosition?
    }

    let loop: EventLoop
    let logger: Logger
    var options: Options
    var model: DaemonModel
    var publisher: PropertyPublisher
    let store: StateStore
    let writer: StateWriter
    var connection: DBusConnection!
    var service: BusService!
    var gpsd: GPSDPositionSource?
    var geoclue: GeoCluePositionSource?
    /// Fires once after GeoClue2 was started, to report a GeoClue2 that has not answered.
    var geoclueWaitToken: EventLoop.Token?
    var sensors: SensorHub?
    /// iio-sensor-proxy's compass, claimed while ``HeadingSourceModel/runsSensorProxy``.
    var sensorProxy: SensorProxyCompass?
    var publishRetryTimer: EventLoop.Token?
    /// Whether the sensors and the position source run (``reconcileLiveSources()``).
    var liveSourcesRunning = false
    /// The one idle-exit timer (`idle-exit`) and the delay it was armed with.
    var idleExitTimer: (token: EventLoop.Token, seconds: Double)?
    var lastKnownTimer: EventLoop.Token?
    /// The one sun timer (``armSunTimer()``) and the wall-clock time it is armed for.
    var sunTimer: (token: EventLoop.Token, dueUnixSeconds: Double)?
    let clock = ContinuousClock()
    let startInstant: ContinuousClock.Instant
    /// Which transition writes which journal line (facts once a run and on change, rate limits).
    var log = DaemonLog()
    /// The magnetometer whose calibration the model holds (name, stable sysfs location).
    var calibratedDevice: (name: String, path: String)?
    /// READY=1 and STATUS= lines for systemd (`$NOTIFY_SOCKET`).
    lazy var notifier = ServiceNotifier(environment: Environment.current, logger: logger)
    /// Gives back code pages that start-up, a claim or a release needed (issue 12, memory).
    lazy var codePages = CodePageTrimmer(loop: loop)

    /// Set when the loop should stop; the process exits with it.
    private(set) var exitStatus: Int32 = 0

    init(options: Options, loop: EventLoop, logger: Logger) {
        self.options = options
        self.loop = loop
        self.logger = logger
        model = DaemonModel(configuration: options.configuration.model)
        publisher = PropertyPublisher(configuration: options.configuration.publishing)
        store = StateStore(directory: options.stateDirectory)
        writer = StateWriter(store: store) { [loop] completion in loop.post(completion) }
        startInstant = clock.now
    }

    var monotonicSeconds: Double {
        let (seconds, attoseconds) = startInstant.duration(to: clock.now).components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }

    // MARK: Start and stop

    /// Connects, loads state and takes the bus name. Throws a message for stderr on failure.
    func start() throws(StartupError) {
        do {
            connection = try DBusConnection(options.bus)
        } catch {
            throw StartupError("cannot connect to the \(options.bus.displayName) bus: \(error.message)")
        }
        connection.attach(to: loop)
        connection.onDisconnected = { [unowned self] in
            logger.error("the D-Bus connection was lost; exiting so the service manager can restart qiblad")
            exitStatus = 1
            loop.stop()
        }
        service = BusService(connection: connection) { [unowned self] request, reply in handle(request, reply) }
        service.afterCall = { [unowned self] in
            // Unclaimed, the pages a call mapped again are given back after the burst (issue 37).
            guard !liveSourcesRunning else { return }
            codePages.trimAfterIdleCalls { [unowned self] in logger.debug("unclaimed: gave back the pages of the calls just handled") }
        }
        service.register()

        loadState()

        connection.onSignal { [unowned self] message in
            guard let name = ClaimantWatch.vanishedClient(message), model.claims.holders.contains(name) else { return }
            logger.info("client \(name) left the bus; dropping its compass claim")
            release(by: name)
        }

        let result: RequestNameResult
        do {
            result = try connection.requestName(QiblaBus.name)
        } catch {
            throw StartupError("cannot request the name \(QiblaBus.name): \(error.message)")
        }
        switch result {
        case .primaryOwner, .alreadyOwner:
            publisher.goLive()
            logger.info("qiblad \(qiblaVersion) serving \(QiblaBus.name) on the \(options.bus.displayName) bus as \(connection.uniqueName)")
            if model.liveSourcesRun { logger.info("always-on: starting sensors and position source without a claim") }
            reconcileLiveSources()
            notifier.ready(status: ServiceStatus.text(model.properties, claimed: liveSourcesRunning))
            codePages.trimAfterPendingWork()
        case .exists, .inQueue:
            throw StartupError("the name \(QiblaBus.name) is already owned on the \(options.bus.displayName) bus: another qiblad is running")
        }
    }

    /// Stops the live sources, writes state, releases the name. Safe to call twice.
    func shutdown() {
        stopLiveSources()
        writer.drain()
        flushLastKnownNow()
        if let connection {
            try? connection.releaseName(QiblaBus.name)
            connection.flush()
        }
    }

    func requestExit(status: Int32) {
        exitStatus = status
        loop.stop()
    }

    // MARK: State files

    // MARK: Requests from the bus

    func handle(_ request: ServiceRequest, _ reply: PendingReply) {
        switch request {
        case .claimCompass(let client):
            claim(by: client)
            reply.succeed()
        case .releaseCompass(let client):
            release(by: client)
            reply.succeed()
        case .setManualLocation(let position):
            let location = Location(position: position, timestampUnixSeconds: WallClock.nowUnixSeconds())
            saveManual(location, reply: reply) { [logger] in logger.info("manual location set to \(position)") }
        case .clearManualLocation:
            saveManual(nil, reply: reply) { [logger] in logger.info("manual location cleared") }
        case .qiblaFor(let position):
            let answer = model.configuration.qibla.answer(
                for: position, decimalYear: DecimalYear.from(unixSeconds: WallClock.nowUnixSeconds()))
            reply.succeed(.double(answer.bearingDegrees), .double(answer.geodesicBearingDegrees),
                          .double(answer.distanceMetres), .double(answer.declinationDegrees))
        case .resetCalibration:
            resetCalibration(reply: reply)
        case .sunPosition, .qiblaSunTimes, .kaabaSunPassages, .checkHeadingWithSun:
            handleSun(request, reply)
        }
    }

    func write(_ line: LogLine?) {
        guard let line else { return }
        let level: Logger.Level = switch line.level {
        case .debug: .debug
        case .info: .info
        case .warning: .warning
        case .error: .error
        }
        logger.log(level: level, "\(line.text)")
    }

    func write(_ lines: [LogLine]) { lines.forEach(write) }

    func claim(by client: String) {
        let isNewHolder = !model.claims.holders.contains(client)
        let transition = model.claim(by: client)
        if isNewHolder {
            ClaimantWatch.watch(client, on: connection, logger: logger) { [unowned self] in
                guard model.claims.holders.contains(client) else { return }
                logger.info("client \(client) is not on the bus any more; dropping its compass claim")
                release(by: client)
            }
        }
        if transition == .firstClaim {
            write(DaemonLog.firstClaim(by: client, alreadyRunning: liveSourcesRunning))
            reconcileLiveSources()
            notifier.update(status: ServiceStatus.text(model.properties, claimed: true))
        } else {
            logger.debug("compass claim by \(client); \(model.claims.holders.count) holder(s)")
        }
    }

    func release(by client: String) {
        if model.claims.holders.contains(client) { ClaimantWatch.unwatch(client, on: connection) }
        if model.release(by: client) == .lastRelease {
            write(DaemonLog.lastRelease(by: client, keepRunning: model.liveSourcesRun))
            reconcileLiveSources()
        }
    }

    // MARK: Live sources (while claimed, or always-on)

    /// Starts or stops the live sources as ``DaemonModel/liveSourcesRun`` says (a claim held, or
    /// `always-on`), and keeps the idle-exit timer in step with the claims.
    func reconcileLiveSources() {
        if model.liveSourcesRun != liveSourcesRunning {
            liveSourcesRunning = model.liveSourcesRun
            if liveSourcesRunning {
                startLiveSources()
                codePages.trimAfterClaimSettles()
            } else {
                stopLiveSources()
                codePages.trimAfterPendingWork()
            }
        }
        updateIdleExitTimer()
    }

    func startLiveSources() {
        startPositionSource()
        reconcileHeadingSources()
    }

    func stopLiveSources() {
        stopPositionSource()
        stopSensorProxy()
        stopSensors()
        flushLastKnownNow()
        publish()
    }

    func startSensors() {
        guard sensors == nil else { return }
        // The sampling thread hands samples over as often as the heading may be signalled.
        var configuration = options.configuration.sensors
        let publishing = options.configuration.publishing
        configuration.handOffInterval = .seconds(1 / max(1, publishing.maxSignalRateHertz))
        configuration.gyroscopeHandOffInterval = .seconds(1 / max(1, publishing.fusedMaxSignalRateHertz))
        let hub = SensorHub(configuration: configuration, loop: loop, logger: logger) { [unowned self] event in
            handle(event)
        }
        sensors = hub
        hub.start()
    }

    func stopSensors() {
        sensors?.stop()
        sensors = nil
        model.apply(.stopped, nowUnixSeconds: WallClock.nowUnixSeconds())
    }

    func handle(_ event: SensorEvent) {
        let now = WallClock.nowUnixSeconds()
        switch event {
        case .available(let magnetometer, let accelerometer, let gyroscope):
            let serving = model.headingSource.serving
            write(log.sensorsFound(magnetometer: "\(magnetometer)", accelerometer: accelerometer.map { "\($0)" },
                                   gyroscope: gyroscope.map { "\($0)" }))
            if let device = sensors?.magnetometerDevice { magnetometerAppeared(device, now: now) }
            model.apply(.sensorsAvailable(hasAccelerometer: accelerometer != nil, hasGyroscope: gyroscope != nil,
                                          gyroscopeOutputHertz: sensors?.gyroscopeOutputHertz),
                        nowUnixSeconds: now)
            headingSourceInputApplied(servingBefore: serving)
        case .unavailable(let reason):
            let serving = model.headingSource.serving
            write(log.noCompass("\(reason)"))
            model.apply(.sensorsUnavailable, nowUnixSeconds: now)
            headingSourceInputApplied(servingBefore: serving)
        case .droppedValue(let count):
            write(log.droppedValues(count: count, nowSeconds: monotonicSeconds))
            return
        case .resting(let resting):
            // At rest only the sensors' reads run; the pages the heading's path needed go back
            // (they come back with the first sample that moves).
            // The periods read since the sensors started (polling): how soon a claim's first rest
            // came (RestingTests).
            let periods = sensors?.polledPeriods ?? 0
            let rereads = sensors?.polledNearMotionRereads ?? 0
            logger.debug(resting ? "the phone rests after \(periods) periods read: reading the sensors at the rest rate"
                : "the phone moves: full rate (\(rereads) rest reads near motion read again at once so far)")
            if resting { codePages.trimAtRest() }
            return
        case .samples(var samples):
            let previousRejection = model.compass.lastRejection
            let before = model.compass.state
            defer { noteCalibrationChanges(from: before) }
            samples.orderGyroscopeFirstWithinInstants()
            for sample in samples {
                let time = Double(sample.timestampNanoseconds) / 1e9
                switch sample.kind {
                case .accelerometer where sample.meanOfSamples > 1:
                    model.apply(.meanAcceleration(sample.vector, timeSeconds: time, samples: sample.meanOfSamples), nowUnixSeconds: now)
                case .accelerometer: model.apply(.acceleration(sample.vector, timeSeconds: time), nowUnixSeconds: now)
                case .magnetometer where sample.meanOfSamples > 1:
                    model.apply(.meanMagneticField(sample.vector, timeSeconds: time, samples: sample.meanOfSamples), nowUnixSeconds: now)
                case .magnetometer: model.apply(.magneticField(sample.vector, timeSeconds: time), nowUnixSeconds: now)
                case .gyroscope: model.apply(.angularVelocity(sample.vector, timeSeconds: time), nowUnixSeconds: now)
                }
            }
            if let rejection = model.compass.lastRejection, rejection != previousRejection {
                logger.debug("sample rejected: \(rejection)")
            }
        }
        publish()
    }

    // MARK: Publishing

    /// Hands the model's properties to the bus service and sends what the publisher says is due.
    func publish() {
        let properties = Self.properties(of: &model)
        service?.properties = properties
        let emission = publisher.update(properties, nowSeconds: monotonicSeconds)
        notifier.update(summary: ServiceStatus.Summary(properties, claimed: liveSourcesRunning))
        do {
            try service?.emitPropertiesChanged(emission.immediate)
            try service?.emitPropertiesChanged(emission.heading)
        } catch {
            logger.error("could not build PropertiesChanged: \(error)")
        }
        if let delay = emission.retryAfterSeconds, publishRetryTimer == nil {
            publishRetryTimer = loop.schedule(after: .seconds(delay)) { [unowned self] in
                publishRetryTimer = nil
                publish()
            }
        }
        armSunTimer()
    }

    /// `model.properties`, read in place: the getter called on the model stored in this class
    /// would first copy the whole model (its calibration and smoothing buffers retained and
    /// released, kilobytes moved) once per publish; an `inout` access lends the stored model.
    static func properties(of model: inout DaemonModel) -> PublishedProperties { model.properties }

    // MARK: Sun

    /// Keeps the one sun timer armed for ``SunModel/wakeUpUnixSeconds`` (the next Qibla-sun instant,
    /// or the end of a window that held none); no timer while the model waits for nothing.
    func armSunTimer() {
        let due = model.sun.wakeUpUnixSeconds
        if let timer = sunTimer {
            if timer.dueUnixSeconds == due { return }
            loop.cancel(timer.token)
            sunTimer = nil
        }
        guard let due else { return }
        let delay = max(0, due - WallClock.nowUnixSeconds())
        let token = loop.schedule(after: .seconds(delay)) { [unowned self] in
            sunTimer = nil
            model.updateSun(nowUnixSeconds: WallClock.nowUnixSeconds())
            publish()
        }
        sunTimer = (token, due)
    }

    /// The sun's calculators (answered by the model) and the sun check (stored when asked).
    func handleSun(_ request: ServiceRequest, _ reply: PendingReply) {
        let now = WallClock.nowUnixSeconds()
        switch request {
        case .sunPosition(let position, let time):
            switch model.sunPosition(at: position, unixSeconds: time) {
            case .success(let sun): reply.succeed(.double(sun.azimuthDegrees), .double(sun.elevationDegrees))
            case .failure(let refusal): reply.fail(ServiceError(.invalidArgument, refusal.description))
            }
        case .qiblaSunTimes(let position, let start):
            switch model.qiblaSunTimes(at: position, from: start, nowUnixSeconds: now) {
            case .success(let events):
                reply.succeed(.array(elementSignature: "(tsd)", events.map {
                    .structure([.uint64(SunModel.busMicroseconds($0.unixSeconds)), .string($0.kind.rawValue), .double($0.elevationDegrees)])
                }))
            case .failure(let refusal): reply.fail(ServiceError(.invalidArgument, refusal.description))
            }
        case .kaabaSunPassages(let year):
            reply.succeed(.array(elementSignature: "(ts)", model.kaabaSunPassages(year: year).map {
                .structure([.uint64(SunModel.busMicroseconds($0.unixSeconds)), .string($0.kind.rawValue)])
            }))
        case .checkHeadingWithSun(let alignment, let keep):
            switch model.checkHeadingWithSun(alignment: alignment, nowUnixSeconds: now) {
            case .failure(let refusal):
                reply.fail(ServiceError(.notAvailable, refusal.description))
            case .success(let error):
                logger.info("sun check (\(alignment.rawValue)): the compass is off by \(error)°\(keep ? "; storing the correction" : "")")
                guard keep else { reply.succeed(.double(error)); return }
                storeHeadingCorrection(afterCheckFound: error, reply: reply)
            }
        default:
            return
        }
    }

    // MARK: Configuration reload (SIGHUP)

    /// Rereads the configuration files; restarts only the live sources whose section changed, and
    /// starts or stops them when `always-on` changed (`idle-exit` re-arms its timer).
    func reloadConfiguration() {
        switch ConfigurationLoader.load(options.configFiles, logger: logger) {
        case .failure(let message):
            logger.error("configuration reload failed, keeping the previous settings: \(message)")
        case .success(var new):
            options.overrides.apply(to: &new)
            let old = options.configuration
            options.configuration = new
            logger.info("configuration reloaded")
            let wasRunning = liveSourcesRunning
            publisher.configuration = new.publishing
            model.reconfigure(new.model, nowUnixSeconds: WallClock.nowUnixSeconds())
            reconcileLiveSources()
            if liveSourcesRunning != wasRunning {
                logger.info(liveSourcesRunning ? "always-on: starting sensors and position source without a claim"
                                               : "always-on off and no claim: stopping sensors and position source")
            }
            if wasRunning && liveSourcesRunning {
                if new.gpsd != old.gpsd || new.positionSource != old.positionSource { stopPositionSource(); startPositionSource() }
                if new.sensors != old.sensors || new.model.headingSource != old.model.headingSource {
                    stopSensorProxy()
                    stopSensors()
                    reconcileHeadingSources()
                }
            }
            publish()
        }
    }
}

struct StartupError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension BusAddress {
    var displayName: String {
        switch self {
        case .session: "session"
        case .system: "system"
        case .address(let a): a
        }
    }
}
