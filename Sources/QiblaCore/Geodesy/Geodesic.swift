// SPDX-License-Identifier: Apache-2.0
// Geodesic.swift — the inverse geodesic problem on an ellipsoid of revolution.
//
// Written from the equations of C. F. F. Karney, "Algorithms for geodesics", J. Geodesy 87 (2013)
// 43–55, doi:10.1007/s00190-012-0578-z (cited below as "K13 (n)" for its equation n), and its
// addenda (geographiclib.sourceforge.io/geod-addenda.html, item 2: the quadrant of σ1 and ω1 for
// end points on the equator).
// Caveat: the K13 numbers 40, 46–47 and 53–54 were cited without the paper at hand and await a
// check against it; the others were cross-checked against an independent implementation. The
// numerical behaviour is proven by the GeographicLib vectors, not by the citations.

/// A geodesic solver for an oblate ellipsoid of revolution (WGS84 by default).
///
/// ## Algorithm
/// The inverse problem (two points → distance and azimuths) follows Karney (2013), Sect. 5:
/// 1. The problem is reduced by symmetry to φ1 ≤ 0, |φ2| ≤ |φ1|, 0 ≤ λ12 ≤ 180° (swap the points,
///    mirror north–south and east–west; the azimuths are mapped back at the end).
/// 2. Latitudes become reduced latitudes β on the auxiliary sphere, K13 (6).
/// 3. Meridional pairs (λ12 = 0 or 180°, or a pole) are solved directly with α1 = λ12;
///    equatorial pairs with λ12 ≤ (1 − f)·180° lie along the equator, s12 = a·λ12.
/// 4. Otherwise α1 is found by Newton's method on λ12(α1) − λ12 = 0 with the derivative
///    dλ12/dα1 = m12 / (a cos α2 cos β2), K13 (46)–(47), starting from the short-line estimate
///    K13 (48)–(51), or, for nearly antipodal points, from the astroid solution K13 (53)–(57).
///    A bracket [0, π] on α1 is maintained and a bisection step replaces any Newton step that
///    leaves it (the bracket relies on λ12 increasing with α1 in the reduced problem). The
///    iteration stops as GeographicLib's does: when |λ12(α1) − λ12| < ε (8ε after a Newton step
///    taken from a residual ≤ 16ε), or after a Newton step of at most 1e-14 rad.
/// 5. Distance and longitude use the series of K13 (15)–(18) and (23)–(25) to order 6 in the
///    third flattening n and ε, K13 (16); the reduced length m12 uses K13 (38) and (40)–(43).
///    Sine series are summed with Clenshaw's recurrence.
///
/// ## Accuracy
/// The order-6 series are accurate to round-off for |f| < 0.01 (K13 addenda, item 3): a few
/// nanometres in distance on WGS84. Test vectors: `Tests/QiblaCoreTests/Vectors/geodesic-wgs84.csv`,
/// 3674 seeded pairs computed with GeographicLib 2.1 by `scripts/generate_geodesic_vectors.py`
/// (random global pairs, poles, the antimeridian, equatorial and meridional pairs, short lines from
/// 1 m, pairs ending at the Kaaba from near and far, nearly antipodal pairs). `GeodesicVectorTests`
/// requires ±1 mm in distance on every row and ±1e-6° in both azimuths outside the nearly
/// antipodal band (rows marked `antipodal`, where the shortest path is not unique or its azimuth
/// is ill-conditioned). Observed: max distance error 7.5e-9 m, max azimuth error 5.7e-8° (on a
/// 400 m line, where the round-off of the input coordinates' sines dominates); the 395 band rows
/// also agree within 1e-6°.
///
/// ## Cost
/// No heap allocation, no `hypot`/`remainder`/`fmod` on the usual paths, and λ12, m12 and s12 as
/// in GeographicLib's `Lambda12`: ω1, ω2 are not normalised, √(1 + k² sin²σ) is computed once
/// from β, and s12 is summed once, after the iteration. About 4.4k instructions per call on the
/// benchmark points (GeographicLib 2.1.2: 9.8k); see BENCHMARKS.md for times.
///
/// ## Conventions
/// Azimuths are degrees clockwise from true north in (−180, 180] (Karney's range; −180 is returned
/// as 180). `finalAzimuthDegrees` is the forward azimuth at the second point (the heading that
/// carries on beyond it). At a pole the azimuth is measured as the limit of approaching the pole
/// along the meridian of the given longitude (Karney's convention): at the north pole with
/// longitude λ, "north" points along the meridian λ + 180°. Heights are ignored (the geodesic is
/// on the ellipsoid surface).
public struct Geodesic: Sendable {
    /// The WGS84 ellipsoid: a = 6 378 137 m, f = 1/298.257223563 (NIMA TR8350.2).
    public static let wgs84 = Geodesic(equatorialRadiusMetres: 6_378_137, flattening: 1 / 298.257_223_563)

    /// Semi-major (equatorial) radius a, metres.
    public let equatorialRadiusMetres: Double
    /// Flattening f = (a − b)/a, K13 (1).
    public let flattening: Double
    /// Semi-minor (polar) radius b = a(1 − f), metres.
    public let polarRadiusMetres: Double

    /// e² = f(2 − f), K13 (3).
    let eccentricitySquared: Double
    /// e′² = e²/(1 − e²), K13 (4).
    let secondEccentricitySquared: Double
    /// Third flattening n = f/(2 − f), K13 (2).
    let thirdFlattening: Double
    /// Coefficients of ε⁰…ε⁵ in A3, K13 (24), evaluated at this ellipsoid's n.
    let a3Coefficients: Polynomial6
    /// Coefficients of ε¹…ε⁵ in C3l (l = 1…5), K13 (25), evaluated at this ellipsoid's n;
    /// `c3Coefficients.l1 … .l5` hold the coefficients of ε^l … ε⁵ (c0 = ε^l). A fixed-size struct,
    /// not an array: no heap storage, reference counting or bounds checks in the iteration.
    let c3Coefficients: C3Coefficients

    /// An ellipsoid with equatorial radius `a` (metres) and flattening `f`. The series are valid for
    /// an oblate ellipsoid with 0 ≤ f ≤ 0.01 (every terrestrial ellipsoid); other values trap, as they
    /// are programming errors, not run-time input.
    public init(equatorialRadiusMetres a: Double, flattening f: Double) {
        precondition(a.isFinite && a > 0, "equatorial radius must be a positive number of metres")
        precondition(f.isFinite && f >= 0 && f <= 0.01, "flattening must be in [0, 0.01]")
        equatorialRadiusMetres = a
        flattening = f
        polarRadiusMetres = a * (1 - f)
        eccentricitySquared = f * (2 - f)
        secondEccentricitySquared = eccentricitySquared / ((1 - f) * (1 - f))
        let n = f / (2 - f)
        thirdFlattening = n
        // K13 (24): A3 = 1 − (1/2 − n/2)ε − (1/4 + n/8 − 3n²/8)ε² − (1/16 + 3n/16 + n²/16)ε³
        //                 − (3/64 + n/32)ε⁴ − (3/128)ε⁵
        a3Coefficients = Polynomial6(
            1,
            -(1.0 / 2 - n / 2),
            -(1.0 / 4 + n / 8 - 3 * n * n / 8),
            -(1.0 / 16 + 3 * n / 16 + n * n / 16),
            -(3.0 / 64 + n / 32),
            -3.0 / 128)
        // K13 (25), each row starting at the power ε^l.
        c3Coefficients = C3Coefficients(
            Polynomial6(  // C31: ε¹ … ε⁵
                1.0 / 4 - n / 4,
                1.0 / 8 - n * n / 8,
                3.0 / 64 + 3 * n / 64 - n * n / 64,
                5.0 / 128 + n / 64,
                3.0 / 128, 0),
            Polynomial6(  // C32: ε² … ε⁵
                1.0 / 16 - 3 * n / 32 + n * n / 32,
                3.0 / 64 - n / 32 - 3 * n * n / 64,
                3.0 / 128 + n / 128,
                5.0 / 256, 0, 0),
            Polynomial6(  // C33: ε³ … ε⁵
                5.0 / 192 - 3 * n / 64 + 5 * n * n / 192,
                3.0 / 128 - 5 * n / 192,
                7.0 / 512, 0, 0, 0),
            Polynomial6(  // C34: ε⁴, ε⁵
                7.0 / 512 - 7 * n / 256,
                7.0 / 512, 0, 0, 0, 0),
            Polynomial6(  // C35: ε⁵
                21.0 / 2560, 0, 0, 0, 0, 0))
    }

    /// Solves the inverse problem: the shortest geodesic from `from` to `to`.
    ///
    /// - Returns: distance in metres, the azimuth at `from` and the forward azimuth at `to`, degrees
    ///   clockwise from north in (−180, 180]. For coincident points the distance is 0 and the
    ///   azimuths are those of a meridian (0 or 180).
    public func inverse(from: GeodeticPosition, to: GeodeticPosition) -> GeodesicInverse {
        // --- Step 1: reduce by symmetry (K13 Sect. 5) -------------------------------------------
        var lat1 = from.latitudeDegrees
        var lat2 = to.latitudeDegrees
        var lambda12Degrees = Geodesic.longitudeDifferenceDegrees(from: from.longitudeDegrees, to: to.longitudeDegrees)
        let swapped = abs(lat1) < abs(lat2)
        if swapped {
            swap(&lat1, &lat2)
            lambda12Degrees = -lambda12Degrees
        }
        // Mirror when φ1 ≥ 0 (so +0 too): between two equatorial points beyond the equatorial
        // limit the two symmetric shortest geodesics tie, and this picks the one GeographicLib
        // reports (initial azimuth in [0°, 90°] for eastward pairs).
        let mirroredNorthSouth = !(lat1 < 0)
        if mirroredNorthSouth {
            lat1 = -lat1
            lat2 = -lat2
        }
        let mirroredEastWest = lambda12Degrees < 0 || (lambda12Degrees == 0 && lambda12Degrees.sign == .minus)
        if mirroredEastWest { lambda12Degrees = -lambda12Degrees }

        let reduced = solveReduced(latitude1Degrees: lat1, latitude2Degrees: lat2, lambda12Degrees: lambda12Degrees)

        // --- Undo the symmetry reductions, last first -------------------------------------------
        var azimuth1 = reduced.azimuth1Degrees
        var azimuth2 = reduced.azimuth2Degrees
        if mirroredEastWest {
            azimuth1 = -azimuth1
            azimuth2 = -azimuth2
        }
        if mirroredNorthSouth {
            azimuth1 = 180 - azimuth1
            azimuth2 = 180 - azimuth2
        }
        if swapped {
            // The reversed path B→A has azimuths (α2 + 180°, α1 + 180°).
            (azimuth1, azimuth2) = (azimuth2 + 180, azimuth1 + 180)
        }
        return GeodesicInverse(
            distanceMetres: reduced.distanceMetres,
            initialAzimuthDegrees: Geodesic.karneyRange(azimuth1),
            finalAzimuthDegrees: Geodesic.karneyRange(azimuth2))
    }

    // MARK: - Reduced problem

    struct ReducedSolution {
        var distanceMetres: Double
        var azimuth1Degrees: Double
        var azimuth2Degrees: Double
    }

    /// Solves the reduced problem φ1 ≤ 0, |φ2| ≤ |φ1|, 0 ≤ λ12 ≤ 180°.
    func solveReduced(latitude1Degrees lat1: Double, latitude2Degrees lat2: Double, lambda12Degrees: Double)
        -> ReducedSolution
    {
        let f = flattening
        let (sinPhi1, cosPhi1) = Geodesic.sinCosDegrees(lat1)
        let (sinPhi2, cosPhi2) = Geodesic.sinCosDegrees(lat2)
        // K13 (6): tan β = (1 − f) tan φ, kept as a normalised (sin β, cos β) pair.
        var beta1 = Geodesic.normalised(sin: (1 - f) * sinPhi1, cos: cosPhi1)
        let beta2 = Geodesic.normalised(sin: (1 - f) * sinPhi2, cos: cosPhi2)
        // Addenda item 2: with φ1 ≤ 0, a zero sin β1 must be −0 so that σ1 and ω1 fall in the right
        // quadrant for non-equatorial geodesics between equatorial points.
        if beta1.sin == 0 { beta1.sin = -0.0 }
        let (sinLambda12, cosLambda12) = Geodesic.sinCosDegrees(lambda12Degrees)
        let lambda12 = Angle.radians(lambda12Degrees)
        let e2 = secondEccentricitySquared
        let target = Target(beta1: beta1, beta2: beta2, lambda12: lambda12,
                            sinLambda12: sinLambda12, cosLambda12: cosLambda12,
                            dn1: (1 + e2 * beta1.sin * beta1.sin).squareRoot(),
                            dn2: (1 + e2 * beta2.sin * beta2.sin).squareRoot())

        // --- Meridional: λ12 = 0 or π, or point 1 at the (south) pole; α1 = λ12 (K13 Sect. 5).
        if sinLambda12 == 0 || cosPhi1 == 0 {
            let state = evaluate(sinAlpha1: sinLambda12, cosAlpha1: cosLambda12, target: target)
            // The meridian is the shortest path unless it runs beyond a conjugate point (m12 < 0).
            if state.reducedLengthOverB >= 0 || cosPhi1 == 0 {
                return ReducedSolution(
                    distanceMetres: state.distanceMetres,
                    azimuth1Degrees: lambda12Degrees,
                    azimuth2Degrees: Angle.degrees(atan2(state.sinAlpha0, state.cosAlpha2CosBeta2)))
            }
        }

        // --- Equatorial: both points on the equator and λ12 ≤ (1 − f)π (K13 Sect. 5).
        if sinPhi1 == 0 && sinPhi2 == 0 && lambda12 <= (1 - f) * .pi {
            return ReducedSolution(
                distanceMetres: equatorialRadiusMetres * lambda12, azimuth1Degrees: 90, azimuth2Degrees: 90)
        }

        // --- General case: Newton's method on α1 ----------------------------------------------
        // α1 is carried both as an angle (for the bracket) and as an accurate (sin, cos) pair
        // updated by rotation, so that cos α1 keeps its relative precision near α1 = 90°.
        var direction = startingAzimuth(target: target)
        var alpha1 = atan2(direction.sin, direction.cos)
        var low = 0.0
        var high = Double.pi
        if !(alpha1 > low && alpha1 < high) {
            alpha1 = Double.pi / 2
            direction = (1, 0)
        }
        var state = evaluate(sinAlpha1: direction.sin, cosAlpha1: direction.cos, target: target)
        var converged = false
        // Set by a Newton step from a residual already within a few ulps: the next evaluation is
        // the last unless its residual is still above 8 ulps (GeographicLib's rule).
        var lastNewtonStep = false
        for _ in 0..<Geodesic.maximumIterations {
            let residual = state.lambdaResidual
            // Stop when λ12(α1) matches λ12 to round-off (the residual is computed without
            // cancellation, so this is reached): another step would change α1 by less than an ulp.
            if converged || abs(residual) < (lastNewtonStep ? 8 : 1) * Double.ulpOfOne { break }
            if residual > 0 { high = alpha1 } else { low = alpha1 }
            let slope = state.lambdaSlope
            let step = -residual / slope
            var next = alpha1 + step
            var newtonStep = true
            if slope > 0, slope.isFinite, abs(step) <= Geodesic.convergedStepRadians {
                // K13 (46): Newton step; quadratic convergence means a tiny step is the last one
                // (taken even if round-off puts it a hair outside the bracket).
                converged = true
            } else if slope > 0, slope.isFinite, next > low, next < high {
                converged = false
            } else {
                next = 0.5 * (low + high)
                newtonStep = false
                converged = high - low <= Geodesic.convergedStepRadians
            }
            if next == alpha1 && step == 0 { break }
            if newtonStep {
                lastNewtonStep = abs(residual) <= 16 * Double.ulpOfOne
                let (sinStep, cosStep) = Geodesic.sinCosRadians(step)
                direction = Geodesic.normalised(
                    sin: direction.sin * cosStep + direction.cos * sinStep,
                    cos: direction.cos * cosStep - direction.sin * sinStep)
            } else {
                lastNewtonStep = false
                direction = (sin(next), cos(next))
            }
            alpha1 = next
            state = evaluate(sinAlpha1: direction.sin, cosAlpha1: direction.cos, target: target)
        }
        return ReducedSolution(
            distanceMetres: state.distanceMetres,
            azimuth1Degrees: Angle.degrees(atan2(direction.sin, direction.cos)),
            azimuth2Degrees: Angle.degrees(atan2(state.sinAlpha0, state.cosAlpha2CosBeta2)))
    }

    /// Newton stops after a step this small (radians); the next one would be below round-off.
    static let convergedStepRadians = 1e-14
    /// Newton plus bisection never needs this many steps (bisection alone halves π 60 times).
    static let maximumIterations = 100

    /// The fixed data of one reduced inverse problem.
    struct Target {
        var beta1: (sin: Double, cos: Double)
        var beta2: (sin: Double, cos: Double)
        var lambda12: Double
        var sinLambda12: Double
        var cosLambda12: Double
        /// √(1 + k² sin²σ1) = √(1 + e′² sin²β1), the same for every α1 since sin β = cos α0 sin σ
        /// (K13 (9), (10)–(11)); likewise at point 2. (GeographicLib computes it once the same way.)
        var dn1: Double
        var dn2: Double
    }

    /// Everything the iteration needs about the geodesic leaving point 1 at azimuth α1.
    struct GeodesicState {
        var sinAlpha0: Double
        var cosAlpha2CosBeta2: Double
        /// λ12(α1) − λ12 (radians).
        var lambdaResidual: Double
        /// dλ12/dα1, K13 (46)–(47).
        var lambdaSlope: Double
        /// m12 / b, K13 (38).
        var reducedLengthOverB: Double
        /// What the distance needs, kept so that it is only summed once, after the iteration.
        var sigma1: (sin: Double, cos: Double)
        var sigma2: (sin: Double, cos: Double)
        var sigma12: Double
        /// b A1, metres (K13 (15), (17)).
        var distanceScaleMetres: Double
        var c1: SineSeries6

        /// K13 (15)–(18): s12 = b A1 (σ12 + Σ C1l (sin 2lσ2 − sin 2lσ1)), metres.
        var distanceMetres: Double {
            let c1Sums = c1.sums(sigma1, sigma2)
            return distanceScaleMetres * (sigma12 + c1Sums.at2 - c1Sums.at1)
        }
    }

    /// Solves the triangles NEA and NEB for the geodesic leaving point 1 at azimuth α1 and reaching
    /// the parallel β2 heading north (K13 Table 5), and evaluates λ12 and m12 along it (and what s12
    /// needs).
    @inline(__always)
    func evaluate(sinAlpha1: Double, cosAlpha1: Double, target: Target) -> GeodesicState {
        let (sinBeta1, cosBeta1) = target.beta1
        let (sinBeta2, cosBeta2) = target.beta2
        // K13 (5) and (10): the azimuth α0 at the equator crossing.
        let sinAlpha0 = sinAlpha1 * cosBeta1
        let cosAlpha0 = Geodesic.hypotenuse(cosAlpha1, sinAlpha1 * sinBeta1)
        // K13 (11)–(12): σ1 and ω1 on the auxiliary sphere. ω1 and ω2 are left unnormalised (both
        // have the positive length cos α0 sin … of their own): ω12 − λ12 below is an atan2 of two
        // quantities scaled by the same positive factor, which does not change it (as in
        // GeographicLib's Lambda12).
        let sigma1 = Geodesic.normalised(sin: sinBeta1, cos: cosAlpha1 * cosBeta1)
        let omega1 = (sin: sinAlpha0 * sinBeta1, cos: cosAlpha1 * cosBeta1)
        // K13 (45): cos α2 cos β2 = +√(cos²α1 cos²β1 + cos²β2 − cos²β1) (heading north at point 2).
        let cosAlpha2CosBeta2: Double
        if cosBeta2 != cosBeta1 || abs(sinBeta2) != -sinBeta1 {
            // cos²β2 − cos²β1 = sin²β1 − sin²β2; use the form free of cancellation for this β1.
            let cosSquaredDifference = cosBeta1 < -sinBeta1
                ? (cosBeta2 - cosBeta1) * (cosBeta2 + cosBeta1)
                : (sinBeta1 - sinBeta2) * (sinBeta1 + sinBeta2)
            let radicand = (cosAlpha1 * cosBeta1) * (cosAlpha1 * cosBeta1) + cosSquaredDifference
            cosAlpha2CosBeta2 = radicand > 0 ? radicand.squareRoot() : 0
        } else {
            cosAlpha2CosBeta2 = abs(cosAlpha1) * cosBeta1
        }
        // K13 (11)–(12) at point 2.
        let sigma2 = Geodesic.normalised(sin: sinBeta2, cos: cosAlpha2CosBeta2)
        let omega2 = (sin: sinAlpha0 * sinBeta2, cos: cosAlpha2CosBeta2)
        // σ12 = σ2 − σ1 and ω12 = ω2 − ω1 by the difference formulae (both in [0, π] here).
        let sinSigma12 = max(0, sigma1.cos * sigma2.sin - sigma1.sin * sigma2.cos)
        let cosSigma12 = sigma1.cos * sigma2.cos + sigma1.sin * sigma2.sin
        let sigma12 = atan2(sinSigma12, cosSigma12)
        let sinOmega12 = max(0, omega1.cos * omega2.sin - omega1.sin * omega2.cos)
        let cosOmega12 = omega1.cos * omega2.cos + omega1.sin * omega2.sin
        // ω12 − λ12 without cancellation.
        let omegaMinusLambda = atan2(
            sinOmega12 * target.cosLambda12 - cosOmega12 * target.sinLambda12,
            cosOmega12 * target.cosLambda12 + sinOmega12 * target.sinLambda12)

        // K13 (9) and (16): k² = e′² cos²α0, ε = (√(1+k²) − 1)/(√(1+k²) + 1).
        let kSquared = secondEccentricitySquared * cosAlpha0 * cosAlpha0
        let root = (1 + kSquared).squareRoot()
        let epsilon = kSquared / ((root + 1) * (root + 1))

        // K13 (8), (23)–(25): λ12 = ω12 − f sin α0 A3 (σ12 + Σ C3l (sin 2lσ2 − sin 2lσ1)).
        let a3 = a3Coefficients.evaluate(epsilon)
        let c3 = c3Series(epsilon)
        let c3Sums = c3.sums(sigma1, sigma2)
        let i3 = a3 * (sigma12 + c3Sums.at2 - c3Sums.at1)
        let lambdaResidual = omegaMinusLambda - flattening * sinAlpha0 * i3

        // K13 (17)–(18): A1 and C1l (the distance itself is summed by `distanceMetres`).
        let epsilon2 = epsilon * epsilon
        let a1Minus1 = (epsilon + epsilon2 * (1.0 / 4 + epsilon2 * (1.0 / 64 + epsilon2 / 256))) / (1 - epsilon)
        let c1 = Geodesic.c1Series(epsilon)

        // K13 (42)–(43): A2 and C2l; (40): J(σ) = I1(σ) − I2(σ); (38): m12.
        let a2Minus1 = epsilon2 * (1.0 / 4 + epsilon2 * (9.0 / 64 + epsilon2 * 25 / 256)) * (1 - epsilon) - epsilon
        let c2 = Geodesic.c2Series(epsilon)
        let a1 = 1 + a1Minus1
        let a2 = 1 + a2Minus1
        let jSeries = SineSeries6(coefficients: Polynomial6(
            a1 * c1.coefficients.c0 - a2 * c2.coefficients.c0,
            a1 * c1.coefficients.c1 - a2 * c2.coefficients.c1,
            a1 * c1.coefficients.c2 - a2 * c2.coefficients.c2,
            a1 * c1.coefficients.c3 - a2 * c2.coefficients.c3,
            a1 * c1.coefficients.c4 - a2 * c2.coefficients.c4,
            a1 * c1.coefficients.c5 - a2 * c2.coefficients.c5))
        let jSums = jSeries.sums(sigma1, sigma2)
        let j12 = (a1Minus1 - a2Minus1) * sigma12 + jSums.at2 - jSums.at1
        let reducedLengthOverB = target.dn2 * sigma1.cos * sigma2.sin - target.dn1 * sigma1.sin * sigma2.cos
            - sigma1.cos * sigma2.cos * j12

        // K13 (46): dλ12/dα1 = m12 / (a cos α2 cos β2); (47) where cos α2 = 0.
        let lambdaSlope: Double
        if cosAlpha2CosBeta2 == 0 {
            lambdaSlope = -2 * (1 - eccentricitySquared * cosBeta1 * cosBeta1).squareRoot() / sinBeta1
        } else {
            lambdaSlope = (1 - flattening) * reducedLengthOverB / cosAlpha2CosBeta2
        }
        return GeodesicState(
            sinAlpha0: sinAlpha0, cosAlpha2CosBeta2: cosAlpha2CosBeta2, lambdaResidual: lambdaResidual,
            lambdaSlope: lambdaSlope, reducedLengthOverB: reducedLengthOverB,
            sigma1: sigma1, sigma2: sigma2, sigma12: sigma12,
            distanceScaleMetres: polarRadiusMetres * a1, c1: c1)
    }

    /// The starting α1 for Newton's method, as (sin α1, cos α1) with α1 in [0, π].
    func startingAzimuth(target: Target) -> (sin: Double, cos: Double) {
        let f = flattening
        let (sinBeta1, cosBeta1) = target.beta1
        let (sinBeta2, cosBeta2) = target.beta2
        // Nearly antipodal: astroid coordinates, K13 (53)–(54), with Δ = f a π cos²β1:
        //   x = (λ12 − π) / (f π cos β1),  y = (β1 + β2) / (f π cos²β1).
        let lambdaScale = f * .pi * cosBeta1
        if lambdaScale > 0 {
            let x = (target.lambda12 - .pi) / lambdaScale
            // β1 and β2 are only needed (two atan2) in the band x > −2 near λ12 = π.
            if x > -2, case let y = (atan2(sinBeta1, cosBeta1) + atan2(sinBeta2, cosBeta2)) / (lambdaScale * cosBeta1),
               y > -2 {
                if y == 0 {
                    // K13 (57): on the parallel β2 = −β1, sin α1 = −x inside the cut locus.
                    return x >= -1 ? Geodesic.normalised(sin: -x, cos: max(0, 1 - x * x).squareRoot()) : (1, 0)
                }
                // K13 (55)–(56): μ is the positive root of the astroid quartic.
                let mu = Geodesic.astroidRoot(x: x, y: y)
                return Geodesic.normalised(sin: -x / (1 + mu), cos: y / mu)
            }
        }
        // Short lines, K13 (48)–(51): ω12 = λ12 / w̄ with w̄ = √(1 − e²((cos β1 + cos β2)/2)²),
        // then the spherical triangle on the auxiliary sphere.
        let meanCosBeta = (cosBeta1 + cosBeta2) / 2
        let wBar = (1 - eccentricitySquared * meanCosBeta * meanCosBeta).squareRoot()
        let omega12 = target.lambda12 / wBar
        // K13 (49), with 1 − cos ω12 written as 2 sin²(ω12/2) to keep short lines accurate, and
        // sin ω12 = 2 sin(ω12/2) cos(ω12/2).
        let (halfOmega, cosHalfOmega) = Geodesic.sinCosRadians(omega12 / 2)
        let sinOmega12 = 2 * halfOmega * cosHalfOmega
        let numerator = cosBeta2 * sinOmega12
        let denominator = (sinBeta2 * cosBeta1 - cosBeta2 * sinBeta1) + 2 * sinBeta1 * cosBeta2 * halfOmega * halfOmega
        return Geodesic.normalised(sin: numerator, cos: denominator)
    }

    /// The positive root μ of μ⁴ + 2μ³ + (1 − x² − y²)μ² − 2y²μ − y² = 0, K13 (55), for y ≠ 0.
    /// The polynomial is −y² < 0 at μ = 0 and has exactly one positive root (one sign change in
    /// its coefficients, Descartes), so a safeguarded Newton iteration on a bracket finds it.
    static func astroidRoot(x: Double, y: Double) -> Double {
        let p = x * x
        let q = y * y
        func quartic(_ mu: Double) -> (value: Double, slope: Double) {
            let value = (((mu + 2) * mu + (1 - p - q)) * mu - 2 * q) * mu - q
            let slope = ((4 * mu + 6) * mu + 2 * (1 - p - q)) * mu - 2 * q
            return (value, slope)
        }
        var low = 0.0
        var high = 1.0
        while quartic(high).value < 0 { low = high; high *= 2 }
        var mu = high
        for _ in 0..<200 {
            let (value, slope) = quartic(mu)
            if value == 0 { return mu }
            if value > 0 { high = mu } else { low = mu }
            var next = mu - value / slope
            if !(slope > 0 && next > low && next < high) { next = 0.5 * (low + high) }
            if abs(next - mu) <= 1e-15 * max(1, mu) { return next }
            mu = next
        }
        return mu
    }

    // MARK: - Series, K13 (17)–(18), (25), (43)

    /// C3l(ε), l = 1…5, K13 (25).
    @inline(__always)
    func c3Series(_ epsilon: Double) -> SineSeries6 {
        var e = epsilon
        var values = (0.0, 0.0, 0.0, 0.0, 0.0)
        values.0 = e * c3Coefficients.l1.evaluate(epsilon); e *= epsilon
        values.1 = e * c3Coefficients.l2.evaluate(epsilon); e *= epsilon
        values.2 = e * c3Coefficients.l3.evaluate(epsilon); e *= epsilon
        values.3 = e * c3Coefficients.l4.evaluate(epsilon); e *= epsilon
        values.4 = e * c3Coefficients.l5.evaluate(epsilon)
        return SineSeries6(coefficients: Polynomial6(values.0, values.1, values.2, values.3, values.4, 0))
    }

    /// C1l(ε), l = 1…6, K13 (18).
    @inline(__always)
    static func c1Series(_ e: Double) -> SineSeries6 {
        let e2 = e * e
        return SineSeries6(coefficients: Polynomial6(
            e * (-1.0 / 2 + e2 * (3.0 / 16 - e2 / 32)),
            e2 * (-1.0 / 16 + e2 * (1.0 / 32 - e2 * 9 / 2048)),
            e2 * e * (-1.0 / 48 + e2 * 3 / 256),
            e2 * e2 * (-5.0 / 512 + e2 * 3 / 512),
            e2 * e2 * e * (-7.0 / 1280),
            e2 * e2 * e2 * (-7.0 / 2048)))
    }

    /// C2l(ε), l = 1…6, K13 (43).
    @inline(__always)
    static func c2Series(_ e: Double) -> SineSeries6 {
        let e2 = e * e
        return SineSeries6(coefficients: Polynomial6(
            e * (1.0 / 2 + e2 * (1.0 / 16 + e2 / 32)),
            e2 * (3.0 / 16 + e2 * (1.0 / 32 + e2 * 35 / 2048)),
            e2 * e * (5.0 / 48 + e2 * 5 / 256),
            e2 * e2 * (35.0 / 512 + e2 * 7 / 512),
            e2 * e2 * e * (63.0 / 1280),
            e2 * e2 * e2 * (77.0 / 2048)))
    }

    // MARK: - Angles

    /// sin and cos of an angle in degrees, exact at multiples of 90° (so poles give cos φ = 0).
    ///
    /// The angle is reduced exactly to r ∈ [−45°, 45°] (plus round-off of the quotient) and a
    /// quadrant q, as GeographicLib's `Math::sincosd` does with `remquo`; here without a libm call:
    /// q = nearest integer to x/90 (adding and subtracting 1.5·2⁵² rounds to nearest, ties to even,
    /// in the default rounding mode, and leaves q mod 4 in the low bits of the sum), and
    /// r = x − 90q is exact for |x| < 2⁵³ (90q is an integer, r a multiple of ulp(x) no larger in
    /// magnitude than x). Larger |x| (never a latitude or a reduced longitude) goes through
    /// `remainder`. sin r and cos r on |r| ≤ π/4 come from the fdlibm kernels (`kernelSin`,
    /// `kernelCos`), within 1 ulp, with no range reduction of their own.
    @inline(__always)
    static func sinCosDegrees(_ degrees: Double) -> (sin: Double, cos: Double) {
        let quadrant: Int
        let r: Double
        if abs(degrees) <= 0x1p50 {
            let shifted = degrees / 90 + 0x1.8p52
            quadrant = Int(truncatingIfNeeded: shifted.bitPattern)
            r = degrees - 90 * (shifted - 0x1.8p52)  // exact, in [−45, 45] up to round-off of x/90
        } else {
            let reduced = remainder(degrees, 360)  // exact, in [−180, 180]
            let q = (reduced / 90).rounded()
            quadrant = Int(q)
            r = reduced - 90 * q  // exact, in [−45, 45]
        }
        let radians = r * (Double.pi / 180)
        let s = kernelSin(radians)
        let c = kernelCos(radians)
        let result: (Double, Double)
        switch quadrant & 3 {
        case 0: result = (s, c)
        case 1: result = (c, -s)
        case 2: result = (-s, -c)
        default: result = (-c, s)
        }
        // Keep the sign of a zero sine (−0 for −0°), make a zero cosine +0.
        return (degrees == 0 ? degrees : result.0, result.1 + 0)
    }

    /// (sin x, cos x) for x in radians: the fdlibm kernels for |x| ≤ π/4, libm beyond.
    @inline(__always)
    static func sinCosRadians(_ x: Double) -> (sin: Double, cos: Double) {
        if abs(x) <= Double.pi / 4 { return (kernelSin(x), kernelCos(x)) }
        return (sin(x), cos(x))
    }

    // The two kernels below are those of fdlibm (k_sin.c, k_cos.c, as in FreeBSD's msun), with the
    // tail of the reduced argument zero:
    //   Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
    //   Developed at SunPro, a Sun Microsystems, Inc. business.
    //   Permission to use, copy, modify, and distribute this software is freely granted,
    //   provided that this notice is preserved.

    /// sin x for |x| ≤ π/4 (a little beyond is harmless): x + x³(S1 + x²(S2 + … + x⁸S6)), a
    /// minimax polynomial with |sin x / x − s(x)| < 2⁻⁵⁸·³; within 1 ulp of sin x.
    @inline(__always)
    static func kernelSin(_ x: Double) -> Double {
        if abs(x) < 0x1p-27 { return x }  // sin x = x to round-off (keeps −0)
        let z = x * x
        let v = z * x
        let r = 8.333_333_333_322_489_461_24e-03 + z * (-1.984_126_982_985_794_931_34e-04
            + z * (2.755_731_370_707_006_767_89e-06 + z * (-2.505_076_025_340_686_341_95e-08
            + z * 1.589_690_995_211_550_102_21e-10)))
        return x + v * (-1.666_666_666_666_663_243_48e-01 + z * r)
    }

    /// cos x for |x| ≤ π/4 (a little beyond is harmless): 1 − x²/2 + x⁴(C1 + … + x¹⁰C6), the
    /// leading 1 − x²/2 summed with its rounding error; within 1 ulp of cos x.
    @inline(__always)
    static func kernelCos(_ x: Double) -> Double {
        let z = x * x
        let z2 = z * z
        let r = z * (4.166_666_666_666_660_190_37e-02 + z * (-1.388_888_888_887_410_957_49e-03
            + z * 2.480_158_728_947_672_941_78e-05))
            + z2 * z2 * (-2.755_731_435_139_066_330_35e-07 + z * (2.087_572_321_298_174_827_90e-09
            + z * -1.135_964_755_778_819_482_65e-11))
        let halfZ = 0.5 * z
        let w = 1 - halfZ
        return w + (((1 - w) - halfZ) + z * r)
    }

    /// λ2 − λ1 reduced to [−180, 180] degrees without losing the rounding error of the
    /// subtraction (Knuth's two-sum), so that pairs straddling the antimeridian keep full precision.
    @inline(__always)
    static func longitudeDifferenceDegrees(from lon1: Double, to lon2: Double) -> Double {
        let sum = lon2 - lon1
        let bPrime = sum - lon2
        let aPrime = sum - bPrime
        let error = (lon2 - aPrime) + (-lon1 - bPrime)
        // remainder(sum, 360) without the libm call where one ±360 does it: for 180 < |sum| < 540
        // the result sum ∓ 360 is exact (Sterbenz) and equal to remainder's; ±360 itself (whose
        // zero carries the sign of sum) and anything larger take the general path.
        var difference = sum
        if abs(sum) > 180 {
            if abs(sum) < 540 && abs(sum) != 360 {
                difference = sum > 0 ? sum - 360 : sum + 360
            } else {
                difference = remainder(sum, 360)
            }
        }
        if difference == 180 && error > 0 { difference = -180 }
        if difference == -180 && error < 0 { difference = 180 }
        return difference + error
    }

    /// √(x² + y²): the plain formula when the squares neither overflow nor underflow (within an ulp
    /// of `hypot`, which only matters as a common scale here), `hypot` otherwise.
    @inline(__always)
    static func hypotenuse(_ x: Double, _ y: Double) -> Double {
        let squares = x * x + y * y
        if squares >= 0x1p-960 && squares <= 0x1p960 { return squares.squareRoot() }
        return hypot(x, y)
    }

    @inline(__always)
    static func normalised(sin s: Double, cos c: Double) -> (sin: Double, cos: Double) {
        let h = hypotenuse(s, c)
        return h > 0 ? (s / h, c / h) : (s, c)
    }

    /// Wraps to (−180, 180] and turns −0 into +0.
    @inline(__always)
    static func karneyRange(_ degrees: Double) -> Double {
        // One ±360 (exact by Sterbenz for 180 < |x| < 540, and equal to fmod's result then) covers
        // every azimuth the inverse produces; anything else takes `Angle.normalized180`.
        if degrees > -180 && degrees <= 180 { return degrees + 0 }
        if degrees > 180 && degrees < 540 { return degrees - 360 }
        if degrees <= -180 && degrees > -540 { return degrees + 360 }
        return Angle.normalized180(degrees) + 0
    }
}

/// The solution of the inverse geodesic problem.
public struct GeodesicInverse: Sendable, Equatable {
    /// Length of the shortest geodesic, metres.
    public var distanceMetres: Double
    /// Azimuth of the geodesic at the first point, degrees clockwise from true north, (−180, 180].
    public var initialAzimuthDegrees: Double
    /// Forward azimuth at the second point (heading beyond it), degrees clockwise from true north,
    /// (−180, 180].
    public var finalAzimuthDegrees: Double

    public init(distanceMetres: Double, initialAzimuthDegrees: Double, finalAzimuthDegrees: Double) {
        self.distanceMetres = distanceMetres
        self.initialAzimuthDegrees = initialAzimuthDegrees
        self.finalAzimuthDegrees = finalAzimuthDegrees
    }
}

// MARK: - Small fixed-size series helpers (no heap allocation in the iteration)

/// Six coefficients c0…c5 of a polynomial c0 + c1 x + … + c5 x⁵ (or of a sine series).
struct Polynomial6: Sendable {
    var c0, c1, c2, c3, c4, c5: Double
    init(_ c0: Double, _ c1: Double, _ c2: Double, _ c3: Double, _ c4: Double, _ c5: Double) {
        (self.c0, self.c1, self.c2, self.c3, self.c4, self.c5) = (c0, c1, c2, c3, c4, c5)
    }
    /// Horner's rule.
    @inline(__always)
    func evaluate(_ x: Double) -> Double {
        c0 + x * (c1 + x * (c2 + x * (c3 + x * (c4 + x * c5))))
    }
}

/// The five rows C31 … C35 of K13 (25), each a polynomial in ε starting at ε^l.
struct C3Coefficients: Sendable {
    var l1, l2, l3, l4, l5: Polynomial6
    init(_ l1: Polynomial6, _ l2: Polynomial6, _ l3: Polynomial6, _ l4: Polynomial6, _ l5: Polynomial6) {
        (self.l1, self.l2, self.l3, self.l4, self.l5) = (l1, l2, l3, l4, l5)
    }
}

/// Σ_{l=1}^{6} c_l sin(2lσ) with c_l = `coefficients.c(l−1)`.
struct SineSeries6 {
    var coefficients: Polynomial6
    /// Clenshaw's recurrence b_l = c_l + 2 cos 2σ · b_{l+1} − b_{l+2}; the sum is b_1 sin 2σ.
    @inline(__always)
    func sum(_ sigma: (sin: Double, cos: Double)) -> Double {
        let twoCos2Sigma = 2 * (sigma.cos - sigma.sin) * (sigma.cos + sigma.sin)
        let b6 = coefficients.c5
        let b5 = coefficients.c4 + twoCos2Sigma * b6
        let b4 = coefficients.c3 + twoCos2Sigma * b5 - b6
        let b3 = coefficients.c2 + twoCos2Sigma * b4 - b5
        let b2 = coefficients.c1 + twoCos2Sigma * b3 - b4
        let b1 = coefficients.c0 + twoCos2Sigma * b2 - b3
        return b1 * 2 * sigma.sin * sigma.cos
    }

    /// `sum` at σ1 and at σ2 at once, in the two lanes of SIMD2 (the same operations lane by lane,
    /// so the same results as two calls).
    @inline(__always)
    func sums(_ sigma1: (sin: Double, cos: Double), _ sigma2: (sin: Double, cos: Double))
        -> (at1: Double, at2: Double)
    {
        let sinSigma = SIMD2(sigma1.sin, sigma2.sin)
        let cosSigma = SIMD2(sigma1.cos, sigma2.cos)
        let twoCos2Sigma = 2 * (cosSigma - sinSigma) * (cosSigma + sinSigma)
        let b6 = SIMD2(repeating: coefficients.c5)
        let b5 = coefficients.c4 + twoCos2Sigma * b6
        let b4 = coefficients.c3 + twoCos2Sigma * b5 - b6
        let b3 = coefficients.c2 + twoCos2Sigma * b4 - b5
        let b2 = coefficients.c1 + twoCos2Sigma * b3 - b4
        let b1 = coefficients.c0 + twoCos2Sigma * b2 - b3
        let total = b1 * 2 * sinSigma * cosSigma
        return (total[0], total[1])
    }
}
