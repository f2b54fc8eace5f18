// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
@testable import QiblaCore

@Suite struct FusionDebugTests {
    @Test func debugRun() {
        let env = ProcessInfo.processInfo.environment
        guard let sceneName = env["FUSION_SCENE"], let scene = FusionScene(rawValue: sceneName) else { return }
        let dip = SiteDip(rawValue: env["FUSION_DIP"] ?? "low")!
        for seed in UInt64(1)..<5 {
            let s = seed &* 7919 &+ UInt64(scene.rawValue.count * 31 + (dip == .low ? 1 : 2))
            let run = FusionRun(scene: scene, dip: dip, seed: s)
            let m = measure(run, rateHertz: 50, seed: s)
            print("seed \(seed) dip \(run.inclinationDegrees) holdRMS \(FusionMetrics.rms(m.holdErrors)) walk \(FusionMetrics.rms(m.walkErrors)) magnet \(m.magnetMaximum) 1σ \(m.oneSigmaShare)")
            if env["FUSION_SERIES"] == "\(seed)" {
                var samples: [FusionSample] = []
                run.samples(rateHertz: 50, seed: s) { samples.append($0) }
                var f = AttitudeFilter(configuration: FusionSweep.configuration)
                var next = 0.0
                for x in samples {
                    switch x {
                    case .gyroscope(let w, let t): f.addAngularVelocity(w, time: t)
                    case .acceleration(let a, let t): f.addAcceleration(a, time: t)
                    case .magneticField(let v, let t): f.addMagneticField(v, time: t)
                    }
                    if x.time >= next, let h = f.heading {
                        next += 0.25
                        let truth = run.trueHeading(h.axis, at: x.time) ?? .nan
                        let trueUp = run.timeline.attitude(x.time).transposed * Vector3(0, 0, -1)
                        let tiltError = Angle.degrees(acos(min(1, trueUp.dot(f.upDirection))))
                        print(String(format: "   tilt error %.2f", tiltError))
                        print(String(format: "t %.2f %@ %@ truth %.1f est %.1f err %.2f σ %.2f tiltσ %.2f bias %.3f %.3f %.3f %@", x.time, "\(run.timeline.segment(at: x.time).kind)", "\(h.axis)", truth, h.magneticHeadingDegrees, Angle.turn(from: truth, to: h.magneticHeadingDegrees), h.sigmaDegrees, f.tiltSigmaDegrees, Angle.degrees(f.gyroscopeBiasRadiansPerSecond.x), Angle.degrees(f.gyroscopeBiasRadiansPerSecond.y), Angle.degrees(f.gyroscopeBiasRadiansPerSecond.z), "\(h.magneticState)"))
                    }
                }
            }
        }
    }
}
