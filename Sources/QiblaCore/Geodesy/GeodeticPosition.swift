// SPDX-License-Identifier: Apache-2.0
/// A point on or above the WGS84 ellipsoid: geodetic latitude and longitude in degrees, height in
/// metres above the ellipsoid (HAE; gpsd's `altHAE`).
public struct GeodeticPosition: Sendable, Hashable, CustomStringConvertible {
    /// Geodetic latitude, degrees north, in [-90, 90].
    public var latitudeDegrees: Double
    /// Longitude, degrees east, normalised to [-180, 180).
    public var longitudeDegrees: Double
    /// Height above the WGS84 ellipsoid, metres.
    public var heightMetres: Double

    /// Validates and normalises. Latitude must be finite and in [-90, 90]; longitude finite and in
    /// [-180, 360) (it is normalised to [-180, 180)); height finite.
    public init(latitudeDegrees: Double, longitudeDegrees: Double, heightMetres: Double = 0) throws(CoordinateError) {
        guard latitudeDegrees.isFinite else { throw .nonFiniteLatitude }
        guard longitudeDegrees.isFinite else { throw .nonFiniteLongitude }
        guard heightMetres.isFinite else { throw .nonFiniteHeight }
        guard (-90.0...90.0).contains(latitudeDegrees) else { throw .latitudeOutOfRange(latitudeDegrees) }
        guard longitudeDegrees >= -180, longitudeDegrees < 360 else { throw .longitudeOutOfRange(longitudeDegrees) }
        self.latitudeDegrees = latitudeDegrees
        self.longitudeDegrees = longitudeDegrees >= 180 ? longitudeDegrees - 360 : longitudeDegrees
        self.heightMetres = heightMetres
    }

    /// For constants known to be valid (the Kaaba, test fixtures). Traps on invalid input.
    public init(uncheckedLatitude latitude: Double, longitude: Double, heightMetres: Double = 0) {
        do {
            try self.init(latitudeDegrees: latitude, longitudeDegrees: longitude, heightMetres: heightMetres)
        } catch {
            preconditionFailure("invalid constant position: \(error)")
        }
    }

    public var description: String { "\(latitudeDegrees), \(longitudeDegrees)" }
}

/// Why a coordinate was refused. The description is a sentence fit for a D-Bus error or stderr.
public enum CoordinateError: Error, Equatable, Sendable, CustomStringConvertible {
    case nonFiniteLatitude
    case nonFiniteLongitude
    case nonFiniteHeight
    case latitudeOutOfRange(Double)
    case longitudeOutOfRange(Double)

    public var description: String {
        switch self {
        case .nonFiniteLatitude: "latitude must be a finite number of degrees"
        case .nonFiniteLongitude: "longitude must be a finite number of degrees"
        case .nonFiniteHeight: "height must be a finite number of metres"
        case .latitudeOutOfRange(let v): "latitude \(v)° is outside [-90, 90]"
        case .longitudeOutOfRange(let v): "longitude \(v)° is outside [-180, 360)"
        }
    }
}
