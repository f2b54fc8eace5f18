// SPDX-License-Identifier: Apache-2.0
// Which live position source qiblad follows while a compass claim is held: the configuration key
// `location-source = auto | gpsd | geoclue | none` and the order it implies. Pure: the wiring asks
// it what to start and where to go when GeoClue2 cannot serve.

/// The value of `location-source`.
public enum LocationSourceMode: String, Sendable, Equatable, CaseIterable {
    /// GeoClue2 (when it is activatable or running on the system bus) and gpsd together, the
    /// better fix published.
    case auto
    /// gpsd only.
    case gpsd
    /// GeoClue2 only (waited for, with backoff, when it is not on the bus).
    case geoclue
    /// No live source: the manual or the last known location only.
    case none
}

/// A live position source.
public enum LivePositionSource: String, Sendable, Equatable {
    case gpsd
    case geoclue
}

/// The configuration section of the live position source: `location-source` and the GeoClue2
/// client's settings. Manual and last-known locations are the fallback in every mode (the model
/// publishes them whenever no live fix is current).
public struct PositionSourceSelection: Sendable, Equatable {
    /// `location-source`, default `auto`.
    public var mode: LocationSourceMode
    /// The GeoClue2 client's settings.
    public var geoclue: GeoCluePositionSource.Configuration

    public init(mode: LocationSourceMode = .auto, geoclue: GeoCluePositionSource.Configuration = .init()) {
        self.mode = mode
        self.geoclue = geoclue
    }

    /// The sources to start at the first claim, all at once (issue 23: a source that does not
    /// answer, such as GeoClue2 holding `CreateClient` with no agent, never delays another).
    /// `gpsdConfigured` is false for `gpsd = none`. `auto` runs GeoClue2 and gpsd together and
    /// ``QiblaDaemon/LocationModel`` publishes the better fix.
    public func sourcesToStart(gpsdConfigured: Bool) -> [LivePositionSource] {
        switch mode {
        case .auto: gpsdConfigured ? [.geoclue, .gpsd] : [.geoclue]
        case .geoclue: [.geoclue]
        case .gpsd: gpsdConfigured ? [.gpsd] : []
        case .none: []
        }
    }

    /// How a GeoClue2 source started in this mode treats a service that is not on the bus: `auto`
    /// wants to hear it at once (gpsd alone serves then), `geoclue` waits for it.
    public var whenGeoClueIsMissing: GeoCluePositionSource.MissingServicePolicy {
        mode == .auto ? .report : .waitForIt
    }
}
