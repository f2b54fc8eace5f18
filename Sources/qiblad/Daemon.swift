import Logging
import QiblaCore
import QiblaDBus
import QiblaEventLoop
import QiblaGPSD
import QiblaIIO
import QiblaState

/// Everything the daemon knows, owned by the event-loop thread: the published properties, the
/// claims, the location inputs and the live sources. It only wires adapters to QiblaCore; every
/// formula lives in QiblaCore and every byte of I/O in an adapter.
final class Daemon {
    struct Options {
        var bus: BusAddress = .session
        var stateDirectory: String
        var configPath: String?
        var configuration = DaemonConfiguration()
        var runLocation: GeodeticPosition?
        var sensorConfiguration: SensorConfiguration
        /// Command-line settings that win over the configuration file, also after a reload.
        var overrides = ConfigurationOverrides()
    }

    let loop: EventLoop
    let logger: Logger
    private(set) var options: Options
    private let store: StateStore
    private var connection: DBusConnection!
    private var service: QiblaService!

    private(set) var properties = PublishedProperties()
    /// What clients have been told, per property name.
    private var emitted: [String: DBusValue] = [:]
    private var headingFlushTimer: EventLoop.Token?
    private var lastHeadingEmission: ContinuousClock.Instant?
    private let clock = ContinuousClock()

    private var claims = ClaimTracker()
    private var locations = LocationResolver()
    private var gpsd: GPSDPositionSource?
    private var compass: CompassController!
    private var lastKnownDirty = false
    private var lastKnownTimer: EventLoop.Token?
    private var declinationDay = -1

    /// False until the bus name is ours: before that, changes only update what clients will read.
    private var isPublishing = false

    /// Set when the loop should stop; the process exits with it.
    private(set) var exitStatus: Int32 = 0

    var configuration: DaemonConfiguration { options.configuration }

    init(options: Options, loop: EventLoop, logger: Logger) {
        self.options = options
        self.loop = loop
        self.logger = logger
        self.store = StateStore(directory: options.stateDirectory)
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
        service = QiblaService(connection: connection, daemon: self)
        service.register()
        compass = CompassController(daemon: self)

        loadState()

        do {
            try connection.addMatch("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',path='/org/freedesktop/DBus'")
        } catch {
            throw StartupError("cannot subscribe to NameOwnerChanged: \(error.message)")
        }
        connection.onSignal { [unowned self] message in
            guard message.interface == "org.freedesktop.DBus", message.member == "NameOwnerChanged",
                  let args = try? message.arguments(), args.count == 3,
                  case .string(let name) = args[0], case .string(let newOwner) = args[2],
                  newOwner.isEmpty, name.hasPrefix(":") else { return }
            if claims.holders.contains(name) {
                logger.info("client \(name) left the bus; dropping its compass claim")
                release(by: name)
            }
        }

        let result: RequestNameResult
        do {
            result = try connection.requestName(QiblaService.busName)
        } catch {
            throw StartupError("cannot request the name \(QiblaService.busName): \(error.message)")
        }
        switch result {
        case .primaryOwner, .alreadyOwner:
            isPublishing = true
            logger.info("qiblad \(qibladVersion) serving \(QiblaService.busName) on the \(options.bus.displayName) bus as \(connection.uniqueName)")
        case .exists, .inQueue:
            throw StartupError("the name \(QiblaService.busName) is already owned on the \(options.bus.displayName) bus: another qiblad is running")
        }
    }

    /// Stops the live sources, writes state, releases the name. Safe to call twice.
    func shutdown() {
        stopLiveSources()
        flushLastKnown()
        if let connection {
            try? connection.releaseName(QiblaService.busName)
            connection.flush()
        }
    }

    func requestExit(status: Int32) {
        exitStatus = status
        loop.stop()
    }

    // MARK: State

    private func loadState() {
        do { try store.prepare() } catch {
            logger.warning("state directory \(store.directory) is not usable (\(error)); changes will not persist")
        }
        for (file, apply) in [
            (StateStore.manualLocationFile, { (l: StoredLocation) in self.locations.manual = l }),
            (StateStore.lastKnownLocationFile, { (l: StoredLocation) in self.locations.lastKnown = l }),
        ] {
            switch store.loadLocation(file) {
            case .success(let location?): apply(location)
            case .success(nil): break
            case .failure(let problem): logger.error("state file rejected: \(problem); starting without it")
            }
        }
        if let runLocation = options.runLocation {
            locations.manual = StoredLocation(position: runLocation, horizontalAccuracyMetres: nil,
                                              timestampUnixSeconds: WallClock.nowUnixSeconds())
            logger.info("manual location for this run: \(runLocation)")
        }
        refreshLocation()
    }

    // MARK: Methods called by the D-Bus service

    func claim(by client: String) {
        if claims.claim(by: client) == .firstClaim {
            logger.info("first compass claim (\(client)); starting sensors and position source")
            startLiveSources()
        } else {
            logger.debug("compass claim by \(client); \(claims.holders.count) holder(s)")
        }
    }

    func release(by client: String) {
        if claims.release(by: client) == .lastRelease {
            logger.info("last compass claim released (\(client)); stopping sensors and position source")
            stopLiveSources()
        }
    }

    func setManualLocation(_ position: GeodeticPosition) throws {
        let location = StoredLocation(position: position, horizontalAccuracyMetres: nil,
                                      timestampUnixSeconds: WallClock.nowUnixSeconds())
        try store.saveLocation(location, as: StateStore.manualLocationFile)
        locations.manual = location
        logger.info("manual location set to \(position)")
        refreshLocation()
    }

    func clearManualLocation() throws {
        try store.saveLocation(nil, as: StateStore.manualLocationFile)
        locations.manual = nil
        logger.info("manual location cleared")
        refreshLocation()
    }

    struct QiblaAnswer {
        var bearing: Double
        var bearingGeodesic: Double
        var distanceMetres: Double
        var declination: Double
    }

    /// The Qibla and declination for any position (the `QiblaFor` calculator; no state changes).
    func qibla(for position: GeodeticPosition) -> QiblaAnswer {
        let solution = Qibla(kaaba: configuration.kaaba).solve(from: position)
        let field = MagneticModel.wmm2025.field(at: position, decimalYear: DecimalYear.from(unixSeconds: WallClock.nowUnixSeconds()))
        let greatCircle = solution.greatCircleBearing.value ?? .nan
        let geodesic = solution.geodesicBearing.value ?? .nan
        return QiblaAnswer(
            bearing: configuration.bearingModel == .geodesic ? geodesic : greatCircle,
            bearingGeodesic: geodesic,
            distanceMetres: solution.distanceMetres.isFinite ? solution.distanceMetres : .nan,
            declination: field.declinationDegrees.isFinite ? field.declinationDegrees : .nan)
    }

    func resetCalibration() -> Result<Void, ServiceError> {
        compass.resetCalibration()
    }

    // MARK: Live sources (only while claimed)

    private func startLiveSources() {
        if configuration.gpsdEnabled {
            let source = GPSDPositionSource(
                configuration: .init(host: configuration.gpsdHost, port: configuration.gpsdPort,
                                     fixTimeoutSeconds: configuration.fixTimeoutSeconds),
                loop: loop, logger: logger
            ) { [unowned self] event in handleGPSD(event) }
            gpsd = source
            source.start()
        }
        compass.start()
    }

    private func stopLiveSources() {
        gpsd?.stop()
        gpsd = nil
        compass?.stop()
        if locations.liveFix != nil {
            // Without a claim the published values stay at the last known position.
            locations.lastKnown = locations.liveFix
            locations.liveFix = nil
            lastKnownDirty = true
            flushLastKnown()
            refreshLocation()
        }
    }

    private func handleGPSD(_ event: GPSDEvent) {
        switch event {
        case .connected:
            break
        case .disconnected, .fixLost:
            if let fix = locations.liveFix {
                logger.info("live fix lost; falling back to \(locations.manual != nil ? "the manual" : "the last known") location")
                locations.lastKnown = fix
                locations.liveFix = nil
                lastKnownDirty = true
                refreshLocation()
            }
        case .fix(let fix):
            let location = StoredLocation(position: fix.position, horizontalAccuracyMetres: fix.horizontalAccuracyMetres,
                                          timestampUnixSeconds: fix.timeUnixSeconds)
            if locations.liveFix == nil { logger.info("live fix from gpsd: \(fix.position)") }
            let significant = locations.isSignificant(location)
            locations.lastKnown = location
            lastKnownDirty = true
            scheduleLastKnownWrite()
            if significant {
                locations.liveFix = location
                refreshLocation()
            }
        }
    }

    /// Persists the last known location at most once a minute while fixes arrive, and on exit.
    private func scheduleLastKnownWrite() {
        guard lastKnownTimer == nil else { return }
        lastKnownTimer = loop.schedule(after: .seconds(60)) { [unowned self] in
            lastKnownTimer = nil
            flushLastKnown()
        }
    }

    private func flushLastKnown() {
        if let token = lastKnownTimer { loop.cancel(token); lastKnownTimer = nil }
        guard lastKnownDirty, let location = locations.lastKnown else { return }
        do {
            try store.saveLocation(location, as: StateStore.lastKnownLocationFile)
            lastKnownDirty = false
        } catch {
            logger.error("cannot write the last known location to \(store.directory): \(error)")
        }
    }

    // MARK: Derived values

    /// Recomputes the location group, the Qibla and the declination from the current location.
    func refreshLocation() {
        var p = properties
        if let (location, source) = locations.current {
            p.latitude = location.position.latitudeDegrees
            p.longitude = location.position.longitudeDegrees
            p.altitude = source == .manual ? .nan : location.position.heightMetres
            p.locationAccuracy = location.horizontalAccuracyMetres ?? .nan
            p.locationTimestampMicroseconds = UInt64(max(0, location.timestampUnixSeconds * 1e6))
            p.locationSource = source
            let answer = qibla(for: location.position)
            p.qiblaBearing = answer.bearing
            p.qiblaBearingGeodesic = answer.bearingGeodesic
            p.kaabaDistance = answer.distanceMetres
            p.declination = answer.declination
            declinationDay = Int((WallClock.nowUnixSeconds() / 86_400).rounded(.down))
        } else {
            p.latitude = .nan; p.longitude = .nan; p.altitude = .nan; p.locationAccuracy = .nan
            p.locationTimestampMicroseconds = 0
            p.locationSource = .none
            p.qiblaBearing = .nan; p.qiblaBearingGeodesic = .nan; p.kaabaDistance = .nan; p.declination = .nan
        }
        properties = p
        compass?.locationChanged()
        publish()
    }

    /// The current location, for the compass (expected field, declination).
    var currentPosition: GeodeticPosition? { locations.current?.0.position }

    /// Recomputes the declination when the day changed (called per heading update; no timer).
    func refreshDeclinationIfDayChanged() {
        let day = Int((WallClock.nowUnixSeconds() / 86_400).rounded(.down))
        if day != declinationDay, locations.current != nil { refreshLocation() }
    }

    /// Applies a change to the compass group and publishes it.
    func updateCompass(_ change: (inout PublishedProperties) -> Void) {
        change(&properties)
        publish()
    }

    // MARK: Publishing

    /// Emits PropertiesChanged for what changed since clients were last told: at once for all but
    /// the heading group, which is rate-limited to max-signal-rate and to changes ≥ 0.1°.
    func publish() {
        guard isPublishing else {
            for name in PublishedProperties.names { emitted[name] = properties.value(of: name) }
            return
        }
        var immediate: [String] = []
        var headingChanged = false
        for name in PublishedProperties.names {
            let value = properties.value(of: name)
            guard !sameValue(value, emitted[name]) else { continue }
            if PublishedProperties.headingGroup.contains(name) {
                if headingGroupChangeIsSignificant(name, value) { headingChanged = true }
            } else {
                immediate.append(name)
                emitted[name] = value
            }
        }
        service?.emitPropertiesChanged(immediate, values: properties)
        if headingChanged { publishHeadingGroup() }
    }

    private func headingGroupChangeIsSignificant(_ name: String, _ value: DBusValue?) -> Bool {
        guard case .double(let new)? = value, case .double(let old)? = emitted[name] else { return true }
        return differs(new, old, by: 0.1, circular: name != "HeadingError")
    }

    private func publishHeadingGroup() {
        let minimumInterval = Duration.seconds(1 / configuration.maxSignalRateHertz)
        let now = clock.now
        if let last = lastHeadingEmission, last.duration(to: now) < minimumInterval {
            guard headingFlushTimer == nil else { return }
            headingFlushTimer = loop.schedule(after: minimumInterval - last.duration(to: now)) { [unowned self] in
                headingFlushTimer = nil
                publishHeadingGroup()
            }
            return
        }
        let names = PublishedProperties.headingGroup.sorted().filter { name in
            let value = properties.value(of: name)
            return !sameValue(value, emitted[name]) && headingGroupChangeIsSignificant(name, value)
        }
        guard !names.isEmpty else { return }
        for name in names { emitted[name] = properties.value(of: name) }
        lastHeadingEmission = now
        service?.emitPropertiesChanged(names, values: properties)
    }

    // MARK: Configuration reload (SIGHUP)

    func reloadConfiguration() {
        guard let path = options.configPath else {
            logger.info("SIGHUP: no configuration file given; nothing to reload")
            return
        }
        switch ConfigurationLoader.load(path: path, logger: logger) {
        case .failure(let message):
            logger.error("configuration reload failed, keeping the previous settings: \(message)")
        case .success(var new):
            options.overrides.apply(to: &new)
            let old = options.configuration
            options.configuration = new
            options.sensorConfiguration.apply(new)
            logger.info("configuration reloaded from \(path)")
            if claims.isClaimed, new.gpsdEnabled != old.gpsdEnabled || new.gpsdHost != old.gpsdHost
                || new.gpsdPort != old.gpsdPort || new.fixTimeoutSeconds != old.fixTimeoutSeconds
                || new.sensorModeBuffered != old.sensorModeBuffered || new.sampleRateHertz != old.sampleRateHertz
                || new.magnetometerMountMatrix != old.magnetometerMountMatrix
                || new.accelerometerMountMatrix != old.accelerometerMountMatrix
                || new.preferredMagnetometer != old.preferredMagnetometer
                || new.preferredAccelerometer != old.preferredAccelerometer {
                stopLiveSources()
                startLiveSources()
            }
            compass.configurationChanged()
            refreshLocation()
        }
    }
}

/// Settings given on the command line (`--gpsd`, `--no-gpsd`, `--sensor-mode`).
struct ConfigurationOverrides {
    var gpsd: (host: String, port: Int)?
    var noGpsd = false
    var sensorModeBuffered: Bool?

    func apply(to configuration: inout DaemonConfiguration) {
        if let gpsd {
            configuration.gpsdEnabled = true
            configuration.gpsdHost = gpsd.host
            configuration.gpsdPort = gpsd.port
        }
        if noGpsd { configuration.gpsdEnabled = false }
        if let sensorModeBuffered { configuration.sensorModeBuffered = sensorModeBuffered }
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

extension SensorConfiguration {
    /// Copies the sensor keys of the configuration file.
    mutating func apply(_ configuration: DaemonConfiguration) {
        mode = configuration.sensorModeBuffered ? .buffered : .polling
        sampleRateHertz = configuration.sampleRateHertz
        preferredMagnetometerName = configuration.preferredMagnetometer
        preferredAccelerometerName = configuration.preferredAccelerometer
        magnetometerMountMatrixOverride = configuration.magnetometerMountMatrix
        accelerometerMountMatrixOverride = configuration.accelerometerMountMatrix
    }
}

/// Reads and parses the configuration file; a missing file is the default configuration.
enum ConfigurationLoader {
    static func load(path: String, logger: Logger) -> Result<DaemonConfiguration, TextFileError> {
        let text: String
        switch readTextFile(path) {
        case .success(let t?): text = t
        case .success(nil):
            logger.info("no configuration file at \(path); using defaults")
            return .success(DaemonConfiguration())
        case .failure(let problem): return .failure(TextFileError(message: "\(path): \(problem)"))
        }
        do {
            let (configuration, warnings) = try DaemonConfiguration.parse(text)
            for warning in warnings { logger.warning("\(path): \(warning)") }
            return .success(configuration)
        } catch {
            return .failure(TextFileError(message: "\(path): \(error)"))
        }
    }
}
