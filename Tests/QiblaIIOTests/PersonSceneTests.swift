// SPDX-License-Identifier: Apache-2.0
// Issue 30: the person scenes are what they claim (turn sizes and rates, holds, hand acceleration,
// steps, the table), deterministic for a seed, and their angular velocity is the trajectory's.
import Foundation
import QiblaCore
import QiblaSimulator
import Testing

/// RMS of the linear acceleration's magnitude over the instants where `include` holds (100 Hz).
private func rms(_ motion: PersonSceneMotion, over range: ClosedRange<Double>, where include: (Double) -> Bool) -> (Double, Int) {
    var sum = 0.0, count = 0
    var t = range.lowerBound
    while t <= range.upperBound {
        if include(t) {
            let a = motion.linearAccelerationNED(at: t)
            sum += a.dot(a)
            count += 1
        }
        t += 0.01
    }
    return (count > 0 ? (sum / Double(count)).squareRoot() : .nan, count)
}

/// The rotation taking world (NED) to device, integrated from ω: dC/dt = −[ω×]·C, one exact
/// rotation per step (Rodrigues), so that the check does not share the central difference.
private func integrate(_ scene: Scene, from start: Double, to end: Double, step: Double = 0.0005) -> Matrix3 {
    var c = scene.worldToDevice(at: start)
    var t = start
    while t < end - 1e-12 {
        let dt = min(step, end - t)
        let omega = scene.angularVelocityRadiansPerSecond(at: t + dt / 2)  // midpoint
        let angle = omega.length * dt
        if angle > 0 {
            let u = omega / omega.length
            // Rotation by −angle about u (the world seen from the turning device turns back).
            let k = Matrix3(0, -u.z, u.y, u.z, 0, -u.x, -u.y, u.x, 0)
            let s = sin(-angle), v = 1 - cos(-angle)
            let rotation = Matrix3.identity + k * s + (k * k) * v
            c = rotation * c
        }
        t += dt
    }
    return c
}

private extension Matrix3 {
    static func + (a: Matrix3, b: Matrix3) -> Matrix3 {
        Matrix3(rows: a.row0 + b.row0, a.row1 + b.row1, a.row2 + b.row2)
    }
}

/// The largest angle between the columns' images, degrees: how far apart two attitudes are.
private func angleBetween(_ a: Matrix3, _ b: Matrix3) -> Double {
    let r = a * b.transposed
    let cosine = min(1, max(-1, (r.row0.x + r.row1.y + r.row2.z - 1) / 2))
    return Angle.degrees(acos(cosine))
}

@Suite struct PersonSceneTests {
    static let base = Scene(earthFieldNEDMicrotesla: Vector3(19.3, -0.4, 45.1), trajectory: .flatOnTable(headingDegrees: 0))

    @Test("the same seed gives the same motion, another seed another", arguments: PersonScene.allCases)
    func deterministic(kind: PersonScene) {
        let a = PersonSceneMotion(kind, targetHeadingDegrees: 119, seed: 7, durationSeconds: 60)
        let b = PersonSceneMotion(kind, targetHeadingDegrees: 119, seed: 7, durationSeconds: 60)
        let c = PersonSceneMotion(kind, targetHeadingDegrees: 119, seed: 8, durationSeconds: 60)
        for t in stride(from: 0.0, through: 60, by: 0.37) {
            #expect(a.orientation(at: t) == b.orientation(at: t))
            #expect(a.linearAccelerationNED(at: t) == b.linearAccelerationNED(at: t))
        }
        #expect(stride(from: 0.0, through: 60, by: 0.37).contains { a.orientation(at: $0) != c.orientation(at: $0) })
        // Defined at any time, finite, never upside down.
        for t in [-5.0, 0, 1e-3, 59.99, 61, 1e5] {
            let o = a.orientation(at: t)
            #expect(o.headingDegrees.isFinite && abs(o.pitchDegrees) < 45 && abs(o.rollDegrees) < 45)
            #expect(a.linearAccelerationNED(at: t).isFinite)
        }
    }

    @Test("seeking the Qibla: turns of 30–150° at up to about 150 °/s, holds of 1–2 s, it is found", arguments: [1, 2, 3] as [UInt64])
    func seekQibla(seed: UInt64) {
        let motion = PersonSceneMotion(.seekQibla, targetHeadingDegrees: 119, seed: seed, durationSeconds: 120)
        #expect(motion.turns.count >= 20)
        var found = 0
        for (turn, next) in zip(motion.turns, motion.turns.dropFirst()) {
            let size = abs(turn.toDegrees - turn.fromDegrees)
            let correction = abs(Angle.normalized180(turn.toDegrees - 119)) < 1e-9 && size < 30
            #expect(correction || (29.9...150.1).contains(size), "turn of \(size)°")
            #expect(turn.peakDegreesPerSecond <= 150.5)
            let hold = next.startSeconds - turn.endSeconds
            #expect((0.99...2.01).contains(hold), "hold of \(hold) s")
            if abs(Angle.normalized180(turn.toDegrees - 119)) < 1e-9 { found += 1 }
        }
        #expect(found >= 4, "the target was reached \(found) times in 120 s")
        // The trajectory follows the plan: within tremor and sway of the planned heading, whose
        // rate (a central difference of the planned heading) never exceeds the peaks.
        var fastest = 0.0
        for t in stride(from: 0.0, through: 120, by: 0.01) {
            let o = motion.orientation(at: t)
            #expect(abs(Angle.normalized180(o.headingDegrees - motion.plannedHeadingDegrees(at: t))) < 3)
            fastest = max(fastest, abs(motion.plannedHeadingDegrees(at: t + 0.001) - motion.plannedHeadingDegrees(at: t - 0.001)) / 0.002)
        }
        #expect(fastest <= 151 && fastest > 79)
        // Hand acceleration: about 0.6 m/s² RMS while turning, 0.25 while holding.
        let turning = rms(motion, over: 0...120) { motion.activity(at: $0) == .turning }
        let holding = rms(motion, over: 0...120) { t in
            motion.activity(at: t) == .holding && motion.activity(at: t - 0.2) == .holding && motion.activity(at: t + 0.2) == .holding
        }
        print("seek-qibla seed \(seed): \(motion.turns.count) turns, found \(found)×, fastest \(fastest) °/s, hand RMS turning \(turning.0) (\(turning.1)), holding \(holding.0) (\(holding.1))")
        #expect((0.45...0.75).contains(turning.0))
        #expect((0.18...0.32).contains(holding.0))
    }

    @Test("walking: steps of 1–2 m/s² at about 2 Hz, yaw sway, path turns of 90°")
    func walk() {
        let motion = PersonSceneMotion(.walk, targetHeadingDegrees: 30, seed: 11, durationSeconds: 60)
        #expect(motion.turns.allSatisfy { abs(abs($0.toDegrees - $0.fromDegrees) - 90) < 1e-9 })
        #expect(motion.turns.count >= 3)
        // Vertical (down) acceleration on a straight stretch: peak 1–2 m/s² plus the hand's, about 2 Hz.
        var crossings = 0, peak = 0.0
        var previous = motion.linearAccelerationNED(at: 0.5).z
        for t in stride(from: 0.51, through: 5.5, by: 0.01) {
            let down = motion.linearAccelerationNED(at: t).z
            if (down < 0) != (previous < 0) { crossings += 1 }
            peak = max(peak, abs(down))
            previous = down
        }
        let hertz = Double(crossings) / 2 / 5
        print("walk: vertical peak \(peak) m/s², \(hertz) Hz from zero crossings")
        #expect((1.6...2.6).contains(hertz))
        #expect((1.0...2.8).contains(peak))
        // The phone's heading sways around the path's by a few degrees.
        let offsets = stride(from: 0.0, through: 5, by: 0.01).map {
            Angle.normalized180(motion.orientation(at: $0).headingDegrees - motion.plannedHeadingDegrees(at: $0))
        }
        #expect((2.5...8).contains(offsets.map(abs).max() ?? 0))
    }

    @Test("the table: still and flat while lying, the hand's motion while held")
    func table() {
        let motion = PersonSceneMotion(.table, targetHeadingDegrees: 200, seed: 5, durationSeconds: 60)
        let lying = motion.orientation(at: 25.2)
        for t in stride(from: 25.3, to: 33, by: 0.1) {
            #expect(motion.activity(at: t) == .lying)
            #expect(motion.orientation(at: t) == lying)
            #expect(motion.linearAccelerationNED(at: t) == .zero)
        }
        #expect(lying.pitchDegrees == 0 && lying.rollDegrees == 0)
        #expect(motion.activity(at: 24.5) == .moving && motion.activity(at: 33.5) == .moving && motion.activity(at: 36) == .holding)
        // The landing rings the accelerometer.
        #expect(motion.linearAccelerationNED(at: 25.01).length > 1)
        #expect(abs(motion.orientation(at: 37).pitchDegrees) > 10)
    }

    @Test("the magnet: 3 s near the still phone from 4 s; the drifting gyroscope: 1 °/s, warming up")
    func magnetAndDrift() {
        let magnet = PersonSceneMotion(.magnet, targetHeadingDegrees: 10, seed: 3, durationSeconds: 40).scene(from: Self.base)
        #expect(magnet.interferences.count == 3)
        #expect(!magnet.interferences[0].isActive(at: 3.99) && magnet.interferences[0].isActive(at: 4) && !magnet.interferences[0].isActive(at: 7))
        #expect((30...80).contains(magnet.interferences[0].fieldMicrotesla.length))
        #expect(magnet.isDisturbed(at: 5) && !magnet.isDisturbed(at: 8) && magnet.isDisturbed(at: 20))
        #expect(magnet.expectedTrueHeading(of: .top, at: 5) == magnet.expectedTrueHeading(at: 5))
        #expect(magnet.expectedMagneticHeading(of: .none, at: 5) == nil)
        let drift = PersonSceneMotion(.gyroscopeDrift, targetHeadingDegrees: 10, seed: 3, durationSeconds: 40).scene(from: Self.base)
        let early = drift.gyroscope.biasRadiansPerSecond(at: 0), late = drift.gyroscope.biasRadiansPerSecond(at: 600)
        #expect(abs(Angle.degrees(early.x) - 1) < 1e-9 && abs(Angle.degrees(early.y) + 1) < 1e-9)
        #expect(abs(Angle.degrees(late.x) - 1.5) < 0.01 && abs(Angle.degrees(late.z) - 0.5) < 0.01)
    }

    @Test("ω integrated over a person's turns lands on the trajectory's attitude", arguments: [PersonScene.seekQibla, .walk, .table])
    func angularVelocityIsTheTrajectorys(kind: PersonScene) {
        let scene = PersonSceneMotion(kind, targetHeadingDegrees: 119, seed: 9, durationSeconds: 30).scene(from: Self.base)
        for (start, end) in [(0.5, 3.5), (3.9, 6.4), (12.7, 15.2)] {
            let integrated = integrate(scene, from: start, to: end)
            let error = angleBetween(integrated, scene.worldToDevice(at: end))
            #expect(error < 0.05, "\(kind) \(start)–\(end) s: \(error)°")
        }
        // A pure turn about the vertical at a constant rate: exactly C·(0, 0, rate).
        let turning = Scene(earthFieldNEDMicrotesla: .zero, trajectory: .rotating(startHeadingDegrees: 0, degreesPerSecond: 30,
                                                                                   pitchDegrees: 25, rollDegrees: 5))
        let omega = turning.angularVelocityRadiansPerSecond(at: 2)
        #expect((omega - turning.worldToDevice(at: 2) * Vector3(0, 0, Angle.radians(30))).length < 1e-9)
        #expect(turning.angularVelocityRadiansPerSecond(at: 2).isFinite)
        #expect(Scene(earthFieldNEDMicrotesla: .zero, trajectory: .flatOnTable(headingDegrees: 3)).angularVelocityRadiansPerSecond(at: 1) == .zero)
    }

    @Test("the accelerometer reads the hand's acceleration as well as gravity")
    func accelerometerSeesTheHand() {
        let motion = PersonSceneMotion(.seekQibla, targetHeadingDegrees: 119, seed: 4, durationSeconds: 30)
        let scene = motion.scene(from: Self.base)
        for t in [1.0, 2.5, 7.25] {
            let expected = scene.worldToDevice(at: t) * (motion.linearAccelerationNED(at: t) - Vector3(0, 0, standardGravityMetresPerSecondSquared))
            #expect((scene.accelerometerReadingMetresPerSecondSquared(at: t) - expected).length < 1e-12)
            #expect(motion.linearAccelerationNED(at: t).length > 0)
        }
    }

    @Test("scene time from CLOCK_MONOTONIC: the run's start maps to its start time, linearly")
    func sceneTimeMapping() throws {
        let scratch = ScratchDirectory()
        let simulator = try Simulator(phone: .librem5, scene: Self.base, sysfsRoot: scratch.sysfs, devRoot: scratch.dev,
                                      timestampOriginNanoseconds: 1_000_000_000)
        #expect(simulator.sceneTime(atMonotonicSeconds: 100) == nil)
        var started: Double?
        try simulator.run(rateHertz: 100, durationSeconds: 0.05, startTimeSeconds: 12) { started = $0 }
        let zero = try #require(simulator.monotonicSecondsAtSceneZero)
        let start = try #require(started)
        #expect(abs(zero - (start - 12)) < 1e-9)
        #expect(abs((simulator.sceneTime(atMonotonicSeconds: start + 2.5) ?? 0) - 14.5) < 1e-9)
        #expect(simulator.sceneTime(atTimestampNanoseconds: 3_500_000_000) == 2.5)
        #expect((simulator.sceneTimeNow ?? 0) >= 12)
    }
}
