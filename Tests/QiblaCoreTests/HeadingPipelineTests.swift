// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import QiblaCore

@Suite struct HeadingPipelineTests {
    /// Feeds `count` samples of a fixed orientation at 50 Hz starting at `start`.
    static func feed(_ pipeline: inout HeadingPipeline, _ r: Matrix3, count: Int, start: Double,
                     offset: Vector3 = .zero, fieldMicrotesla: Double = 50, inclinationDegrees: Double = 60)
        -> Result<HeadingEstimate, HeadingRejection>? {
        var last: Result<HeadingEstimate, HeadingRejection>?
        let (m, a) = HeadingFixture.readings(r, fieldMicrotesla: fieldMicrotesla, inclinationDegrees: inclinationDegrees)
        for i in 0..<count {
            last = pipeline.update(magnetic: m + offset, acceleration: a, time: start + Double(i) * 0.02)
        }
        return last
    }

    @Test func flatPhoneGivesSmoothedTopEdgeHeading() throws {
        var p = HeadingPipeline(configuration: .init())
        #expect(p.axis == .none)
        let result = try #require(Self.feed(&p, HeadingFixture.orientation(headingDegrees: 123.4, pitchDegrees: 10),
                                            count: 50, start: 100))
        let e = try result.get()
        #expect(abs(e.magneticHeadingDegrees - 123.4) < 1e-9)
        #expect(e.axis == .top && p.axis == .top)
        #expect(abs(e.tiltDegrees - 10) < 1e-9 && abs(e.pitchDegrees - 10) < 1e-9)
        #expect(e.spreadDegrees < 1e-6)
        #expect(abs(e.fieldStrengthMicrotesla - 50) < 1e-9)
        #expect(abs(e.inclinationDegrees - 60) < 1e-9)
        // 0.5 s window at 50 Hz holds 26 samples (both ends inclusive).
        #expect(e.sampleCount == 26)
        #expect(abs(e.time - (100 + 49 * 0.02)) < 1e-9)
    }

    /// At rest the sensors hand over a still stretch's mean 0.5 s after the last full-rate reading,
    /// on the window's edge: the mean must not share the window with that one reading (it held a
    /// resting phone 0.5° off in the daemon, SunCheckIntegrationTests), and it counts as the
    /// samples it is the mean of.
    @Test func aStillStretchsMeanReplacesTheWindow() throws {
        var p = HeadingPipeline()
        // The last full-rate reading is 6° off (one noisy sample); the mean 0.5 s later is right.
        _ = Self.feed(&p, HeadingFixture.orientation(headingDegrees: 126), count: 1, start: 0)
        let (m, a) = HeadingFixture.readings(HeadingFixture.orientation(headingDegrees: 120), fieldMicrotesla: 50, inclinationDegrees: 60)
        let asReading = try p.update(magnetic: m, acceleration: a, time: 0.5).get()
        #expect(abs(asReading.magneticHeadingDegrees - 123) < 1e-6, "a reading shares the window: \(asReading.magneticHeadingDegrees)")

        var q = HeadingPipeline()
        _ = Self.feed(&q, HeadingFixture.orientation(headingDegrees: 126), count: 1, start: 0)
        let asMean = try q.update(magnetic: m, acceleration: a, time: 0.5, meanOfSamples: 27).get()
        #expect(abs(asMean.magneticHeadingDegrees - 120) < 1e-9)
        #expect(asMean.sampleCount == 27 && asMean.spreadDegrees < 1e-6)
        // Readings after it (the phone moves again) join it in the window.
        let next = try #require(Self.feed(&q, HeadingFixture.orientation(headingDegrees: 122), count: 1, start: 0.52)).get()
        #expect(abs(next.magneticHeadingDegrees - 121) < 1e-6 && next.sampleCount == 2)
    }

    @Test func raisingThePhoneSwitchesToBackCameraAndResetsWindow() throws {
        var p = HeadingPipeline()
        _ = Self.feed(&p, HeadingFixture.orientation(headingDegrees: 80), count: 10, start: 0)
        // Lift the top edge to 50°: still top (hysteresis), heading unchanged.
        var e = try #require(Self.feed(&p, HeadingFixture.orientation(headingDegrees: 80, pitchDegrees: 50),
                                       count: 3, start: 0.2)).get()
        #expect(e.axis == .top && abs(e.magneticHeadingDegrees - 80) < 1e-9)
        // 60°: back camera, pointing 30° below the horizon towards 80°.
        e = try #require(Self.feed(&p, HeadingFixture.orientation(headingDegrees: 80, pitchDegrees: 60),
                                   count: 1, start: 0.3)).get()
        #expect(e.axis == .back && abs(e.magneticHeadingDegrees - 80) < 1e-9 && e.sampleCount == 1)
        // Back to 50°: stays on the back camera.
        e = try #require(Self.feed(&p, HeadingFixture.orientation(headingDegrees: 80, pitchDegrees: 50),
                                   count: 1, start: 0.32)).get()
        #expect(e.axis == .back && e.sampleCount == 2)
        // 40°: top again.
        e = try #require(Self.feed(&p, HeadingFixture.orientation(headingDegrees: 80, pitchDegrees: 40),
                                   count: 1, start: 0.34)).get()
        #expect(e.axis == .top && e.sampleCount == 1)
    }

    @Test func calibrationIsAppliedAndChangingItResets() throws {
        let offset = Vector3(25, -15, 40)
        let r = HeadingFixture.orientation(headingDegrees: 200, pitchDegrees: -5, rollDegrees: 12)
        var raw = HeadingPipeline()
        let wrong = try #require(Self.feed(&raw, r, count: 5, start: 0, offset: offset)).get()
        #expect(HeadingFixture.angularDistance(wrong.magneticHeadingDegrees, 200) > 10)

        var calibrated = HeadingPipeline(configuration: .init(calibration: MagnetometerCalibration(hardIronOffset: offset)))
        let right = try #require(Self.feed(&calibrated, r, count: 5, start: 0, offset: offset)).get()
        #expect(HeadingFixture.angularDistance(right.magneticHeadingDegrees, 200) < 1e-9)

        raw.setCalibration(MagnetometerCalibration(hardIronOffset: offset))
        #expect(raw.axis == .none && raw.lastOrientation == nil)
        let fixed = try #require(Self.feed(&raw, r, count: 1, start: 1, offset: offset)).get()
        #expect(HeadingFixture.angularDistance(fixed.magneticHeadingDegrees, 200) < 1e-9 && fixed.sampleCount == 1)
    }

    @Test func rejectionsAreTypedAndKeepTheWindow() throws {
        var p = HeadingPipeline()
        let r = HeadingFixture.orientation(headingDegrees: 10)
        _ = Self.feed(&p, r, count: 5, start: 0)
        let (m, a) = HeadingFixture.readings(r)
        #expect(p.update(magnetic: m, acceleration: Vector3(0, 0, 0.1), time: 0.1)
                == .failure(.freeFall(accelerationMetresPerSecondSquared: 0.1)))
        #expect(p.update(magnetic: Vector3(.nan, 0, 0), acceleration: a, time: 0.1) == .failure(.nonFiniteInput))
        #expect(p.update(magnetic: m, acceleration: a, time: .nan) == .failure(.nonFiniteInput))
        #expect(p.update(magnetic: .zero, acceleration: a, time: 0.1) == .failure(.zeroMagneticField(fieldMicrotesla: 0)))
        #expect(p.update(magnetic: Vector3(0, 0, -50), acceleration: a, time: 0.1)
                == .failure(.fieldParallelToGravity(sineOfAngle: 0)))
        let e = try p.update(magnetic: m, acceleration: a, time: 0.1).get()
        #expect(e.sampleCount == 6)
    }

    @Test func noisySamplesHaveSpreadAndSuddenTurnIsFollowed() throws {
        var p = HeadingPipeline()
        var rng = SeededGenerator(seed: 3)
        var last: HeadingEstimate?
        for i in 0..<25 {
            let h = 45 + 2 * rng.gaussian()
            let (m, a) = HeadingFixture.readings(HeadingFixture.orientation(headingDegrees: h))
            last = try p.update(magnetic: m, acceleration: a, time: Double(i) * 0.02).get()
        }
        let noisy = try #require(last)
        #expect(noisy.spreadDegrees > 1 && noisy.spreadDegrees < 3.5)
        #expect(abs(noisy.magneticHeadingDegrees - 45) < 1.5)
        let (m, a) = HeadingFixture.readings(HeadingFixture.orientation(headingDegrees: 135))
        let turned = try p.update(magnetic: m, acceleration: a, time: 0.5).get()
        #expect(abs(turned.magneticHeadingDegrees - 135) < 1e-9 && turned.sampleCount == 1)
        #expect(abs(turned.instantaneousHeadingDegrees - 135) < 1e-9)
    }

    @Test func accuracyRule() {
        // Undefined spread → unknown.
        var r = estimateAccuracy(spreadDegrees: nil, measuredFieldMicrotesla: 50, expectedFieldMicrotesla: 50,
                                 measuredInclinationDegrees: 60, expectedInclinationDegrees: 60, calibrated: true)
        #expect(r.accuracy == .unknown && r.headingErrorDegrees == 180 && !r.magneticInterference)
        // Clean, calibrated, matching field: error √(1² + 2²).
        r = estimateAccuracy(spreadDegrees: 1, measuredFieldMicrotesla: 50, expectedFieldMicrotesla: 50,
                             measuredInclinationDegrees: 60, expectedInclinationDegrees: 60, calibrated: true)
        #expect(r.accuracy == .high && abs(r.headingErrorDegrees - 5.0.squareRoot()) < 1e-12 && !r.magneticInterference)
        // Uncalibrated: 10° term → medium.
        r = estimateAccuracy(spreadDegrees: 1, measuredFieldMicrotesla: 50, expectedFieldMicrotesla: nil,
                             measuredInclinationDegrees: 60, expectedInclinationDegrees: nil, calibrated: false)
        #expect(r.accuracy == .medium && abs(r.headingErrorDegrees - 101.0.squareRoot()) < 1e-12)
        // Dip off by 12°: disturbance ≥ 2·50·sin 6°, horizontal field 25 µT.
        r = estimateAccuracy(spreadDegrees: 1, measuredFieldMicrotesla: 50, expectedFieldMicrotesla: 50,
                             measuredInclinationDegrees: 72, expectedInclinationDegrees: 60, calibrated: true)
        let term = Angle.degrees(asin(100 * sin(Angle.radians(6)) / 25))
        #expect(r.magneticInterference && r.accuracy == .low)
        #expect(abs(r.headingErrorDegrees - (1 + 4 + term * term).squareRoot()) < 1e-9)
        // Field 30 % strong: interference; disturbance 15 µT vs horizontal 25 µT → 36.9° → unreliable.
        r = estimateAccuracy(spreadDegrees: 1, measuredFieldMicrotesla: 65, expectedFieldMicrotesla: 50,
                             measuredInclinationDegrees: 60, expectedInclinationDegrees: 60, calibrated: true)
        #expect(r.magneticInterference && r.accuracy == .unreliable)
        // 20 % deviation: not interference by the 25 % rule, yet the error term (asin(10/25) ≈ 23.6°) says low.
        r = estimateAccuracy(spreadDegrees: 0.5, measuredFieldMicrotesla: 40, expectedFieldMicrotesla: 50,
                             measuredInclinationDegrees: 60, expectedInclinationDegrees: 60, calibrated: true)
        #expect(!r.magneticInterference && r.accuracy == .low)
        // 8° dip deviation with a small error budget: interference flag false; a 1 % field deviation in a
        // strong horizontal field stays high.
        r = estimateAccuracy(spreadDegrees: 0.5, measuredFieldMicrotesla: 40.4, expectedFieldMicrotesla: 40,
                             measuredInclinationDegrees: 20, expectedInclinationDegrees: 20, calibrated: true)
        #expect(!r.magneticInterference && r.accuracy == .high)
        // Disturbance larger than the horizontal field → 180°.
        r = estimateAccuracy(spreadDegrees: 0.5, measuredFieldMicrotesla: 80, expectedFieldMicrotesla: 55,
                             measuredInclinationDegrees: 70, expectedInclinationDegrees: 80, calibrated: true)
        #expect(r.headingErrorDegrees == 180 && r.accuracy == .unreliable && r.magneticInterference)
        // Non-finite input never yields NaN.
        r = estimateAccuracy(spreadDegrees: .nan, measuredFieldMicrotesla: 50, expectedFieldMicrotesla: 50,
                             measuredInclinationDegrees: 60, expectedInclinationDegrees: 60, calibrated: true)
        #expect(r.accuracy == .unknown && r.headingErrorDegrees == 180)
        r = estimateAccuracy(spreadDegrees: 1, measuredFieldMicrotesla: 50, expectedFieldMicrotesla: 50,
                             measuredInclinationDegrees: .nan, expectedInclinationDegrees: 60, calibrated: true)
        #expect(r.magneticInterference && r.headingErrorDegrees.isFinite)
    }

    @Test func trueHeadingAndRelativeBearing() {
        #expect(trueHeading(magnetic: 350, declination: 15) == 5)
        #expect(trueHeading(magnetic: 10, declination: -20) == 350)
        #expect(trueHeading(magnetic: .nan, declination: 1) == nil)
        #expect(relativeBearing(qibla: 10, heading: 350) == 20)
        #expect(relativeBearing(qibla: 350, heading: 10) == -20)
        #expect(relativeBearing(qibla: 170, heading: 350) == 180)
        #expect(relativeBearing(qibla: 350, heading: 170) == 180)
        #expect(relativeBearing(qibla: 118.9, heading: 118.9) == 0)
        #expect(relativeBearing(qibla: 1, heading: .infinity) == nil)
    }
}
