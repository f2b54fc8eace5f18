// SPDX-License-Identifier: Apache-2.0
// Frames, attitude, sensor errors and noise of the simulated scene.
import Foundation
import QiblaCore
import QiblaSimulator
import Testing

private let g = standardGravityMetresPerSecondSquared

private func close(_ a: Vector3, _ b: Vector3, _ tolerance: Double = 1e-9) -> Bool {
    maxComponentDifference(a, b) <= tolerance
}

@Suite("Simulator scene and frames")
struct SimulatorSceneTests {
    @Test("flat face-up: the accelerometer reads (0, 0, +g), in the scene and read back from sysfs")
    func flatFaceUp() throws {
        let scene = Scene(earthFieldNEDMicrotesla: Vector3(20, 0, 40), trajectory: .flatOnTable(headingDegrees: 123))
        #expect(close(scene.accelerometerReadingMetresPerSecondSquared(at: 0), Vector3(0, 0, g)))
        let scratch = ScratchDirectory()
        let simulator = try Simulator(phone: .pinephone, scene: scene, sysfsRoot: scratch.sysfs, devRoot: scratch.dev)
        try simulator.step(to: 0)
        let (a, bound) = try readBack(directory: try #require(simulator.accelerometerDirectory), kind: .accelerometer)
        #expect(abs(a.z - 9.80665) <= bound && abs(a.x) <= bound && abs(a.y) <= bound, "\(a)")
        #expect(bound < 0.001)
    }

    // Derivation of the heading-90° case. Heading ψ = 90°: the top edge (+y) points east. Looking down
    // on the screen, +x is 90° clockwise from +y, i.e. south. North is therefore −x: a horizontal field
    // H pointing north reads (−H, 0, ·), and the down component D reads −D on z (z is up, out of the
    // screen). With the conventional heading formula ψ_m = atan2(−m_x, m_y) this gives atan2(H, 0) = 90°.
    @Test("heading 90°: the horizontal field lies along −x")
    func heading90() {
        let east = Scene(earthFieldNEDMicrotesla: Vector3(20, 0, 40), trajectory: .flatOnTable(headingDegrees: 90))
        #expect(close(east.earthFieldDeviceMicrotesla(at: 0), Vector3(-20, 0, -40)))
        let north = Scene(earthFieldNEDMicrotesla: Vector3(20, 0, 40), trajectory: .flatOnTable(headingDegrees: 0))
        let m = north.earthFieldDeviceMicrotesla(at: 0)
        #expect(close(m, Vector3(0, 20, -40)))
        #expect(abs(Angle.degrees(atan2(-m.x, m.y))) < 1e-9)
    }

    @Test("flat at any heading: atan2(−m_x, m_y) equals the expected magnetic heading (declination 8°)")
    func headingFormula() throws {
        let d = Angle.radians(8)
        for heading in stride(from: 0.0, to: 360, by: 15) {
            let scene = Scene(earthFieldNEDMicrotesla: Vector3(25 * cos(d), 25 * sin(d), 30),
                              trajectory: .flatOnTable(headingDegrees: heading))
            let m = scene.earthFieldDeviceMicrotesla(at: 0)
            let measured = Angle.normalized360(Angle.degrees(atan2(-m.x, m.y)))
            let expected = try #require(scene.expectedMagneticHeading(at: 0))
            #expect(abs(Angle.turn(from: expected, to: measured)) < 1e-9)
            #expect(abs(Angle.turn(from: heading - 8, to: expected)) < 1e-9)
            #expect(abs(Angle.turn(from: heading, to: try #require(scene.expectedTrueHeading(at: 0)))) < 1e-9)
            #expect(scene.expectedBackCameraHeading(at: 0) == nil)  // camera looks at the floor
        }
    }

    @Test("upright: accelerometer (0, +g, 0), back camera along the heading, top-edge heading undefined")
    func upright() throws {
        let scene = Scene(earthFieldNEDMicrotesla: Vector3(20, 0, 40), trajectory: .upright(headingDegrees: 250))
        #expect(close(scene.accelerometerReadingMetresPerSecondSquared(at: 0), Vector3(0, g, 0)))
        #expect(abs(try #require(scene.expectedBackCameraTrueHeading(at: 0)) - 250) < 1e-9)
        #expect(abs(try #require(scene.expectedBackCameraHeading(at: 0)) - 250) < 1e-9)  // declination 0
        #expect(scene.expectedTrueHeading(at: 0) == nil)
    }

    @Test("pitch is top edge up, roll is right edge down")
    func pitchAndRoll() {
        let pitched = Scene(earthFieldNEDMicrotesla: .zero, trajectory: .constant(DeviceOrientation(headingDegrees: 0, pitchDegrees: 30)))
        #expect(close(pitched.accelerometerReadingMetresPerSecondSquared(at: 0), Vector3(0, g * 0.5, g * cos(Angle.radians(30)))))
        let rolled = Scene(earthFieldNEDMicrotesla: .zero, trajectory: .constant(DeviceOrientation(headingDegrees: 0, rollDegrees: 30)))
        #expect(close(rolled.accelerometerReadingMetresPerSecondSquared(at: 0), Vector3(-g * 0.5, 0, g * cos(Angle.radians(30)))))
        // The rotation is proper and orthonormal.
        let c = DeviceOrientation(headingDegrees: 33, pitchDegrees: -12, rollDegrees: 71).worldToDevice
        #expect(abs(c.determinant - 1) < 1e-12)
        let i = c * c.transposed
        #expect(close(i.row0, Vector3(1, 0, 0), 1e-12) && close(i.row1, Vector3(0, 1, 0), 1e-12) && close(i.row2, Vector3(0, 0, 1), 1e-12))
    }

    @Test("tilted: the expected heading is the azimuth of the top edge's horizontal projection")
    func tiltedHeading() throws {
        // Pitch only keeps the top edge in the vertical plane of the heading.
        let scene = Scene(earthFieldNEDMicrotesla: Vector3(20, 0, 40),
                          trajectory: .constant(DeviceOrientation(headingDegrees: 300, pitchDegrees: 40)))
        #expect(abs(try #require(scene.expectedTrueHeading(at: 0)) - 300) < 1e-9)
        #expect(abs(try #require(scene.expectedBackCameraTrueHeading(at: 0)) - 300) < 1e-9)
    }

    @Test("turning in the hand follows h0 + 20°·sin(2πt/20 s)")
    func turning() {
        let trajectory = OrientationTrajectory.turningInHand(baseHeadingDegrees: 350)
        #expect(abs(trajectory.orientation(at: 0).headingDegrees - 350) < 1e-9)
        #expect(abs(trajectory.orientation(at: 5).headingDegrees - 10) < 1e-9)  // wraps past north
        #expect(abs(trajectory.orientation(at: 15).headingDegrees - 330) < 1e-9)
        let tilt = (0..<200).map { trajectory.orientation(at: Double($0) * 0.1) }
        #expect(tilt.allSatisfy { abs($0.pitchDegrees - 10) <= 3 + 1e-9 && abs($0.rollDegrees) <= 3 + 1e-9 })
        #expect(tilt.contains { abs($0.rollDegrees) > 2 })
    }

    @Test("hard and soft iron: m_meas = S·m + b; interference only inside its interval")
    func sensorErrors() {
        let s = Matrix3(1.1, 0.05, 0, 0.05, 0.9, 0, 0, 0, 1.02)
        let b = Vector3(12, -7, 30)
        var scene = Scene(earthFieldNEDMicrotesla: Vector3(20, 3, 40), trajectory: .flatOnTable(headingDegrees: 45),
                          hardIronOffsetMicrotesla: b, softIronMatrix: s)
        let m = scene.earthFieldDeviceMicrotesla(at: 1)
        #expect(close(scene.magnetometerReadingMicrotesla(at: 1), s * m + b))
        scene.interferences = [Interference(startSeconds: 2, durationSeconds: 3, fieldMicrotesla: Vector3(50, 0, 0)),
                               Interference(startSeconds: 10, durationSeconds: 1, fieldMicrotesla: Vector3(0, 0, 50), frame: .world)]
        #expect(close(scene.externalFieldDeviceMicrotesla(at: 1.999), m))
        #expect(close(scene.externalFieldDeviceMicrotesla(at: 2), m + Vector3(50, 0, 0)))
        #expect(close(scene.externalFieldDeviceMicrotesla(at: 4.999), m + Vector3(50, 0, 0)))
        #expect(close(scene.externalFieldDeviceMicrotesla(at: 5), m))
        // 50 µT down in the world reads −50 µT on z for a flat phone.
        #expect(close(scene.externalFieldDeviceMicrotesla(at: 10.5), m + Vector3(0, 0, -50)))
    }

    @Test("SplitMix64 matches the reference sequence; Box–Muller gives N(0, 1)")
    func randomNumbers() {
        var r = SplitMix64(seed: 1234567)
        #expect([r.next(), r.next(), r.next()] == [6457827717110365317, 3203168211198807973, 9817491932198370423])
        var noise = GaussianNoise(seed: 42)
        let draws = (0..<20000).map { _ in noise.next() }
        let mean = draws.reduce(0, +) / Double(draws.count)
        let sd = (draws.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(draws.count - 1)).squareRoot()
        print("Box–Muller, 20000 draws: mean \(mean), sd \(sd)")
        #expect(abs(mean) < 0.03)
        #expect(abs(sd - 1) < 0.03)
        #expect(draws.allSatisfy { $0.isFinite })
    }

    @Test("noise is deterministic for a seed and has the requested size")
    func deterministicNoise() throws {
        let scene = Scene(earthFieldNEDMicrotesla: Vector3(20, 3, 40), trajectory: .turningInHand(baseHeadingDegrees: 10),
                          magnetometerNoiseMicrotesla: 0.5, accelerometerNoiseMetresPerSecondSquared: 0.05)
        func run(seed: UInt64) throws -> [SimulatorSample] {
            let scratch = ScratchDirectory()
            let simulator = try Simulator(phone: .pinephone, scene: scene, sysfsRoot: scratch.sysfs, devRoot: scratch.dev, seed: seed)
            return try (0..<400).map { try simulator.step(to: Double($0) * 0.05) }
        }
        let a = try run(seed: 7), b = try run(seed: 7), c = try run(seed: 8)
        #expect(a == b)
        #expect(a.map(\.magnetometerRaw) != c.map(\.magnetometerRaw))
        let errors = a.flatMap { sample -> [Double] in
            let d = sample.magnetometerMicrotesla! - scene.magnetometerReadingMicrotesla(at: sample.timeSeconds)
            return [d.x, d.y, d.z]
        }
        let sd = (errors.map { $0 * $0 }.reduce(0, +) / Double(errors.count)).squareRoot()
        print("magnetometer noise sd over 1200 draws: \(sd) µT (requested 0.5)")
        #expect(abs(sd - 0.5) < 0.05)
    }

    @Test("run() steps at the scene times k/rate and stops on stop()")
    func runLoop() throws {
        let scratch = ScratchDirectory()
        let scene = Scene(earthFieldNEDMicrotesla: Vector3(20, 3, 40), trajectory: .flatOnTable(headingDegrees: 0))
        let simulator = try Simulator(phone: .librem5, scene: scene, sysfsRoot: scratch.sysfs, devRoot: scratch.dev)
        try simulator.run(rateHertz: 50, durationSeconds: 0.1)
        #expect(simulator.stepCount >= 2 && simulator.stepCount <= 6)
        let last = try #require(simulator.lastSample)
        #expect(last.timeSeconds <= 0.1 + 1e-9)
        #expect(abs(last.timeSeconds * 50 - (last.timeSeconds * 50).rounded()) < 1e-9)

        let background = try Simulator(phone: .pinephone, scene: scene, sysfsRoot: scratch.sysfs + "2", devRoot: scratch.dev + "2")
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            try? background.run(rateHertz: 100)
            finished.signal()
        }
        thread.start()
        #expect(waitForSteps(background, atLeast: 3))
        background.updateScene { $0.trajectory = .flatOnTable(headingDegrees: 90) }
        let stepsAfterUpdate = background.stepCount + 2
        #expect(waitForSteps(background, atLeast: stepsAfterUpdate))
        background.stop()
        finished.wait()
        let field = try #require(background.lastSample?.magnetometerMicrotesla)
        #expect(close(field, Vector3(-20, 3, -40)))  // the scene change took effect: north → −x, east → +y
        #expect(throws: SimulatorError.self) { try simulator.run(rateHertz: 0) }
        #expect(throws: SimulatorError.self) { try simulator.step(to: .nan) }
    }
}

private func waitForSteps(_ simulator: Simulator, atLeast n: Int) -> Bool {
    for _ in 0..<5000 where simulator.stepCount < n { usleep(1000) }
    return simulator.stepCount >= n
}
