// SPDX-License-Identifier: Apache-2.0
// DeltaT.swift — ΔT = TT − UT, the difference between Terrestrial Time and Universal Time.
//
// Model: F. Espenak and J. Meeus, "Five Millennium Canon of Solar Eclipses: −1999 to +3000"
// (NASA/TP-2006-214141, 2006), Sect. 2.6, the polynomial expressions for ΔT; the same
// polynomials are published at eclipse.gsfc.nasa.gov/SEcat5/deltatpoly.html.

/// ΔT = TT − UT in seconds, from the Espenak & Meeus (2006) polynomials for 1900–2150.
///
/// ## Model
/// Each polynomial is evaluated at the decimal year `y` (Espenak & Meeus use `y = year +
/// (month − 0.5)/12`; here `y` is the exact decimal year of the instant, so ΔT is continuous within
/// each segment; the two differ by less than 0.1 s of ΔT between 1990 and 2060). The segments used:
/// 1900–1920, 1920–1941, 1941–1961, 1961–1986, 1986–2005, 2005–2050, 2050–2150. At the segment
/// boundaries the published polynomials jump by up to about 1 s (1986, 2005, 2050).
///
/// ## Accuracy
/// Against the measured ΔT (IERS) the model is within about 1 s from 1900 to 2005, but the
/// 2005–2050 extrapolation runs ahead of reality: about 74.5 s for 2025 against a measured 69.2 s,
/// and the 2050–2150 segment is a forecast whose uncertainty grows to tens of seconds. For the
/// sun this hardly matters: ΔT only shifts the ephemeris time at which the Earth's orbit is
/// evaluated (the Earth's rotation uses UT), and the sun moves about 0.04″ per second of time along
/// the ecliptic, so 10 s of ΔT error moves the sun by 0.0001°. (The Earth's rotation, by contrast,
/// is taken from UTC as if it were UT1; |UT1 − UTC| < 0.9 s is up to 0.004° of hour angle, the
/// larger error of the two.)
///
/// ## Range
/// ``validYears``: 1900 ≤ y < 2150. Outside it, and for a non-finite input, ``seconds(decimalYear:)``
/// returns nil.
public enum DeltaT {
    /// The decimal years the polynomials cover here.
    public static let validYears: Range<Double> = 1900..<2150

    /// ΔT = TT − UT in seconds at decimal year `y`, or nil outside ``validYears``.
    public static func seconds(decimalYear y: Double) -> Double? {
        guard y.isFinite, validYears.contains(y) else { return nil }
        switch y {
        case ..<1920:
            let t = y - 1900
            return -2.79 + 1.494119 * t - 0.0598939 * t * t + 0.0061966 * t * t * t - 0.000197 * t * t * t * t
        case ..<1941:
            let t = y - 1920
            return 21.20 + 0.84493 * t - 0.076100 * t * t + 0.0020936 * t * t * t
        case ..<1961:
            let t = y - 1950
            return 29.07 + 0.407 * t - t * t / 233 + t * t * t / 2547
        case ..<1986:
            let t = y - 1975
            return 45.45 + 1.067 * t - t * t / 260 - t * t * t / 718
        case ..<2005:
            let t = y - 2000
            return 63.86 + 0.3345 * t - 0.060374 * t * t + 0.0017275 * t * t * t
                + 0.000651814 * t * t * t * t + 0.00002373599 * t * t * t * t * t
        case ..<2050:
            let t = y - 2000
            return 62.92 + 0.32217 * t + 0.005589 * t * t
        default:
            let u = (y - 1820) / 100
            return -20 + 32 * u * u - 0.5628 * (2150 - y)
        }
    }

    /// ΔT in seconds at an instant given in seconds since the Unix epoch (UTC), or nil outside
    /// ``validYears``.
    public static func seconds(unixSeconds: Double) -> Double? {
        seconds(decimalYear: DecimalYear.from(unixSeconds: unixSeconds))
    }
}
