// SPDX-License-Identifier: Apache-2.0
/// A position with what is known about its quality: where a fix, a manual pin or a restored state
/// file says the device is. The one location type of the daemon, from the adapters to the model.
public struct Location: Sendable, Equatable {
    /// Latitude, longitude (degrees, WGS84) and height above the ellipsoid (metres).
    public var position: GeodeticPosition
    /// Horizontal accuracy, metres (nil = unknown; a manual location has none).
    public var horizontalAccuracyMetres: Double?
    /// When the position was taken, seconds since the Unix epoch (UTC).
    public var timestampUnixSeconds: Double
    /// Whether `position.heightMetres` was measured (false for a 2D fix, whose height is 0).
    public var hasHeight: Bool

    public init(position: GeodeticPosition, horizontalAccuracyMetres: Double? = nil, timestampUnixSeconds: Double,
                hasHeight: Bool = true) {
        self.position = position
        self.horizontalAccuracyMetres = horizontalAccuracyMetres
        self.timestampUnixSeconds = timestampUnixSeconds
        self.hasHeight = hasHeight
    }
}
