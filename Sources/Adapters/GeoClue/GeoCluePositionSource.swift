// SPDX-License-Identifier: Apache-2.0
// QiblaGeoClue: the live position source over GeoClue2 on the system bus.
//
// Protocol (GeoClue 2.6 interface XML, /usr/share/dbus-1/interfaces/org.freedesktop.GeoClue2.*.xml):
// `Manager.CreateClient() → o`; on the client set `DesktopId`, `RequestedAccuracyLevel` and
// `DistanceThreshold` with `org.freedesktop.DBus.Properties.Set`; `Client.Start()`; then each
// `Client.LocationUpdated(o old, o new)` names a `Location` object whose properties are read with
// `GetAll`. `Client.Stop()` and `Manager.DeleteClient(o)` end it. Every call is asynchronous on a
// private system-bus connection driven by the same EventLoop as the daemon's own bus.
import Logging
import QiblaCore
import QiblaDBus
import QiblaEventLoop

/// What the source reports to its owner, always on the event loop's thread.
public enum GeoClueEvent: Sendable, Equatable {
    /// GeoClue2 accepted `Client.Start()`; fixes follow when it has a location.
    case started
    /// A new valid location.
    case fix(GeoClueFix)
    /// The current fix ended: GeoClue2 left the bus, stopped answering, or stopped the client
    /// (`Active` turned false, e.g. its agent turned location off). Sent once, only after a fix.
    case fixLost
    /// GeoClue2 cannot serve now. With `retrying` a new attempt is scheduled with backoff (and made
    /// at once when GeoClue2 reappears on the bus); without, the source gives up for this
    /// ``GeoCluePositionSource/start()`` (service missing under ``GeoCluePositionSource/MissingServicePolicy/report``).
    case unavailable(GeoClueUnavailability, retrying: Bool)
    /// GeoClue2 answered `org.freedesktop.DBus.Error.AccessDenied` (not allowed by its
    /// configuration, no agent, or the agent said no) with this message. Not retried until the
    /// next ``GeoCluePositionSource/start()``.
    case accessDenied(message: String)
}

/// Why GeoClue2 cannot serve.
public enum GeoClueUnavailability: Sendable, Equatable, CustomStringConvertible {
    /// No connection to the system bus.
    case noSystemBus(String)
    /// `org.freedesktop.GeoClue2` is neither running (`NameHasOwner`) nor activatable
    /// (`ListActivatableNames`), or activating it failed.
    case notOnBus
    /// GeoClue2 left the bus (`NameOwnerChanged` with an empty new owner).
    case vanished
    /// A call got no reply in time (GeoClue2 hangs).
    case noAnswer(String)
    /// Another error reply.
    case failed(String)

    public var description: String {
        switch self {
        case .noSystemBus(let reason): "no system bus (\(reason))"
        case .notOnBus: "org.freedesktop.GeoClue2 is neither running nor activatable on the system bus"
        case .vanished: "GeoClue2 left the system bus"
        case .noAnswer(let what): "GeoClue2 did not answer \(what)"
        case .failed(let what): what
        }
    }
}

/// Live position source: a GeoClue2 client driven by a ``QiblaEventLoop/EventLoop``.
///
/// - Confined to the loop's thread: create it, call ``start()``/``stop()`` and read its properties
///   there; ``GeoClueEvent``s are delivered there, and the handler may call ``stop()``.
/// - Between ``start()`` and ``stop()`` only: its own system-bus connection, the match rules
///   (GeoClue2's `NameOwnerChanged`, its client's signals) and at most one retry timer. While
///   stopped it holds no connection, no match rule and no timer (zero wakeups).
/// - Never blocks on GeoClue2: every call is `callAsync` with a timeout (GeoClue 2.6 holds
///   `CreateClient` while no agent is registered for the caller's uid, with no limit of its own:
///   no answer within the 30 s timeout in `GeoClueIntegrationTests`; `Start` waits for the agent's
///   answer). In `auto` gpsd runs alongside, so a silent GeoClue2 delays nothing.
///   Opening the connection is a blocking round trip to the bus daemon (`Hello`), not to GeoClue2.
/// - Recovers like the gpsd source: GeoClue2 vanishing, restarting or not answering reports
///   ``GeoClueEvent/fixLost`` and ``GeoClueEvent/unavailable(_:retrying:)`` and re-acquires with
///   exponential backoff (initial, doubling, capped), at once when it reappears on the bus.
///   Logs once per state change, not once per retry.
public final class GeoCluePositionSource {
    /// The GeoClue2 client's settings.
    public struct Configuration: Sendable, Equatable {
        /// The bus GeoClue2 is on (`.system`; tests use a private bus address).
        public var bus: BusAddress
        /// `Client.DesktopId`: the section name GeoClue looks up in its configuration.
        public var desktopId: String
        /// `Client.RequestedAccuracyLevel`.
        public var accuracyLevel: GeoClueAccuracyLevel
        /// `Client.DistanceThreshold`, metres: GeoClue signals only moves at least this large. 5 m
        /// is the daemon's own republish distance, below which a fix changes nothing visible.
        public var distanceThresholdMetres: UInt32
        /// Timeout of every call but `Start`, seconds (GeoClue 2.6 holds `CreateClient` without a
        /// limit while no agent runs for the uid: the call is then retried with backoff).
        public var callTimeoutSeconds: Double
        /// Timeout of `Client.Start()`, seconds: an agent may ask the user first.
        public var startTimeoutSeconds: Double
        /// First retry delay, seconds; doubled after each failed attempt.
        public var initialBackoffSeconds: Double
        /// Upper bound of the retry delay, seconds.
        public var maximumBackoffSeconds: Double

        public init(bus: BusAddress = .system, desktopId: String = "qiblad", accuracyLevel: GeoClueAccuracyLevel = .exact,
                    distanceThresholdMetres: UInt32 = 5, callTimeoutSeconds: Double = 30, startTimeoutSeconds: Double = 120,
                    initialBackoffSeconds: Double = 0.5, maximumBackoffSeconds: Double = 30) {
            self.bus = bus
            self.desktopId = desktopId
            self.accuracyLevel = accuracyLevel
            self.distanceThresholdMetres = distanceThresholdMetres
            self.callTimeoutSeconds = callTimeoutSeconds
            self.startTimeoutSeconds = startTimeoutSeconds
            self.initialBackoffSeconds = initialBackoffSeconds
            self.maximumBackoffSeconds = maximumBackoffSeconds
        }
    }

    /// What to do when GeoClue2 is not on the bus at the first attempt after ``start()``.
    public enum MissingServicePolicy: Sendable, Equatable {
        /// Report ``GeoClueUnavailability/notOnBus`` (or ``GeoClueUnavailability/noSystemBus(_:)``)
        /// without retrying, so the owner can use another source (`location-source = auto`).
        case report
        /// Keep trying with backoff, and at once when the name appears.
        case waitForIt
    }

    /// Counters since creation.
    public struct Statistics: Sendable, Equatable {
        /// Fixes published as ``GeoClueEvent/fix(_:)``.
        public var fixes = 0
        /// Location objects dropped as invalid (``GeoClueReadingError``).
        public var rejected = 0
        /// Attempts to get a running client (the first after ``start()`` included).
        public var attempts = 0
        public init() {}
    }

    public let configuration: Configuration
    public let whenMissing: MissingServicePolicy
    private let loop: EventLoop
    private var logger: Logger
    private let onEvent: (GeoClueEvent) -> Void

    /// True between ``start()`` and ``stop()``.
    public private(set) var isActive = false
    /// True while GeoClue2 runs our client (`Start()` accepted, `Active` not turned false).
    public private(set) var isRunning = false
    /// The client object while we have one.
    public private(set) var clientPath: String?
    /// Counters for diagnostics.
    public private(set) var statistics = Statistics()

    private enum Phase { case idle, acquiring, running, waitingToRetry, denied }
    private var phase = Phase.idle
    /// The private system-bus connection; its attempt (generation) moves on with every attempt,
    /// loss and stop, so that replies to older calls are dropped.
    private var bus: ServiceClientConnection!
    private var connection: DBusConnection? { bus.connection }
    private var generation: UInt64 { bus.generation }
    private var retryTimer: EventLoop.Token?
    private var backoffSeconds: Double
    private var failureLogged = false
    private var rejectionLogged = false
    private var hasCurrentFix = false
    /// GeoClue2 served this start() once: from then on its absence is waited out, not reported.
    private var hasSeenService = false

    /// - Parameters:
    ///   - whenMissing: see ``MissingServicePolicy``.
    ///   - onEvent: called on the loop thread; it may call ``stop()``.
    public init(configuration: Configuration = Configuration(), whenMissing: MissingServicePolicy = .waitForIt,
                loop: EventLoop, logger: Logger, onEvent: @escaping (GeoClueEvent) -> Void) {
        self.configuration = configuration
        self.whenMissing = whenMissing
        self.loop = loop
        self.logger = logger
        self.logger[metadataKey: "geoclue"] = "\(configuration.desktopId)"
        self.onEvent = onEvent
        backoffSeconds = configuration.initialBackoffSeconds
        bus = ServiceClientConnection(bus: configuration.bus, loop: loop, callTimeoutSeconds: configuration.callTimeoutSeconds,
                                      debug: { [logger] in logger.debug("\($0)") },
                                      onSignal: { [unowned self] in handle($0) },
                                      onDisconnected: { [unowned self] in lose(.noSystemBus("the connection to the system bus was lost")) })
    }

    /// Must run on the loop thread, like every other member.
    deinit {
        if let retryTimer { loop.cancel(retryTimer) }
    }

    /// Number of timers this source has armed (the retry timer). Zero when stopped or running.
    var armedTimerCount: Int { retryTimer.map { loop.isScheduled($0) ? 1 : 0 } ?? 0 }

    /// Whether the source holds a bus connection (and so possibly match rules).
    var hasConnection: Bool { connection != nil }

    // MARK: Public control

    /// Connects to the system bus and starts a GeoClue2 client. Idempotent.
    public func start() {
        guard !isActive else { return }
        isActive = true
        backoffSeconds = configuration.initialBackoffSeconds
        failureLogged = false
        hasSeenService = false
        logger.debug("GeoClue2 position source started")
        acquire()
    }

    /// Stops the client (`Client.Stop()`, `Manager.DeleteClient`), closes the connection (which
    /// drops its match rules) and cancels the retry timer. Emits no event. Idempotent.
    public func stop() {
        guard isActive else { return }
        isActive = false
        bus.newAttempt()
        cancel(&retryTimer)
        if let connection, let clientPath {
            for message in [try? GeoClue2.client(clientPath, "Stop"), try? GeoClue2.deleteClient(clientPath)] {
                guard let message else { continue }
                message.noReplyExpected = true
                connection.send(message)
            }
            connection.flush()
        }
        bus.close()
        phase = .idle
        logger.debug("GeoClue2 position source stopped")
    }

    // MARK: Acquiring a client

    private func acquire() {
        guard isActive else { return }
        cancel(&retryTimer)
        forgetClient()
        statistics.attempts += 1
        guard openConnection() else { return }
        let attempt = bus.newAttempt()
        phase = .acquiring
        call(attempt, "NameHasOwner", { () throws(DBusError) in
            try BusDaemon.call("NameHasOwner", .string(GeoClue2.busName))
        }) { [unowned self] owned in
            if owned.first?.bool == true { return createClient(attempt) }
            call(attempt, "ListActivatableNames", { () throws(DBusError) in
                try BusDaemon.call("ListActivatableNames")
            }) { [unowned self] names in
                if names.first?.strings?.contains(GeoClue2.busName) == true {
                    createClient(attempt)
                } else {
                    lose(.notOnBus)
                }
            }
        }
    }

    private func createClient(_ attempt: UInt64, member: String = "CreateClient") {
        guard connection != nil else { return }
        call(attempt, "Manager.\(member)", { () throws(DBusError) in
            member == "CreateClient" ? GeoClue2.createClient() : GeoClue2.getClient()
        }) { [unowned self] reply in
            guard let path = reply.first?.objectPath else {
                return lose(.failed("Manager.\(member) returned \(reply.map(\.signature).joined())"))
            }
            hasSeenService = true
            clientPath = path
            bus.addMatch(GeoClue2.clientSignalsRule(path))
            configureClient(path, attempt)
        } onUnknownMethod: { [unowned self] in
            // GeoClue 2.4 has GetClient only.
            createClient(attempt, member: "GetClient")
        }
    }

    private func configureClient(_ path: String, _ attempt: UInt64) {
        guard connection != nil else { return }
        let settings: [(String, DBusValue)] = [
            ("DesktopId", .string(configuration.desktopId)),
            ("RequestedAccuracyLevel", .uint32(configuration.accuracyLevel.rawValue)),
            ("DistanceThreshold", .uint32(configuration.distanceThresholdMetres)),
        ]
        func set(_ index: Int) {
            guard index < settings.count else { return startClient(path, attempt) }
            let (name, value) = settings[index]
            call(attempt, "setting \(name)", { () throws(DBusError) in
                try GeoClue2.setClientProperty(path, name, value)
            }) { _ in set(index + 1) }
        }
        set(0)
    }

    private func startClient(_ path: String, _ attempt: UInt64) {
        guard connection != nil else { return }
        call(attempt, "Client.Start", { () throws(DBusError) in try GeoClue2.client(path, "Start") },
             timeoutSeconds: configuration.startTimeoutSeconds) { [unowned self] _ in
            phase = .running
            isRunning = true
            backoffSeconds = configuration.initialBackoffSeconds
            failureLogged = false
            logger.info("GeoClue2 client \(path) started (desktop id \(configuration.desktopId), accuracy \(configuration.accuracyLevel), threshold \(configuration.distanceThresholdMetres) m)")
            onEvent(.started)
            guard generation == attempt, !hasCurrentFix else { return }
            // A location GeoClue already had may have been signalled before Start's reply; if not,
            // the client's Location property names it.
            call(attempt, "reading Client.Location", { () throws(DBusError) in
                let message = try DBusMessage.methodCall(validatingDestination: GeoClue2.busName, path: path,
                                                         interface: GeoClue2.propertiesInterface, member: "Get")
                try message.append(.string(GeoClue2.clientInterface), .string("Location"))
                return message
            }) { [unowned self] reply in
                guard let location = reply.first?.unwrappingVariants.objectPath, location != "/", !hasCurrentFix else { return }
                readLocation(location, attempt)
            }
        }
    }

    // MARK: Locations

    private func readLocation(_ path: String, _ attempt: UInt64) {
        guard connection != nil else { return }
        call(attempt, "GetAll on \(path)", { () throws(DBusError) in
            try GeoClue2.getAllLocationProperties(path)
        }, ignoring: [DBusError.unknownObjectName, DBusError.unknownMethodName, DBusError.unknownInterfaceName]) { [unowned self] reply in
            let fix: GeoClueFix
            do throws(GeoClueReadingError) {
                guard reply.count == 1, let properties = reply[0].stringKeyedDictionary else {
                    throw .malformedReply("GetAll returned \"\(reply.map(\.signature).joined())\"")
                }
                fix = try GeoClueFix.validated(properties)
            } catch {
                statistics.rejected += 1
                if !rejectionLogged {
                    rejectionLogged = true
                    logger.warning("dropping GeoClue2 location \(path): \(error)")
                } else {
                    logger.debug("dropping GeoClue2 location \(path): \(error)")
                }
                return
            }
            rejectionLogged = false
            statistics.fixes += 1
            hasCurrentFix = true
            onEvent(.fix(fix))
        }
    }

    // MARK: Signals

    private func handle(_ message: DBusMessage) {
        guard isActive, message.type == .signal else { return }
        switch (message.interface, message.member) {
        case ("org.freedesktop.DBus", "NameOwnerChanged"):
            guard let (oldOwner, newOwner) = BusDaemon.ownerChange(of: GeoClue2.busName, in: message) else { return }
            if !oldOwner.isEmpty, phase == .acquiring || phase == .running {
                lose(.vanished)
            }
            if !newOwner.isEmpty, isActive, phase == .waitingToRetry {
                logger.debug("GeoClue2 appeared on the bus as \(newOwner); acquiring a client now")
                acquire()
            }
        case (GeoClue2.clientInterface, "LocationUpdated"):
            guard let clientPath, message.path == clientPath, phase == .acquiring || phase == .running,
                  let args = try? message.arguments(expecting: "oo"), let location = args[1].objectPath,
                  location != "/" else { return }
            readLocation(location, generation)
        case (GeoClue2.propertiesInterface, "PropertiesChanged"):
            guard let clientPath, message.path == clientPath, phase == .running,
                  let args = try? message.arguments(expecting: "sa{sv}as"), args[0].string == GeoClue2.clientInterface,
                  let active = args[1].stringKeyedDictionary?["Active"]?.unwrappingVariants.bool,
                  active != isRunning else { return }
            isRunning = active
            if active {
                logger.info("GeoClue2 restarted client \(clientPath)")
            } else {
                logger.info("GeoClue2 stopped client \(clientPath) (location turned off by its agent?); waiting for it to resume")
                if hasCurrentFix {
                    hasCurrentFix = false
                    onEvent(.fixLost)
                }
            }
        default:
            return
        }
    }

    // MARK: Losing GeoClue2

    /// GeoClue2 cannot serve: forget the client, report, and retry unless the policy says to give up.
    private func lose(_ reason: GeoClueUnavailability) {
        guard isActive else { return }
        let hadFix = hasCurrentFix
        forgetClient()
        bus.newAttempt()
        let missing: Bool
        switch reason {
        case .notOnBus, .noSystemBus: missing = true
        default: missing = false
        }
        let retrying = !(missing && whenMissing == .report && !hasSeenService)
        if retrying {
            phase = .waitingToRetry
            if !failureLogged {
                failureLogged = true
                logger.warning("\(reason); retrying with backoff up to \(configuration.maximumBackoffSeconds) s")
            } else {
                logger.debug("GeoClue2 attempt failed: \(reason)")
            }
            scheduleRetry()
        } else {
            phase = .idle
            logger.debug("GeoClue2 unavailable: \(reason)")
        }
        if hadFix { onEvent(.fixLost) }
        guard isActive else { return }
        onEvent(.unavailable(reason, retrying: retrying))
    }

    private func denied(_ error: DBusError) {
        guard isActive else { return }
        let hadFix = hasCurrentFix
        if let connection, let clientPath, let message = try? GeoClue2.deleteClient(clientPath) {
            message.noReplyExpected = true
            connection.send(message)
        }
        forgetClient()
        bus.newAttempt()
        phase = .denied
        logger.debug("GeoClue2 refused the client: \(error.message)")
        if hadFix { onEvent(.fixLost) }
        guard isActive else { return }
        onEvent(.accessDenied(message: error.message))
    }

    private func scheduleRetry() {
        guard isActive, retryTimer == nil else { return }
        let delay = backoffSeconds
        backoffSeconds = min(backoffSeconds * 2, configuration.maximumBackoffSeconds)
        retryTimer = loop.schedule(after: .seconds(delay)) { [unowned self] in
            retryTimer = nil
            acquire()
        }
    }

    /// Drops what belongs to the current client (its match rule, path, fix).
    private func forgetClient() {
        if let clientPath, let connection, connection.isConnected {
            bus.removeMatch(GeoClue2.clientSignalsRule(clientPath))
        }
        clientPath = nil
        isRunning = false
        hasCurrentFix = false
    }

    // MARK: The connection

    /// Opens the connection (with the rule for GeoClue2's name) unless it is open; false, after
    /// reporting, when there is no system bus.
    private func openConnection() -> Bool {
        do {
            _ = try bus.open(matchRules: [GeoClue2.nameOwnerChangedRule])
            return true
        } catch {
            lose(.noSystemBus(error.message.isEmpty ? error.name : error.message))
            return false
        }
    }

    // MARK: Calls

    /// One asynchronous call whose reply matters only while `attempt` is current. An error reply
    /// ends the attempt: AccessDenied → ``denied(_:)``, no reply → ``GeoClueUnavailability/noAnswer(_:)``,
    /// no such service → ``GeoClueUnavailability/notOnBus``, anything else →
    /// ``GeoClueUnavailability/failed(_:)``; errors named in `ignoring` are only logged.
    private func call(_ attempt: UInt64, _ what: String,
                      _ build: () throws(DBusError) -> DBusMessage, timeoutSeconds: Double? = nil,
                      ignoring: Set<String> = [], then: @escaping ([DBusValue]) -> Void,
                      onUnknownMethod: (() -> Void)? = nil) {
        let message: DBusMessage
        do { message = try build() } catch {
            return lose(.failed("cannot build \(what): \(error)"))
        }
        let timeout = timeoutSeconds ?? configuration.callTimeoutSeconds
        bus.call(message, attempt: attempt, timeoutSeconds: timeout) { [weak self] result in
            guard let self, isActive else { return }
            switch result {
            case .success(let arguments):
                then(arguments)
            case .failure(let error):
                if ignoring.contains(error.name) {
                    logger.debug("\(what): \(error)")
                } else if error.name == DBusError.unknownMethodName, let onUnknownMethod {
                    onUnknownMethod()
                } else {
                    fail(error, during: what, timeout: timeout)
                }
            }
        }
    }

    private func fail(_ error: DBusError, during what: String, timeout: Double) {
        if error.name == DBusError.accessDeniedName {
            denied(error)
        } else if error.meansNoAnswer {
            lose(.noAnswer("\(what) within \(timeout) s"))
        } else if error.meansServiceMissing {
            lose(hasSeenService ? .vanished : .notOnBus)
        } else if error.name == DBusError.disconnectedName {
            bus.close()
            lose(.noSystemBus("the connection to the system bus was lost"))
        } else {
            lose(.failed("\(what) failed: \(error)"))
        }
    }

    private func cancel(_ token: inout EventLoop.Token?) {
        if let existing = token { loop.cancel(existing) }
        token = nil
    }
}
