// SPDX-License-Identifier: Apache-2.0
// One location read from a GeoClue2 `org.freedesktop.GeoClue2.Location` object and checked before
// it goes any further. Properties (org.freedesktop.GeoClue2.Location.xml): Latitude (d, degrees),
// Longitude (d, degrees), Accuracy (d, metres), Altitude (d, metres, -G_MAXDOUBLE = unknown),
// Timestamp ((tt) seconds and microseconds since the Unix epoch); Speed, Heading and Description
// are not used.
import QiblaCore
import QiblaDBus

/// One accepted position from GeoClue2.
public struct GeoClueFix: Sendable, Equatable {
    /// Latitude and longitude in degrees (validated, longitude normalised to [-180, 180)) and height
    /// in metres: GeoClue's `Altitude` when known (0 when ``hasAltitude`` is false). GeoClue's NMEA
    /// and modem sources report the height above mean sea level (GGA field 9), which differs from
    /// the height above the ellipsoid by the geoid separation (±110 m at most): far too little to
    /// change the WMM2025 declination noticeably.
    public var position: GeodeticPosition
    /// Whether GeoClue gave a usable altitude.
    public var hasAltitude: Bool
    /// GeoClue's `Accuracy`, metres (radius of horizontal uncertainty); nil when absent, negative or
    /// not finite.
    public var horizontalAccuracyMetres: Double?
    /// GeoClue's `Timestamp`, seconds since the Unix epoch; nil when it gave none (0 seconds).
    public var timeUnixSeconds: Double?

    public init(position: GeodeticPosition, hasAltitude: Bool, horizontalAccuracyMetres: Double?,
                timeUnixSeconds: Double?) {
        self.position = position
        self.hasAltitude = hasAltitude
        self.horizontalAccuracyMetres = horizontalAccuracyMetres
        self.timeUnixSeconds = timeUnixSeconds
    }

    /// Heights outside this range (metres) are treated as unknown: nothing that carries a phone
    /// is 1 km below sea level or 100 km above it, and GeoClue's "unknown" is -1.8e308.
    public static let plausibleAltitudeMetres = -1_000.0...100_000.0

    /// Validates the reply of `GetAll("org.freedesktop.GeoClue2.Location")` (an `a{sv}` as a
    /// dictionary; variants may still be wrapped).
    ///
    /// Latitude and Longitude must be doubles, finite and in range; everything else is optional
    /// and dropped (not the whole fix) when it is of the wrong type or out of range.
    public static func validated(_ properties: [String: DBusValue]) throws(GeoClueReadingError) -> GeoClueFix {
        func double(_ name: String) throws(GeoClueReadingError) -> Double {
            guard let value = properties[name]?.unwrappingVariants else { throw .missing(name) }
            guard let number = value.double else { throw .wrongType(name, signature: value.signature) }
            return number
        }
        let latitude = try double("Latitude")
        let longitude = try double("Longitude")
        let altitude = properties["Altitude"]?.unwrappingVariants.double
        let hasAltitude = altitude.map { $0.isFinite && plausibleAltitudeMetres.contains($0) } ?? false
        let position: GeodeticPosition
        do {
            position = try GeodeticPosition(latitudeDegrees: latitude, longitudeDegrees: longitude,
                                            heightMetres: hasAltitude ? altitude! : 0)
        } catch {
            throw .invalidCoordinates(error)
        }
        // GeoClue's longitude is in [-180, 180]; GeodeticPosition also accepts [180, 360).
        guard longitude <= 180 else { throw .invalidCoordinates(.longitudeOutOfRange(longitude)) }
        let accuracy = properties["Accuracy"]?.unwrappingVariants.double.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        return GeoClueFix(position: position, hasAltitude: hasAltitude, horizontalAccuracyMetres: accuracy,
                          timeUnixSeconds: timestamp(properties["Timestamp"]?.unwrappingVariants))
    }

    /// `Timestamp` `(tt)`: seconds and microseconds since the epoch. nil for a missing or malformed
    /// value, 0 seconds, or microseconds ≥ 1 000 000.
    static func timestamp(_ value: DBusValue?) -> Double? {
        guard let fields = value?.structure, fields.count == 2,
              let seconds = fields[0].uint64, let microseconds = fields[1].uint64,
              seconds > 0, microseconds < 1_000_000 else { return nil }
        return Double(seconds) + Double(microseconds) / 1e6
    }
}

/// Why a GeoClue2 location object was not accepted.
public enum GeoClueReadingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A required property (Latitude, Longitude) is absent.
    case missing(String)
    /// A required property has another D-Bus type than `d`.
    case wrongType(String, signature: String)
    /// Not finite or out of range.
    case invalidCoordinates(CoordinateError)
    /// The reply was not the `a{sv}` of `GetAll`.
    case malformedReply(String)

    public var description: String {
        switch self {
        case .missing(let name): "the location has no \(name)"
        case .wrongType(let name, let signature): "\(name) has type \"\(signature)\", not \"d\""
        case .invalidCoordinates(let error): error.description
        case .malformedReply(let text): text
        }
    }
}
