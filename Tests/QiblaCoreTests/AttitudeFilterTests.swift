// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
@testable import QiblaCore

/// A phone at a fixed attitude: heading, pitch (top edge raised), roll (right edge raised), in
/// degrees, built as in `PersonTimeline.attitude` (NED; flat face-up with the top edge north at 0).
private struct StillPhone {
    var attitude: Matrix3
    var earth: Vector3

    init(heading: Double, pitch: Double = 0, roll: Double = 0, fieldMicrotesla: Double = 48, dipDegrees: Double = 66) {
        let base = Matrix3(0, 1, 0, 1, 0, 0, 0, 0, -1)
        attitude = Matrix3.rotationZ(degrees: heading) * base * Matrix3.rotationX(degrees: pitch) * Matrix3.rotationY(degrees: roll)
        let i = Angle.radians(dipDegrees)
        earth = Vector3(fieldMicrotesla * cos(i), 0, fieldMicrotesla * sin(i))
    }

    var acceleration: Vector3 { attitude.transposed * Vector3(0, 0, -TiltCompensation.standardGravity) }
    var field: Vector3 { attitude.transposed * earth }

    func trueHeading(_ axis: HeadingAxis) -> Double {
        let v = attitude * (axis == .back ? Vector3(0, 0, -1) : Vector3(0, 1, 0))
        return Angle.normalized360(Angle.degrees(atan2(v.y, v.x)))
    }

    /// Feeds `seconds` of samples at `rate` Hz from `start`; `gyro` adds to the (zero) rate,
    /// `extraField` to the field, `acceleration` to the specific force.
    func feed(_ f: inout AttitudeFilter, from start: Double, seconds: Double, rate: Double = 50, gyro: Vector3 = .zero,
              extraField: Vector3 = .zero, linear: (Double) -> Vector3 = { _ in .zero }, disturbed: Bool = false,
              each: (Double, AttitudeFilter) -> Void = { _, _ in }) {
        let n = Int((seconds * rate).rounded())
        for k in 0..<n {
            let t = start + Double(k) / rate
            f.addAngularVelocity(gyro, time: t)
            f.addAcceleration(acceleration + linear(t), time: t + 0.3 / rate)
            f.addMagneticField(field + extraField, time: t + 0.6 / rate, disturbed: disturbed)
            each(t, f)
        }
    }
}

@Suite struct AttitudeFilterTests {
    @Test("a still phone gives TiltCompensation's heading of the same axis, top edge and back camera",
          arguments: [(30.0, 0.0, 0.0), (200.0, 20.0, -10.0), (310.0, 80.0, 5.0), (95.0, 70.0, -20.0), (10.0, -30.0, 40.0)])
    func stillPhoneMatchesTiltCompensation(_ pose: (Double, Double, Double)) throws {
        let phone = StillPhone(heading: pose.0, pitch: pose.1, roll: pose.2)
        var f = AttitudeFilter()
        phone.feed(&f, from: 0, seconds: 3)
        let h = try #require(f.heading)
        let o = try TiltCompensation.orientation(magnetic: phone.field, acceleration: phone.acceleration).get()
        var selector = HeadingAxisSelector()
        let axis = selector.update(tiltDegrees: o.tiltDegrees)
        #expect(h.axis == axis)
        let expected = try #require(o.headingDegrees(of: axis))
        #expect(abs(Angle.turn(from: expected, to: h.magneticHeadingDegrees)) < 0.01)
        #expect(abs(h.tiltDegrees - o.tiltDegrees) < 0.01)
        #expect(h.sigmaDegrees > 0 && h.sigmaDegrees < 2)
    }

    @Test func theAxisFollowsHeadingAxisSelectorsHysteresis() {
        var f = AttitudeFilter()
        var selector = HeadingAxisSelector()
        StillPhone(heading: 120, pitch: 40).feed(&f, from: 0, seconds: 2)
        #expect(f.heading?.axis == selector.update(tiltDegrees: 40))
        var t = 2.0, pitch = 40.0
        // The phone is tilted at 20 °/s (the gyroscope sees it) between the checks.
        for target in [50.0, 60, 50, 46, 40, 50] {
            let rate = 20.0 * (target > pitch ? 1 : -1)
            while abs(target - pitch) > 1e-9 {
                let step = min(abs(target - pitch), 20 * 0.02) * (rate > 0 ? 1 : -1)
                pitch += step
                let phone = StillPhone(heading: 120, pitch: pitch)
                f.addAngularVelocity(Vector3(Angle.radians(rate), 0, 0), time: t)
                f.addAcceleration(phone.acceleration, time: t + 0.006)
                f.addMagneticField(phone.field, time: t + 0.012)
                t += 0.02
            }
            StillPhone(heading: 120, pitch: pitch).feed(&f, from: t, seconds: 0.5)
            t += 0.5
            #expect(f.heading?.axis == selector.update(tiltDegrees: pitch), "pitch \(pitch), tilt \(f.heading?.tiltDegrees ?? .nan)")
        }
    }

    @Test func aConstantGyroscopeBiasIsEstimated() throws {
        let bias = Vector3(Angle.radians(0.8), Angle.radians(-0.6), Angle.radians(0.9))
        let phone = StillPhone(heading: 70, pitch: 15, roll: 5)
        var f = AttitudeFilter()
        phone.feed(&f, from: 0, seconds: 60, gyro: bias)
        let error = Angle.degrees((f.gyroscopeBiasRadiansPerSecond - bias).length)
        #expect(error < 0.05, "bias error \(error) °/s")
        let h = try #require(f.heading)
        #expect(abs(Angle.turn(from: phone.trueHeading(.top), to: h.magneticHeadingDegrees)) < 0.5)
    }

    @Test func aBiasDriftingWithTemperatureIsTracked() throws {
        // 1 °/s at start, drifting by 0.5 °/s over the first minute (a warming chip), the phone
        // turned now and then by hand so that every axis is seen.
        var f = AttitudeFilter()
        let start = Vector3(0.6, -0.5, 0.62)
        let drift = Vector3(-0.3, 0.3, 0.25)
        func bias(_ t: Double) -> Vector3 { (start + drift * min(1, t / 60)) * (Double.pi / 180) }
        var worstLate = 0.0
        for step in 0..<(90 * 50) {
            let t = Double(step) * 0.02
            let heading = 40 + 60 * sin(2 * Double.pi * t / 20), pitch = 20 * sin(2 * Double.pi * t / 13)
            let phone = StillPhone(heading: heading, pitch: pitch)
            let next = StillPhone(heading: 40 + 60 * sin(2 * Double.pi * (t + 0.02) / 20), pitch: 20 * sin(2 * Double.pi * (t + 0.02) / 13))
            // The body rate that takes this attitude to the next one.
            let r = phone.attitude.transposed * next.attitude
            let c = max(-1, min(1, (r.row0.x + r.row1.y + r.row2.z - 1) / 2))
            let angle = acos(c), s = sin(angle)
            let v = Vector3(r.row2.y - r.row1.z, r.row0.z - r.row2.x, r.row1.x - r.row0.y)
            let rate = (abs(s) < 1e-12 ? v * 0.5 : v * (angle / (2 * s))) / 0.02
            f.addAngularVelocity(rate + bias(t + 0.02), time: t + 0.02)
            f.addAcceleration(next.acceleration, time: t + 0.026)
            f.addMagneticField(next.field, time: t + 0.033)
            if t > 70 { worstLate = max(worstLate, Angle.degrees((f.gyroscopeBiasRadiansPerSecond - bias(t)).length)) }
        }
        #expect(worstLate < 0.1, "bias error after the drift: \(worstLate) °/s")
    }

    @Test func aDisturbanceHoldsTheHeadingOnTheGyroscopeWithAGrowingSigma() throws {
        let phone = StillPhone(heading: 150, pitch: 10)
        var f = AttitudeFilter()
        phone.feed(&f, from: 0, seconds: 20)
        let before = try #require(f.heading)
        var sigmas: [Double] = []
        var worst = 0.0
        // A magnet: 40 µT across the field for 3 s.
        phone.feed(&f, from: 20, seconds: 3, extraField: Vector3(30, -25, 5), each: { _, filter in
            guard let h = filter.heading else { return }
            sigmas.append(h.sigmaDegrees)
            worst = max(worst, abs(Angle.turn(from: phone.trueHeading(.top), to: h.magneticHeadingDegrees)))
        })
        #expect(f.magneticState == .holding)
        #expect(worst < 0.5, "the needle does not follow the magnet: \(worst)°")
        let late = try #require(sigmas.last), early = sigmas[5]
        #expect(late > early && late > before.sigmaDegrees, "sigma grows: \(before.sigmaDegrees) → \(early) → \(late)")
    }

    @Test func theCallersInterferenceFlagHoldsToo() {
        let phone = StillPhone(heading: 10)
        var f = AttitudeFilter()
        phone.feed(&f, from: 0, seconds: 5)
        phone.feed(&f, from: 5, seconds: 1, disturbed: true)
        #expect(f.magneticState == .holding)
    }

    @Test func theMagnetometerIsTakenBackGradually() throws {
        let phone = StillPhone(heading: 250, pitch: 5)
        var f = AttitudeFilter()
        phone.feed(&f, from: 0, seconds: 20)
        // During a 3 s disturbance the gyroscope reads a false 1 °/s about the vertical (device z
        // of a flat phone): the held heading drifts by about 3°.
        phone.feed(&f, from: 20, seconds: 3, gyro: Vector3(0, 0, Angle.radians(-1)), extraField: Vector3(0, 0, 30))
        let drifted = abs(Angle.turn(from: phone.trueHeading(.top), to: f.heading!.magneticHeadingDegrees))
        #expect(drifted > 2, "the hold followed the gyroscope: \(drifted)°")
        var errors: [(Double, Double)] = []
        phone.feed(&f, from: 23, seconds: 5, each: { t, filter in
            if let h = filter.heading {
                errors.append((t - 23, abs(Angle.turn(from: phone.trueHeading(.top), to: h.magneticHeadingDegrees))))
            }
        })
        let early = try #require(errors.first { $0.0 >= 0.4 }).1
        let late = try #require(errors.last).1
        #expect(early > drifted / 2, "not at once: \(early)° after 0.4 s")
        #expect(late < 0.5, "taken back: \(late)° after 5 s")
        let jumps = zip(errors, errors.dropFirst()).map { abs($0.1.1 - $0.0.1) }
        #expect((jumps.max() ?? 0) < 0.5, "no jump: \(jumps.max() ?? 0)°")
    }

    @Test func aGapStopsTrackingAndTheNextGyroscopeSampleReseeds() throws {
        var f = AttitudeFilter()
        let first = StillPhone(heading: 40)
        first.feed(&f, from: 0, seconds: 5)
        #expect(f.isTracking(at: 5) && f.seedCount == 1)
        // Put down at another heading; only the accelerometer and magnetometer are read.
        let second = StillPhone(heading: 130)
        for k in 0..<50 {
            let t = 5 + Double(k) * 0.02
            f.addAcceleration(second.acceleration, time: t)
            f.addMagneticField(second.field, time: t + 0.01)
        }
        #expect(!f.isTracking(at: 6))
        #expect(f.heading(at: 6) == nil)
        f.addAngularVelocity(.zero, time: 6)
        #expect(f.seedCount == 2 && f.isTracking(at: 6))
        let h = try #require(f.heading)
        #expect(abs(Angle.turn(from: 130, to: h.magneticHeadingDegrees)) < 0.5)
    }

    @Test func timeRunningBackwardsReseeds() throws {
        var f = AttitudeFilter()
        let phone = StillPhone(heading: 300)
        phone.feed(&f, from: 100, seconds: 2)
        phone.feed(&f, from: 10, seconds: 1)
        #expect(f.seedCount == 2)
        let h = try #require(f.heading)
        #expect(abs(Angle.turn(from: 300, to: h.magneticHeadingDegrees)) < 0.5 && h.timeSeconds < 12)
    }

    @Test func nonFiniteInputIsRejectedAndNothingChanges() throws {
        var f = AttitudeFilter()
        let phone = StillPhone(heading: 77)
        phone.feed(&f, from: 0, seconds: 2)
        let before = try #require(f.heading)
        for bad in [Double.nan, .infinity, -.infinity] {
            #expect(f.addAngularVelocity(Vector3(bad, 0, 0), time: 2.1) == .nonFiniteInput)
            #expect(f.addAcceleration(Vector3(0, bad, 9.8), time: 2.1) == .nonFiniteInput)
            #expect(f.addMagneticField(Vector3(20, 0, bad), time: 2.1) == .nonFiniteInput)
            #expect(f.addAngularVelocity(.zero, time: bad) == .nonFiniteInput)
            #expect(f.heading(at: bad) == nil)
        }
        let after = try #require(f.heading)
        #expect(after == before)
    }

    @Test func theHeadingIsExtrapolatedWithTheLastRateAndItsSigmaGrows() throws {
        var f = AttitudeFilter()
        let phone = StillPhone(heading: 0)
        phone.feed(&f, from: 0, seconds: 5)
        // Turning clockwise seen from above at 90 °/s: about device −z for a face-up phone.
        let rate = Vector3(0, 0, Angle.radians(-90))
        f.addAngularVelocity(rate, time: 5.0)
        f.addAngularVelocity(rate, time: 5.02)
        let now = try #require(f.heading(at: 5.02))
        let later = try #require(f.heading(at: 5.07))
        #expect(abs(Angle.turn(from: now.magneticHeadingDegrees, to: later.magneticHeadingDegrees) - 4.5) < 0.01)
        #expect(later.sigmaDegrees > now.sigmaDegrees)
        #expect(f.heading(at: 5.02 + 1) == nil, "not beyond the gap limit")
    }

    @Test func handAccelerationDoesNotTiltTheAttitude() throws {
        var f = AttitudeFilter()
        let phone = StillPhone(heading: 20, dipDegrees: 68)
        phone.feed(&f, from: 0, seconds: 30)
        let tilt = try #require(f.heading).tiltDegrees
        var worstTilt = 0.0, worstHeading = 0.0
        // Sideways pushes of 1 m/s² for 0.5 s, every second (TiltCompensation would tilt by 5.8°).
        phone.feed(&f, from: 30, seconds: 6, linear: { t in
            Vector3(t.truncatingRemainder(dividingBy: 1) < 0.5 ? 1 : -1, 0, 0)
        }, each: { _, filter in
            guard let h = filter.heading else { return }
            worstTilt = max(worstTilt, abs(h.tiltDegrees - tilt))
            worstHeading = max(worstHeading, abs(Angle.turn(from: 20, to: h.magneticHeadingDegrees)))
        })
        #expect(worstTilt < 1, "tilt moved \(worstTilt)°")
        #expect(worstHeading < 1.5, "heading moved \(worstHeading)° at a 68° dip")
    }

    @Test func theMagnetometerNeverTilts() throws {
        var f = AttitudeFilter()
        let phone = StillPhone(heading: 60, pitch: 20, roll: 10)
        phone.feed(&f, from: 0, seconds: 5)
        let up = f.upDirection
        // Only gyroscope and magnetometer samples now, the field turned 3° about the vertical.
        let turned = StillPhone(heading: 57, pitch: 20, roll: 10)
        for k in 0..<200 {
            let t = 5 + Double(k) * 0.02
            f.addAngularVelocity(.zero, time: t)
            f.addMagneticField(turned.field, time: t + 0.01)
        }
        #expect((f.upDirection - up).length < 1e-6, "the vertical did not move")
        let heading = try #require(f.heading).magneticHeadingDegrees
        #expect(abs(Angle.turn(from: 57, to: heading)) < 2.5, "the yaw follows the field: \(heading)°")
    }
}
