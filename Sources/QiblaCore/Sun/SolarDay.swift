// SPDX-License-Identifier: Apache-2.0
// SolarDay.swift — the sun's geocentric place over an interval, interpolated.

/// The sun's geocentric place (``SunGeocentric``) over an interval of time, computed with the full
/// SPA at nodes six hours apart and interpolated between them with four-point (cubic) Lagrange
/// polynomials, so that the position for one more instant costs only the topocentric part of SPA
/// (about 20 trigonometric calls instead of some 200). SPA itself does the same for its sunrise and
/// transit times (Reda & Andreas 2008, Appendix A.2, eqs. A6–A8: quadratic interpolation of α and
/// δ over three days).
///
/// ## Accuracy
/// The interpolated quantities (α unwrapped, δ, R, Δψ cos ε) are smooth on a scale of days: the
/// fastest terms are the nutation's 13.7- and 9.1-day periods (amplitudes below 0.0001°). The cubic
/// remainder h⁴·f⁽⁴⁾/24 with h = 6 h is below 1e-7° for all of them; the mean sidereal time,
/// which turns 361° a day, is never interpolated (it is SPA (28) at each instant).
/// `SunSearchTests` checks the interpolated azimuth and elevation against the full SPA at random
/// instants (within 1e-6°).
public struct SolarDay: Sendable {
    /// First node, seconds since the Unix epoch (UTC).
    let firstNodeUnixSeconds: Double
    static let stepSeconds = 21_600.0
    /// Node values: α (unwrapped, degrees), δ, R, Δψ cos ε.
    private var alpha: [Double] = []
    private var delta: [Double] = []
    private var distance: [Double] = []
    private var equinoxes: [Double] = []

    /// Covers [startUnixSeconds, endUnixSeconds] with ΔT `deltaTSeconds` (constant over it: ΔT
    /// changes by milliseconds a day). Computes ⌈(end − start)/6 h⌉ + 3 full SPA positions.
    public init(from startUnixSeconds: Double, to endUnixSeconds: Double, deltaTSeconds: Double) {
        firstNodeUnixSeconds = startUnixSeconds - Self.stepSeconds
        let count = Int(((endUnixSeconds - startUnixSeconds) / Self.stepSeconds).rounded(.up)) + 3
        var previousAlpha = 0.0
        for k in 0..<count {
            let sun = SolarPositionAlgorithm.geocentric(at: firstNodeUnixSeconds + Double(k) * Self.stepSeconds,
                                                        deltaTSeconds: deltaTSeconds)
            var a = sun.rightAscensionDegrees
            if k > 0 { a = previousAlpha + Angle.normalized180(a - previousAlpha) }
            previousAlpha = a
            alpha.append(a)
            delta.append(sun.declinationDegrees)
            distance.append(sun.distanceAU)
            equinoxes.append(sun.equationOfEquinoxesDegrees)
        }
    }

    /// The interpolated geocentric place at `unixSeconds` (inside the interval given to `init`;
    /// outside it the nearest four nodes are extrapolated).
    public func geocentric(at unixSeconds: Double) -> SunGeocentric {
        let s = (unixSeconds - firstNodeUnixSeconds) / Self.stepSeconds
        let k = min(max(Int(s.rounded(.down)) - 1, 0), alpha.count - 4)
        let p = s - Double(k)                     // position in units of the step from node k: in [1, 2] inside
        // Lagrange weights for nodes at 0, 1, 2, 3.
        let w0 = -(p - 1) * (p - 2) * (p - 3) / 6
        let w1 = p * (p - 2) * (p - 3) / 2
        let w2 = -p * (p - 1) * (p - 3) / 2
        let w3 = p * (p - 1) * (p - 2) / 6
        func value(_ v: [Double]) -> Double { w0 * v[k] + w1 * v[k + 1] + w2 * v[k + 2] + w3 * v[k + 3] }
        return SunGeocentric(rightAscensionDegrees: Angle.normalized360(value(alpha)), declinationDegrees: value(delta),
                             distanceAU: value(distance), equationOfEquinoxesDegrees: value(equinoxes))
    }

    /// The apparent topocentric position at `unixSeconds` for `observer`.
    public func position(at unixSeconds: Double, observer: SolarPositionAlgorithm.Observer,
                         atmosphere: Atmosphere?) -> SolarPosition {
        SolarPositionAlgorithm.topocentric(geocentric(at: unixSeconds), at: unixSeconds, observer: observer,
                                           atmosphere: atmosphere)
    }
}
