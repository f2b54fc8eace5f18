// SPDX-License-Identifier: Apache-2.0
// QiblaSensorProxy: a heading source over iio-sensor-proxy's compass (`net.hadess.SensorProxy.Compass`)
// on the system bus: the heading a HID sensor hub computes (its `in_rot_from_north_magnetic_tilt_comp`
// channel, iio-sensor-proxy's iio-buffer-compass driver) or, in releases built with libssc, the one
// a Qualcomm sensor DSP's magnetometer gives (its ssc-compass driver). Every call is asynchronous on
// a private system-bus connection driven by the daemon's EventLoop, opened only between start()
// and stop().
import Logging
import QiblaDBus
import QiblaEventLoop

/// What the source reports to its owner, always on the event loop's thread.
public enum SensorProxyCompassEvent: Sendable, Equatable {
    /// The claim is held and iio-sensor-proxy says whether it has a compass now (`HasCompass`;
    /// sent after the claim and whenever it changes).
    case compass(present: Bool)
    /// A fresh heading, degrees from magnetic north clockwise in [0, 360), or nil when the
    /// heading is no longer known (`-1`, the compass went, iio-sensor-proxy left the bus or
    /// stopped answering within the staleness limit).
    case heading(Double?)
    /// iio-sensor-proxy cannot serve now. With `retrying` the claim is made again when it
    /// appears on the bus (and with backoff); without, not before the next ``SensorProxyCompass/start()``.
    case unavailable(SensorProxyUnavailability, retrying: Bool)
    /// The bus refused the claim (`AccessDenied`: iio-sensor-proxy's policy lets only GeoClue's
    /// user call the compass unless a drop-in allows ours). Not retried before the next start.
    case accessDenied(message: String)
}

/// Why iio-sensor-proxy cannot serve.
public enum SensorProxyUnavailability: Sendable, Equatable, CustomStringConvertible {
    case noSystemBus(String)
    /// `net.hadess.SensorProxy` is not running and not activatable.
    case notOnBus
    /// It left the bus (stopped, crashed, restarting).
    case vanished
    /// A call got no answer in time.
    case noAnswer(String)
    case failed(String)

    public var description: String {
        switch self {
        case .noSystemBus(let reason): "no system bus (\(reason))"
        case .notOnBus: "net.hadess.SensorProxy (iio-sensor-proxy) is not on the system bus"
        case .vanished: "iio-sensor-proxy left the system bus"
        case .noAnswer(let what): "iio-sensor-proxy did not answer \(what)"
        case .failed(let what): what
        }
    }
}

/// iio-sensor-proxy's compass as a heading source, driven by a ``QiblaEventLoop/EventLoop``.
///
/// - Confined to the loop's thread; events are delivered there and the handler may call ``stop()``.
/// - Between ``start()`` and ``stop()`` only: its own system-bus connection, two match rules, the
///   claim (`ClaimCompass`) and at most one timer. Stopped it holds nothing, so iio-sensor-proxy
///   stops polling its compass as soon as qiblad's last client releases (zero wakeups unclaimed).
/// - **Never a stale heading as live.** iio-sensor-proxy keeps `CompassHeading` after the last
///   release and starts it at 0 (3.0: `previous_heading` is zeroed memory, not the documented
///   -1), so the value read right after a claim may be minutes old or no reading at all: only a
///   `CompassHeading` signalled after our claim counts — from the moment `ClaimCompass` is sent:
///   3.7 (Debian 13) reads its driver and signals the heading within the claim's handler, before
///   its reply, and then signals nothing while the heading holds; such a heading is kept until
///   the claim is granted and taken then. It signals only changes, so a heading
///   that has not changed for ``Configuration/confirmAfterSeconds`` is confirmed with a `Get`
///   (answered within ``Configuration/confirmTimeoutSeconds``, or the heading is withdrawn).
/// - iio-sensor-proxy starting late, restarting or vanishing: the heading is withdrawn at once
///   and the claim made again when the name has an owner again.
public final class SensorProxyCompass {
    public struct Configuration: Sendable, Equatable {
        /// The bus iio-sensor-proxy is on (`.system`; tests point `DBUS_SYSTEM_BUS_ADDRESS` elsewhere).
        public var bus: BusAddress
        /// Timeout of `ClaimCompass` and `GetAll`, seconds.
        public var callTimeoutSeconds: Double
        /// A heading unchanged for this long is confirmed with `Get(CompassHeading)`, seconds.
        public var confirmAfterSeconds: Double
        /// The confirmation's timeout, seconds: no answer and the heading is withdrawn.
        public var confirmTimeoutSeconds: Double
        /// First retry delay after a failed claim, seconds; doubled up to ``maximumBackoffSeconds``.
        public var initialBackoffSeconds: Double
        public var maximumBackoffSeconds: Double

        public init(bus: BusAddress = .system, callTimeoutSeconds: Double = 10, confirmAfterSeconds: Double = 5,
                    confirmTimeoutSeconds: Double = 2, initialBackoffSeconds: Double = 1, maximumBackoffSeconds: Double = 60) {
            self.bus = bus
            self.callTimeoutSeconds = callTimeoutSeconds
            self.confirmAfterSeconds = confirmAfterSeconds
            self.confirmTimeoutSeconds = confirmTimeoutSeconds
            self.initialBackoffSeconds = initialBackoffSeconds
            self.maximumBackoffSeconds = maximumBackoffSeconds
        }
    }

    public let configuration: Configuration
    private let loop: EventLoop
    private let logger: Logger
    private let onEvent: (SensorProxyCompassEvent) -> Void

    /// True between ``start()`` and ``stop()``.
    public private(set) var isActive = false
    /// True while our claim is held.
    public private(set) var isClaimed = false
    /// The heading last reported (nil: none).
    public private(set) var heading: Double?
    /// Headings rejected as not a heading.
    public private(set) var rejectedReadings = 0

    /// The private system-bus connection; its attempt (generation) moves on with every claim,
    /// loss and stop, so that replies to older calls are dropped.
    private var bus: ServiceClientConnection!
    private var timer: EventLoop.Token?
    private var backoffSeconds: Double
    private var hasCompass = false
    /// True between sending `ClaimCompass` and its reply.
    private var isClaiming = false
    /// The heading signalled while ``isClaiming``, taken once the claim is granted.
    private var headingSignalledWhileClaiming: SensorProxyHeadingReading?

    public init(configuration: Configuration = Configuration(), loop: EventLoop, logger: Logger,
                onEvent: @escaping (SensorProxyCompassEvent) -> Void) {
        self.configuration = configuration
        self.loop = loop
        self.logger = logger
        self.onEvent = onEvent
        backoffSeconds = configuration.initialBackoffSeconds
        bus = ServiceClientConnection(bus: configuration.bus, loop: loop, callTimeoutSeconds: configuration.callTimeoutSeconds,
                                      debug: { [logger] in logger.debug("\($0)") },
                                      onSignal: { [unowned self] in handle($0) },
                                      onDisconnected: { [unowned self] in lose(.noSystemBus("the connection to the system bus was lost")) })
    }

    /// Must run on the loop thread, like every other member.
    deinit {
        if let timer { loop.cancel(timer) }
    }

    /// Timers armed now (the confirmation or the retry timer): zero when stopped.
    public var armedTimerCount: Int { timer.map { loop.isScheduled($0) ? 1 : 0 } ?? 0 }

    // MARK: Control

    /// Connects to the system bus and claims the compass. Idempotent.
    public func start() {
        guard !isActive else { return }
        isActive = true
        backoffSeconds = configuration.initialBackoffSeconds
        logger.debug("iio-sensor-proxy compass source started")
        claim()
    }

    /// Releases the claim, closes the connection (dropping its match rules) and cancels the
    /// timer. Emits no event. Idempotent.
    public func stop() {
        guard isActive else { return }
        isActive = false
        if isClaimed { bus.sendWithoutReply(SensorProxy.compass("ReleaseCompass")) }
        forget()
        bus.close()
        logger.debug("iio-sensor-proxy compass source stopped")
    }

    // MARK: Claiming

    private func claim() {
        guard isActive else { return }
        cancelTimer()
        do {
            _ = try bus.open(matchRules: [SensorProxy.nameOwnerChangedRule, SensorProxy.compassChangedRule])
        } catch {
            return lose(.noSystemBus(error.message.isEmpty ? error.name : error.message))
        }
        let attempt = bus.newAttempt()
        isClaiming = true
        headingSignalledWhileClaiming = nil
        call(SensorProxy.compass("ClaimCompass"), attempt, "ClaimCompass") { [unowned self] _ in
            isClaiming = false
            isClaimed = true
            backoffSeconds = configuration.initialBackoffSeconds
            call({ () throws(DBusError) in try SensorProxy.getAllCompassProperties() }, attempt, "GetAll") { [unowned self] reply in
                let properties = reply.first?.stringKeyedDictionary ?? [:]
                let present = properties["HasCompass"]?.unwrappingVariants.bool ?? false
                logger.info("claimed iio-sensor-proxy's compass (\(present ? "a compass is present" : "no compass yet"))")
                // CompassHeading is not taken from here: it may be the value of an earlier claim.
                compassPresence(present)
                let early = headingSignalledWhileClaiming
                headingSignalledWhileClaiming = nil
                if present, let early { reading(early) }
            }
        }
    }

    private func compassPresence(_ present: Bool) {
        if !present { withdrawHeading() }
        hasCompass = present
        onEvent(.compass(present: present))
    }

    // MARK: Signals

    private func handle(_ message: DBusMessage) {
        guard isActive, message.type == .signal else { return }
        if let change = BusDaemon.ownerChange(of: SensorProxy.busName, in: message) {
            if !change.oldOwner.isEmpty { lose(.vanished) }
            if !change.newOwner.isEmpty {
                logger.debug("iio-sensor-proxy appeared on the bus as \(change.newOwner); claiming its compass")
                claim()
            }
            return
        }
        guard isClaimed || isClaiming, message.interface == SensorProxy.propertiesInterface, message.member == "PropertiesChanged",
              message.path == SensorProxy.compassPath, let args = try? message.arguments(expecting: "sa{sv}as"),
              args[0].string == SensorProxy.compassInterface, let changed = args[1].stringKeyedDictionary else { return }
        if let present = changed["HasCompass"]?.unwrappingVariants.bool {
            // iio-sensor-proxy sends the heading it last had along with a compass appearing: not a reading.
            if isClaimed, present != hasCompass { compassPresence(present) }
            return
        }
        guard let value = changed["CompassHeading"] else { return }
        if isClaimed { reading(SensorProxyHeadingReading(value)) } else { headingSignalledWhileClaiming = SensorProxyHeadingReading(value) }
    }

    private func reading(_ reading: SensorProxyHeadingReading) {
        switch reading {
        case .degrees(let degrees):
            heading = degrees
            onEvent(.heading(degrees))
            armConfirmation()
        case .unknown:
            withdrawHeading()
        case .invalid(let why):
            rejectedReadings += 1
            logger.debug("iio-sensor-proxy heading rejected: \(why)")
            withdrawHeading()
        }
    }

    // MARK: Staleness

    private func armConfirmation() {
        cancelTimer()
        let attempt = bus.generation
        timer = loop.schedule(after: .seconds(configuration.confirmAfterSeconds)) { [unowned self] in
            timer = nil
            guard isActive, bus.generation == attempt, heading != nil else { return }
            call({ () throws(DBusError) in try SensorProxy.getCompassProperty("CompassHeading") }, attempt,
                 "Get CompassHeading", timeoutSeconds: configuration.confirmTimeoutSeconds) { [unowned self] reply in
                reading(SensorProxyHeadingReading(reply.first))
            }
        }
    }

    private func withdrawHeading() {
        cancelTimer()
        guard heading != nil else { return }
        heading = nil
        onEvent(.heading(nil))
    }

    // MARK: Losing iio-sensor-proxy

    private func lose(_ reason: SensorProxyUnavailability) {
        guard isActive else { return }
        forget()
        bus.newAttempt()
        logger.debug("iio-sensor-proxy compass unavailable: \(reason)")
        onEvent(.unavailable(reason, retrying: true))
        scheduleRetry()
    }

    /// Forgets the claim and the heading (reported as withdrawn while active).
    private func forget() {
        cancelTimer()
        isClaimed = false
        isClaiming = false
        headingSignalledWhileClaiming = nil
        if hasCompass, isActive { onEvent(.compass(present: false)) }
        hasCompass = false
        if heading != nil {
            heading = nil
            if isActive { onEvent(.heading(nil)) }
        }
    }

    private func scheduleRetry() {
        guard isActive, timer == nil else { return }
        let delay = backoffSeconds
        backoffSeconds = min(backoffSeconds * 2, configuration.maximumBackoffSeconds)
        timer = loop.schedule(after: .seconds(delay)) { [unowned self] in
            timer = nil
            claim()
        }
    }

    private func cancelTimer() {
        if let timer { loop.cancel(timer) }
        timer = nil
    }

    // MARK: Calls

    private func call(_ message: DBusMessage, _ attempt: UInt64, _ what: String, timeoutSeconds: Double? = nil,
                      then: @escaping ([DBusValue]) -> Void) {
        call({ () throws(DBusError) in message }, attempt, what, timeoutSeconds: timeoutSeconds, then: then)
    }

    /// One call of `attempt`; an error ends the attempt (AccessDenied: no retry; anything else:
    /// retry with backoff).
    private func call(_ build: () throws(DBusError) -> DBusMessage, _ attempt: UInt64, _ what: String,
                      timeoutSeconds: Double? = nil, then: @escaping ([DBusValue]) -> Void) {
        let message: DBusMessage
        do { message = try build() } catch {
            return lose(.failed("cannot build \(what): \(error)"))
        }
        bus.call(message, attempt: attempt, timeoutSeconds: timeoutSeconds) { [weak self] result in
            guard let self, isActive else { return }
            switch result {
            case .success(let arguments): then(arguments)
            case .failure(let error): fail(error, during: what, timeout: timeoutSeconds ?? configuration.callTimeoutSeconds)
            }
        }
    }

    private func fail(_ error: DBusError, during what: String, timeout: Double) {
        if error.name == DBusError.accessDeniedName {
            forget()
            bus.close()
            onEvent(.accessDenied(message: error.message))
        } else if error.meansNoAnswer {
            lose(.noAnswer("\(what) within \(timeout) s"))
        } else if error.meansServiceMissing || error.name == DBusError.unknownObjectName || error.name == DBusError.unknownMethodName {
            lose(.notOnBus)
        } else if error.name == DBusError.disconnectedName {
            bus.close()
            lose(.noSystemBus("the connection to the system bus was lost"))
        } else {
            lose(.failed("\(what) failed: \(error)"))
        }
    }
}
