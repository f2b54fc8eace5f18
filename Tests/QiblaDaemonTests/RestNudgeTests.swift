// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import Testing
@testable import QiblaDaemon

/// A phone with a gyroscope lying still, nudged on the table by 5° (1.7 µT of London's 19 µT
/// horizontal field: below the 3 µT that counts as motion, so the phone stays resting and the
/// gyroscope unread; above the 1.2 µT a rest hands over as a drift), through the daemon's rest policy and model (`SensorReplay`). The rest's
/// first mean levels the kept attitude and turns its yaw (`AttitudeFilter.addRestMeanField`);
/// the nudge's drift and its settled mean must then reach the heading whole. When every later
/// mean also went to the filter, the settled mean moved the yaw a tenth of the nudge (0.3° of 3° at Berlin): the filter's yaw,
/// known to a tenth of a degree after a long rest, had no room for a turn it had not seen.
@Suite struct RestNudgeTests {
    @Test func aNudgeAtRestReachesTheFusedHeadingWhole() throws {
        let field = MagneticModel.wmm2025.field(at: london, decimalYear: 2026.0)
        var worstBefore = 0.0, worstAfter = 0.0, squaresAfter = 0.0, countAfter = 0
        for seed in UInt64(1)...10 {
            var noise = FirstRestTests.Noise(state: seed &* 7919)
            var replay = SensorReplay(position: london, unixSecondsAtStart: newYear2026, hasGyroscope: true)
            for period in 0..<2000 {
                let t = Double(period) * 0.02
                // 40°, then from 20 s over 0.3 s to 45°.
                let heading = 40 + 5 * min(1, max(0, (t - 20) / 0.3))
                let (magnetic, gravity) = flatReadings(headingDegrees: heading, fieldMicrotesla: field.totalNanotesla / 1000,
                                                       inclinationDegrees: field.inclinationDegrees)
                let out = replay.apply(timeSeconds: t, acceleration: gravity + noise.vector(0.05), angularVelocity: noise.vector(0.002),
                                       magneticField: magnetic + noise.vector(0.4))
                if t >= 15, t < 20 {
                    #expect(out.fused, "the rest's heading is the filter's at \(t) s")
                    worstBefore = max(worstBefore, abs(Angle.normalized180(out.magneticHeadingDegrees - 40)))
                }
                if t >= 27 {
                    let error = Angle.normalized180(out.magneticHeadingDegrees - 45)
                    worstAfter = max(worstAfter, abs(error)); squaresAfter += error * error; countAfter += 1
                }
            }
            #expect(replay.instantsHeldAtRest > 1500, "the phone rested throughout")
        }
        let rmsAfter = (squaresAfter / Double(max(1, countAfter))).squareRoot()
        print(String(format: "rest nudge of 5° at London, 10 phones: before it at worst %.2f° off; from 7 s after it %.2f° RMS, at worst %.2f° off",
                     worstBefore, rmsAfter, worstAfter))
        // The settled mean is 9 rest reads, its heading as noisy as they and their tilt: 1.47°
        // at worst over the ten, as before the rest's means reached the filter. Every mean taken
        // by the filter left one phone 4.75° off.
        #expect(worstBefore < 0.5)
        #expect(rmsAfter < 1 && worstAfter < 2)
    }
}
