// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaInterface

/// Which location the daemon publishes, from its three inputs: a live fix (GeoClue2 or gpsd) > the manual
/// location > the last known location. Decides when a new live fix is worth republishing, so GPS
/// jitter on a still phone does not turn into a stream of signals, and when the last known
/// location needs writing.
///
/// Pure: inputs in, state out. The caller persists ``lastKnown`` when ``lastKnownIsUnsaved``
/// and reports the write back with ``Input/lastKnownSaved(_:)``.
public struct LocationModel: Sendable, Equatable {
    /// Smallest horizontal move (metres) that republishes a live fix. 5 m moves the Qibla bearing
    /// by under 0.001° anywhere farther than 300 km from the Kaaba.
    public static let republishDistanceMetres = 5.0
    /// Smallest height change (metres) that republishes a fix (the declination barely depends on it).
    public static let republishHeightMetres = 50.0

    /// A live position source, as named in `LocationSource`.
    public enum LiveSource: Sendable, Equatable {
        case gpsd
        case geoclue

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

    public init() {}

    public enum Input: Sendable, Equatable {
        /// State files read at start.
        case restored(manual: Location?, lastKnown: Location?)
        /// `SetManualLocation` (a location) or `ClearManualLocation` (nil), after it was saved.
        case manualSet(Location?)
        /// A new live fix from the named position source.
        case liveFix(Location, from: LiveSource)
        /// The position source lost its fix or its connection, or was stopped (no claim left):
        /// the published fix becomes the last known location.
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
            lastKnown = location
            lastKnownIsUnsaved = true
            // A fix from another source is always published: LocationSource must say so.
            if source != liveSource || Self.isSignificantMove(from: liveFix, to: location) {
                liveFix = location
                liveSource = source
            }
        case .liveFixLost:
            // The published fix stays what clients see, now as the last known location (fixes
            // within the republish distance of it are not worth a visible jump).
            if let liveFix, liveFix != lastKnown {
                lastKnown = liveFix
                lastKnownIsUnsaved = true
            }
            liveFix = nil
            liveSource = nil
        case .lastKnownSaved(let written):
            if written == lastKnown { lastKnownIsUnsaved = false }
        }
        return before?.location != current?.location || before?.source != current?.source
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
