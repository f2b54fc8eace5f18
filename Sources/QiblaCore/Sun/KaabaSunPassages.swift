// SPDX-License-Identifier: Apache-2.0
// KaabaSunPassages.swift — when the sun stands over the Kaaba, or under it.

/// A passage of the sun closest to the Kaaba's zenith or nadir.
public struct KaabaSunPassage: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// The sun closest to the zenith: at that moment every shadow in the sunlit half of the
        /// Earth points away from the Qibla.
        case zenith
        /// The sun closest to the nadir (the sun overhead at the Kaaba's antipode): wherever it is
        /// up it stands opposite the Qibla (the Kaaba and its antipode lie on one great circle
        /// through every place, in opposite directions), so every shadow points to the Qibla.
        case nadir
    }

    /// Seconds since the Unix epoch, UTC.
    public var unixSeconds: Double
    public var kind: Kind
    /// The sun's geometric angle from the zenith (or from the nadir) at the Kaaba then, degrees.
    public var separationDegrees: Double
}

/// The Kaaba's zenith and nadir passages of a year: on the two days a year when the sun's
/// declination passes the Kaaba's latitude φ_K (late May, mid July), the moment of its upper
/// culmination at the Kaaba on the day it comes closest to the zenith; likewise for −φ_K (January,
/// late November) and the lower culmination, closest to the nadir.
///
/// ## Method
/// The sun's geocentric declination at 00:00 UTC of every day of the year (SPA) brackets the days
/// where δ − φ_K (δ + φ_K) changes sign. For the three culminations around each, the geometric
/// zenith angle at the Kaaba (SPA, no refraction) is minimised (maximised for the nadir) with
/// Brent's minimiser over ±45 min around 12:00 − λ_K/15 h (00:00 for the nadir), which contains the
/// culmination for any equation of time; the culmination with the smallest separation is the
/// passage.
///
/// ## Accuracy
/// The time of culmination is found to 0.1 s of SPA's time; SPA's uncertainty (0.0003°, about
/// 0.07 s of hour angle) and the use of UTC for UT1 (< 0.9 s) leave it well within a minute.
/// Published for the default Kaaba: 27/28 May about 09:18 UTC and 15/16 July about 09:27 UTC.
public enum KaabaSunPassages {
    /// The years for which passages are computed: those of ``DeltaT``, 1900 to 2149.
    public static let validYears: ClosedRange<Int> = 1900...2149

    /// The passages of `year` in time order (four: two zenith and two nadir passages), or nil when
    /// the year is outside ``validYears``.
    public static func passages(year: Int, kaaba: GeodeticPosition = Qibla.defaultKaaba) -> [KaabaSunPassage]? {
        guard validYears.contains(year) else { return nil }
        let firstDay = DecimalYear.daysFromCivil(year: year, month: 1, day: 1)
        let nextFirstDay = DecimalYear.daysFromCivil(year: year + 1, month: 1, day: 1)
        let observer = SolarPositionAlgorithm.Observer(kaaba)
        let latitude = kaaba.latitudeDegrees
        // Declination at 00:00 UTC from the day before the year to the day after it.
        var declinations: [Double] = []
        for day in (firstDay - 1)...(nextFirstDay + 1) {
            let t = Double(day) * 86_400
            declinations.append(SolarPositionAlgorithm.geocentric(at: t, deltaTSeconds: DeltaT.seconds(unixSeconds: t) ?? 0)
                .declinationDegrees)
        }
        func separation(_ t: Double, _ kind: KaabaSunPassage.Kind) -> Double {
            let deltaT = DeltaT.seconds(unixSeconds: t) ?? 0
            let sun = SolarPositionAlgorithm.geocentric(at: t, deltaTSeconds: deltaT)
            let e0 = SolarPositionAlgorithm.topocentric(sun, at: t, observer: observer, atmosphere: nil).geometricElevationDegrees
            return kind == .zenith ? 90 - e0 : 90 + e0
        }
        // Culmination (UTC seconds of day) for the mean sun: upper at 12:00 − λ/15 h, lower 12 h later.
        let upperSecondsOfDay = Angle.normalized360(180 - kaaba.longitudeDegrees) / 360 * 86_400
        var result: [KaabaSunPassage] = []
        for kind in [KaabaSunPassage.Kind.zenith, .nadir] {
            let target = kind == .zenith ? latitude : -latitude
            let culmination = kind == .zenith ? upperSecondsOfDay : fmod(upperSecondsOfDay + 43_200, 86_400)
            for i in 0..<(declinations.count - 1)
            where (declinations[i] > target) != (declinations[i + 1] > target) {
                let day = firstDay - 1 + i
                var best: KaabaSunPassage?
                for candidate in (day - 1)...(day + 1) {
                    let centre = Double(candidate) * 86_400 + culmination
                    let (t, value) = Brent.minimum({ separation($0, kind) }, centre - 2_700, centre + 2_700, tolerance: 0.1)
                    if best == nil || value < best!.separationDegrees {
                        best = KaabaSunPassage(unixSeconds: t, kind: kind, separationDegrees: value)
                    }
                }
                if let best, best.unixSeconds >= Double(firstDay) * 86_400, best.unixSeconds < Double(nextFirstDay) * 86_400 {
                    result.append(best)
                }
            }
        }
        return result.sorted { $0.unixSeconds < $1.unixSeconds }
    }
}
