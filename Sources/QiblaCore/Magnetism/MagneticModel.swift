// SPDX-License-Identifier: Apache-2.0
// The World Magnetic Model 2025 (WMM2025), evaluated.
//
// Source of every formula: Chulliat, A., et al. (2025), "The US/UK World Magnetic Model for 2025–2030:
// Technical Report", NOAA NCEI / British Geological Survey, §1.2 "Model equations" (the step-by-step
// procedure) and §1.3 (grid variation, blackout zones). Equation numbers below follow §1.2 as
// numbered in the WMM2015/2020/2025 editions:
//   Eq. (2)–(4)  geomagnetic potential, Schmidt semi-normalised associated Legendre functions P̆ₙᵐ;
//   Eq. (7)      geodetic (φ, λ, h) → geocentric spherical (φ′, λ, r) on the WGS84 ellipsoid;
//   Eq. (9)      Gauss coefficients at time t from the epoch values and the secular variation;
//   Eq. (10)–(12) field X′ Y′ Z′ in the geocentric frame; Eq. (13)–(15) their secular variation;
//   Eq. (16)–(17) rotation of the geocentric vector back to the ellipsoidal (geodetic) frame;
//   Eq. (19)     H, F, I, D from X Y Z;  Eq. (20) their rates of change;
//   §1.3         grid variation GV = D − λ (north), D + λ (south), for |φ| ≥ 55°;
//                caution zone H < 6000 nT, blackout zone H < 2000 nT.
// Caveat: only Eq. (10)–(12) and (19) were confirmed against NOAA's own code comments here; the
// other numbers follow the earlier editions and await a check against the 2025 PDF. Every row of
// NOAA's official WMM2025 test values is reproduced by the tests, whatever the numbering.
// At the geographic poles Eq. (11) divides 0 by cos φ′ = 0; the report's special case (the limit of
// P̆ₙ¹(sin φ′)/cos φ′, computed by its own recursion, only m = 1 terms surviving) is used instead,
// as in the NOAA reference library (MAG_SummationSpecial).
// Coefficients: WMM2025Coefficients.swift, generated from the official WMM.COF.

/// The World Magnetic Model 2025 (NOAA NCEI / BGS), a degree-12 spherical-harmonic model of the
/// main geomagnetic field with linear secular variation, valid 2025.0–2030.0.
public struct MagneticModel: Sendable {
    /// WMM2025 with its official coefficients (epoch 2025.0, degree 12).
    public static let wmm2025 = MagneticModel(
        epoch: WMM2025Coefficients.epoch,
        maximumDegree: WMM2025Coefficients.maximumDegree,
        g: WMM2025Coefficients.mainFieldG, h: WMM2025Coefficients.mainFieldH,
        gRate: WMM2025Coefficients.secularVariationG, hRate: WMM2025Coefficients.secularVariationH)

    /// Model epoch t₀, decimal year.
    public let epochDecimalYear: Double
    /// The interval in which the model is valid, decimal years (epoch … epoch + 5).
    public var validityDecimalYears: ClosedRange<Double> { epochDecimalYear...(epochDecimalYear + 5) }

    /// Geomagnetic reference radius a, metres (report §1.2: 6 371 200 m).
    static let referenceRadiusMetres = 6_371_200.0
    /// WGS84 semi-major axis A, metres, and flattening f (report Table 1; NGA.STND.0036).
    static let wgs84SemiMajorAxisMetres = 6_378_137.0
    static let wgs84Flattening = 1 / 298.257223563

    private let maximumDegree: Int
    /// Coefficients, `n(n+1)/2 + m` indexed (see WMM2025Coefficients).
    private let g: [Double], h: [Double], gRate: [Double], hRate: [Double]
    /// Schmidt semi-normalisation factors Sₙᵐ (report Eq. (3)) for the same index.
    private let schmidt: [Double]
    /// Recursion constants Kₙᵐ = ((n−1)² − m²) / ((2n−1)(2n−3)) for the unnormalised Legendre recursion.
    private let recursion: [Double]

    init(epoch: Double, maximumDegree: Int, g: [Double], h: [Double], gRate: [Double], hRate: [Double]) {
        let count = (maximumDegree + 1) * (maximumDegree + 2) / 2
        precondition(g.count == count && h.count == count && gRate.count == count && hRate.count == count)
        self.epochDecimalYear = epoch
        self.maximumDegree = maximumDegree
        self.g = g; self.h = h; self.gRate = gRate; self.hRate = hRate
        var schmidt = [Double](repeating: 0, count: count)
        var recursion = [Double](repeating: 0, count: count)
        schmidt[0] = 1
        if maximumDegree >= 1 {
            for n in 1...maximumDegree {
                let base = n * (n + 1) / 2
                // Sₙ⁰ = Sₙ₋₁⁰ (2n−1)/n ;  Sₙᵐ = Sₙᵐ⁻¹ √((n−m+1)(δ_m1 + 1)/(n+m))
                schmidt[base] = schmidt[(n - 1) * n / 2] * Double(2 * n - 1) / Double(n)
                for m in 1...n {
                    let factor = Double((n - m + 1) * (m == 1 ? 2 : 1)) / Double(n + m)
                    schmidt[base + m] = schmidt[base + m - 1] * factor.squareRoot()
                }
                if n > 1 {
                    for m in 0...n {
                        let numerator = Double((n - 1) * (n - 1) - m * m)
                        recursion[base + m] = numerator / Double((2 * n - 1) * (2 * n - 3))
                    }
                }
            }
        }
        self.schmidt = schmidt
        self.recursion = recursion
    }

    /// The main field at a geodetic position and time.
    ///
    /// - Parameters:
    ///   - position: WGS84 geodetic latitude/longitude (degrees) and height above the ellipsoid in
    ///     **metres** (the model is specified from −1 km to 850 km; the radius is floored at 1 km so
    ///     absurd depths still give finite numbers).
    ///   - decimalYear: time as a decimal year (see ``DecimalYear``). Outside 2025.0–2030.0 the model
    ///     is still evaluated (linear extrapolation) and ``MagneticField/isWithinValidity`` is false.
    ///     A non-finite year cannot be evaluated: the epoch is used and `isWithinValidity` is false.
    public func field(at position: GeodeticPosition, decimalYear: Double) -> MagneticField {
        let year = decimalYear.isFinite ? decimalYear : epochDecimalYear
        let isWithinValidity = decimalYear.isFinite && validityDecimalYears.contains(decimalYear)

        // Eq. (7): geodetic → geocentric spherical coordinates.
        let latitude = Angle.radians(position.latitudeDegrees)
        let longitude = Angle.radians(position.longitudeDegrees)
        let sinLatitude = sin(latitude), cosLatitude = cos(latitude)
        let f = Self.wgs84Flattening
        let eccentricitySquared = f * (2 - f)
        let primeVerticalRadius = Self.wgs84SemiMajorAxisMetres
            / (1 - eccentricitySquared * sinLatitude * sinLatitude).squareRoot()
        let p = (primeVerticalRadius + position.heightMetres) * cosLatitude
        let z = (primeVerticalRadius * (1 - eccentricitySquared) + position.heightMetres) * sinLatitude
        let radius = max((p * p + z * z).squareRoot(), 1_000)
        let geocentricLatitude = atan2(z, p)

        let geocentric = sum(geocentricLatitude: geocentricLatitude, longitude: longitude,
                             radius: radius, yearsSinceEpoch: year - epochDecimalYear)

        // Eq. (16)–(17): rotate from the geocentric to the ellipsoidal frame by ψ = φ′ − φ.
        let psi = geocentricLatitude - latitude
        let sinPsi = sin(psi), cosPsi = cos(psi)
        func rotate(_ v: (x: Double, y: Double, z: Double)) -> (x: Double, y: Double, z: Double) {
            (v.x * cosPsi - v.z * sinPsi, v.y, v.x * sinPsi + v.z * cosPsi)
        }
        let b = rotate(geocentric.field)
        let rate = rotate(geocentric.rate)

        // Eq. (19): the magnetic elements.
        let horizontal = (b.x * b.x + b.y * b.y).squareRoot()
        let total = (horizontal * horizontal + b.z * b.z).squareRoot()
        let declination = Angle.degrees(atan2(b.y, b.x))
        let inclination = Angle.degrees(atan2(b.z, horizontal))

        // §1.3: grid variation, defined in the polar regions only.
        var gridVariation: Double?
        if position.latitudeDegrees >= 55 {
            gridVariation = Angle.normalized180(declination - position.longitudeDegrees)
        } else if position.latitudeDegrees <= -55 {
            gridVariation = Angle.normalized180(declination + position.longitudeDegrees)
        }

        // Eq. (20): rates of change of the elements (guarded where H or F vanish).
        let horizontalRate = horizontal > 0 ? (b.x * rate.x + b.y * rate.y) / horizontal : 0
        let totalRate = total > 0 ? (b.x * rate.x + b.y * rate.y + b.z * rate.z) / total : 0
        let inclinationRate = total > 0
            ? Angle.degrees((horizontal * rate.z - b.z * horizontalRate) / (total * total)) : 0
        let declinationRate = horizontal > 0
            ? Angle.degrees((b.x * rate.y - b.y * rate.x) / (horizontal * horizontal)) : 0

        return MagneticField(
            northNanotesla: b.x, eastNanotesla: b.y, downNanotesla: b.z,
            horizontalNanotesla: horizontal, totalNanotesla: total,
            inclinationDegrees: inclination, declinationDegrees: declination,
            gridVariationDegrees: gridVariation,
            isWithinValidity: isWithinValidity,
            zone: MagneticZone(horizontalNanotesla: horizontal),
            yearlyChange: MagneticFieldYearlyChange(
                northNanoteslaPerYear: rate.x, eastNanoteslaPerYear: rate.y, downNanoteslaPerYear: rate.z,
                horizontalNanoteslaPerYear: horizontalRate, totalNanoteslaPerYear: totalRate,
                inclinationDegreesPerYear: inclinationRate, declinationDegreesPerYear: declinationRate))
    }

    /// Eq. (9)–(15): the field and its secular variation in the geocentric frame (X′ north, Y′ east,
    /// Z′ down, nT and nT/yr), from the Schmidt semi-normalised Legendre functions of sin φ′.
    private func sum(geocentricLatitude: Double, longitude: Double, radius: Double, yearsSinceEpoch dt: Double)
        -> (field: (x: Double, y: Double, z: Double), rate: (x: Double, y: Double, z: Double))
    {
        let sinPhi = sin(geocentricLatitude)  // x = sin φ′ = cos θ
        let cosPhi = cos(geocentricLatitude)  // sin θ
        let count = g.count
        let ratio = Self.referenceRadiusMetres / radius
        var x = 0.0, y = 0.0, z = 0.0, xRate = 0.0, yRate = 0.0, zRate = 0.0

        withUnsafeTemporaryAllocation(of: Double.self, capacity: 2 * count) { buffer in
            let legendre = buffer.baseAddress!           // Pₙᵐ(sin φ′), unnormalised, then ×Sₙᵐ
            let derivative = buffer.baseAddress! + count  // dPₙᵐ/dθ, then −Sₙᵐ× (→ d/dφ′)
            legendre[0] = 1
            derivative[0] = 0
            // (a/r)^(n+2), starting at n = 1.
            var radiusPower = ratio * ratio * ratio
            // cos mλ, sin mλ by the angle-addition recurrence.
            let cosLambda = cos(longitude), sinLambda = sin(longitude)
            for n in 1...maximumDegree {
                let base = n * (n + 1) / 2
                var cosM = 1.0, sinM = 0.0
                var sumX = 0.0, sumY = 0.0, sumZ = 0.0, sumXRate = 0.0, sumYRate = 0.0, sumZRate = 0.0
                for m in 0...n {
                    let index = base + m
                    // Unnormalised (Gauss) recursion in θ (cf. report Eq. (4) and the NOAA library's
                    // MAG_PcupLow), then Schmidt normalisation.
                    let p: Double, dp: Double
                    if n == m {
                        let previous = (n - 1) * n / 2 + m - 1
                        p = cosPhi * legendre[previous]
                        dp = cosPhi * derivative[previous] + sinPhi * legendre[previous]
                    } else if n == 1 {
                        p = sinPhi * legendre[0]
                        dp = sinPhi * derivative[0] - cosPhi * legendre[0]
                    } else {
                        let previous = (n - 1) * n / 2 + m
                        var pValue = sinPhi * legendre[previous]
                        var dpValue = sinPhi * derivative[previous] - cosPhi * legendre[previous]
                        if m <= n - 2 {
                            let twoBack = (n - 2) * (n - 1) / 2 + m
                            pValue -= recursion[index] * legendre[twoBack]
                            dpValue -= recursion[index] * derivative[twoBack]
                        }
                        p = pValue
                        dp = dpValue
                    }
                    legendre[index] = p
                    derivative[index] = dp
                    let schmidtP = p * schmidt[index]
                    let schmidtDP = -dp * schmidt[index]  // derivative with respect to latitude φ′

                    // Eq. (9): coefficients at time t.
                    let gt = g[index] + dt * gRate[index]
                    let ht = h[index] + dt * hRate[index]
                    let cosTerm = gt * cosM + ht * sinM
                    let sinTerm = gt * sinM - ht * cosM
                    let cosRate = gRate[index] * cosM + hRate[index] * sinM
                    let sinRate = gRate[index] * sinM - hRate[index] * cosM
                    sumX -= cosTerm * schmidtDP
                    sumY += Double(m) * sinTerm * schmidtP
                    sumZ -= Double(n + 1) * cosTerm * schmidtP
                    sumXRate -= cosRate * schmidtDP
                    sumYRate += Double(m) * sinRate * schmidtP
                    sumZRate -= Double(n + 1) * cosRate * schmidtP

                    let nextCos = cosM * cosLambda - sinM * sinLambda
                    sinM = sinM * cosLambda + cosM * sinLambda
                    cosM = nextCos
                }
                x += radiusPower * sumX; y += radiusPower * sumY; z += radiusPower * sumZ
                xRate += radiusPower * sumXRate; yRate += radiusPower * sumYRate; zRate += radiusPower * sumZRate
                radiusPower *= ratio
            }
        }

        if abs(cosPhi) > 1e-10 {
            y /= cosPhi           // Eq. (11)
            yRate /= cosPhi       // Eq. (14)
        } else {
            (y, yRate) = polarEast(sinPhi: sinPhi, longitude: longitude, ratio: ratio, dt: dt)
        }
        return ((x, y, z), (xRate, yRate, zRate))
    }

    /// Y′ and its rate at a geographic pole (report §1.2, special case of Eq. (11)): only the m = 1
    /// terms survive, with P̆ₙ¹(sin φ′)/cos φ′ → Sₙ¹·Qₙ, Q₁ = 1, Qₙ = sin φ′ Qₙ₋₁ − Kₙ¹ Qₙ₋₂.
    private func polarEast(sinPhi: Double, longitude: Double, ratio: Double, dt: Double) -> (Double, Double) {
        let sinLambda = sin(longitude), cosLambda = cos(longitude)
        var qTwoBack = 0.0, qPrevious = 1.0  // Q₀ stands in for the n = 1 start
        var radiusPower = ratio * ratio * ratio
        var y = 0.0, yRate = 0.0
        for n in 1...maximumDegree {
            let index = n * (n + 1) / 2 + 1
            let q: Double
            if n == 1 {
                q = qPrevious
            } else {
                q = sinPhi * qPrevious - recursion[index] * qTwoBack
            }
            if n > 1 { qTwoBack = qPrevious }
            qPrevious = q
            let gt = g[index] + dt * gRate[index]
            let ht = h[index] + dt * hRate[index]
            y += radiusPower * (gt * sinLambda - ht * cosLambda) * q * schmidt[index]
            yRate += radiusPower * (gRate[index] * sinLambda - hRate[index] * cosLambda) * q * schmidt[index]
            radiusPower *= ratio
        }
        return (y, yRate)
    }
}

/// The geomagnetic field vector and elements at one place and time (WMM2025 report Eq. (19)).
public struct MagneticField: Sendable, Equatable {
    /// North (X), east (Y), down (Z) components, horizontal intensity H and total intensity F, nanotesla.
    public var northNanotesla: Double
    public var eastNanotesla: Double
    public var downNanotesla: Double
    public var horizontalNanotesla: Double
    public var totalNanotesla: Double
    /// Inclination (dip), degrees, positive down.
    public var inclinationDegrees: Double
    /// Declination, degrees, east positive, in (−180, 180].
    public var declinationDegrees: Double
    /// Grid variation, degrees (defined only at |latitude| ≥ 55°, else nil): D − λ in the north,
    /// D + λ in the south, in (−180, 180] (WMM2025 report §1.3).
    public var gridVariationDegrees: Double?
    /// False outside 2025.0–2030.0 (the values are then an extrapolation).
    public var isWithinValidity: Bool
    /// Compass reliability from the horizontal intensity.
    public var zone: MagneticZone
    /// Secular variation of every element at this place and time (report Eq. (13)–(15), (20)).
    public var yearlyChange: MagneticFieldYearlyChange
}

/// Rates of change of the field elements (WMM2025 report Eq. (20)), per year.
public struct MagneticFieldYearlyChange: Sendable, Equatable {
    /// Rates of X, Y, Z, H and F, nanotesla per year.
    public var northNanoteslaPerYear: Double
    public var eastNanoteslaPerYear: Double
    public var downNanoteslaPerYear: Double
    public var horizontalNanoteslaPerYear: Double
    public var totalNanoteslaPerYear: Double
    /// Rate of the inclination, degrees per year (0 where F = 0).
    public var inclinationDegreesPerYear: Double
    /// Rate of the declination, degrees per year (0 where H = 0).
    public var declinationDegreesPerYear: Double
}

/// WMM compass-reliability zones (WMM2025 technical report: caution H < 6000 nT, blackout H < 2000 nT).
public enum MagneticZone: String, Sendable, Equatable {
    case normal, caution, blackout

    /// Horizontal intensity below which a compass is unreliable (caution zone), nanotesla.
    public static let cautionBelowNanotesla = 6000.0
    /// Horizontal intensity below which a compass is unusable (blackout zone), nanotesla.
    public static let blackoutBelowNanotesla = 2000.0

    /// The zone for a horizontal intensity H in nanotesla.
    public init(horizontalNanotesla: Double) {
        if horizontalNanotesla < Self.blackoutBelowNanotesla {
            self = .blackout
        } else if horizontalNanotesla < Self.cautionBelowNanotesla {
            self = .caution
        } else {
            self = .normal
        }
    }
}
