// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaInterface

/// Which location the daemon publishes, from its three inputs: a live fix (GeoClue2 or gpsd) > the manual
/// location > the last known location. Decides when a new live fix is worth republishing, so GPS
/// jitter on a still phone does not turn into a stream of signals, and when the last known
/// location needs writing.
///
/// **Arbitration** (issue 23): several live sources may run at once (GeoClue2 and gpsd in `auto`);
/// each keeps its newest fix until it reports the fix lost. The published live fix is the
/// published source's newest while it has one; another source takes over at once when the
/// published one loses its fix, and otherwise only when its fix is clearly better — an accuracy
/// below ``switchAccuracyRatio`` times the published one's (a fix without an accuracy counts as
/// worse than any with one) — so two similar fixes do not make the position flap.
///
/// Pure: inputs in, state out. The caller persists ``lastKnown`` when ``lastKnownIsUnsaved``
/// and reports the write back with ``Input/lastKnownSaved(_:)``.
public struct LocationModel: Sendable, Equatable {
    /// Smallest horizontal move (metres) that republishes a live fix. 5 m moves the Qibla bearing
    /// by under 0.001° anywhere farther than 300 km from the Kaaba.
    public static let republishDistanceMetres = 5.0
    /// Smallest height change (metres) that republishes a fix (the declination barely depends on it).
    public static let republishHeightMetres = 50.0
    /// Another source's fix replaces a published one that is still current only when its accuracy
    /// is below this fraction of the published one's (hysteresis against flapping).
    public static let switchAccuracyRatio = 0.5

    /// A live position source, as named in `LocationSource`.
    public enum LiveSource: String, Sendable, Equatable, CaseIterable {
        case geoclue
        case gpsd

        var locationSource: LocationSource {
            switch self {
            case .gpsd: .gpsd
            case .geoclue: .geoclue
            }
        }
    }

    /// The live fix being published (nil while there is none).
    public private(set) var liveFix: Location?
    /// Where ``liveFix`` came from.
    public private(set) var liveSource: LiveSource?
    public private(set) var manual: Location?
    /// The newest live position seen (also fixes too close to the published one to republish).
    public private(set) var lastKnown: Location?
    /// True when ``lastKnown`` changed since it was last saved.
    public private(set) var lastKnownIsUnsaved = false
    /// Each running source's newest fix (nil: none, or lost).
    public private(set) var sourceFixes: [LiveSource: Location] = [:]
    /// What each source is doing, for `LocationSources` (sources never started are absent).
    public private(set) var sourceStates: [LiveSource: LiveSourceState] = [:]

    public init() {}

    public enum Input: Sendable, Equatable {
        /// State files read at start.
        case restored(manual: Location?, lastKnown: Location?)
        /// `SetManualLocation` (a location) or `ClearManualLocation` (nil), after it was saved.
        case manualSet(Location?)
        /// A new live fix from the named position source.
        case liveFix(Location, from: LiveSource)
        /// One source lost its fix or its connection: another source's fix takes over at once,
        /// else the published fix becomes the last known location.
        case sourceLost(LiveSource)
        /// What a source is doing now (waiting for its service, refused, …), for `LocationSources`.
        case sourceState(LiveSource, LiveSourceState)
        /// Every position source was stopped (no claim left, or reconfigured): the published fix
        /// becomes the last known location and the sources' states are forgotten.
        case liveFixLost
        /// The last known location was written to disk (the value written).
        case lastKnownSaved(Location)
    }

    /// Applies `input`; returns true when ``current`` changed (the location group must be
    /// republished).
    @discardableResult
    public mutating func apply(_ input: Input) -> Bool {
        let before = current
        switch input {
        case .restored(let manual, let lastKnown):
            self.manual = manual
            self.lastKnown = lastKnown
            lastKnownIsUnsaved = false
        case .manualSet(let location):
            manual = location
        case .liveFix(let location, let source):
            sourceFixes[source] = location
            sourceStates[source] = .live
            if liveSource == nil || source == liveSource || Self.isClearlyBetter(location, than: liveFix) {
                lastKnown = location
                lastKnownIsUnsaved = true
            }
            if source == liveSource {
                if Self.isSignificantMove(from: liveFix, to: location) { liveFix = location }
            } else if liveSource == nil || Self.isClearlyBetter(location, than: liveFix) {
                // Another source takes over: LocationSource must say so, even without a move.
                liveFix = location
                liveSource = source
            }
        case .sourceLost(let source):
            sourceFixes[source] = nil
            if sourceStates[source] == .live { sourceStates[source] = .noFix }
            if source == liveSource { takeOverOrFallBack() }
        case .sourceState(let source, let state):
            sourceStates[source] = state
            if state != .live, sourceFixes[source] != nil {
                sourceFixes[source] = nil
                if source == liveSource { takeOverOrFallBack() }
            }
        case .liveFixLost:
            sourceFixes = [:]
            sourceStates = [:]
            fallBack()
        case .lastKnownSaved(let written):
            if written == lastKnown { lastKnownIsUnsaved = false }
        }
        let summaryBefore = sourcesSummary
        switch input {
        case .liveFix, .sourceLost, .sourceState, .liveFixLost: summariseSources()
        case .restored, .manualSet, .lastKnownSaved: break
        }
        return before?.location != current?.location || before?.source != current?.source || sourcesSummary != summaryBefore
    }

    /// The published source lost its fix: the best other current fix takes over at once, else the
    /// published fix becomes the last known location.
    private mutating func takeOverOrFallBack() {
        let best = sourceFixes.min { a, b in
            Self.isClearlyBetter(a.value, than: b.value, ratio: 1) || (a.value.horizontalAccuracyMetres == b.value.horizontalAccuracyMetres
                && a.key.rawValue < b.key.rawValue)
        }
        guard let (source, fix) = best else { fallBack(); return }
        liveFix = fix
        liveSource = source
        if fix != lastKnown {
            lastKnown = fix
            lastKnownIsUnsaved = true
        }
    }

    private mutating func fallBack() {
        // The published fix stays what clients see, now as the last known location (fixes
        // within the republish distance of it are not worth a visible jump).
        if let liveFix, liveFix != lastKnown {
            lastKnown = liveFix
            lastKnownIsUnsaved = true
        }
        liveFix = nil
        liveSource = nil
    }

    /// Whether `candidate` is more accurate than `published` by the hysteresis `ratio` (a fix
    /// without an accuracy loses to any with one; two without, neither wins).
    static func isClearlyBetter(_ candidate: Location, than published: Location?, ratio: Double = switchAccuracyRatio) -> Bool {
        guard let published else { return true }
        switch (candidate.horizontalAccuracyMetres, published.horizontalAccuracyMetres) {
        case (let c?, let p?): return c < ratio * p
        case (.some, nil): return true
        case (nil, _): return false
        }
    }

    /// `LocationSources`: `source=state` pairs for the sources started, space-separated, e.g.
    /// `geoclue=waiting gpsd=live`; empty while none runs. Kept up to date by `apply` (so that the
    /// properties, computed at every sample, allocate nothing for it).
    public private(set) var sourcesSummary = ""

    private mutating func summariseSources() {
        let summary = LiveSource.allCases.compactMap { source in sourceStates[source].map { "\(source.rawValue)=\($0.rawValue)" } }
            .joined(separator: " ")
        if summary != sourcesSummary { sourcesSummary = summary }
    }

    /// The published location and where it comes from.
    public var current: (location: Location, source: LocationSource)? {
        if let liveFix, let liveSource { return (liveFix, liveSource.locationSource) }
        if let manual { return (manual, .manual) }
        if let lastKnown { return (lastKnown, .lastKnown) }
        return nil
    }

    /// Whether `candidate` differs enough from the published live fix `published` to republish:
    /// a horizontal move of at least ``republishDistanceMetres`` (haversine,
    /// `GreatCircle.distanceMetres`), a height that appeared or vanished (2D ↔ 3D), a height change
    /// of at least ``republishHeightMetres``, or
    /// an accuracy that appeared, vanished, or changed by max(5 m, 20 %).
    public static func isSignificantMove(from published: Location?, to candidate: Location) -> Bool {
        guard let published else { return true }
        let a = published.position, b = candidate.position
        if GreatCircle.distanceMetres(from: a, to: b) >= republishDistanceMetres { return true }
        if published.hasHeight != candidate.hasHeight { return true }   // a 2D fix became 3D, or back
        if abs(b.heightMetres - a.heightMetres) >= republishHeightMetres { return true }
        switch (published.horizontalAccuracyMetres, candidate.horizontalAccuracyMetres) {
        case (nil, nil): return false
        case (let x?, let y?): return abs(x - y) >= max(5, 0.2 * x)
        default: return true
        }
    }
}

/// What a live position source is doing (the values of `LocationSources`).
public enum LiveSourceState: String, Sendable, Equatable, CaseIterable {
    /// Started; its service has not answered yet (GeoClue2 holding `CreateClient` without an agent,
    /// gpsd not connected).
    case waiting
    /// Serving fixes.
    case live
    /// Connected, but it has no fix (a receiver indoors, mode 1).
    case noFix = "no-fix"
    /// Its service said no (GeoClue2 `AccessDenied`).
    case refused
    /// Its service is not there (GeoClue2 not installed or not on the bus, gpsd not running).
    case absent
}
