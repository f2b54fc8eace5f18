// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import QiblaDaemon
import QiblaSimulator
import Testing

/// How much the fused needle's holds depend on when a sample was really taken (issue 39: why
/// `FusedNeedleTests` scores differently from run to run). A polled sample is stamped with the
/// time it is read, but its value is older by however long the sensor's register (here the
/// simulator's file, written at 100 Hz) has held it: 0–10 ms, at random when the reader's and the
/// writer's clocks drift or slip against each other — which a loaded machine makes them do. This
/// runs `FusedNeedleTests`' gyro-drift scene (Stockholm, seed 3) through the daemon's model
/// (`SensorReplay`) in simulated time at 50 Hz, each sample's value taken a random 0…J ms before
/// its stamp (seeded, so every row is reproducible), at six sample phases, scored as
/// `FusedNeedleTests` scores the real daemon. A measurement, not a test: it runs only with
/// `QIBLAD_NEEDLE_TIMING=1`.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["QIBLAD_NEEDLE_TIMING"] == "1"))
struct FusedNeedleTimingSweep {
    @Test func holdsAgainstTheSamplesAge() throws {
        let site = FusedNeedleTests.highDip
        let position = site.position
        let qibla = try #require(GreatCircle.initialBearingDegrees(from: position, to: Qibla.defaultKaaba))
        let seconds = 31.0
        let motion = PersonSceneMotion(.gyroscopeDrift, targetHeadingDegrees: qibla, seed: 3, durationSeconds: seconds + 30)
        let base = Scene(position: position, decimalYear: CalibrationIntegrationTests.now,
                         trajectory: .constant(.init(headingDegrees: qibla)), magnetometerNoiseMicrotesla: 0.4,
                         accelerometerNoiseMetresPerSecondSquared: 0.04)
        let scene = motion.scene(from: base)
        let truth: (Double) -> Double? = { t in
            let axis: HeadingAxis = scene.orientation(at: t).pitchDegrees > 50 ? .back : .top
            return scene.expectedMagneticHeading(of: axis, at: t)
        }
        var rows: [String] = []
        for maximumAgeMilliseconds in [0.0, 2.5, 5, 10] {
            var holds: [Double] = []
            for phase in 1...6 {
                var replay = SensorReplay(position: position, unixSecondsAtStart: Date().timeIntervalSince1970, hasGyroscope: true)
                var noise = GaussianNoise(seed: 7), gyroscopeNoise = GaussianNoise(seed: 7 ^ 0x6_7720)
                var age = SplitMix64(seed: UInt64(phase))
                var readings: [NeedleRecorder.Reading] = []
                for k in 0...Int(seconds * 50) {
                    let t = Double(k) / 50 + Double(phase) * 0.003
                    let taken = t - age.nextUnitInterval() * maximumAgeMilliseconds / 1000
                    let m = scene.magnetometerReadingMicrotesla(at: taken, noiseMicrotesla: noise.nextVector(standardDeviation: 0.4))
                    let a = scene.accelerometerReadingMetresPerSecondSquared(at: taken, noise: noise.nextVector(standardDeviation: 0.04))
                    let w = scene.gyroscopeReadingRadiansPerSecond(
                        at: taken, noise: gyroscopeNoise.nextVector(standardDeviation: scene.gyroscope.noiseDegreesPerSecond * .pi / 180))
                    let o = replay.apply(timeSeconds: t, acceleration: a, angularVelocity: w, magneticField: m)
                    readings.append(.init(timeSeconds: t, magneticHeading: o.magneticHeadingDegrees, headingError: o.headingErrorDegrees, fused: o.fused))
                }
                holds.append(NeedleScore.score(readings, truth: truth, from: 6, to: seconds, readIntervalSeconds: 0.01).holdRMSDegrees)
            }
            let row = String(format: "| 0–%.1f ms | %@ | %.2f–%.2f |", maximumAgeMilliseconds,
                             holds.map { String(format: "%.2f", $0) }.joined(separator: " "), holds.min() ?? .nan, holds.max() ?? .nan)
            print("NEEDLE-TIMING \(row)")
            rows.append(row)
        }
        #expect(rows.count == 4)
    }
}
