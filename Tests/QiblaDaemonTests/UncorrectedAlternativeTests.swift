// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import Testing
@testable import QiblaDaemon

/// Issue 36 (b7528c0), through `CompassModel`: where the calibrator cannot tell its fit from no
/// correction at all — a fit learned beside a magnet lying in the room, on a magnetometer that
/// needs none (BROAD trial 30) — the published `HeadingError` counts the heading difference between
/// the two; the needle is the same with the rule on or off.
@Suite struct UncorrectedAlternativeTests {
    /// A factory-calibrated phone (no hard iron, 0.4 µT of noise) waved about all its axes at
    /// 20 Hz in London, a magnet in the room adding 6 µT during 3 s of every 10 s; the same samples
    /// into a model with the rule (`identityAlternativeRatio` 1.5, the default) and one without (0).
    @Test func aFitNoBetterThanNoCorrectionWidensThePublishedHeadingError() throws {
        let field = MagneticModel.wmm2025.field(at: london, decimalYear: 2026.0)
        let earth = Vector3(field.northNanotesla, field.eastNanotesla, field.downNanotesla) / 1000  // NED, µT
        let magnet = Vector3(0.6, -0.5, 0.3) * 6
        let base = Matrix3(0, 1, 0, 1, 0, 0, 0, 0, -1)  // device (x right, y top, z out) → NED, flat
        func attitude(_ t: Double) -> Matrix3 {
            Matrix3.rotationZ(degrees: 40 * t) * base * Matrix3.rotationX(degrees: 50 * sin(2 * .pi * 0.13 * t))
                * Matrix3.rotationY(degrees: 35 * sin(2 * .pi * 0.21 * t))
        }
        var off = CompassModel.Configuration()
        off.calibrator.identityAlternativeRatio = 0
        var with = CompassModel(), without = CompassModel(configuration: off)
        with.apply(.sensorsAvailable(hasAccelerometer: true), expectedField: field)
        without.apply(.sensorsAvailable(hasAccelerometer: true), expectedField: field)
        func feed(_ model: inout CompassModel, _ a: Vector3, _ m: Vector3, _ t: Double) {
            model.apply(.acceleration(a, timeSeconds: t), expectedField: field)
            model.apply(.magneticField(m, timeSeconds: t + 0.001), expectedField: field)
        }
        var noise = FirstRestTests.Noise(state: 30)
        var compared = 0, widened = 0, largest = 0.0
        for k in 0..<(60 * 20) {
            let t = Double(k) * 0.05
            let r = attitude(t)
            let near = t.truncatingRemainder(dividingBy: 10) < 3
            let a = r.transposed * Vector3(0, 0, -9.80665) + noise.vector(0.02)
            let m = r.transposed * (earth + (near ? magnet : .zero)) + noise.vector(0.4)
            feed(&with, a, m, t)
            feed(&without, a, m, t)
            // The rule changes what is published, never the needle.
            #expect(with.state.magneticHeadingDegrees.isNaN && without.state.magneticHeadingDegrees.isNaN
                    || with.state.magneticHeadingDegrees == without.state.magneticHeadingDegrees)
            guard with.calibrator.uncorrectedFieldFitsAsWell, !near, with.state.headingErrorDegrees.isFinite,
                  let alternative = with.calibrator.uncorrectedAlternativeDegrees(rawMicrotesla: m, accelerationMetresPerSecondSquared: a)
            else { continue }
            compared += 1
            largest = max(largest, alternative)
            #expect(with.state.headingErrorDegrees >= alternative - 1e-9, "t \(t): HeadingError \(with.state.headingErrorDegrees)° under the alternative \(alternative)°")
            if alternative >= 1, with.state.headingErrorDegrees > without.state.headingErrorDegrees { widened += 1 }
        }
        let fit = try #require(with.calibrator.fit, "the magnet's samples must give a fit for the rule to judge")
        print("CompassModel beside a magnet: offset \(fit.hardIronOffsetMicrotesla.length) µT, residual \(fit.residualRMSMicrotesla) µT; "
              + "\(compared) samples judged, the alternative up to \(largest)°, HeadingError wider than without the rule at \(widened)")
        #expect(!without.calibrator.uncorrectedFieldFitsAsWell)
        #expect(compared >= 100 && largest >= 1)
        #expect(widened >= compared / 4)
    }
}
