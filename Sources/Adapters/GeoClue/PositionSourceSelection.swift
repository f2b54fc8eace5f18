// SPDX-License-Identifier: Apache-2.0
// Which live position source qiblad follows while a compass claim is held: the configuration key
// `location-source = auto | gpsd | geoclue | none` and the order it implies. Pure: the wiring asks
// it what to start and where to go when GeoClue2 cannot serve.

/// The value of `location-source`.
public enum LocationSourceMode: String, Sendable, Equatable, CaseIterable {
    /// GeoClue2 when it is activatable or running on the system bus, else gpsd.
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

    /// The source to start at the first claim. `gpsdConfigured` is false for `gpsd = none`.
    /// In `auto` this is GeoClue2; its ``GeoCluePositionSource`` reports
    /// ``GeoClueUnavailability/notOnBus`` at once when the service is neither running nor
    /// activatable, and ``fallback(gpsdConfigured:)`` then names gpsd.
    public func firstSource(gpsdConfigured: Bool) -> LivePositionSource? {
        switch mode {
        case .auto, .geoclue: .geoclue
        case .gpsd: gpsdConfigured ? .gpsd : nil
        case .none: nil
        }
    }

    /// Where to go when GeoClue2 cannot serve this claim (not on the bus, no system bus, access
    /// denied): gpsd in `auto` (when configured), otherwise nothing (stay on manual/last-known).
    public func fallback(gpsdConfigured: Bool) -> LivePositionSource? {
        mode == .auto && gpsdConfigured ? .gpsd : nil
    }

    /// How a GeoClue2 source started in this mode treats a service that is not on the bus: `auto`
    /// wants to hear it at once (to fall back to gpsd), `geoclue` waits for it.
    public var whenGeoClueIsMissing: GeoCluePositionSource.MissingServicePolicy {
        mode == .auto ? .report : .waitForIt
    }
}
