// SPDX-License-Identifier: Apache-2.0
// WMM2025 behaviour outside the reference table: validity, zones, poles, odd input, decimal years.
import QiblaCore
import Testing

private func position(_ latitude: Double, _ longitude: Double, heightMetres: Double = 0) -> GeodeticPosition {
    GeodeticPosition(uncheckedLatitude: latitude, longitude: longitude, heightMetres: heightMetres)
}

private let model = MagneticModel.wmm2025

@Suite("WMM2025 model behaviour")
struct WMMBehaviourTests {
    @Test("validity is 2025.0 through 2030.0; outside it the model still answers but says so")
    func validityFlag() {
        let mecca = position(21.4225, 39.8262)
        #expect(model.field(at: mecca, decimalYear: 2025.0).isWithinValidity)
        #expect(model.field(at: mecca, decimalYear: 2030.0).isWithinValidity)
        let before = model.field(at: mecca, decimalYear: 2024.99)
        let after = model.field(at: mecca, decimalYear: 2031.5)
        #expect(!before.isWithinValidity)
        #expect(!after.isWithinValidity)
        #expect(after.totalNanotesla.isFinite && after.totalNanotesla > 20_000)
        // Linear secular variation: 2031.5 = 2030.0 + 1.5 years of the same rate.
        let at2030 = model.field(at: mecca, decimalYear: 2030.0)
        let expected = at2030.northNanotesla + 1.5 * at2030.yearlyChange.northNanoteslaPerYear
        #expect(abs(after.northNanotesla - expected) < 1e-6)
    }

    @Test("a non-finite year is evaluated at the epoch and flagged out of validity, never NaN")
    func nonFiniteYear() {
        let field = model.field(at: position(48.85, 2.35), decimalYear: .nan)
        #expect(!field.isWithinValidity)
        var atEpoch = model.field(at: position(48.85, 2.35), decimalYear: 2025.0)
        atEpoch.isWithinValidity = false
        #expect(field == atEpoch)
        #expect(!model.field(at: position(48.85, 2.35), decimalYear: .infinity).declinationDegrees.isNaN)
    }

    @Test("absurd depths give finite numbers, not NaN")
    func extremeHeight() {
        let field = model.field(at: position(10, 10, heightMetres: -6_400_000), decimalYear: 2026)
        #expect(field.totalNanotesla.isFinite)
        #expect(field.declinationDegrees.isFinite)
    }

    @Test("near the south magnetic pole the compass is blacked out, around it cautioned, elsewhere normal")
    func zones() {
        // Values from WMM2025 (cross-checked with pygeomag 1.1.0 at 2025.5): H ≈ 236 nT, 2965 nT, 6804 nT.
        let pole = model.field(at: position(-64, 135.8), decimalYear: 2025.5)
        #expect(pole.horizontalNanotesla < 2000)
        #expect(pole.zone == .blackout)
        let rim = model.field(at: position(-60, 130), decimalYear: 2025.5)
        #expect(rim.zone == .caution)
        #expect(abs(rim.horizontalNanotesla - 2965.0) < 0.1)
        #expect(model.field(at: position(-55, 125), decimalYear: 2025.5).zone == .normal)
        #expect(model.field(at: position(86, 140), decimalYear: 2025.5).zone == .blackout)
        #expect(model.field(at: position(21.4225, 39.8262), decimalYear: 2025.5).zone == .normal)
        #expect(MagneticZone(horizontalNanotesla: 1999.9) == .blackout)
        #expect(MagneticZone(horizontalNanotesla: 2000) == .caution)
        #expect(MagneticZone(horizontalNanotesla: 5999.9) == .caution)
        #expect(MagneticZone(horizontalNanotesla: 6000) == .normal)
    }

    @Test("at the geographic poles the special case for Y gives the limit of nearby points")
    func geographicPoles() {
        // Independent implementation (pygeomag 1.1.0, WMM_2025.COF) at 2027.25, sea level.
        let north0 = model.field(at: position(90, 0), decimalYear: 2027.25)
        #expect(abs(north0.northNanotesla - 1703.79586) < 0.01)
        #expect(abs(north0.eastNanotesla - 577.40681) < 0.01)
        #expect(abs(north0.downNanotesla - 56909.61116) < 0.01)
        let north45 = model.field(at: position(90, 45), decimalYear: 2027.25)
        #expect(abs(north45.northNanotesla - 796.47733) < 0.01)
        #expect(abs(north45.eastNanotesla - 1613.05388) < 0.01)
        #expect(abs(north45.declinationDegrees - 63.72123) < 1e-5)
        let south = model.field(at: position(-90, -120, heightMetres: 10_000), decimalYear: 2027.25)
        #expect(abs(south.northNanotesla - 562.64864) < 0.01)
        #expect(abs(south.eastNanotesla - 16703.29870) < 0.01)
        #expect(abs(south.downNanotesla - -51323.87676) < 0.01)
        // Continuity: 1 cm from the pole, along the same meridian.
        let near = model.field(at: position(89.9999999, 45), decimalYear: 2027.25)
        #expect(abs(near.eastNanotesla - north45.eastNanotesla) < 0.01)
        #expect(abs(near.northNanotesla - north45.northNanotesla) < 0.01)
        #expect(abs(near.yearlyChange.eastNanoteslaPerYear - north45.yearlyChange.eastNanoteslaPerYear) < 1e-3)
        // Grid variation at the pole: GV = D − λ, the same for every meridian.
        let gv0 = north0.gridVariationDegrees, gv45 = north45.gridVariationDegrees
        #expect(gv0 != nil && gv45 != nil)
        if let gv0, let gv45 { #expect(abs(Angle.turn(from: gv0, to: gv45)) < 1e-9) }
    }

    @Test("grid variation exists from |latitude| 55° poleward only")
    func gridVariationBand() {
        #expect(model.field(at: position(54.999, 10), decimalYear: 2026).gridVariationDegrees == nil)
        #expect(model.field(at: position(-54.999, 10), decimalYear: 2026).gridVariationDegrees == nil)
        let north = model.field(at: position(55, 10), decimalYear: 2026)
        #expect(north.gridVariationDegrees.map { abs($0 - (north.declinationDegrees - 10)) < 1e-9 } == true)
        let south = model.field(at: position(-55, 10), decimalYear: 2026)
        #expect(south.gridVariationDegrees.map { abs($0 - (south.declinationDegrees + 10)) < 1e-9 } == true)
    }

    @Test("heights are metres: 100 km above (80°N, 0°) matches the report table's 100 km row")
    func heightInMetres() {
        let field = model.field(at: position(80, 0, heightMetres: 100_000), decimalYear: 2025.0)
        #expect(abs(field.totalNanotesla - 52964.9) < 0.06)
    }
}

@Suite("DecimalYear")
struct DecimalYearTests {
    @Test("2025-01-01T00:00Z is exactly 2025.0")
    func startOf2025() {
        #expect(DecimalYear.from(unixSeconds: 1_735_689_600) == 2025.0)
        #expect(DecimalYear.from(year: 2025, month: 1, day: 1) == 2025.0)
    }

    @Test("2025-07-02T12:00Z is the middle of 2025 (182.5 of 365 days)")
    func middleOf2025() {
        let value = DecimalYear.from(unixSeconds: 1_751_457_600)
        #expect(abs(value - 2025.5) < 1e-12)
        #expect(DecimalYear.from(year: 2025, month: 7, day: 2, secondsOfDay: 43_200) == value)
    }

    @Test("2028 is a leap year: 366 days, and its 1 March is day 60")
    func leapYear2028() throws {
        let start = try #require(DecimalYear.from(year: 2028, month: 1, day: 1))
        #expect(start == 2028.0)
        let march1 = try #require(DecimalYear.from(year: 2028, month: 3, day: 1))
        #expect(abs(march1 - (2028 + 60.0 / 366)) < 1e-12)
        let end = DecimalYear.from(unixSeconds: 1_861_920_000 - 1)  // 2028-12-31T23:59:59Z
        #expect(end < 2029 && end > 2029 - 2.0 / (366 * 86_400))
        #expect(DecimalYear.from(unixSeconds: 1_861_920_000) == 2029.0)  // 2029-01-01
        #expect(DecimalYear.from(year: 2028, month: 2, day: 29) != nil)
        #expect(DecimalYear.from(year: 2027, month: 2, day: 29) == nil)
    }

    @Test("dates before 1970 and century rules")
    func calendarEdges() {
        #expect(DecimalYear.from(unixSeconds: 0) == 1970.0)
        #expect(DecimalYear.from(unixSeconds: -86_400 * 365) == 1969.0)
        #expect(DecimalYear.from(year: 2100, month: 2, day: 29) == nil)
        #expect(DecimalYear.from(year: 2000, month: 2, day: 29) != nil)
        #expect(DecimalYear.from(year: 2025, month: 13, day: 1) == nil)
        #expect(DecimalYear.from(year: 2025, month: 4, day: 31) == nil)
    }

    @Test("non-finite and enormous times do not trap")
    func oddInput() {
        #expect(DecimalYear.from(unixSeconds: .nan).isNaN)
        #expect(DecimalYear.from(unixSeconds: .infinity) == .infinity)
        #expect(DecimalYear.from(unixSeconds: 1e300).isFinite)
    }
}
