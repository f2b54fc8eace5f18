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
import QiblaState

/// The wiring: connects the adapters (bus, gpsd, IIO, state files) to the ``DaemonModel`` and the
/// ``PropertyPublisher``. Every event becomes an input to the model; after each, the model's
/// properties go to the bus service and the publisher says what to signal. No policy lives here:
/// what to publish, when a fix matters, how the heading and its accuracy are made is decided in
/// QiblaDaemon and QiblaCore.
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
    private var options: Options
    private var model: DaemonModel
    private var publisher: PropertyPublisher
    private let store: StateStore
    private let writer: StateWriter
    private var connection: DBusConnection!
    private var service: BusService!
    private var gpsd: GPSDPositionSource?
    private var geoclue: GeoCluePositionSource?
    /// GeoClue2's refusal is logged with its fix once per run, then at debug level.
    private var geoclueDenialLogged = false
    /// Fires once after GeoClue2 was started, to report a GeoClue2 that has not answered.
    private var geoclueWaitToken: EventLoop.Token?
    private var sensors: SensorHub?
    private var publishRetryTimer: EventLoop.Token?
    /// Whether the sensors and the position source run (``reconcileLiveSources()``).
    private var liveSourcesRunning = false
    /// The one idle-exit timer (`idle-exit`) and the delay it was armed with.
    private var idleExitTimer: (token: EventLoop.Token, seconds: Double)?
    private var lastKnownTimer: EventLoop.Token?
    /// The one sun timer (``armSunTimer()``) and the wall-clock time it is armed for.
    private var sunTimer: (token: EventLoop.Token, dueUnixSeconds: Double)?
    private let clock = ContinuousClock()
    private let startInstant: ContinuousClock.Instant
    private var droppedValues = 0
    /// Hardware facts already logged this run (topic → line): repeated at debug only.
    private var loggedFacts: [String: String] = [:]
    private var lastDroppedValueSeconds = -Double.infinity
    /// The magnetometer whose calibration the model holds (name, stable sysfs location).
    private var calibratedDevice: (name: String, path: String)?
    /// Monotonic time of the last "not yet calibrated, because …" line (at most one a minute).
    private var lastCalibrationReasonLogSeconds = -Double.infinity
    private var loggedRefinements = 0
    /// READY=1 and STATUS= lines for systemd (`$NOTIFY_SOCKET`).
    private lazy var notifier = ServiceNotifier(environment: Environment.current, logger: logger)
    /// Gives back code pages that start-up, a claim or a release needed (issue 12, memory).
    private lazy var codePages = CodePageTrimmer(loop: loop)

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

    private var monotonicSeconds: Double {
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

    private func loadState() {
        do { try store.prepare() } catch {
            logger.warning("state directory \(store.directory) is not usable (\(error)); changes will not persist")
        }
        func load(_ file: String) -> Location? {
            switch store.loadLocation(file) {
            case .success(let location): return location
            case .failure(let problem):
                logger.error("state file rejected: \(problem); starting without it")
                return nil
            }
        }
        var manual = load(StateStore.manualLocationFile)
        let lastKnown = load(StateStore.lastKnownLocationFile)
        let now = WallClock.nowUnixSeconds()
        if let runLocation = options.runLocation {
            manual = Location(position: runLocation, timestampUnixSeconds: now)
            logger.info("manual location for this run: \(runLocation)")
        }
        model.apply(.restored(manual: manual, lastKnown: lastKnown), nowUnixSeconds: now)
        publish()
    }

    /// Persists the last known location at most once a minute while fixes arrive, and on exit.
    private func scheduleLastKnownWrite() {
        guard lastKnownTimer == nil, model.location.lastKnownIsUnsaved else { return }
        lastKnownTimer = loop.schedule(after: .seconds(60)) { [unowned self] in
            lastKnownTimer = nil
            guard model.location.lastKnownIsUnsaved, let location = model.location.lastKnown else { return }
            writer.saveLocation(location, as: StateStore.lastKnownLocationFile) { [unowned self] result in
                switch result {
                case .success: model.apply(.lastKnownSaved(location), nowUnixSeconds: WallClock.nowUnixSeconds())
                case .failure(let error):
                    logger.error("cannot write the last known location to \(store.directory): \(error)")
                }
            }
        }
    }

    /// Writes the last known location now, on this thread (at stop and exit).
    private func flushLastKnownNow() {
        if let token = lastKnownTimer { loop.cancel(token); lastKnownTimer = nil }
        guard model.location.lastKnownIsUnsaved, let location = model.location.lastKnown else { return }
        do {
            try store.saveLocation(location, as: StateStore.lastKnownLocationFile)
            model.apply(.lastKnownSaved(location), nowUnixSeconds: WallClock.nowUnixSeconds())
        } catch {
            logger.error("cannot write the last known location to \(store.directory): \(error)")
        }
    }

    // MARK: Requests from the bus

    private func handle(_ request: ServiceRequest, _ reply: PendingReply) {
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

    /// Writes the manual location file on the writer's thread; the model changes and the caller is
    /// answered only once the file is safely written.
    private func saveManual(_ location: Location?, reply: PendingReply, then log: @escaping @Sendable () -> Void) {
        writer.saveLocation(location, as: StateStore.manualLocationFile) { [unowned self] result in
            switch result {
            case .success:
                log()
                model.apply(.manualSet(location), nowUnixSeconds: WallClock.nowUnixSeconds())
                publish()
                reply.succeed()
            case .failure(let error):
                reply.fail(.failed("cannot save the manual location in \(store.directory): \(error)"))
            }
        }
    }

    /// Forgets the calibration of the magnetometer in use (or, unclaimed, of the one discovery finds
    /// now) and its file; answered once the file is gone.
    private func resetCalibration(reply: PendingReply) {
        let device = calibratedDevice ?? discoverMagnetometer().map { (name: $0.name, path: $0.stableLocation) }
        guard let device else {
            reply.fail(ServiceError(.notSupported, "there is no magnetometer to calibrate"))
            return
        }
        writer.removeCalibration(deviceName: device.name, devicePath: device.path) { [unowned self] result in
            switch result {
            case .success:
                logger.info("calibration of \(device.name) reset; learning it again")
                model.apply(.resetCalibration, nowUnixSeconds: WallClock.nowUnixSeconds())
                forgetHeadingCorrection(of: device)
                publish()
                reply.succeed()
            case .failure(let error):
                reply.fail(.failed("cannot remove the calibration file in \(store.directory): \(error)"))
            }
        }
    }

    private func discoverMagnetometer() -> IIODevice? {
        let sensors = options.configuration.sensors
        return discoverSensors(sysfsRoot: sensors.sysfsRoot, preferredMagnetometerName: sensors.preferredMagnetometerName,
                               preferredAccelerometerName: sensors.preferredAccelerometerName).magnetometer.device
    }

    /// A magnetometer appeared: when it is not the one the model's calibration belongs to, start
    /// over and restore its own stored calibration, if any.
    private func magnetometerAppeared(_ device: IIODevice, now: Double) {
        let identity = (name: device.name, path: device.stableLocation)
        if let current = calibratedDevice, current == identity { return }
        calibratedDevice = identity
        model.apply(.resetCalibration, nowUnixSeconds: now)
        restoreHeadingCorrection(of: identity, now: now)
        switch store.loadCalibration(deviceName: identity.name, devicePath: identity.path) {
        case .success(let stored?):
            let b = stored.fit.hardIronOffsetMicrotesla.length
            logger.info("restored the calibration of \(device) (|b| \(b) µT, residual \(stored.fit.residualRMSMicrotesla) µT); trusted once live data confirms it")
            model.apply(.restoreCalibration(stored.fit), nowUnixSeconds: now)
        case .success(nil):
            logger.info("no stored calibration for \(device); learning it while the compass is used")
        case .failure(let problem):
            logger.error("calibration file rejected: \(problem); learning it again")
        }
    }

    /// Writes a newly accepted fit, and logs calibration and interference changes (one line each).
    private func noteCalibrationChanges(from before: CompassState) {
        let after = model.compass.state
        if after.calibrationState != before.calibrationState {
            switch after.calibrationState {
            case .calibrated where before.calibrationState == .unvalidated:
                logger.info("the stored calibration matches live data")
            case .calibrated:
                let calibrator = model.compass.calibrator
                let line = "calibration accepted (\(after.calibrationStage.rawValue)): |b| \(Self.rounded(after.hardIronOffsetMagnitudeMicrotesla)) µT, "
                    + "residual \(Self.rounded(after.calibrationResidualMicrotesla)) µT, "
                    + "heading sigma \(Self.rounded(calibrator.lastWorstHeadingSigmaDegrees))° at 30° of tilt"
                logger.info("\(line)")
                loggedRefinements = calibrator.refinementCount
            case .collecting:
                logger.warning("the calibration no longer matches live data (another sensor, or a magnet nearby); learning it again")
            case .unvalidated:
                break
            }
        }
        if after.magneticInterference != before.magneticInterference {
            logger.info(after.magneticInterference ? "magnetic interference: the field does not match the Earth's field here"
                                                    : "magnetic interference over")
        }
        if after.calibrationNeeded != before.calibrationNeeded, after.calibrationNeeded {
            logger.info("the magnetometer needs calibrating: move the phone slowly in a figure eight")
        }
        let calibrator = model.compass.calibrator
        if after.calibrationState == .calibrated, calibrator.refinementCount > loggedRefinements {
            loggedRefinements = calibrator.refinementCount
            let line = "calibration refined (\(after.calibrationStage.rawValue)): |b| \(Self.rounded(after.hardIronOffsetMagnitudeMicrotesla)) µT, "
                + "heading sigma \(Self.rounded(calibrator.lastWorstHeadingSigmaDegrees))° at 30° of tilt"
            logger.info("\(line)")
        }
        // While collecting, at most once a minute: why the samples are not enough yet.
        if after.calibrationState == .collecting, after.hasCompass, let reason = calibrator.lastRejection,
           monotonicSeconds - lastCalibrationReasonLogSeconds >= 60 {
            lastCalibrationReasonLogSeconds = monotonicSeconds
            let provisional = calibrator.isProvisional ? "; a provisional calibration steers the needle" : ""
            logger.info("calibrating (\(Int((after.calibrationProgress * 100).rounded())) %): \(reason)\(provisional); hint: \(after.calibrationHint.rawValue)")
        }
        if let (fit, generation) = model.compass.fitToPersist, let device = calibratedDevice {
            model.apply(.calibrationPersisted(generation: generation), nowUnixSeconds: WallClock.nowUnixSeconds())
            let stored = StoredCalibration(deviceName: device.name, devicePath: device.path, fit: fit,
                                           timestampUnixSeconds: WallClock.nowUnixSeconds())
            writer.saveCalibration(stored) { [logger, store] result in
                if case .failure(let error) = result {
                    logger.error("cannot save the calibration in \(store.directory): \(error)")
                }
            }
        }
    }

    /// Logs a fact at `level` the first time in a run and when it changes, at debug when it repeats
    /// (each claim restarts the sensors; a client claiming on every screen-on must not fill the journal).
    private func noteFact(_ topic: String, _ line: String, level: Logger.Level = .info) {
        if loggedFacts[topic] == line {
            logger.debug("\(line)")
        } else {
            loggedFacts[topic] = line
            logger.log(level: level, "\(line)")
        }
    }

    /// One decimal, for log lines.
    private static func rounded(_ x: Double) -> String {
        x.isFinite ? String(Double(Int((x * 10).rounded())) / 10) : "-"
    }

    private func claim(by client: String) {
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
            logger.info("first compass claim (\(client)); \(liveSourcesRunning ? "sensors and position source already running (always-on)" : "starting sensors and position source")")
            reconcileLiveSources()
            notifier.update(status: ServiceStatus.text(model.properties, claimed: true))
        } else {
            logger.debug("compass claim by \(client); \(model.claims.holders.count) holder(s)")
        }
    }

    private func release(by client: String) {
        if model.claims.holders.contains(client) { ClaimantWatch.unwatch(client, on: connection) }
        if model.release(by: client) == .lastRelease {
            logger.info("last compass claim released (\(client)); \(model.liveSourcesRun ? "sensors and position source keep running (always-on)" : "stopping sensors and position source")")
            reconcileLiveSources()
        }
    }

    // MARK: Live sources (while claimed, or always-on)

    /// Starts or stops the live sources as ``DaemonModel/liveSourcesRun`` says (a claim held, or
    /// `always-on`), and keeps the idle-exit timer in step with the claims.
    private func reconcileLiveSources() {
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

    /// Arms, keeps or cancels the one-shot idle-exit timer as ``RunPolicy`` says: armed while
    /// nobody holds a claim, it wakes the loop once, to exit with status 0.
    private func updateIdleExitTimer() {
        let policy = model.configuration.run
        switch policy.idleTimerAction(armedSeconds: idleExitTimer?.seconds, claimed: model.claims.isClaimed) {
        case .keep:
            return
        case .cancel:
            if let timer = idleExitTimer { loop.cancel(timer.token) }
            idleExitTimer = nil
        case .arm(let seconds):
            if let timer = idleExitTimer { loop.cancel(timer.token) }
            let token = loop.schedule(after: .seconds(seconds)) { [unowned self] in
                idleExitTimer = nil
                guard model.configuration.run.idleExitDelaySeconds(claimed: model.claims.isClaimed) != nil else { return }
                leaveForIdleExit(after: seconds)
            }
            idleExitTimer = (token, seconds)
        }
    }

    /// Exits for `idle-exit` without losing a call: the name is released first (a round trip, so
    /// every call sent to it before then is already queued here), the loop serves what is queued,
    /// and only then qiblad exits — unless one of those calls was a claim, in which case it takes
    /// the name back and stays (the pattern of systemd's `bus_event_loop_with_idle`).
    private func leaveForIdleExit(after seconds: Double) {
        logger.info("no compass claim for \(seconds) s; releasing \(QiblaBus.name) (idle-exit)")
        do { try connection.releaseName(QiblaBus.name) } catch {
            logger.warning("cannot release \(QiblaBus.name) (\(error.message)); exiting anyway")
        }
        // A zero-delay timer runs after the loop has dispatched what is queued (before it sleeps).
        loop.schedule(after: .zero) { [unowned self] in
            guard model.claims.isClaimed else {
                logger.info("exiting (idle-exit)")
                requestExit(status: 0)
                return
            }
            switch try? connection.requestName(QiblaBus.name) {
            case .primaryOwner?, .alreadyOwner?:
                logger.info("a compass claim arrived while leaving; keeping \(QiblaBus.name) and staying (idle-exit cancelled)")
            default:
                logger.info("a compass claim arrived while leaving, but another qiblad owns \(QiblaBus.name) now; exiting (idle-exit)")
                requestExit(status: 0)
            }
        }
    }

    private func startLiveSources() {
        startPositionSource()
        startSensors()
    }

    private func stopLiveSources() {
        stopPositionSource()
        stopSensors()
        flushLastKnownNow()
        publish()
    }

    /// Starts the live position sources `location-source` names, all at once (`auto`: GeoClue2 and
    /// gpsd; the model publishes the better fix).
    private func startPositionSource() {
        let selection = options.configuration.positionSource
        for source in selection.sourcesToStart(gpsdConfigured: options.configuration.gpsd != nil) {
            switch source {
            case .geoclue: startGeoClue()
            case .gpsd: startGPSD()
            }
        }
    }

    private func startGPSD() {
        guard gpsd == nil, let configuration = options.configuration.gpsd else { return }
        let source = GPSDPositionSource(configuration: configuration, loop: loop, logger: logger) { [unowned self] event in
            handle(event)
        }
        gpsd = source
        sourceState(.gpsd, .waiting)
        source.start()
    }

    private func startGeoClue() {
        guard geoclue == nil else { return }
        let selection = options.configuration.positionSource
        let source = GeoCluePositionSource(configuration: selection.geoclue, whenMissing: selection.whenGeoClueIsMissing,
                                           loop: loop, logger: logger) { [unowned self] event in
            handle(event)
        }
        geoclue = source
        sourceState(.geoclue, .waiting)
        source.start()
        // GeoClue 2.6 holds CreateClient without a limit while no agent runs for this user: say so
        // once, while gpsd (in auto) serves meanwhile.
        if let token = geoclueWaitToken { loop.cancel(token) }
        geoclueWaitToken = loop.schedule(after: .seconds(Self.geoclueWaitSeconds)) { [unowned self] in
            geoclueWaitToken = nil
            guard geoclue != nil, model.location.sourceStates[.geoclue] == .waiting else { return }
            noteFact("geoclue-wait", "GeoClue2 has not answered in \(Int(Self.geoclueWaitSeconds)) s: no GeoClue agent for uid "
                     + "\(Environment.userID)? (GeoClue 2.6 waits for one without a limit; see README, Position sources)"
                     + (gpsd != nil ? "; gpsd serves meanwhile" : ""))
        }
    }

    /// Seconds after which a GeoClue2 that has not answered is reported (once a run).
    static let geoclueWaitSeconds = 5.0

    private func stopPositionSource() {
        gpsd?.stop()
        gpsd = nil
        geoclue?.stop()
        geoclue = nil
        if let token = geoclueWaitToken { loop.cancel(token) }
        geoclueWaitToken = nil
        // Without a position source the published values stay at the last fix, as last known.
        model.apply(.liveFixLost, nowUnixSeconds: WallClock.nowUnixSeconds())
    }

    /// GeoClue2 cannot serve this claim: gpsd serves alone when it runs (`auto`), else
    /// manual/last-known only. Returns what happens next, for the caller's one log line.
    private func leaveGeoClue(_ state: LiveSourceState) -> String {
        geoclue?.stop()
        geoclue = nil
        sourceState(.geoclue, state)
        return gpsd != nil ? "using gpsd" : "no live position (manual or last known location only)"
    }

    private func sourceState(_ source: LocationModel.LiveSource, _ state: LiveSourceState) {
        guard model.location.sourceStates[source] != state else { return }
        let before = model.location.liveSource
        model.apply(.sourceState(source, state), nowUnixSeconds: WallClock.nowUnixSeconds())
        noteLiveSourceChange(from: before)
        publish()
    }

    private func startSensors() {
        guard sensors == nil else { return }
        // The sampling thread hands samples over as often as the heading may be signalled.
        var configuration = options.configuration.sensors
        configuration.handOffInterval = .seconds(1 / max(1, options.configuration.publishing.maxSignalRateHertz))
        let hub = SensorHub(configuration: configuration, loop: loop, logger: logger) { [unowned self] event in
            handle(event)
        }
        sensors = hub
        hub.start()
    }

    private func stopSensors() {
        sensors?.stop()
        sensors = nil
        model.apply(.stopped, nowUnixSeconds: WallClock.nowUnixSeconds())
    }

    private func handle(_ event: GPSDEvent) {
        switch event {
        case .connected:
            sourceState(.gpsd, .noFix)
        case .fixLost:
            sourceLost(.gpsd)
        case .disconnected:
            sourceLost(.gpsd)
            sourceState(.gpsd, .waiting)
        case .fix(let fix):
            liveFix(Location(position: fix.position, horizontalAccuracyMetres: fix.horizontalAccuracyMetres,
                             timestampUnixSeconds: fix.timeUnixSeconds, hasHeight: fix.hasAltitude), from: .gpsd)
        }
    }

    private func handle(_ event: GeoClueEvent) {
        switch event {
        case .started:
            if model.location.sourceStates[.geoclue] != .live { sourceState(.geoclue, .noFix) }
        case .fixLost:
            sourceLost(.geoclue)
        case .fix(let fix):
            liveFix(Location(position: fix.position, horizontalAccuracyMetres: fix.horizontalAccuracyMetres,
                             timestampUnixSeconds: fix.timeUnixSeconds ?? WallClock.nowUnixSeconds(),
                             hasHeight: fix.hasAltitude), from: .geoclue)
        case .unavailable(let reason, let retrying):
            // The source logs and retries; without retrying, GeoClue2 is not there for this claim.
            if retrying {
                sourceLost(.geoclue)
                sourceState(.geoclue, .waiting)
            } else {
                noteFact("geoclue", "GeoClue2 is not available (\(reason)); \(leaveGeoClue(.absent))")
            }
        case .accessDenied(let message):
            let line = GeoClueAuthorization.hint(desktopId: options.configuration.positionSource.geoclue.desktopId,
                                                 refusal: message) + "; meanwhile \(leaveGeoClue(.refused))"
            if geoclueDenialLogged { logger.debug("\(line)") } else { logger.warning("\(line)") }
            geoclueDenialLogged = true
        }
    }

    private func liveFix(_ location: Location, from source: LocationModel.LiveSource) {
        let before = model.location.liveSource
        model.apply(.liveFix(location, from: source), nowUnixSeconds: WallClock.nowUnixSeconds())
        noteLiveSourceChange(from: before)
        scheduleLastKnownWrite()
        publish()
    }

    /// One source lost its fix or its connection: another takes over, or the fallback.
    private func sourceLost(_ source: LocationModel.LiveSource) {
        guard model.location.sourceFixes[source] != nil else { return }
        let before = model.location.liveSource
        model.apply(.sourceLost(source), nowUnixSeconds: WallClock.nowUnixSeconds())
        noteLiveSourceChange(from: before)
        scheduleLastKnownWrite()
        publish()
    }

    /// One log line when the published live source changes.
    private func noteLiveSourceChange(from before: LocationModel.LiveSource?) {
        let after = model.location.liveSource
        guard after != before else { return }
        if let after, let fix = model.location.liveFix {
            let accuracy = fix.horizontalAccuracyMetres.map { ", ±\(Int($0.rounded())) m" } ?? ""
            logger.info("live fix from \(after.rawValue)\(accuracy)\(before.map { " (was \($0.rawValue))" } ?? ""): \(fix.position)")
        } else if before != nil {
            logger.info("live fix lost; falling back to \(model.location.manual != nil ? "the manual" : "the last known") location")
        }
    }

    private func handle(_ event: SensorEvent) {
        let now = WallClock.nowUnixSeconds()
        switch event {
        case .available(let magnetometer, let accelerometer):
            if let accelerometer {
                noteFact("compass", "compass: magnetometer \(magnetometer), accelerometer \(accelerometer)")
            } else {
                noteFact("compass", "magnetometer \(magnetometer) found but no accelerometer: a heading needs both (tilt compensation)",
                         level: .warning)
            }
            if let device = sensors?.magnetometerDevice { magnetometerAppeared(device, now: now) }
            model.apply(.sensorsAvailable(hasAccelerometer: accelerometer != nil), nowUnixSeconds: now)
        case .unavailable(let reason):
            noteFact("compass", "no compass: \(reason)")
            model.apply(.sensorsUnavailable, nowUnixSeconds: now)
        case .droppedValue(let count):
            droppedValues = count
            // One line when values start being rejected (after 30 s without), the rest at debug.
            let seconds = monotonicSeconds
            if seconds - lastDroppedValueSeconds > 30 {
                logger.warning("rejecting sensor values that are not a raw count an IIO channel can hold (or unreadable); \(count) so far")
            } else {
                logger.debug("rejected sensor values; \(count) so far")
            }
            lastDroppedValueSeconds = seconds
            return
        case .resting(let resting):
            // At rest only the sensors' reads run; the pages the heading's path needed go back
            // (they come back with the first sample that moves).
            logger.debug(resting ? "the phone rests: reading the sensors at the rest rate" : "the phone moves: full rate")
            if resting { codePages.trimAfterPendingWork() }
            return
        case .samples(let samples):
            let previousRejection = model.compass.lastRejection
            let before = model.compass.state
            defer { noteCalibrationChanges(from: before) }
            for sample in samples {
                switch sample.kind {
                case .accelerometer:
                    model.apply(.acceleration(sample.vector, timeSeconds: Double(sample.timestampNanoseconds) / 1e9), nowUnixSeconds: now)
                case .magnetometer:
                    model.apply(.magneticField(sample.vector, timeSeconds: Double(sample.timestampNanoseconds) / 1e9),
                                nowUnixSeconds: now)
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
    private func publish() {
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
    private static func properties(of model: inout DaemonModel) -> PublishedProperties { model.properties }

    // MARK: Sun

    /// Keeps the one sun timer armed for ``SunModel/wakeUpUnixSeconds`` (the next Qibla-sun instant,
    /// or the end of a window that held none); no timer while the model waits for nothing.
    private func armSunTimer() {
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

    /// The sun's calculators and the sun check.
    private func handleSun(_ request: ServiceRequest, _ reply: PendingReply) {
        let now = WallClock.nowUnixSeconds()
        switch request {
        case .sunPosition(let position, let time):
            guard let sun = SolarPositionAlgorithm.position(at: time, for: position) else {
                reply.fail(ServiceError(.invalidArgument, "the time is outside the solar model's range"))
                return
            }
            reply.succeed(.double(sun.azimuthDegrees), .double(sun.elevationDegrees))
        case .qiblaSunTimes(let position, let start):
            let bearing = model.configuration.qibla.answer(for: position, decimalYear: DecimalYear.from(unixSeconds: now)).bearingDegrees
            var events: [QiblaSunEvent] = []
            if bearing.isFinite {
                guard let times = QiblaSunSearch(minimumElevationDegrees: model.sun.configuration.minimumElevationDegrees)
                    .times(at: position, qiblaBearingDegrees: bearing, from: start) else {
                    reply.fail(ServiceError(.invalidArgument, "the 24 hours from start leave the solar model's range (1900 to 2149)"))
                    return
                }
                events = times.events
            }
            reply.succeed(.array(elementSignature: "(tsd)", events.map {
                .structure([.uint64(SunModel.busMicroseconds($0.unixSeconds)), .string($0.kind.rawValue), .double($0.elevationDegrees)])
            }))
        case .kaabaSunPassages(let year):
            let passages = KaabaSunPassages.passages(year: year, kaaba: model.configuration.qibla.kaaba) ?? []
            reply.succeed(.array(elementSignature: "(ts)", passages.map {
                .structure([.uint64(SunModel.busMicroseconds($0.unixSeconds)), .string($0.kind.rawValue)])
            }))
        case .checkHeadingWithSun(let alignment, let keep):
            switch model.checkHeadingWithSun(alignment: alignment, nowUnixSeconds: now) {
            case .failure(let refusal):
                reply.fail(ServiceError(.notAvailable, refusal.description))
            case .success(let error):
                logger.info("sun check (\(alignment.rawValue)): the compass is off by \(error)°\(keep ? "; storing the correction" : "")")
                guard keep else { reply.succeed(.double(error)); return }
                guard let device = calibratedDevice else {
                    reply.fail(ServiceError(.notAvailable, "no magnetometer to keep a correction for"))
                    return
                }
                let correction = model.headingCorrection(afterStoring: error)
                let stored = StoredHeadingCorrection(deviceName: device.name, devicePath: device.path,
                                                     correctionDegrees: correction, timestampUnixSeconds: now)
                writer.saveHeadingCorrection(stored) { [unowned self] result in
                    switch result {
                    case .success:
                        model.apply(.headingCorrection(correction), nowUnixSeconds: WallClock.nowUnixSeconds())
                        publish()
                        reply.succeed(.double(error))
                    case .failure(let problem):
                        reply.fail(.failed("cannot save the heading correction in \(store.directory): \(problem)"))
                    }
                }
            }
        default:
            return
        }
    }

    /// A magnetometer appeared: use its stored heading correction, if any.
    private func restoreHeadingCorrection(of device: (name: String, path: String), now: Double) {
        switch store.loadHeadingCorrection(deviceName: device.name, devicePath: device.path) {
        case .success(let stored?):
            logger.info("restored the sun-check heading correction of \(device.name): \(stored.correctionDegrees)°")
            model.apply(.headingCorrection(stored.correctionDegrees), nowUnixSeconds: now)
        case .success(nil):
            model.apply(.headingCorrection(nil), nowUnixSeconds: now)
        case .failure(let problem):
            logger.error("heading correction file rejected: \(problem)")
            model.apply(.headingCorrection(nil), nowUnixSeconds: now)
        }
    }

    /// `ResetCalibration`: the sun-check correction goes with the calibration.
    private func forgetHeadingCorrection(of device: (name: String, path: String)) {
        model.apply(.headingCorrection(nil), nowUnixSeconds: WallClock.nowUnixSeconds())
        writer.removeHeadingCorrection(deviceName: device.name, devicePath: device.path) { [logger, store] result in
            if case .failure(let error) = result {
                logger.error("cannot remove the heading correction file in \(store.directory): \(error)")
            }
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
                if new.sensors != old.sensors { stopSensors(); startSensors() }
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
