// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaDaemon
import QiblaEventLoop
import QiblaGeoClue
import QiblaGPSD
import QiblaInterface
import QiblaPlatform

/// The live position sources (gpsd, GeoClue2) wired to the location model: started and stopped
/// with the live sources, their events fed in as ``LocationModel/Input``s, the log lines as
/// ``DaemonLog`` says. Which source is published is ``LocationModel``'s arbitration.
extension Daemon {
    /// Starts the live position sources `location-source` names, all at once (`auto`: GeoClue2 and
    /// gpsd; the model publishes the better fix).
    func startPositionSource() {
        let selection = options.configuration.positionSource
        for source in selection.sourcesToStart(gpsdConfigured: options.configuration.gpsd != nil) {
            switch source {
            case .geoclue: startGeoClue()
            case .gpsd: startGPSD()
            }
        }
    }

    func startGPSD() {
        guard gpsd == nil, let configuration = options.configuration.gpsd else { return }
        let source = GPSDPositionSource(configuration: configuration, loop: loop, logger: logger) { [unowned self] event in
            handle(event)
        }
        gpsd = source
        sourceState(.gpsd, .waiting)
        source.start()
    }

    func startGeoClue() {
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
            write(log.fact(.geoclueWait, "GeoClue2 has not answered in \(Int(Self.geoclueWaitSeconds)) s: no GeoClue agent for uid "
                     + "\(Environment.userID)? (GeoClue 2.6 waits for one without a limit; see README, Position sources)"
                     + (gpsd != nil ? "; gpsd serves meanwhile" : "")))
        }
    }

    /// Seconds after which a GeoClue2 that has not answered is reported (once a run).
    static let geoclueWaitSeconds = 5.0

    func stopPositionSource() {
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
    func leaveGeoClue(_ state: LiveSourceState) -> String {
        geoclue?.stop()
        geoclue = nil
        // Its wait has nothing left to report: no wakeup 5 s into the claim (issue 37).
        if let token = geoclueWaitToken { loop.cancel(token) }
        geoclueWaitToken = nil
        sourceState(.geoclue, state)
        return gpsd != nil ? "using gpsd" : "no live position (manual or last known location only)"
    }

    func sourceState(_ source: LocationModel.LiveSource, _ state: LiveSourceState) {
        guard model.location.sourceStates[source] != state else { return }
        let before = model.location.liveSource
        model.apply(.sourceState(source, state), nowUnixSeconds: WallClock.nowUnixSeconds())
        noteLiveSourceChange(from: before)
        publish()
    }

    func liveFix(_ location: Location, from source: LocationModel.LiveSource) {
        let before = model.location.liveSource
        model.apply(.liveFix(location, from: source), nowUnixSeconds: WallClock.nowUnixSeconds())
        noteLiveSourceChange(from: before)
        scheduleLastKnownWrite()
        publish()
    }

    /// One source lost its fix or its connection: another takes over, or the fallback.
    func sourceLost(_ source: LocationModel.LiveSource) {
        guard model.location.sourceFixes[source] != nil else { return }
        let before = model.location.liveSource
        model.apply(.sourceLost(source), nowUnixSeconds: WallClock.nowUnixSeconds())
        noteLiveSourceChange(from: before)
        scheduleLastKnownWrite()
        publish()
    }

    /// One log line when the published live source changes.
    func noteLiveSourceChange(from before: LocationModel.LiveSource?) {
        write(DaemonLog.liveSourceChange(from: before, to: model.location))
    }

    func handle(_ event: GPSDEvent) {
        switch event {
        case .connected:
            log.gpsdConnected()
            sourceState(.gpsd, .noFix)
        case .connectFailed(let reason):
            write(log.gpsdUnreachable(reason: reason))
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

    func handle(_ event: GeoClueEvent) {
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
                write(log.fact(.geoclue, "GeoClue2 is not available (\(reason)); \(leaveGeoClue(.absent))"))
            }
        case .accessDenied(let message):
            let line = GeoClueAuthorization.hint(desktopId: options.configuration.positionSource.geoclue.desktopId,
                                                 refusal: message) + "; meanwhile \(leaveGeoClue(.refused))"
            write(log.once(.geoclueRefusal, line, level: .warning))
        }
    }
}
