// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import QiblaCore

/// Two corrections told apart by the world (`FieldAttitudeHistory`, issue 36): the samples are
/// made here from a turning phone's attitudes, a field fixed in the world and a hard iron fixed in
/// the phone, not from the history's own statistic.
@Suite struct FieldAttitudeHistoryTests {
    /// Berlin's field in NED, µT (WMM2025 about 17.3 north, 1.3 east, 46.5 down: dip 69.6°).
    private static let field = Vector3(17.3, 1.3, 46.5)

    /// The phone's attitude (device → NED) at `t` seconds: heading sweeping ±100° at 0.1 Hz,
    /// pitch ±25° and roll ±15° at other rates.
    private static func attitude(_ t: Double) -> Quaternion {
        let yaw = Angle.radians(100) * sin(2 * Double.pi * 0.1 * t)
        let pitch = Angle.radians(25) * sin(2 * Double.pi * 0.23 * t)
        let roll = Angle.radians(15) * sin(2 * Double.pi * 0.31 * t + 1)
        return Quaternion(rotationVector: Vector3(0, 0, yaw)) * Quaternion(rotationVector: Vector3(0, pitch, 0))
            * Quaternion(rotationVector: Vector3(roll, 0, 0))
    }

    /// 20 s at 50 Hz of raw samples: the world field seen through the attitude, plus `hardIron`
    /// (µT, device frame) and 0.5 µT of noise per axis.
    private static func history(hardIron: Vector3, seconds: Double = 20, still: Bool = false) -> FieldAttitudeHistory {
        var history = FieldAttitudeHistory()
        var random = SeededGenerator(seed: 7)
        for k in 0..<Int(seconds * 50) {
            let t = Double(k) / 50
            let q = still ? attitude(3) : attitude(t)
            let noise = Vector3(random.gaussian(), random.gaussian(), random.gaussian()) * 0.5
            let raw = q.rotationMatrix.transposed * field + hardIron + noise
            history.add(raw: raw, attitude: q, time: t)
        }
        return history
    }

    private static func calibration(removing b: Vector3) -> MagnetometerCalibration {
        MagnetometerCalibration(hardIronOffset: b, softIronMatrix: .identity)
    }

    @Test func aRightFieldGathersTighterUncorrectedThanThroughAFalseHardIron() throws {
        let history = Self.history(hardIron: .zero)
        // BROAD trial 30's false fits: 1.3–2.8 µT.
        for falseIron in [Vector3(-2.6, 1.1, -0.6), Vector3(-1.2, 0.4, 0.3), Vector3(0, 0, 1.5)] {
            let uncorrected = try #require(history.meanResultantLength(of: .identity))
            let corrected = try #require(history.meanResultantLength(of: Self.calibration(removing: falseIron)))
            #expect(uncorrected > corrected, "\(falseIron): R̄ \(uncorrected) uncorrected, \(corrected) through the fit")
        }
    }

    @Test func aRealSmallHardIronGathersTighterThroughItsCorrection() throws {
        let hardIron = Vector3(1.5, 1.0, -0.8)
        let history = Self.history(hardIron: hardIron)
        let uncorrected = try #require(history.meanResultantLength(of: .identity))
        let corrected = try #require(history.meanResultantLength(of: Self.calibration(removing: hardIron)))
        #expect(corrected > uncorrected, "R̄ \(corrected) corrected, \(uncorrected) uncorrected")
    }

    @Test func aStillPhoneOrTooFewSamplesJudgeNothing() {
        #expect(Self.history(hardIron: .zero, still: true).meanResultantLength(of: .identity) == nil)
        // 4 s at one kept sample a tenth of a second: 40, below the 50 asked for.
        let short = Self.history(hardIron: .zero, seconds: 4)
        #expect(short.count == 40)
        #expect(short.meanResultantLength(of: .identity) == nil)
    }

    @Test func itKeepsOneSampleATenthOfASecondAndForgetsWhenTimeRunsBack() {
        var history = FieldAttitudeHistory(configuration: .init(capacity: 10))
        for k in 0..<100 { history.add(raw: Self.field, attitude: .identity, time: Double(k) / 50) }
        #expect(history.count == 10)
        history.add(raw: Self.field, attitude: .identity, time: 0.5)
        #expect(history.count == 1)
        history.add(raw: Vector3(.nan, 0, 0), attitude: .identity, time: 1)
        #expect(history.count == 1)
    }
}
