import QiblaCore
import QiblaDBus

/// The values of every `io.github.qiblad.Qibla1` property (dbus/io.github.qiblad.Qibla1.xml).
/// NaN means "unknown" for doubles.
struct PublishedProperties: Equatable {
    var latitude = Double.nan
    var longitude = Double.nan
    var altitude = Double.nan
    var locationAccuracy = Double.nan
    var locationTimestampMicroseconds: UInt64 = 0
    var locationSource = LocationSource.none

    var qiblaBearing = Double.nan
    var qiblaBearingGeodesic = Double.nan
    var kaabaDistance = Double.nan
    var declination = Double.nan

    var hasCompass = false
    var heading = Double.nan
    var magneticHeading = Double.nan
    var headingAxis = "none"
    var qiblaRelativeBearing = Double.nan
    var compassAccuracy = "unknown"
    var headingError = Double.nan
    var calibrationNeeded = false
    var calibrationProgress = 0.0
    var magneticInterference = false

    var version = qibladVersion

    /// Property names in the order of the introspection XML.
    static let names = [
        "Latitude", "Longitude", "Altitude", "LocationAccuracy", "LocationTimestamp", "LocationSource",
        "QiblaBearing", "QiblaBearingGeodesic", "KaabaDistance", "Declination",
        "HasCompass", "Heading", "MagneticHeading", "HeadingAxis", "QiblaRelativeBearing",
        "CompassAccuracy", "HeadingError", "CalibrationNeeded", "CalibrationProgress", "MagneticInterference",
        "Version",
    ]

    /// The rate-limited heading group: at most max-signal-rate signals a second, changes ≥ 0.1°.
    static let headingGroup: Set<String> = ["Heading", "MagneticHeading", "QiblaRelativeBearing", "HeadingError"]

    func value(of name: String) -> DBusValue? {
        switch name {
        case "Latitude": .double(latitude)
        case "Longitude": .double(longitude)
        case "Altitude": .double(altitude)
        case "LocationAccuracy": .double(locationAccuracy)
        case "LocationTimestamp": .uint64(locationTimestampMicroseconds)
        case "LocationSource": .string(locationSource.rawValue)
        case "QiblaBearing": .double(qiblaBearing)
        case "QiblaBearingGeodesic": .double(qiblaBearingGeodesic)
        case "KaabaDistance": .double(kaabaDistance)
        case "Declination": .double(declination)
        case "HasCompass": .bool(hasCompass)
        case "Heading": .double(heading)
        case "MagneticHeading": .double(magneticHeading)
        case "HeadingAxis": .string(headingAxis)
        case "QiblaRelativeBearing": .double(qiblaRelativeBearing)
        case "CompassAccuracy": .string(compassAccuracy)
        case "HeadingError": .double(headingError)
        case "CalibrationNeeded": .bool(calibrationNeeded)
        case "CalibrationProgress": .double(calibrationProgress)
        case "MagneticInterference": .bool(magneticInterference)
        case "Version": .string(version)
        default: nil
        }
    }

    /// Names whose values differ between `self` and `other` (NaN equals NaN here).
    func changedNames(comparedTo other: PublishedProperties) -> [String] {
        Self.names.filter { !sameValue(value(of: $0), other.value(of: $0)) }
    }
}

/// Where the published location comes from (`LocationSource`).
enum LocationSource: String, Sendable {
    case gpsd, manual, lastKnown = "last-known", none
}

/// Equality that treats NaN as equal to NaN (so "unknown" stays unchanged).
func sameValue(_ a: DBusValue?, _ b: DBusValue?) -> Bool {
    if case .double(let x)? = a, case .double(let y)? = b {
        return x == y || (x.isNaN && y.isNaN)
    }
    return a == b
}

/// True when two doubles differ by at least `resolution`, or one is NaN and the other not.
func differs(_ a: Double, _ b: Double, by resolution: Double, circular: Bool = false) -> Bool {
    if a.isNaN || b.isNaN { return a.isNaN != b.isNaN }
    let d = circular ? abs(Angle.normalized180(a - b)) : abs(a - b)
    return d >= resolution
}
