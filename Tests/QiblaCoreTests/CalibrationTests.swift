// SPDX-License-Identifier: Apache-2.0
import QiblaSimulator
import Testing
@testable import QiblaCore

/// A seeded, platform-independent generator: the simulator's SplitMix64 (Steele, Lea & Flood,
/// OOPSLA 2014), with a Gaussian draw.
struct SeededGenerator: RandomNumberGenerator {
    private var base: SplitMix64
    init(seed: UInt64) { base = SplitMix64(seed: seed) }
    mutating func next() -> UInt64 { base.next() }
    /// Standard normal variate (Box–Muller).
    mutating func gaussian() -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
        let u2 = Double.random(in: 0..<1, using: &self)
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
    /// Uniform unit vector (normalised Gaussian triple).
    mutating func unitVector() -> Vector3 {
        while true {
            if let v = Vector3(gaussian(), gaussian(), gaussian()).normalized { return v }
        }
    }
}

@Suite struct CalibrationTests {
    @Test func applyIsSoftIronTimesRawMinusOffset() {
        let c = MagnetometerCalibration(hardIronOffset: Vector3(10, -5, 3),
                                        softIronMatrix: Matrix3(1.1, 0.02, 0, 0.02, 0.95, 0.01, 0, 0.01, 1.0))
        let raw = Vector3(30, 15, -40)
        let d = raw - Vector3(10, -5, 3) // (20, 20, -43)
        let expected = Vector3(1.1 * d.x + 0.02 * d.y, 0.02 * d.x + 0.95 * d.y + 0.01 * d.z, 0.01 * d.y + d.z)
        #expect((c.apply(raw) - expected).length < 1e-12)
        #expect(c.isValid && !c.isIdentity)
        #expect(MagnetometerCalibration().apply(raw) == raw)
        #expect(MagnetometerCalibration.identity.isIdentity)
        #expect(!MagnetometerCalibration(hardIronOffset: Vector3(.nan, 0, 0)).isValid)
        #expect(!MagnetometerCalibration(softIronMatrix: Matrix3(1, 0, 0, 0, 1, 0, 0, 0, 0)).isValid)
        #expect(!MagnetometerCalibration(softIronMatrix: Matrix3(-1, 0, 0, 0, 1, 0, 0, 0, 1)).isValid)
    }

    @Test func sphereFitRecoversKnownOffsetFromNoisyPoints() throws {
        var rng = SeededGenerator(seed: 42)
        let offset = Vector3(12.5, -30.2, 45.1)
        let radius = 48.0, sigma = 0.5
        var estimator = HardIronEstimator()
        #expect(estimator.fit() == nil) // no samples
        for _ in 0..<600 {
            let noise = Vector3(rng.gaussian(), rng.gaussian(), rng.gaussian()) * sigma
            estimator.add(offset + rng.unitVector() * radius + noise)
        }
        #expect(estimator.sampleCount == 600)
        let fit = try #require(estimator.fit())
        print("sphere fit: offset error \((fit.hardIronOffset - offset).length) µT, radius \(fit.radiusMicrotesla), "
              + "rms \(fit.residualRMSMicrotesla), coverage \(fit.coverage)")
        #expect((fit.hardIronOffset - offset).length < 0.2)
        #expect(abs(fit.radiusMicrotesla - radius) < 0.2)
        // Radial residual of isotropic noise has RMS ≈ σ.
        #expect(abs(fit.residualRMSMicrotesla - sigma) < 0.1)
        #expect(fit.coverage == 1)
        #expect(fit.sampleCount == 600)
        #expect(fit.calibration.hardIronOffset == fit.hardIronOffset)
        #expect(fit.calibration.softIronMatrix == .identity)
    }

    @Test func exactSphereIsRecoveredExactly() throws {
        var rng = SeededGenerator(seed: 7)
        let offset = Vector3(-120, 85, 3)
        var estimator = HardIronEstimator(capacity: 64)
        for _ in 0..<200 { estimator.add(offset + rng.unitVector() * 35) }
        #expect(estimator.sampleCount == 64) // ring buffer keeps the newest 64
        let fit = try #require(estimator.fit())
        #expect((fit.hardIronOffset - offset).length < 1e-9)
        #expect(abs(fit.radiusMicrotesla - 35) < 1e-9)
        #expect(fit.residualRMSMicrotesla < 1e-9)
    }

    @Test func degenerateSampleSetsGiveNoFit() {
        // Points on a circle in a plane: the centre along the normal is undetermined.
        var circle = HardIronEstimator()
        for i in 0..<100 {
            let t = Double(i) * 2 * .pi / 100
            circle.add(Vector3(5 + 40 * cos(t), -3 + 40 * sin(t), 20))
        }
        #expect(circle.fit() == nil)
        // Too few samples.
        var few = HardIronEstimator(minimumSampleCount: 20)
        var rng = SeededGenerator(seed: 1)
        for _ in 0..<19 { few.add(rng.unitVector() * 50) }
        few.add(Vector3(.nan, 0, 0)) // ignored
        #expect(few.sampleCount == 19 && few.fit() == nil)
        few.add(rng.unitVector() * 50)
        #expect(few.fit() != nil)
        few.reset()
        #expect(few.sampleCount == 0)
    }

    @Test func coverageCountsEqualAreaBins() {
        var c = OrientationCoverage()
        #expect(c.fraction == 0)
        c.insert(direction: Vector3(1, 0, 0))
        c.insert(direction: Vector3(2, 0, 0)) // same bin
        c.insert(direction: .zero) // ignored
        #expect(c.visitedBinCount == 1 && c.fraction == 1.0 / 32)
        // A horizontal circle visits one band: 8 of 32 bins.
        var ring = OrientationCoverage()
        for i in 0..<360 {
            let t = Angle.radians(Double(i) + 0.5)
            ring.insert(direction: Vector3(cos(t), sin(t), 0))
        }
        #expect(ring.fraction == 0.25)
        // Poles land in the top and bottom bands.
        c.insert(direction: Vector3(0, 0, 1))
        c.insert(direction: Vector3(0, 0, -1))
        #expect(c.visitedBinCount == 3)
    }
}
