// SPDX-License-Identifier: Apache-2.0
// SolarPosition.swift — the apparent topocentric position of the sun.
//
// Written from I. Reda and A. Andreas, "Solar Position Algorithm for Solar Radiation
// Applications", NREL/TP-560-34302, National Renewable Energy Laboratory (2004, revised January
// 2008); also Solar Energy 76 (2004) 577–589 and its corrigendum, Solar Energy 81 (2007) 838.
// Cited below as "SPA (n)" for its equation n; the periodic terms are in SPATables.swift.

/// The sun as seen from one place at one instant.
public struct SolarPosition: Sendable, Equatable {
    /// Topocentric azimuth, degrees clockwise from true north in [0, 360) (SPA (46), eastward from
    /// north, the navigators' convention). Refraction does not change it.
    public var azimuthDegrees: Double
    /// Apparent topocentric elevation above the horizon, degrees: the geometric elevation plus
    /// the refraction correction when an ``Atmosphere`` was given, SPA (43).
    public var elevationDegrees: Double
    /// Geometric topocentric elevation (no refraction), degrees, SPA (41).
    public var geometricElevationDegrees: Double

    /// Apparent topocentric zenith angle, degrees, SPA (44).
    public var zenithDegrees: Double { 90 - elevationDegrees }
}

/// The air the sunlight comes through, for the refraction correction SPA (42).
public struct Atmosphere: Sendable, Equatable {
    /// Local pressure, millibars (hPa). Standard: 1010, the value SPA (42) is normalised to.
    public var pressureMillibars: Double
    /// Local temperature, °C. Standard: 10 (SPA (42) is normalised to 283 K).
    public var temperatureCelsius: Double
    /// Refraction at the horizon, degrees: below −(0.26667 + this) of geometric elevation (the
    /// sun's upper limb under the horizon) no correction is applied. SPA's and pvlib's default 0.5667.
    public var horizonRefractionDegrees: Double

    public init(pressureMillibars: Double = 1010, temperatureCelsius: Double = 10, horizonRefractionDegrees: Double = 0.5667) {
        self.pressureMillibars = pressureMillibars
        self.temperatureCelsius = temperatureCelsius
        self.horizonRefractionDegrees = horizonRefractionDegrees
    }

    /// Standard pressure and temperature (1010 mbar, 10 °C).
    public static let standard = Atmosphere()
}

/// The sun's geocentric place at one instant: what SPA computes before the observer enters, SPA
/// (1)–(31). It changes slowly (about 1° a day in right ascension), so a day's worth can be
/// interpolated (``SolarDay``).
public struct SunGeocentric: Sendable, Equatable {
    /// Geocentric apparent right ascension α, degrees in [0, 360), SPA (30).
    public var rightAscensionDegrees: Double
    /// Geocentric apparent declination δ, degrees, SPA (31).
    public var declinationDegrees: Double
    /// Earth–sun distance R, astronomical units, SPA (11) applied to Table A4.2's R terms.
    public var distanceAU: Double
    /// Δψ·cos ε, degrees: the nutation term that turns mean into apparent sidereal time, SPA (29).
    public var equationOfEquinoxesDegrees: Double
}

/// The NREL Solar Position Algorithm (Reda & Andreas 2004, rev. 2008): the apparent topocentric
/// azimuth and elevation of the sun for a place, an instant and (optionally) an atmosphere.
///
/// ## Algorithm
/// 1. Time, SPA (4)–(8): the Julian day JD from UTC (taken as UT1), the Julian ephemeris day
///    JDE = JD + ΔT/86 400, and the Julian (ephemeris) century and millennium JC, JCE, JME.
/// 2. The Earth's heliocentric longitude L, latitude B and radius R from the VSOP87 terms of
///    Table A4.2, SPA (9)–(12); the geocentric longitude Θ = L + 180°, latitude β = −B, SPA (13)–(14).
/// 3. Nutation in longitude Δψ and obliquity Δε from the 63 terms of Table A4.3 and the
///    fundamental arguments X0…X4, SPA (15)–(23); the true obliquity ε = ε0/3600 + Δε, SPA (24)–(25).
/// 4. Aberration Δτ = −20.4898″/R, SPA (26); apparent longitude λ = Θ + Δψ + Δτ, SPA (27).
/// 5. Apparent sidereal time at Greenwich ν = ν0 + Δψ cos ε, SPA (28)–(29); geocentric right
///    ascension α and declination δ, SPA (30)–(31).
/// 6. Local hour angle H = ν + σ − α (σ longitude, east positive), SPA (32); parallax with the
///    equatorial horizontal parallax ξ = 8.794″/R and the observer's geocentric terms u, x, y,
///    SPA (33)–(39), giving the topocentric α′, δ′ and H′ = H − Δα, SPA (40).
/// 7. Geometric elevation e0, SPA (41); refraction Δe from pressure P and temperature T,
///    Δe = (P/1010)(283/(273 + T))·1.02/(60 tan(e0 + 10.3/(e0 + 5.11))), applied while
///    e0 ≥ −(0.26667° + the horizon refraction), SPA (42)–(43); azimuth Γ from SPA (45),
///    Φ = Γ + 180°, SPA (46).
///
/// ## Accuracy
/// SPA's stated uncertainty is ±0.0003° in zenith and azimuth for the years −2000 to 6000, given
/// the exact ΔT. Checked here: the report's example (Golden, Colorado, 2003-10-17 12:30:30 −07:00)
/// and 1,200 random vectors from pvlib 0.16.1's `spa_python` (1990–2060, both hemispheres, polar
/// day and night, refraction off and on), `Tests/QiblaCoreTests/SunPositionTests.swift`. What
/// limits a real answer is the time, not the algorithm: UTC is used as UT1 (|UT1 − UTC| < 0.9 s,
/// up to 0.004° of hour angle), ΔT comes from ``DeltaT`` unless given (see there: a few seconds
/// of error, 0.0001°), and the refraction formula is a mean one (tenths of a degree near the
/// horizon in unusual weather).
///
/// ## Range
/// Times are seconds since the Unix epoch, UTC. ``validUnixSeconds`` is the range of ``DeltaT``
/// (1900 to 2150); given an explicit ΔT the algorithm itself holds from −2000 to 6000. The height
/// is the observer's height in metres (SPA uses the height above sea level; the difference from
/// the ellipsoidal height, tens of metres, changes the parallax by 1e-8°).
public enum SolarPositionAlgorithm {
    /// 1900-01-01T00:00Z ..< 2150-01-01T00:00Z, the range of ``DeltaT``.
    public static let validUnixSeconds: Range<Double> = -2_208_988_800 ..< 5_680_281_600

    /// Unix time of J2000.0 as a UT instant, 2000-01-01T12:00Z (JD 2 451 545.0).
    static let j2000UnixSeconds = 946_728_000.0

    /// The sun's apparent topocentric position at `unixSeconds` (UTC) for `position`, with
    /// refraction through `atmosphere` (nil: none, the geometric position). ΔT comes from
    /// ``DeltaT`` unless `deltaTSeconds` is given. Returns nil when the time is outside
    /// ``validUnixSeconds`` and no ΔT is given, or is not finite.
    public static func position(at unixSeconds: Double, for position: GeodeticPosition,
                                atmosphere: Atmosphere? = .standard, deltaTSeconds: Double? = nil) -> SolarPosition? {
        guard unixSeconds.isFinite else { return nil }
        guard let deltaT = deltaTSeconds ?? (validUnixSeconds.contains(unixSeconds) ? DeltaT.seconds(unixSeconds: unixSeconds) : nil),
              deltaT.isFinite
        else { return nil }
        let sun = geocentric(at: unixSeconds, deltaTSeconds: deltaT)
        return topocentric(sun, at: unixSeconds, observer: Observer(position), atmosphere: atmosphere)
    }

    // MARK: Geocentric, SPA (1)–(31)

    /// The sun's geocentric apparent place at `unixSeconds` (UTC) with ΔT `deltaTSeconds`,
    /// SPA (4)–(31): the 195 cosines of the Earth series (``cosine(_:)``), 5 sine–cosine pairs for
    /// the 63 nutation terms, and a few more.
    public static func geocentric(at unixSeconds: Double, deltaTSeconds: Double) -> SunGeocentric {
        // SPA (4)–(8), counted from J2000.0 to keep the digits: JDE − 2451545 = JD − 2451545 + ΔT/86400.
        let daysTT = (unixSeconds - j2000UnixSeconds + deltaTSeconds) / 86_400
        let jce = daysTT / 36_525                                           // SPA (7)
        let jme = jce / 10                                                  // SPA (8)

        // SPA (9)–(12): L, B (radians) and R (AU).
        let lRadians = earthSeries(SPATables.l, jme)
        let bRadians = earthSeries(SPATables.b, jme)
        let r = earthSeries(SPATables.r, jme)

        // SPA (13)–(14): geocentric longitude and latitude, degrees.
        let theta = Angle.degrees(lRadians) + 180
        let betaDegrees = -Angle.degrees(bRadians)

        // SPA (15)–(23): nutation.
        let (deltaPsi, deltaEpsilon) = nutation(jce: jce)

        // SPA (24)–(25): true obliquity of the ecliptic, degrees.
        let u = jme / 10
        let epsilon0 = 84_381.448 + u * (-4_680.93 + u * (-1.55 + u * (1_999.25 + u * (-51.38 + u * (-249.67
            + u * (-39.05 + u * (7.12 + u * (27.87 + u * (5.79 + u * 2.45)))))))))
        let epsilon = epsilon0 / 3600 + deltaEpsilon

        // SPA (26)–(27): aberration and apparent longitude.
        let deltaTau = -20.4898 / (3600 * r)
        let lambda = theta + deltaPsi + deltaTau

        // SPA (30)–(31): right ascension and declination.
        let lambdaR = Angle.radians(lambda), epsilonR = Angle.radians(epsilon), betaR = Angle.radians(betaDegrees)
        let sinLambda = sin(lambdaR), cosEpsilon = cos(epsilonR), sinEpsilon = sin(epsilonR)
        let alpha = atan2(sinLambda * cosEpsilon - tan(betaR) * sinEpsilon, cos(lambdaR))
        let delta = asin(sin(betaR) * cosEpsilon + cos(betaR) * sinEpsilon * sinLambda)
        return SunGeocentric(rightAscensionDegrees: Angle.normalized360(Angle.degrees(alpha)),
                             declinationDegrees: Angle.degrees(delta),
                             distanceAU: r,
                             equationOfEquinoxesDegrees: deltaPsi * cosEpsilon)
    }

    /// Σ_i (Σ_j A_ij cos(B_ij + C_ij·τ))·τ^i / 10⁸, SPA (9)–(11) (Horner in τ).
    @inline(__always)
    static func earthSeries(_ series: [[Double]], _ tau: Double) -> Double {
        var total = 0.0
        for i in stride(from: series.count - 1, through: 0, by: -1) {
            var sum = 0.0
            series[i].withUnsafeBufferPointer { terms in
                var k = 0
                while k < terms.count {
                    sum += terms[k] * cosine(terms[k + 1] + terms[k + 2] * tau)
                    k += 3
                }
            }
            total = total * tau + sum
        }
        return total / 1e8
    }

    /// cos x for the Earth series, |x| < 2²⁰ (the arguments B + C·JME stay below 10⁴ rad from
    /// −2000 to 6000): Cody–Waite reduction by π/2 in three parts (the split of fdlibm's
    /// `__ieee754_rem_pio2`: 33 + 33 + 53 bits, so k·p1 and k·p2 are exact) to |r| ≤ π/4, then the
    /// Taylor series of cos r and sin r to r¹⁶ and r¹⁷ (remainders below 3e-18). Absolute error
    /// below 1e-15 + 1e-16·|x| against the correctly rounded cosine (`SunPositionTests`); the
    /// argument itself carries more rounding than that. About a third of glibc's cost, which
    /// matters here: the 195 terms are most of a solar position's time.
    @inline(__always)
    static func cosine(_ x: Double) -> Double {
        // Round to nearest by adding and subtracting 1.5·2⁵² (exact for |x·2/π| < 2⁵¹): a libm
        // call for `rounded()` would cost as much as the polynomial on x86-64 without SSE4.1.
        let k = (x * (2 / Double.pi) + 6_755_399_441_055_744.0) - 6_755_399_441_055_744.0
        let r = ((x - k * 1.57079632673412561417e+00) - k * 6.07710050630396597660e-11) - k * 2.02226624879595063154e-21
        let r2 = r * r
        let c = 1 + r2 * (-1.0 / 2 + r2 * (1.0 / 24 + r2 * (-1.0 / 720 + r2 * (1.0 / 40_320 + r2 * (-1.0 / 3_628_800
            + r2 * (1.0 / 479_001_600 + r2 * (-1.0 / 87_178_291_200 + r2 * (1.0 / 20_922_789_888_000))))))))
        let s = r * (1 + r2 * (-1.0 / 6 + r2 * (1.0 / 120 + r2 * (-1.0 / 5_040 + r2 * (1.0 / 362_880 + r2 * (-1.0 / 39_916_800
            + r2 * (1.0 / 6_227_020_800 + r2 * (-1.0 / 1_307_674_368_000 + r2 * (1.0 / 355_687_428_096_000)))))))))
        switch Int(k) & 3 {
        case 0: return c
        case 1: return -s
        case 2: return -c
        default: return s
        }
    }

    /// Δψ and Δε in degrees, SPA (15)–(23).
    static func nutation(jce: Double) -> (longitude: Double, obliquity: Double) {
        let t = jce, t2 = jce * jce, t3 = t2 * jce
        let x0 = 297.85036 + 445_267.111480 * t - 0.0019142 * t2 + t3 / 189_474   // SPA (15)
        let x1 = 357.52772 + 35_999.050340 * t - 0.0001603 * t2 - t3 / 300_000    // SPA (16)
        let x2 = 134.96298 + 477_198.867398 * t + 0.0086972 * t2 + t3 / 56_250    // SPA (17)
        let x3 = 93.27191 + 483_202.017538 * t - 0.0036825 * t2 + t3 / 327_270    // SPA (18)
        let x4 = 125.04452 - 1_934.136261 * t + 0.0020708 * t2 + t3 / 450_000     // SPA (19)
        // Each argument Σ Y_j·X_j has integer Y_j in −2…3 (Table A4.3), so its sine and cosine are
        // products of the powers e^{ikX_j}, k = −2…3: 5 sine–cosine pairs instead of 63. The
        // rounding of four complex products (a few 1e-16) is far below the terms' precision.
        var psi = 0.0, eps = 0.0
        withUnsafeTemporaryAllocation(of: Double.self, capacity: 60) { powers in
            // powers[12j + 2(k + 2)] = cos kX_j, powers[12j + 2(k + 2) + 1] = sin kX_j.
            func store(_ j: Int, _ x: Double) {
                let r = Angle.radians(fmod(x, 360))
                let c1 = cos(r), s1 = sin(r)
                let c2 = c1 * c1 - s1 * s1, s2 = 2 * s1 * c1
                let c3 = c2 * c1 - s2 * s1, s3 = s2 * c1 + c2 * s1
                let base = 12 * j
                powers[base] = c2; powers[base + 1] = -s2          // k = −2
                powers[base + 2] = c1; powers[base + 3] = -s1      // k = −1
                powers[base + 4] = 1; powers[base + 5] = 0         // k = 0
                powers[base + 6] = c1; powers[base + 7] = s1       // k = 1
                powers[base + 8] = c2; powers[base + 9] = s2       // k = 2
                powers[base + 10] = c3; powers[base + 11] = s3     // k = 3
            }
            store(0, x0); store(1, x1); store(2, x2); store(3, x3); store(4, x4)
            SPATables.nutation.withUnsafeBufferPointer { rows in
                SPATables.nutationPowerIndices.withUnsafeBufferPointer { indices in
                    var k = 0, n = 0
                    while k < rows.count {
                        let i0 = indices[n], i1 = indices[n + 1], i2 = indices[n + 2], i3 = indices[n + 3], i4 = indices[n + 4]
                        var c = powers[i0], s = powers[i0 + 1]
                        (c, s) = (c * powers[i1] - s * powers[i1 + 1], s * powers[i1] + c * powers[i1 + 1])
                        (c, s) = (c * powers[i2] - s * powers[i2 + 1], s * powers[i2] + c * powers[i2 + 1])
                        (c, s) = (c * powers[i3] - s * powers[i3 + 1], s * powers[i3] + c * powers[i3 + 1])
                        (c, s) = (c * powers[i4] - s * powers[i4 + 1], s * powers[i4] + c * powers[i4 + 1])
                        psi += (rows[k + 5] + rows[k + 6] * t) * s                    // SPA (20)
                        eps += (rows[k + 7] + rows[k + 8] * t) * c                    // SPA (21)
                        k += 9
                        n += 5
                    }
                }
            }
        }
        return (psi / 36_000_000, eps / 36_000_000)                                // SPA (22)–(23)
    }

    /// Mean sidereal time at Greenwich ν0, degrees in [0, 360), SPA (28), from UT.
    @inline(__always)
    static func meanSiderealTimeDegrees(unixSeconds: Double) -> Double {
        let days = (unixSeconds - j2000UnixSeconds) / 86_400              // JD − 2451545
        let jc = days / 36_525                                            // SPA (6)
        // 360.98564736629·d split as 360·d + 0.98564736629·d: the whole turns drop out exactly.
        let turns = fmod(days, 1) * 360
        return Angle.normalized360(280.46061837 + turns + 0.98564736629 * days + jc * jc * (0.000387933 - jc / 38_710_000))
    }

    // MARK: Topocentric, SPA (32)–(46)

    /// An observer's terms that do not depend on time: SPA (34)–(36).
    public struct Observer: Sendable {
        public let position: GeodeticPosition
        let sinLatitude: Double
        let cosLatitude: Double
        /// ρ cos φ′ and ρ sin φ′ of the observer, SPA (35)–(36).
        let x: Double
        let y: Double

        public init(_ position: GeodeticPosition) {
            self.position = position
            let phi = Angle.radians(position.latitudeDegrees)
            sinLatitude = sin(phi)
            cosLatitude = cos(phi)
            let u = atan(0.99664719 * tan(phi))                              // SPA (34)
            let h = position.heightMetres / 6_378_140
            x = cos(u) + h * cosLatitude                                     // SPA (35)
            y = 0.99664719 * sin(u) + h * sinLatitude                        // SPA (36)
        }
    }

    /// The sun's apparent topocentric position from its geocentric place `sun` at `unixSeconds`
    /// (UTC, for the sidereal time) for `observer`, SPA (28)–(29) and (32)–(46).
    public static func topocentric(_ sun: SunGeocentric, at unixSeconds: Double, observer: Observer,
                                   atmosphere: Atmosphere?) -> SolarPosition {
        let nu = meanSiderealTimeDegrees(unixSeconds: unixSeconds) + sun.equationOfEquinoxesDegrees  // SPA (29)
        let h = Angle.radians(nu + observer.position.longitudeDegrees - sun.rightAscensionDegrees)     // SPA (32)
        let xi = Angle.radians(8.794 / (3600 * sun.distanceAU))                                       // SPA (33)
        let delta = Angle.radians(sun.declinationDegrees)
        let sinXi = sin(xi), sinH = sin(h), cosH = cos(h), sinDelta = sin(delta), cosDelta = cos(delta)
        let denominator = cosDelta - observer.x * sinXi * cosH
        let deltaAlpha = atan2(-observer.x * sinXi * sinH, denominator)                              // SPA (37)
        let deltaPrime = atan2((sinDelta - observer.y * sinXi) * cos(deltaAlpha), denominator)        // SPA (39)
        let hPrime = h - deltaAlpha                                                                   // SPA (40)
        let sinHP = sin(hPrime), cosHP = cos(hPrime), sinDP = sin(deltaPrime), cosDP = cos(deltaPrime)
        let e0 = Angle.degrees(asin(observer.sinLatitude * sinDP + observer.cosLatitude * cosDP * cosHP))  // SPA (41)
        var e = e0
        if let atmosphere, e0 >= -(0.26667 + atmosphere.horizonRefractionDegrees) {                   // SPA (42)
            e += (atmosphere.pressureMillibars / 1010) * (283 / (273 + atmosphere.temperatureCelsius))
                * 1.02 / (60 * tan(Angle.radians(e0 + 10.3 / (e0 + 5.11))))
        }
        // SPA (45) with tan δ′ cos φ written as sin δ′ cos φ / cos δ′ (multiplied through by cos δ′,
        // which is positive): no division at δ′ = ±90°.
        let gamma = atan2(sinHP * cosDP, cosHP * cosDP * observer.sinLatitude - sinDP * observer.cosLatitude)
        let azimuth = Angle.normalized360(Angle.degrees(gamma) + 180)                                 // SPA (46)
        return SolarPosition(azimuthDegrees: azimuth, elevationDegrees: e, geometricElevationDegrees: e0)
    }
}
