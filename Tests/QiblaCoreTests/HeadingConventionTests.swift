// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import QiblaCore

/// Synthesises sensor readings for a known orientation. `deviceToWorld` has the device axes as
/// columns in the magnetic East-North-Up frame (v_world = R · v_device).
enum HeadingFixture {
    static let g = 9.80665

    /// Flat, top edge at `headingDegrees`, then pitched (about device x) and rolled (about device y).
    static func orientation(headingDegrees: Double, pitchDegrees: Double = 0, rollDegrees: Double = 0) -> Matrix3 {
        // Rotation about up by −heading turns the top edge clockwise seen from above.
        Matrix3.rotationZ(degrees: -headingDegrees) * Matrix3.rotationX(degrees: pitchDegrees)
            * Matrix3.rotationY(degrees: rollDegrees)
    }

    /// (magnetic µT, acceleration m/s²) in the device frame.
    static func readings(_ deviceToWorld: Matrix3, fieldMicrotesla: Double = 50,
                         inclinationDegrees: Double = 60, gravity: Double = g) -> (Vector3, Vector3) {
        let i = Angle.radians(inclinationDegrees)
        let mWorld = Vector3(0, fieldMicrotesla * cos(i), -fieldMicrotesla * sin(i))
        let aWorld = Vector3(0, 0, gravity)
        let toDevice = deviceToWorld.transposed
        return (toDevice * mWorld, toDevice * aWorld)
    }

    static func orientation(_ m: Vector3, _ a: Vector3) -> DeviceOrientation? {
        if case .success(let o) = TiltCompensation.orientation(magnetic: m, acceleration: a) { return o }
        return nil
    }

    static func angularDistance(_ a: Double, _ b: Double) -> Double { abs(Angle.turn(from: a, to: b)) }
}

@Suite struct HeadingConventionTests {
    @Test func flatFaceUpNorthernHemisphereFacingNorthIsZero() throws {
        // Field pointing north and down: +y = north, −z = down.
        let o = try #require(HeadingFixture.orientation(Vector3(0, 20, -40), Vector3(0, 0, 9.81)))
        #expect(try #require(o.topEdgeHeadingDegrees) == 0)
        #expect(o.tiltDegrees == 0)
        #expect(abs(o.east.x - 1) < 1e-15 && abs(o.north.y - 1) < 1e-15)
        #expect(abs(o.inclinationDegrees - Angle.degrees(atan2(40, 20))) < 1e-12)
        #expect(abs(o.fieldStrengthMicrotesla - (2000.0).squareRoot()) < 1e-12)
        #expect(o.backCameraHeadingDegrees == nil) // camera looks straight down
    }

    @Test func turningClockwiseSeenFromAboveIncreasesHeading() throws {
        var previous = -1.0
        for h in stride(from: 0.0, through: 350, by: 10) {
            let (m, a) = HeadingFixture.readings(HeadingFixture.orientation(headingDegrees: h))
            let heading = try #require(HeadingFixture.orientation(m, a)?.topEdgeHeadingDegrees)
            #expect(HeadingFixture.angularDistance(heading, h) < 1e-9)
            #expect(heading > previous)
            previous = heading
        }
        // East: top edge pointing east means the field's horizontal part points to the device's −x.
        let east = try #require(HeadingFixture.orientation(Vector3(-20, 0, -40), Vector3(0, 0, 9.81)))
        #expect(abs(try #require(east.topEdgeHeadingDegrees) - 90) < 1e-12)
    }

    @Test(arguments: [(30.0, 0.0), (-30.0, 0.0), (0.0, 30.0), (0.0, -30.0), (21.2, 21.2), (-25, 16.6)])
    func tiltDoesNotChangeHeading(pitch: Double, roll: Double) throws {
        for h in [0.0, 47.5, 181, 299.9] {
            for inclination in [-70.0, 0, 65] {
                let r = HeadingFixture.orientation(headingDegrees: h, pitchDegrees: pitch, rollDegrees: roll)
                let (m, a) = HeadingFixture.readings(r, inclinationDegrees: inclination)
                let o = try #require(HeadingFixture.orientation(m, a))
                #expect(HeadingFixture.angularDistance(try #require(o.topEdgeHeadingDegrees), h) < 1e-9)
                #expect(abs(o.inclinationDegrees - inclination) < 1e-9)
                #expect(abs(o.pitchDegrees - pitch) < 1e-9)
            }
        }
    }

    @Test func pitchAndRollSigns() throws {
        // Top edge raised 20°.
        var (m, a) = HeadingFixture.readings(HeadingFixture.orientation(headingDegrees: 10, pitchDegrees: 20))
        var o = try #require(HeadingFixture.orientation(m, a))
        #expect(abs(o.pitchDegrees - 20) < 1e-9 && abs(o.rollDegrees) < 1e-9 && abs(o.tiltDegrees - 20) < 1e-9)
        // Right edge raised 15°: rotation about +y by −15° lifts +x.
        (m, a) = HeadingFixture.readings(HeadingFixture.orientation(headingDegrees: 10, rollDegrees: -15))
        o = try #require(HeadingFixture.orientation(m, a))
        #expect(abs(o.rollDegrees - 15) < 1e-9 && abs(o.pitchDegrees) < 1e-9 && abs(o.tiltDegrees - 15) < 1e-9)
    }

    @Test func uprightPhoneBackCameraHeading() throws {
        for h in [0.0, 33, 90, 200, 359] {
            // Stand the phone up (top edge to the sky); the back camera then looks towards h.
            let r = HeadingFixture.orientation(headingDegrees: h, pitchDegrees: 90)
            let (m, a) = HeadingFixture.readings(r)
            let o = try #require(HeadingFixture.orientation(m, a))
            #expect(abs(o.tiltDegrees - 90) < 1e-9)
            #expect(HeadingFixture.angularDistance(try #require(o.backCameraHeadingDegrees), h) < 1e-9)
            #expect(o.topEdgeHeadingDegrees == nil) // top edge vertical
        }
        // Camera pointing 20° below the horizon (phone leaning back): same heading.
        let (m, a) = HeadingFixture.readings(HeadingFixture.orientation(headingDegrees: 123, pitchDegrees: 70))
        let o = try #require(HeadingFixture.orientation(m, a))
        #expect(HeadingFixture.angularDistance(try #require(o.backCameraHeadingDegrees), 123) < 1e-9)
        #expect(HeadingFixture.angularDistance(try #require(o.topEdgeHeadingDegrees), 123) < 1e-9)
    }

    @Test func faceDownTopEdgeHeading() throws {
        // Flip about the top-edge axis: face down, top edge still towards 75°.
        let r = HeadingFixture.orientation(headingDegrees: 75, rollDegrees: 180)
        let (m, a) = HeadingFixture.readings(r)
        let o = try #require(HeadingFixture.orientation(m, a))
        #expect(abs(o.tiltDegrees - 180) < 1e-9)
        #expect(HeadingFixture.angularDistance(try #require(o.topEdgeHeadingDegrees), 75) < 1e-9)
    }

    @Test func headingIndependentOfMagnitudes() throws {
        let r = HeadingFixture.orientation(headingDegrees: 222, pitchDegrees: 12, rollDegrees: -8)
        for (field, gravity) in [(25.0, 9.81), (65, 2.0), (1000, 30)] {
            let (m, a) = HeadingFixture.readings(r, fieldMicrotesla: field, gravity: gravity)
            let o = try #require(HeadingFixture.orientation(m, a))
            #expect(HeadingFixture.angularDistance(try #require(o.topEdgeHeadingDegrees), 222) < 1e-9)
            #expect(abs(o.fieldStrengthMicrotesla - field) < 1e-9 * field)
        }
    }

    @Test func degenerateInputsAreRejected() {
        let flat = Vector3(0, 0, 9.81)
        let field = Vector3(0, 20, -40)
        #expect(TiltCompensation.orientation(magnetic: field, acceleration: Vector3(0, 0, 0.5))
                == .failure(.freeFall(accelerationMetresPerSecondSquared: 0.5)))
        #expect(TiltCompensation.orientation(magnetic: field, acceleration: .zero)
                == .failure(.freeFall(accelerationMetresPerSecondSquared: 0)))
        #expect(TiltCompensation.orientation(magnetic: .zero, acceleration: flat)
                == .failure(.zeroMagneticField(fieldMicrotesla: 0)))
        #expect(TiltCompensation.orientation(magnetic: Vector3(0, 0, -45), acceleration: flat)
                == .failure(.fieldParallelToGravity(sineOfAngle: 0)))
        // 1° from vertical: sin 1° ≈ 0.017 < 0.05.
        let nearPole = Vector3(0, 45 * sin(Angle.radians(1)), -45 * cos(Angle.radians(1)))
        guard case .failure(.fieldParallelToGravity(let s)) =
                TiltCompensation.orientation(magnetic: nearPole, acceleration: flat) else {
            Issue.record("near-vertical field accepted"); return
        }
        #expect(abs(s - sin(Angle.radians(1))) < 1e-12)
        // …but 5° from vertical is accepted by default and rejected with a stricter threshold.
        let dip85 = Vector3(0, 45 * sin(Angle.radians(5)), -45 * cos(Angle.radians(5)))
        #expect(HeadingFixture.orientation(dip85, flat)?.topEdgeHeadingDegrees == 0)
        #expect((try? TiltCompensation.orientation(magnetic: dip85, acceleration: flat,
                                                   minimumFieldGravitySine: 0.1).get()) == nil)
        for bad in [Double.nan, .infinity, -.infinity] {
            #expect(TiltCompensation.orientation(magnetic: Vector3(bad, 0, 0), acceleration: flat)
                    == .failure(.nonFiniteInput))
            #expect(TiltCompensation.orientation(magnetic: field, acceleration: Vector3(0, bad, 9.8))
                    == .failure(.nonFiniteInput))
        }
        // Overflowing magnitude is not finite either.
        #expect(TiltCompensation.orientation(magnetic: Vector3(1e200, 1e200, 0), acceleration: flat)
                == .failure(.nonFiniteInput))
    }
}
