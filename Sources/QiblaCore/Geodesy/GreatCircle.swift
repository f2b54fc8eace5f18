// SPDX-License-Identifier: Apache-2.0
/// Great-circle (spherical) bearings, as used by published Qibla tables and the Adhan libraries.
public enum GreatCircle {
    /// Initial great-circle bearing from `from` to `to`, degrees clockwise from true north in [0, 360).
    ///
    /// The spherical formula (forward azimuth of spherical trigonometry; e.g. Snyder, *Map
    /// Projections — A Working Manual*, USGS PP 1395 (1987), ch. 5) applied directly to the
    /// **geodetic** latitudes φ, as every Qibla table does:
    ///
    ///     θ = atan2(sin Δλ cos φ2, cos φ1 sin φ2 − sin φ1 cos φ2 cos Δλ),  Δλ = λ2 − λ1.
    ///
    /// At a pole the bearing follows the meridian of the given longitude (at the north pole with
    /// longitude λ, 0° points along the meridian λ + 180°, so the result is 180° − Δλ).
    ///
    /// - Returns: `nil` when the bearing is undefined: coincident or exactly antipodal points (both
    ///   atan2 arguments zero).
    public static func initialBearingDegrees(from: GeodeticPosition, to: GeodeticPosition) -> Double? {
        let (sinPhi1, cosPhi1) = Geodesic.sinCosDegrees(from.latitudeDegrees)
        let (sinPhi2, cosPhi2) = Geodesic.sinCosDegrees(to.latitudeDegrees)
        let deltaLambda = Geodesic.longitudeDifferenceDegrees(from: from.longitudeDegrees, to: to.longitudeDegrees)
        let (sinDeltaLambda, cosDeltaLambda) = Geodesic.sinCosDegrees(deltaLambda)
        let east = sinDeltaLambda * cosPhi2
        let north = cosPhi1 * sinPhi2 - sinPhi1 * cosPhi2 * cosDeltaLambda
        guard east != 0 || north != 0 else { return nil }
        // atan2 is within [−180°, 180°], so one +360 is `Angle.normalized360` without its fmod.
        let bearing = Angle.degrees(atan2(east, north))
        let wrapped = bearing < 0 ? bearing + 360 : bearing
        return wrapped >= 360 ? 0 : wrapped
    }

    /// Mean Earth radius R₁ = (2a + b)/3 of WGS84, metres (IUGG; Moritz, *Geodetic Reference
    /// System 1980*, J. Geodesy 74 (2000)).
    public static let meanEarthRadiusMetres = 6_371_008.8

    /// Great-circle distance between two positions on the sphere of radius
    /// ``meanEarthRadiusMetres``, metres, by the haversine formula (Sinnott, "Virtues of the
    /// Haversine", Sky and Telescope 68(2), 1984), which stays accurate for small separations:
    ///
    ///     d = 2R asin √(sin²(Δφ/2) + cos φ1 cos φ2 sin²(Δλ/2)).
    ///
    /// Heights are ignored. Against the WGS84 geodesic the result is within 0.5 % (the sphere's
    /// flattening error); for "has the phone moved 5 m" decisions that is 2.5 cm.
    public static func distanceMetres(from: GeodeticPosition, to: GeodeticPosition) -> Double {
        let (sinHalfDeltaPhi, _) = Geodesic.sinCosDegrees((to.latitudeDegrees - from.latitudeDegrees) / 2)
        let deltaLambda = Geodesic.longitudeDifferenceDegrees(from: from.longitudeDegrees, to: to.longitudeDegrees)
        let (sinHalfDeltaLambda, _) = Geodesic.sinCosDegrees(deltaLambda / 2)
        let (_, cosPhi1) = Geodesic.sinCosDegrees(from.latitudeDegrees)
        let (_, cosPhi2) = Geodesic.sinCosDegrees(to.latitudeDegrees)
        let h = sinHalfDeltaPhi * sinHalfDeltaPhi + cosPhi1 * cosPhi2 * sinHalfDeltaLambda * sinHalfDeltaLambda
        return 2 * meanEarthRadiusMetres * asin(min(1, h.squareRoot()))
    }
}
