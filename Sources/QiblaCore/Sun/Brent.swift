// SPDX-License-Identifier: Apache-2.0
// Brent.swift — one-dimensional root finding and minimisation without derivatives.
//
// R. P. Brent, "Algorithms for Minimization without Derivatives", Prentice-Hall (1973):
// Chapter 4 (procedure `zero`: bisection, secant and inverse quadratic interpolation) and
// Chapter 5 (procedure `localmin`: golden section and successive parabolic interpolation).

/// Brent's root finder and minimiser, for the sun's searches (``QiblaSunSearch``,
/// ``KaabaSunPassages``). Both keep a bracket, so they converge for any continuous function:
/// `zero` in at most about (log2((b − a)/tolerance))² evaluations and usually in 6–10, `minimum`
/// to the tolerance for a unimodal function.
enum Brent {
    /// A root of `f` in [a, b], given f(a) and f(b) of opposite signs (or one of them zero), to
    /// within `tolerance` (absolute, in the units of the argument). Brent (1973), Ch. 4, `zero`.
    static func zero(_ f: (Double) -> Double, _ a0: Double, _ b0: Double, fa fa0: Double, fb fb0: Double,
                     tolerance: Double) -> Double {
        var a = a0, b = b0, fa = fa0, fb = fb0
        if fa == 0 { return a }
        if fb == 0 { return b }
        var c = a, fc = fa
        var d = b - a, e = d
        for _ in 0..<200 {
            if (fb > 0) == (fc > 0) {
                c = a; fc = fa
                d = b - a; e = d
            }
            if abs(fc) < abs(fb) {
                a = b; b = c; c = a
                fa = fb; fb = fc; fc = fa
            }
            let tol = 2 * Double.ulpOfOne * abs(b) + 0.5 * tolerance
            let m = 0.5 * (c - b)
            if abs(m) <= tol || fb == 0 { return b }
            if abs(e) < tol || abs(fa) <= abs(fb) {
                d = m; e = m                                   // bisection
            } else {
                var p: Double, q: Double
                let s = fb / fa
                if a == c {                                    // secant
                    p = 2 * m * s
                    q = 1 - s
                } else {                                       // inverse quadratic interpolation
                    let qa = fa / fc, r = fb / fc
                    p = s * (2 * m * qa * (qa - r) - (b - a) * (r - 1))
                    q = (qa - 1) * (r - 1) * (s - 1)
                }
                if p > 0 { q = -q } else { p = -p }
                if 2 * p < 3 * m * q - abs(tol * q), p < abs(0.5 * e * q) {
                    e = d; d = p / q
                } else {
                    d = m; e = m
                }
            }
            a = b; fa = fb
            b += abs(d) > tol ? d : (m > 0 ? tol : -tol)
            fb = f(b)
        }
        return b
    }

    /// The argument of a local minimum of `f` in [a, b] to within `tolerance` (absolute), and the
    /// value there. Brent (1973), Ch. 5, `localmin`.
    static func minimum(_ f: (Double) -> Double, _ a0: Double, _ b0: Double,
                        tolerance: Double) -> (x: Double, value: Double) {
        let golden = 0.5 * (3 - 5.0.squareRoot())
        var a = min(a0, b0), b = max(a0, b0)
        var v = a + golden * (b - a), w = v, x = v
        var fx = f(x), fv = fx, fw = fx
        var d = 0.0, e = 0.0
        for _ in 0..<200 {
            let m = 0.5 * (a + b)
            let tol = Double.ulpOfOne.squareRoot() * abs(x) + tolerance / 3
            let t2 = 2 * tol
            if abs(x - m) <= t2 - 0.5 * (b - a) { break }
            var useGolden = true
            if abs(e) > tol {                                  // try a parabola through x, v, w
                var r = (x - w) * (fx - fv)
                var q = (x - v) * (fx - fw)
                var p = (x - v) * q - (x - w) * r
                q = 2 * (q - r)
                if q > 0 { p = -p } else { q = -q }
                r = e
                e = d
                if abs(p) < abs(0.5 * q * r), p > q * (a - x), p < q * (b - x) {
                    d = p / q
                    let u = x + d
                    if u - a < t2 || b - u < t2 { d = x < m ? tol : -tol }
                    useGolden = false
                }
            }
            if useGolden {
                e = (x < m ? b : a) - x
                d = golden * e
            }
            let u = abs(d) >= tol ? x + d : (d > 0 ? x + tol : x - tol)
            let fu = f(u)
            if fu <= fx {
                if u < x { b = x } else { a = x }
                v = w; fv = fw
                w = x; fw = fx
                x = u; fx = fu
            } else {
                if u < x { a = u } else { b = u }
                if fu <= fw || w == x {
                    v = w; fv = fw
                    w = u; fw = fu
                } else if fu <= fv || v == x || v == w {
                    v = u; fv = fu
                }
            }
        }
        return (x, fx)
    }
}
