// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import QiblaCore

/// `HeadingErrorModel` term by term, and its caps (issue 10).
@Suite struct AccuracyModelTests {
    static func estimate(spread: Double = 1, count: Int = 10, deviation: Double = 0, field: MagneticField,
                         measuredField: Double? = nil, measuredInclination: Double? = nil) -> HeadingEstimate {
        HeadingEstimate(magneticHeadingDegrees: 100, axis: .top, tiltDegrees: 10, pitchDegrees: 10, rollDegrees: 0,
                        spreadDegrees: spread, fieldStrengthMicrotesla: measuredField ?? field.totalNanotesla / 1000,
                        inclinationDegrees: measuredInclination ?? field.inclinationDegrees,
                        instantaneousHeadingDegrees: 100 + deviation, sampleCount: count, time: 0)
    }

    let model = HeadingErrorModel()
    let calibrated = CalibrationQuality.calibrated(residualMicrotesla: 0.4)

    @Test func tiltAndDeclinationTermsGrowTowardsTheMagneticPole() {
        let london = SimulatedSite.london.model, reykjavik = SimulatedSite.reykjavik.model
        let resolute = SimulatedSite.resolute.model
        let l = model.estimate(Self.estimate(field: london), calibration: calibrated, fieldDisturbed: false, expectedField: london)
        let r = model.estimate(Self.estimate(field: reykjavik), calibration: calibrated, fieldDisturbed: false, expectedField: reykjavik)
        let c = model.estimate(Self.estimate(field: resolute), calibration: calibrated, fieldDisturbed: false, expectedField: resolute)
        print("London \(l.headingErrorDegrees)° \(l.accuracy), Reykjavik \(r.headingErrorDegrees)° \(r.accuracy), "
              + "Resolute (H \(resolute.horizontalNanotesla) nT) \(c.headingErrorDegrees)° \(c.accuracy)")
        // tan|I|: London 66.5°, Reykjavik ≈ 77°.
        let epsilon = 0.1 / TiltCompensation.standardGravity
        #expect(abs(l.terms.tiltDegrees - Angle.degrees(atan(epsilon * tan(Angle.radians(london.inclinationDegrees))))) < 1e-12)
        #expect(r.terms.tiltDegrees > 1.5 * l.terms.tiltDegrees && c.terms.tiltDegrees > r.terms.tiltDegrees)
        // WMM2025 declination uncertainty √(0.26² + (5417/H)²).
        let expected = (0.26 * 0.26 + (5417 / london.horizontalNanotesla) * (5417 / london.horizontalNanotesla)).squareRoot()
        #expect(abs(l.terms.declinationDegrees - expected) < 1e-12)
        #expect(r.terms.declinationDegrees > l.terms.declinationDegrees)
        #expect(l.headingErrorDegrees < r.headingErrorDegrees && r.headingErrorDegrees < c.headingErrorDegrees)
        // Resolute is in the caution zone: at most low, whatever the number.
        #expect(resolute.zone == .caution && c.limits.contains(.cautionZone))
        #expect(c.accuracy == .low || c.accuracy == .unreliable)
        #expect(l.accuracy == .high)
    }

    @Test func smoothingIsAStandardErrorPlusTheLagOfATurn() {
        let london = SimulatedSite.london.model
        let still = model.estimate(Self.estimate(spread: 2, count: 16, field: london), calibration: calibrated,
                                   fieldDisturbed: false, expectedField: london)
        #expect(abs(still.terms.smoothingDegrees - 0.5) < 1e-12)  // 2/√16
        let turning = model.estimate(Self.estimate(spread: 2, count: 16, deviation: 12, field: london),
                                     calibration: calibrated, fieldDisturbed: false, expectedField: london)
        #expect(turning.terms.smoothingDegrees > 11 && turning.accuracy != .high)
    }

    /// One reading has no spread to measure (a window just restarted): its smoothing term is one
    /// sample's noise as the calibration's residual gives it, atan(residual / H), not 0.
    @Test func oneReadingIsAsNoisyAsTheResidualSays() {
        let london = SimulatedSite.london.model
        let one = model.estimate(Self.estimate(spread: 0, count: 1, field: london), calibration: calibrated,
                                 fieldDisturbed: false, expectedField: london)
        let residualTerm = Angle.degrees(atan(0.4 / (london.horizontalNanotesla / 1000)))
        #expect(abs(one.terms.smoothingDegrees - residualTerm) < 1e-12, "\(one.terms.smoothingDegrees)° against \(residualTerm)°")
        // Two readings measure their own spread, as before.
        let two = model.estimate(Self.estimate(spread: 0, count: 2, field: london), calibration: calibrated,
                                 fieldDisturbed: false, expectedField: london)
        #expect(two.terms.smoothingDegrees == 0)
    }

    @Test func capsFollowTheCalibrationStateLocationAndZone() {
        let london = SimulatedSite.london.model
        let e = Self.estimate(field: london)
        #expect(model.estimate(e, calibration: .uncalibrated, fieldDisturbed: false, expectedField: london).accuracy == .unreliable)
        #expect(model.estimate(e, calibration: .uncalibrated, fieldDisturbed: false, expectedField: london).headingErrorDegrees == 180)
        #expect(model.estimate(e, calibration: .unvalidated(residualMicrotesla: 0.4), fieldDisturbed: false,
                               expectedField: london).accuracy == .medium)
        #expect(model.estimate(e, calibration: .uncalibratedMatching, fieldDisturbed: false, expectedField: london).accuracy == .medium)
        #expect(model.estimate(e, calibration: calibrated, fieldDisturbed: true, expectedField: london).accuracy == .unreliable)
        let noLocation = model.estimate(e, calibration: calibrated, fieldDisturbed: false, expectedField: nil)
        #expect(noLocation.accuracy == .low && noLocation.limits == [.noLocation] && noLocation.terms.declinationDegrees == 0)
        // Blackout zone (H < 2000 nT): unreliable even with a perfect reading.
        var blackout = london
        blackout.horizontalNanotesla = 1500
        blackout.zone = MagneticZone(horizontalNanotesla: 1500)
        #expect(model.estimate(e, calibration: calibrated, fieldDisturbed: false, expectedField: blackout).accuracy == .unreliable)
        // A field 40 % too strong (before the debounce flags it): a disturbance of ≈ 0.4 F ≈ H in
        // London turns the heading by asin(d/H), here > 45°.
        let magnet = Self.estimate(field: london, measuredField: 1.4 * london.totalNanotesla / 1000)
        let disturbed = model.estimate(magnet, calibration: calibrated, fieldDisturbed: false, expectedField: london)
        #expect(disturbed.terms.disturbanceDegrees > 45 && disturbed.accuracy == .unreliable)
    }

    @Test func bucketsAreTheDocumentedOnes() {
        #expect(CompassAccuracy(headingErrorDegrees: 5) == .high)
        #expect(CompassAccuracy(headingErrorDegrees: 5.01) == .medium)
        #expect(CompassAccuracy(headingErrorDegrees: 15) == .medium)
        #expect(CompassAccuracy(headingErrorDegrees: 30) == .low)
        #expect(CompassAccuracy(headingErrorDegrees: 30.01) == .unreliable)
        #expect(CompassAccuracy(headingErrorDegrees: .nan) == .unreliable)
        #expect(CompassAccuracy.high.capped(at: .low) == .low && CompassAccuracy.low.capped(at: .medium) == .low)
    }
}
