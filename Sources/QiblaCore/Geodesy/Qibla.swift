// SPDX-License-Identifier: Apache-2.0
/// The Qibla from a position: the bearings towards the Kaaba and the distance to it.
///
/// Two bearings are given, both degrees clockwise from **true** north in [0, 360):
/// - `greatCircleBearing`: the initial bearing of the great circle on a sphere, using geodetic
///   latitudes (``GreatCircle/initialBearingDegrees(from:to:)``), the convention of published
///   Qibla tables and the Adhan libraries;
/// - `geodesicBearing`: the initial azimuth of the shortest WGS84 geodesic (``Geodesic``, Karney
///   2013), which differs from the former by up to a few tenths of a degree.
///
/// The distance is the WGS84 geodesic distance in metres; heights are ignored.
///
/// ## Undefined bearings
/// - **At the Kaaba**: when the geodesic distance is below ``atKaabaRadiusMetres`` (1 m) both
///   bearings are `.undefined(.atKaaba)`.
/// - **Antipodal band**: opposite the Kaaba the shortest geodesic is not unique. Its endpoints
///   with two (or more) shortest geodesics form the cut locus, which on an oblate ellipsoid is, to
///   first order in f, the arc of the parallel β = −β_K (β reduced latitude, K the Kaaba) with
///   |Δλ − 180°| ≤ f·180°·cos β_K (Karney 2013, Sect. 5, eqs. (53)–(57): the astroid with y = 0,
///   |x| ≤ 1). For the default Kaaba it is about 0.56° of longitude either side of the antipodal
///   meridian (≈ 58 km each way along 21.42° S, centred on 21.42° S, 140.17° W). Near it the
///   azimuth flips between the two solutions. The band is that arc widened by
///   ``antipodalBandMarginMetres`` (1 km) in every direction, tested as
///
///       a·|β_P + β_K| ≤ w   and   a·cos β_K·(π − |Δλ|) ≤ f·π·a·cos²β_K + w,   w = 1000 m,
///
///   with a the equatorial radius and Δλ reduced to [−π, π]. It contains the exact spherical
///   antipode, where the great-circle bearing is also undefined. Inside it both bearings are
///   `.undefined(.antipodal)`; the distance is still given (it is continuous there).
///
/// ## Poles
/// At a pole every direction is south (north); the bearing is then reported with Karney's
/// convention: as the limit of approaching the pole along the meridian of the longitude given.
/// At the north pole with longitude λ, 0° points along the meridian λ + 180°, and the Qibla is
/// 180° − (λ_K − λ); at the south pole it is (λ_K − λ).
public struct Qibla: Sendable {
    /// Default Kaaba position, WGS84 (the value used by the Adhan libraries): 21.4225241 N, 39.8261818 E.
    public static let defaultKaaba = GeodeticPosition(uncheckedLatitude: 21.4225241, longitude: 39.8261818)
    /// Below this geodesic distance from the Kaaba (metres) the bearings are undefined.
    public static let atKaabaRadiusMetres = 1.0
    /// How far (metres) the antipodal band extends beyond the cut locus opposite the Kaaba.
    public static let antipodalBandMarginMetres = 1000.0

    public var kaaba: GeodeticPosition
    public init(kaaba: GeodeticPosition = Qibla.defaultKaaba) { self.kaaba = kaaba }

    /// Bearings and distance from `position` to the Kaaba.
    public func solve(from position: GeodeticPosition) -> QiblaSolution {
        let geodesic = Geodesic.wgs84
        let inverse = geodesic.inverse(from: position, to: kaaba)
        let distance = inverse.distanceMetres
        if distance < Qibla.atKaabaRadiusMetres {
            return QiblaSolution(
                greatCircleBearing: .undefined(.atKaaba), geodesicBearing: .undefined(.atKaaba), distanceMetres: distance)
        }
        guard !isInAntipodalBand(position),
              let greatCircle = GreatCircle.initialBearingDegrees(from: position, to: kaaba)
        else {
            return QiblaSolution(
                greatCircleBearing: .undefined(.antipodal), geodesicBearing: .undefined(.antipodal),
                distanceMetres: distance)
        }
        return QiblaSolution(
            greatCircleBearing: .degrees(greatCircle),
            geodesicBearing: .degrees(Angle.normalized360(inverse.initialAzimuthDegrees)),
            distanceMetres: distance)
    }

    /// Whether `position` lies in the antipodal band opposite the Kaaba (see the type's
    /// documentation for the definition), where the Qibla bearings are undefined.
    public func isInAntipodalBand(_ position: GeodeticPosition) -> Bool {
        let geodesic = Geodesic.wgs84
        let a = geodesic.equatorialRadiusMetres
        let f = geodesic.flattening
        let w = Qibla.antipodalBandMarginMetres
        func reducedLatitude(_ latitudeDegrees: Double) -> (angle: Double, cos: Double) {
            let (s, c) = Geodesic.sinCosDegrees(latitudeDegrees)
            let beta = Geodesic.normalised(sin: (1 - f) * s, cos: c)
            return (atan2(beta.sin, beta.cos), beta.cos)
        }
        let betaK = reducedLatitude(kaaba.latitudeDegrees)
        let betaP = reducedLatitude(position.latitudeDegrees)
        let deltaLambda = abs(Angle.radians(
            Geodesic.longitudeDifferenceDegrees(from: kaaba.longitudeDegrees, to: position.longitudeDegrees)))
        return a * abs(betaP.angle + betaK.angle) <= w
            && a * betaK.cos * (.pi - deltaLambda) <= f * .pi * a * betaK.cos * betaK.cos + w
    }
}

/// A bearing that may be undefined (at the Kaaba, in the antipodal band).
public enum QiblaBearing: Sendable, Equatable {
    /// Degrees clockwise from true north in [0, 360).
    case degrees(Double)
    case undefined(QiblaUndefinedReason)
    /// The bearing in degrees, or `nil` when undefined.
    public var value: Double? { if case .degrees(let d) = self { d } else { nil } }
}

/// Why a Qibla bearing is undefined.
public enum QiblaUndefinedReason: Sendable, Equatable {
    /// Closer than ``Qibla/atKaabaRadiusMetres`` to the Kaaba.
    case atKaaba
    /// In the antipodal band, where the shortest path to the Kaaba is not unique.
    case antipodal
}

/// The Qibla from one position.
public struct QiblaSolution: Sendable, Equatable {
    /// Great-circle bearing (sphere, geodetic latitudes), degrees from true north in [0, 360).
    public var greatCircleBearing: QiblaBearing
    /// Initial azimuth of the WGS84 geodesic, degrees from true north in [0, 360).
    public var geodesicBearing: QiblaBearing
    /// WGS84 geodesic distance to the Kaaba, metres.
    public var distanceMetres: Double

    public init(greatCircleBearing: QiblaBearing, geodesicBearing: QiblaBearing, distanceMetres: Double) {
        self.greatCircleBearing = greatCircleBearing
        self.geodesicBearing = geodesicBearing
        self.distanceMetres = distanceMetres
    }
}
