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

    /// `SymmetricEigen3` gives the accepted calibration's eigenvalue spread (`CalibrationEstimator.fit`).
    @Test func symmetricEigenDecompositionReassembles() throws {
        func maximumDifference(_ a: Matrix3, _ b: Matrix3) -> Double {
            let d = [a.row0 - b.row0, a.row1 - b.row1, a.row2 - b.row2]
            return d.map { max(abs($0.x), abs($0.y), abs($0.z)) }.max() ?? .nan
        }
        let m = Matrix3(4, 1, -2, 1, 3, 0.5, -2, 0.5, 5)
        let e = try #require(SymmetricEigen3(m))
        #expect(e.values.x <= e.values.y && e.values.y <= e.values.z)
        #expect(maximumDifference(e.reassembled { $0 }, m) < 1e-12)
        // The square root squared is the matrix.
        let root = e.reassembled { $0.squareRoot() }
        #expect(maximumDifference(root * root, m) < 1e-12)
        // Trace and determinant are invariants.
        #expect(abs(e.values.x + e.values.y + e.values.z - 12) < 1e-12)
        #expect(abs(e.values.x * e.values.y * e.values.z - m.determinant) < 1e-10)
    }
}

/// A rejection's text is logged by the daemon while it calibrates: values not known yet (the
/// first passing estimate is `.notSettled(differenceDegrees: .infinity)`) are said, not converted
/// to integers (which traps).
@Suite struct CalibrationRejectionTextTests {
    @Test func valuesNotKnownYetAreSaid() {
        #expect(CalibrationRejection.notSettled(differenceDegrees: .infinity).description
            == "the estimate waits for a second one to confirm it")
        #expect(CalibrationRejection.notSettled(differenceDegrees: 2.345).description.contains("2.3°"))
        let uncertain = CalibrationRejection.headingUncertain(sigmaDegrees: .nan, tiltDegrees: .infinity, tiltAzimuthDegrees: -.infinity)
        #expect(uncertain.description == "the heading is still uncertain by unknown° at ∞° of tilt towards −∞°")
        #expect(CalibrationRejection.tooLittleMotion(seconds: 1e300).description == "only ∞ s of motion")
        #expect(CalibrationRejection.residualTooLarge(residualMicrotesla: 1.26, limitMicrotesla: 1).description
            == "residual 1.3 µT above 1.0 µT")
    }
}
