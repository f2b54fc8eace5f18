import QiblaCore
import QiblaState

/// Chooses the published location: a live fix > the manual location > the last known location.
/// Also decides when a new live fix is worth republishing, so GPS jitter on a still phone does
/// not turn into a stream of signals.
struct LocationResolver {
    var liveFix: StoredLocation?
    var manual: StoredLocation?
    var lastKnown: StoredLocation?

    /// Smallest horizontal move (metres) that republishes a live fix. 5 m moves the Qibla bearing
    /// by under 0.001° anywhere farther than 300 km from the Kaaba.
    static let republishDistanceMetres = 5.0
    /// Smallest height change (metres) that republishes a fix (the declination barely depends on it).
    static let republishHeightMetres = 50.0

    var current: (StoredLocation, LocationSource)? {
        if let liveFix { return (liveFix, .gpsd) }
        if let manual { return (manual, .manual) }
        if let lastKnown { return (lastKnown, .lastKnown) }
        return nil
    }

    /// Whether `candidate` differs enough from the published live fix to republish it.
    func isSignificant(_ candidate: StoredLocation) -> Bool {
        guard let liveFix else { return true }
        let a = liveFix.position, b = candidate.position
        let metresPerDegree = 111_320.0
        let dy = (b.latitudeDegrees - a.latitudeDegrees) * metresPerDegree
        let dx = Angle.normalized180(b.longitudeDegrees - a.longitudeDegrees) * metresPerDegree
            * cos(Angle.radians(a.latitudeDegrees))
        if (dx * dx + dy * dy).squareRoot() >= Self.republishDistanceMetres { return true }
        if abs(b.heightMetres - a.heightMetres) >= Self.republishHeightMetres { return true }
        switch (liveFix.horizontalAccuracyMetres, candidate.horizontalAccuracyMetres) {
        case (nil, nil): return false
        case (let x?, let y?): return abs(x - y) >= max(5, 0.2 * x)
        default: return true
        }
    }
}
