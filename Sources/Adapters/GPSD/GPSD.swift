// SPDX-License-Identifier: Apache-2.0
// QiblaGPSD: the live position source over libgps (gpsd's client library).
//
// Protocol: gpsd_json(5) TPV reports requested with `?WATCH={"enable":true,"json":true}`
// (libgps' `gps_stream(WATCH_ENABLE | WATCH_JSON)`); fix modes as in gps.h (`MODE_NO_FIX` 1,
// `MODE_2D` 2, `MODE_3D` 3). All raw libgps access is in LibGPS.swift.
import Logging
import QiblaCore
import QiblaEventLoop
import QiblaPlatform
import SystemPackage

/// Dimension of a satellite fix, as gpsd's TPV `mode`.
public enum FixMode: Int, Sendable, Equatable {
    /// Latitude and longitude only (gpsd `MODE_2D`).
    case twoD = 2
    /// Latitude, longitude and height (gpsd `MODE_3D`).
    case threeD = 3
}

/// One accepted position from gpsd.
public struct PositionFix: Sendable, Equatable {
    /// Latitude and longitude in degrees (validated, longitude normalised to [-180, 180)) and height
    /// above the WGS84 ellipsoid in metres (gpsd `altHAE`; 0 when ``hasAltitude`` is false).
    public var position: GeodeticPosition
    /// Radius of horizontal uncertainty, metres: `sqrt(epx² + epy²)` when gpsd gives both per-axis
    /// estimates (the root-sum-square of the longitude and latitude errors, i.e. the 2D radial error
    /// built from two per-axis bounds — conservative, never smaller than either axis), otherwise gpsd's
    /// `eph`, otherwise nil. gpsd documents these as roughly 95 % confidence (gpsd_json(5)).
    public var horizontalAccuracyMetres: Double?
    /// Fix time, seconds since the Unix epoch (UTC). When gpsd sent no time, the local wall-clock
    /// time at which the report arrived.
    public var timeUnixSeconds: Double
    /// 2D or 3D.
    public var mode: FixMode
    /// Whether gpsd reported a finite height above the ellipsoid (`altHAE`).
    public var hasAltitude: Bool

    public init(position: GeodeticPosition, horizontalAccuracyMetres: Double?, timeUnixSeconds: Double,
                mode: FixMode, hasAltitude: Bool) {
        self.position = position
        self.horizontalAccuracyMetres = horizontalAccuracyMetres
        self.timeUnixSeconds = timeUnixSeconds
        self.mode = mode
        self.hasAltitude = hasAltitude
    }
}

/// What the source reports to its owner, always on the event loop's thread.
public enum GPSDEvent: Sendable, Equatable {
    /// gpsd answered (its first JSON report arrived) after ``GPSDPositionSource/start()`` or a reconnect.
    case connected
    /// The connection to gpsd ended (closed, read error, not speaking gpsd JSON). Reconnection is
    /// already scheduled. If a fix was current, ``fixLost`` is sent just before this.
    case disconnected(reason: String)
    /// A new valid 2D or 3D fix.
    case fix(PositionFix)
    /// The receiver lost its fix (TPV mode 0/1), no fix arrived for `fixTimeoutSeconds`, or the
    /// connection ended. Sent once per loss; the next ``fix(_:)`` ends it.
    case fixLost
    /// One attempt to connect failed (refused, unreachable, no gpsd answer); the next is already
    /// scheduled (while nothing has listened since ``GPSDPositionSource/start()``: when gpsd's
    /// socket appears or after the absent retry interval, else with backoff). Sent for every attempt: the owner decides what reaches the journal.
    case connectFailed(reason: String)
}

/// Live position source: a gpsd client driven by a ``QiblaEventLoop/EventLoop``.
///
/// - Confined to the loop's thread: create it, call ``start()``/``stop()`` and read its properties
///   there; ``GPSDEvent``s are delivered there.
/// - Connects only between ``start()`` and ``stop()`` (gpsd powers the receiver down when nobody
///   watches). While stopped it holds no socket and no timer.
/// - An attempt first asks whether anything listens: one non-blocking `connect(2)` on the loop's
///   thread to the host's addresses, resolved once per ``start()`` (issue 37: `localhost` and
///   numeric hosts without the resolver; a name on a short-lived thread, once). Only when one
///   accepts does the blocking `gps_open` (libgps' own resolution and `connect(2)`) run, on a
///   short-lived detached POSIX thread, its result handed back with
///   ``QiblaEventLoop/EventLoop/post(_:)``, so a slow or unreachable host never stalls the loop.
///   While gpsd is absent (most phones; on Debian it is socket-activated, so a refusal means
///   absent, not busy) an attempt costs that `connect(2)`: no thread, no libgps, no resolution.
///   Reading is non-blocking: on readiness the source
///   calls `gps_read` while `gps_waiting(data, 0)` says libgps still has buffered bytes, at most
///   ``maximumReportsPerWakeup`` reports per wakeup so an endless stream cannot starve the loop.
/// - While nothing has accepted a connection since ``start()`` (gpsd absent) and the host is this
///   one, watches ``Configuration/controlSocketDirectory`` and tries again when a socket appears
///   there (then at 0.5, 1, 2, 4 s while refused: gpsd binds its control socket before its TCP
///   port), else every ``Configuration/watchedAbsentRetrySeconds``; for another host, or when the
///   directory cannot be watched, every ``Configuration/absentRetrySeconds``. Otherwise
///   reconnects with exponential backoff (initial, doubling, capped at the maximum), reset once a
///   connection delivered a gpsd report. Logs a connection and its loss; failed attempts go to the owner as ``GPSDEvent/connectFailed(reason:)``.
public final class GPSDPositionSource {
    /// Connection and timing settings.
    public struct Configuration: Sendable {
        /// gpsd host name or address.
        public var host: String
        /// gpsd TCP port.
        public var port: Int
        /// Seconds without a new fix after which ``GPSDEvent/fixLost`` is reported.
        public var fixTimeoutSeconds: Double
        /// First reconnect delay, seconds; doubled after each failed attempt.
        public var initialBackoffSeconds: Double
        /// Upper bound of the reconnect delay, seconds.
        public var maximumBackoffSeconds: Double
        /// Seconds between attempts while nothing has accepted a connection since ``start()``
        /// (gpsd absent, as on most phones; on Debian gpsd is socket-activated, so a refusal means
        /// absent, not busy). The doubling backoff is for a gpsd that was there this start (a
        /// restart, a hang). Issue 37: attempts every 0.5, 1, 2, 4, 8 s early in every claim woke
        /// the loop and kept the failure path's pages mapped for nothing.
        public var absentRetrySeconds: Double
        /// Where gpsd's control socket appears when gpsd starts (nil: nowhere to watch). Debian's
        /// `gpsd.socket` creates `/run/gpsd.sock` when gpsd is installed or its socket started,
        /// and `gpsd -F /run/gpsd.sock` does when run by hand; gpsfake puts `gpsfake-PID.sock` in
        /// its `$TMPDIR`. While gpsd on the local host is absent, a name ending in `.sock` created
        /// here asks again at once (issue 37: watched, not polled; `inotify(7)`, no wakeup while
        /// nothing comes).
        public var controlSocketDirectory: String?
        /// Seconds between attempts while gpsd is absent and ``controlSocketDirectory`` is watched:
        /// for a gpsd started without a control socket there.
        public var watchedAbsentRetrySeconds: Double

        public init(host: String = "localhost", port: Int = 2947, fixTimeoutSeconds: Double = 10.0,
                    initialBackoffSeconds: Double = 0.5, maximumBackoffSeconds: Double = 30.0,
                    absentRetrySeconds: Double = 30.0, controlSocketDirectory: String? = "/run",
                    watchedAbsentRetrySeconds: Double = 300.0) {
            self.host = host
            self.port = port
            self.fixTimeoutSeconds = fixTimeoutSeconds
            self.initialBackoffSeconds = initialBackoffSeconds
            self.maximumBackoffSeconds = maximumBackoffSeconds
            self.absentRetrySeconds = absentRetrySeconds
            self.controlSocketDirectory = controlSocketDirectory
            self.watchedAbsentRetrySeconds = watchedAbsentRetrySeconds
        }
    }

    /// Counters since creation.
    public struct Statistics: Sendable, Equatable {
        /// Fixes published as ``GPSDEvent/fix(_:)``.
        public var fixes = 0
        /// 2D/3D reports dropped for non-finite or out-of-range coordinates.
        public var rejected = 0
        /// Connection attempts made after a failed attempt or a lost connection.
        public var reconnects = 0
        /// Lines from the server that were not gpsd JSON.
        public var unparsedLines = 0
        /// Attempts that found nothing listening (a non-blocking `connect(2)` refused or failed).
        public var probesRefused = 0
        /// Attempts that opened libgps on a thread (something listened).
        public var libGPSOpens = 0
        /// Name resolutions made (`getaddrinfo`, on a thread): at most one per ``start()``.
        public var resolutions = 0
        /// Attempts made because a socket appeared in ``Configuration/controlSocketDirectory``.
        public var socketAppearances = 0
        public init() {}
    }

    /// Reports handled per loop wakeup before yielding to other handlers (the rest is read on the
    /// next iteration through a zero-delay timer, because `poll` cannot see libgps' own buffer).
    public static let maximumReportsPerWakeup = 64
    /// A connection that yields this many consecutive non-JSON lines is dropped as "not gpsd".
    static let maximumConsecutiveUnparsedLines = 64
    /// Seconds a connected server gets to send its first gpsd report (gpsd sends VERSION at once).
    static let handshakeTimeoutSeconds = 5.0

    public let configuration: Configuration
    private let loop: EventLoop
    private var logger: Logger
    private let onEvent: (GPSDEvent) -> Void
    private let clock = ContinuousClock()

    /// True between ``start()`` and ``stop()``.
    public private(set) var isActive = false
    /// True while connected to a server that has sent at least one gpsd report.
    public private(set) var isConnected = false
    /// Counters for diagnostics.
    public private(set) var statistics = Statistics()

    // Connection state (loop thread only).
    /// Bumped on every attempt and on stop(): results of stale attempts are discarded.
    private var attempt: UInt64 = 0
    private var isConnecting = false
    private var session: LibGPSSession?
    private var watchToken: EventLoop.Token?
    /// The host's endpoints, resolved once per ``start()`` (nil until then).
    private var endpoints: [TCPEndpoint]?
    /// The probe in flight: its socket, its writable watch, the endpoints left to try.
    private var probe: (attempt: TCPConnectAttempt, endpoint: TCPEndpoint, token: EventLoop.Token, remaining: ArraySlice<TCPEndpoint>)?
    private var probeTimer: EventLoop.Token?
    /// ``Configuration/controlSocketDirectory``'s watch and its readable watch, while gpsd is absent.
    private var socketWatch: (watch: DirectoryWatch, token: EventLoop.Token)?
    /// A watch that could not be made this ``start()`` (no such directory, no inotify): not tried again.
    private var socketWatchFailed = false
    /// Attempts left at the doubling backoff after a socket appeared (gpsd binds its control
    /// socket before it listens on TCP).
    private var attemptsAfterAppearance = 0
    private var retryTimer: EventLoop.Token?
    private var handshakeTimer: EventLoop.Token?
    private var drainTimer: EventLoop.Token?
    private var fixTimer: EventLoop.Token?
    private var backoffSeconds: Double
    private var consecutiveUnparsedLines = 0
    private var hasCurrentFix = false
    private var lastFixInstant: ContinuousClock.Instant?
    private var rejectionLogged = false

    /// - Parameters:
    ///   - onEvent: called on the loop thread; it may call ``stop()``.
    public init(configuration: Configuration = Configuration(), loop: EventLoop, logger: Logger,
                onEvent: @escaping (GPSDEvent) -> Void) {
        self.configuration = configuration
        self.loop = loop
        self.logger = logger
        self.logger[metadataKey: "gpsd"] = "\(configuration.host):\(configuration.port)"
        self.onEvent = onEvent
        self.backoffSeconds = configuration.initialBackoffSeconds
    }

    /// Must run on the loop thread, like every other member: removes this source's watch and timers.
    deinit {
        endProbe()
        endSocketWatch()
        closeSession()
        cancel(&retryTimer)
    }

    /// Number of timers this source has armed (fix timeout, retry, handshake, drain). Zero when stopped.
    var armedTimerCount: Int {
        [retryTimer, handshakeTimer, drainTimer, fixTimer, probeTimer].compactMap { $0 }.filter(loop.isScheduled).count
    }

    // MARK: Public control

    /// Starts connecting to gpsd and watching. Idempotent.
    public func start() {
        guard !isActive else { return }
        isActive = true
        backoffSeconds = configuration.initialBackoffSeconds
        endpoints = TCPEndpoint.withoutResolver(host: configuration.host, port: configuration.port)
        hasListenedSinceStart = false
        socketWatchFailed = false
        attemptsAfterAppearance = 0
        probesRefusedAtStart = statistics.probesRefused
        refusedReason = "nothing accepts connections on \(configuration.host) port \(configuration.port)"
        logger.debug("gpsd position source started")
        connect()
    }

    /// Stops watching: sends `WATCH_DISABLE`, closes the socket, cancels every timer. Emits no event.
    /// A connection attempt still in flight is closed when it completes. Idempotent.
    public func stop() {
        guard isActive else { return }
        isActive = false
        attempt &+= 1
        isConnecting = false
        endProbe()
        endSocketWatch()
        session?.disableWatch()
        closeSession()
        cancel(&retryTimer)
        isConnected = false
        hasCurrentFix = false
        lastFixInstant = nil
        logger.debug("gpsd position source stopped")
    }

    // MARK: Connecting

    private func connect() {
        guard isActive, !isConnecting, session == nil else { return }
        isConnecting = true
        attempt &+= 1
        guard let endpoints else {
            resolveThenProbe(attempt: attempt)
            return
        }
        startProbe(endpoints[...])
    }

    /// A host name (not `localhost`, not numeric): resolved once on a short-lived thread, then probed.
    private func resolveThenProbe(attempt thisAttempt: UInt64) {
        let (host, port, loop) = (configuration.host, configuration.port, self.loop)
        let owner = LoopBound(self)
        statistics.resolutions += 1
        do {
            try PlatformThread.start { _ in
                let result = Result { () throws(TCPResolutionError) -> [TCPEndpoint] in try TCPEndpoint.resolve(host: host, port: port) }
                loop.post {
                    guard let source = owner.value, source.isActive, source.attempt == thisAttempt else { return }
                    switch result {
                    case .success(let resolved):
                        source.endpoints = resolved
                        source.startProbe(resolved[...])
                    case .failure(let error):
                        source.isConnecting = false
                        source.connectFailed(reason: error.description)
                    }
                }
            }
        } catch {
            isConnecting = false
            connectFailed(reason: "cannot create the resolving thread")
        }
    }

    /// Tries `remaining` in order with a non-blocking `connect(2)`; the first that accepts opens libgps.
    private func startProbe(_ remaining: ArraySlice<TCPEndpoint>) {
        var remaining = remaining
        var lastError = lastProbeError
        while let endpoint = remaining.popFirst() {
            let attempt: TCPConnectAttempt
            do {
                attempt = try TCPConnectAttempt(to: endpoint)
            } catch {
                // The usual answer while gpsd is absent, worded once per start(): formatting an
                // errno and an address every attempt would keep their code pages mapped beside
                // the resting path (issue 37).
                lastError = Self.meansNothingListens(error) ? refusedReason : "\(endpoint): \(error)"
                continue
            }
            guard attempt.isInProgress else {
                attempt.close()
                openLibGPS()
                return
            }
            let token = loop.watch(attempt.fileDescriptor, for: .writable) { [unowned self] _ in probeFinished() }
            probe = (attempt, endpoint, token, remaining)
            probeTimer = loop.schedule(after: .seconds(Self.handshakeTimeoutSeconds)) { [unowned self] in
                probeTimer = nil
                let left = probe?.remaining ?? []
                endProbe()
                lastProbeError = "\(endpoint): no answer within \(Self.handshakeTimeoutSeconds) s"
                startProbe(left)
            }
            return
        }
        // Nothing listens: no thread, no libgps, no resolution was spent on it. While gpsd is
        // absent the probe comes every 30 s for the whole claim, and the loop's wakeup and the
        // failure's path would stay mapped beside the resting path: a retry's pages are given back
        // (1.5 ms every 30 s, as before issue 37); the first attempt's go with the claim's own trims.
        isConnecting = false
        statistics.probesRefused += 1
        lastProbeError = "no address"
        let absent = !hasListenedSinceStart
        connectFailed(reason: lastError, pagesTouched: absent && statistics.probesRefused > probesRefusedAtStart + 1 ? .probe : .none,
                      absent: absent)
    }

    /// The last error of a probe that ended asynchronously (its socket's `SO_ERROR`, a timeout).
    private var lastProbeError = "no address"
    /// The reason given while nothing listens, built once per ``start()``.
    private var refusedReason = ""
    /// Something accepted a connection since ``start()``: refusals then get the doubling backoff.
    private var hasListenedSinceStart = false
    /// ``Statistics/probesRefused`` when ``start()`` was called.
    private var probesRefusedAtStart = 0

    /// `ECONNREFUSED` (nothing listens), or `EADDRNOTAVAIL` (`::1` on a host without IPv6).
    static func meansNothingListens(_ error: Errno) -> Bool {
        error == .connectionRefused || error == .addressNotAvailable
    }

    private func probeFinished() {
        guard let current = probe else { return }
        let error = current.attempt.finish()
        endProbe()
        if let error {
            lastProbeError = Self.meansNothingListens(error) ? refusedReason : "\(current.endpoint): \(error)"
            startProbe(current.remaining)
        } else {
            openLibGPS()
        }
    }

    private func endProbe() {
        cancel(&probeTimer)
        guard let current = probe else { return }
        loop.cancel(current.token)
        current.attempt.close()
        probe = nil
    }

    /// Something listens: libgps' blocking `gps_open` on a short-lived thread.
    private func openLibGPS() {
        hasListenedSinceStart = true
        endSocketWatch()
        let thisAttempt = attempt
        let configuration = self.configuration
        let loop = self.loop
        let owner = LoopBound(self)
        statistics.libGPSOpens += 1
        logger.debug("gpsd answers a connect: opening a libgps session (a thread)")
        let started = LibGPSSession.openInBackground(host: configuration.host, port: configuration.port) { transfer in
            loop.post { owner.value?.connectFinished(transfer, attempt: thisAttempt) }
        }
        if !started {
            isConnecting = false
            connectFailed(reason: "cannot create the connecting thread")
        }
    }

    private func connectFinished(_ transfer: LibGPSSession.Transfer, attempt finished: UInt64) {
        guard isActive, finished == attempt else {
            if case .success(let stale) = transfer.result { stale.close() }
            return
        }
        isConnecting = false
        switch transfer.result {
        case .failure(let error):
            connectFailed(reason: error.description)
        case .success(let opened):
            guard opened.makeNonBlocking(), opened.enableWatch() else {
                opened.close()
                connectFailed(reason: "could not send the WATCH request")
                return
            }
            session = opened
            consecutiveUnparsedLines = 0
            watchToken = loop.watch(FileDescriptor(rawValue: opened.fileDescriptor), for: .readable) { [unowned self] _ in
                self.drain()
            }
            handshakeTimer = loop.schedule(after: .seconds(Self.handshakeTimeoutSeconds)) { [unowned self] in
                self.handshakeTimer = nil
                self.connectionLost(reason: "no gpsd report within \(Self.handshakeTimeoutSeconds) s")
            }
        }
    }

    /// The pages a failed attempt mapped that a resting daemon does not use (issue 33, 37).
    enum TouchedPages {
        /// None to give back: the first probe of a claim (its pages go with the claim's own trims).
        case none
        /// A refused `connect(2)` on a loop wakeup of its own: the loop's, this type's and the
        /// runtime's code, about 1.4 MB of the executable mapped 64 KB around each page touched
        /// (retries every 30 s without a trim: 7.6–7.8 MB resident 35–65 s into a still claim
        /// instead of 5.0–5.7 MB, the executable's code 3228 kB instead of 1856 kB). No heap, no
        /// library to speak of: the executable's pages only.
        case probe
        /// An attempt that ran libgps (a thread, libgps, the C library's name resolution, the
        /// failure's own path): the heap and every file's pages.
        case libgps
    }

    /// - Parameter pagesTouched: what the attempt mapped (``TouchedPages``).
    ///   - absent: nothing has accepted a connection since ``start()``: the next attempt after
    ///     ``Configuration/absentRetrySeconds``, not the doubling backoff.
    private func connectFailed(reason: String, pagesTouched: TouchedPages = .libgps, absent: Bool = false) {
        // The owner hears of the failure before the retry is armed, so its log says "cannot
        // connect" before the adapter's "watching … for its socket" (a reader of the log, and the
        // test that waits for the watch, see the failure that caused it).
        if isActive { onEvent(.connectFailed(reason: reason)) }
        scheduleRetry(pagesTouched: pagesTouched, absent: absent)
    }

    private func scheduleRetry(pagesTouched: TouchedPages = .libgps, absent: Bool = false) {
        guard isActive, retryTimer == nil else { return }
        // Issue 33: a failed attempt's pages are given back at the end of this loop iteration, so
        // a claimed daemon keeps only its steady path mapped. Measured with
        // scripts/memory-breakdown.sh: BENCHMARKS.md. The heap first: `malloc_trim` runs code.
        // Issue 37: a probe's trim takes the executable's code only (`releaseCleanExecutableCode`;
        // a trim of every mapping cost 0.6–1.2 ms of CPU, one of the executable's 0.3–0.5 ms with
        // the maps read each time), no `malloc_trim`.
        switch pagesTouched {
        case .none: break
        case .probe: loop.post { MappedFilePages.releaseCleanExecutableCode() }
        case .libgps:
            loop.post {
                Heap.trim()
                MappedFilePages.releaseClean(.all)
            }
        }
        let delay: Double
        if absent, attemptsAfterAppearance > 0 {
            attemptsAfterAppearance -= 1
            delay = backoffSeconds
            backoffSeconds = min(backoffSeconds * 2, configuration.maximumBackoffSeconds)
        } else if absent {
            delay = watchControlSocketDirectory() ? configuration.watchedAbsentRetrySeconds : configuration.absentRetrySeconds
        } else {
            delay = backoffSeconds
            backoffSeconds = min(backoffSeconds * 2, configuration.maximumBackoffSeconds)
        }
        retryTimer = loop.schedule(after: .seconds(delay)) { [unowned self] in
            self.retryTimer = nil
            self.statistics.reconnects += 1
            self.connect()
        }
    }

    // MARK: Watching for gpsd's socket

    /// Attempts at the doubling backoff (0.5, 1, 2, 4 s) after a socket appeared and the attempt
    /// it started was refused: gpsd binds its control socket before its TCP port, and systemd
    /// creates `gpsd.socket`'s sockets one after the other.
    static let attemptsAfterAnAppearance = 4

    /// Watches ``Configuration/controlSocketDirectory`` while gpsd on the local host is absent;
    /// true while a watch is armed. A remote host's gpsd puts nothing here.
    private func watchControlSocketDirectory() -> Bool {
        if socketWatch != nil { return true }
        guard !socketWatchFailed, let directory = configuration.controlSocketDirectory,
              let endpoints, endpoints.allSatisfy(\.isLoopback) else { return false }
        do {
            let watch = try DirectoryWatch(directory: directory)
            let token = loop.watch(watch.fileDescriptor, for: .readable) { [unowned self] _ in socketDirectoryChanged() }
            socketWatch = (watch, token)
            logger.debug("gpsd absent: watching \(directory) for its socket")
            return true
        } catch {
            socketWatchFailed = true
            logger.debug("cannot watch \(directory) for gpsd's socket (\(error)): asking every \(configuration.absentRetrySeconds) s")
            return false
        }
    }

    private func socketDirectoryChanged() {
        guard let current = socketWatch else { return }
        let (names, ended) = current.watch.newNames()
        if ended { endSocketWatch() }
        guard names.contains(where: { $0.hasSuffix(".sock") }), isActive, !isConnecting, session == nil else { return }
        statistics.socketAppearances += 1
        logger.debug("a socket appeared in \(current.watch.directory): asking gpsd again")
        cancel(&retryTimer)
        attemptsAfterAppearance = Self.attemptsAfterAnAppearance
        backoffSeconds = configuration.initialBackoffSeconds
        statistics.reconnects += 1
        connect()
    }

    private func endSocketWatch() {
        guard let current = socketWatch else { return }
        loop.cancel(current.token)
        socketWatch = nil
    }

    /// Whether ``Configuration/controlSocketDirectory`` is watched now (gpsd absent, host local).
    public var isWatchingForSocket: Bool { socketWatch != nil }

    // MARK: Reading

    private func drain() {
        cancel(&drainTimer)
        guard let current = session else { return }
        var handled = 0
        repeat {
            switch current.read() {
            case .closed:
                connectionLost(reason: "gpsd closed the connection")
                return
            case .noCompleteLine:
                return
            case .notGPSDJSON:
                statistics.unparsedLines += 1
                consecutiveUnparsedLines += 1
                if consecutiveUnparsedLines >= Self.maximumConsecutiveUnparsedLines {
                    connectionLost(reason: "the server does not speak gpsd JSON")
                    return
                }
            case .otherReport:
                reportReceived()
            case .tpv(let report):
                reportReceived()
                handle(report)
            }
            // An event handler may have stopped the source or the connection may have changed.
            guard session === current else { return }
            handled += 1
        } while handled < Self.maximumReportsPerWakeup && current.hasBufferedData
        if handled >= Self.maximumReportsPerWakeup && current.hasBufferedData {
            drainTimer = loop.schedule(after: .zero) { [unowned self] in
                self.drainTimer = nil
                self.drain()
            }
        }
    }

    private func reportReceived() {
        consecutiveUnparsedLines = 0
        guard !isConnected else { return }
        isConnected = true
        cancel(&handshakeTimer)
        backoffSeconds = configuration.initialBackoffSeconds
        logger.info("connected to gpsd (libgps API \(LibGPSSession.apiMajorVersion))")
        onEvent(.connected)
    }

    private func handle(_ report: TPVReport) {
        guard report.mode >= 2, let mode = FixMode(rawValue: Int(report.mode)) else {
            if hasCurrentFix { loseFix() }
            return
        }
        let hasAltitude = report.altitudeHAEMetres.isFinite
        let position: GeodeticPosition
        do {
            position = try GeodeticPosition(
                latitudeDegrees: report.latitudeDegrees, longitudeDegrees: report.longitudeDegrees,
                heightMetres: hasAltitude ? report.altitudeHAEMetres : 0)
        } catch {
            statistics.rejected += 1
            if !rejectionLogged {
                rejectionLogged = true
                logger.warning("dropping gpsd fix with invalid coordinates: \(error)")
            } else {
                logger.debug("dropping gpsd fix with invalid coordinates: \(error)")
            }
            return
        }
        rejectionLogged = false
        let fix = PositionFix(
            position: position,
            horizontalAccuracyMetres: Self.horizontalAccuracy(epx: report.epxMetres, epy: report.epyMetres,
                                                              eph: report.ephMetres),
            timeUnixSeconds: report.timeUnixSeconds ?? WallClock.nowUnixSeconds(),
            mode: mode, hasAltitude: hasAltitude)
        statistics.fixes += 1
        hasCurrentFix = true
        lastFixInstant = clock.now
        armFixTimer()
        onEvent(.fix(fix))
    }

    /// Horizontal uncertainty radius in metres: `sqrt(epx² + epy²)` when both per-axis estimates are
    /// finite and non-negative, else `eph` when finite and non-negative, else nil.
    static func horizontalAccuracy(epx: Double, epy: Double, eph: Double) -> Double? {
        if epx.isFinite, epy.isFinite, epx >= 0, epy >= 0 {
            return (epx * epx + epy * epy).squareRoot()
        }
        if eph.isFinite, eph >= 0 { return eph }
        return nil
    }

    // MARK: Fix timeout

    /// One one-shot timer per timeout period, re-armed lazily: each new fix only records its instant.
    private func armFixTimer() {
        guard fixTimer == nil else { return }
        fixTimer = loop.schedule(after: .seconds(configuration.fixTimeoutSeconds)) { [unowned self] in
            self.fixTimer = nil
            self.checkFixTimeout()
        }
    }

    private func checkFixTimeout() {
        guard hasCurrentFix, let last = lastFixInstant else { return }
        let timeout = Duration.seconds(configuration.fixTimeoutSeconds)
        let elapsed = last.duration(to: clock.now)
        if elapsed >= timeout {
            logger.info("no gpsd fix for \(configuration.fixTimeoutSeconds) s")
            loseFix()
        } else {
            fixTimer = loop.schedule(after: timeout - elapsed) { [unowned self] in
                self.fixTimer = nil
                self.checkFixTimeout()
            }
        }
    }

    private func loseFix() {
        hasCurrentFix = false
        lastFixInstant = nil
        cancel(&fixTimer)
        onEvent(.fixLost)
    }

    // MARK: Disconnecting

    private func connectionLost(reason: String) {
        let wasConnected = isConnected
        let hadFix = hasCurrentFix
        closeSession()
        isConnected = false
        hasCurrentFix = false
        lastFixInstant = nil
        if wasConnected {
            logger.warning("disconnected from gpsd: \(reason)")
                scheduleRetry()
            if hadFix { onEvent(.fixLost) }
            guard isActive else { return }
            onEvent(.disconnected(reason: reason))
        } else {
            connectFailed(reason: reason)
        }
    }

    private func closeSession() {
        if let token = watchToken { loop.cancel(token) }
        watchToken = nil
        cancel(&handshakeTimer)
        cancel(&drainTimer)
        cancel(&fixTimer)
        session?.close()
        session = nil
    }

    private func cancel(_ token: inout EventLoop.Token?) {
        if let existing = token { loop.cancel(existing) }
        token = nil
    }
}

/// Carries a loop-confined reference through a `@Sendable` closure (from the connecting thread,
/// via `EventLoop.post`, back to the loop thread, where alone ``value`` is read).
private final class LoopBound<Value: AnyObject>: @unchecked Sendable {
    weak var value: Value?
    init(_ value: Value) { self.value = value }
}
