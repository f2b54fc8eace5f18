// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import QiblaCore

@Suite struct CircularSmootherTests {
    @Test func wrapAroundAveragesToNorthNeverSouth() throws {
        var s = CircularSmoother()
        for i in 0..<20 {
            s.add(angleDegrees: i.isMultiple(of: 2) ? 359 : 1, time: Double(i) * 0.02)
        }
        let mean = try #require(s.mean)
        #expect(HeadingFixture.angularDistance(mean.meanDegrees, 0) < 1e-9)
        #expect(mean.meanDegrees >= 0 && mean.meanDegrees < 360)
        #expect(abs(mean.resultantLength - cos(Angle.radians(1))) < 1e-12)
        // 358 and 4 → 1.
        var t = CircularSmoother()
        t.add(angleDegrees: 358, time: 0)
        let m2Result = t.add(angleDegrees: 4, time: 0.01)
        let m2 = try #require(m2Result)
        #expect(abs(m2.meanDegrees - 1) < 1e-9)
    }

    @Test func spreadIsCircularStandardDeviation() throws {
        var s = CircularSmoother()
        for i in 0..<10 { s.add(angleDegrees: 100 + (i.isMultiple(of: 2) ? 10 : -10), time: Double(i) * 0.01) }
        let mean = try #require(s.mean)
        #expect(abs(mean.meanDegrees - 100) < 1e-9)
        let r = cos(Angle.radians(10))
        #expect(abs(mean.resultantLength - r) < 1e-12)
        #expect(abs(mean.spreadDegrees - Angle.degrees((-2 * log(r)).squareRoot())) < 1e-9)
        // For small spreads it is close to the linear standard deviation (10°).
        #expect(abs(mean.spreadDegrees - 10) < 0.1)
        // A single sample has no spread.
        var one = CircularSmoother()
        #expect(one.add(angleDegrees: 42, time: 0)?.spreadDegrees == 0)
    }

    @Test func oldSamplesLeaveTheWindow() throws {
        var s = CircularSmoother(configuration: .init(windowSeconds: 0.5))
        for i in 0...8 { s.add(angleDegrees: 10, time: Double(i) * 0.125) } // 0 … 1 s
        // Window [0.5, 1.0] holds 0.5, 0.625, 0.75, 0.875, 1.0.
        #expect(s.sampleCount == 5)
        // After a gap longer than the window only the new sample remains.
        s.add(angleDegrees: 20, time: 3)
        #expect(s.sampleCount == 1)
        #expect(try #require(s.mean).meanDegrees == 20)
    }

    @Test func suddenTurnResetsTheWindow() throws {
        var s = CircularSmoother()
        for i in 0..<20 { s.add(angleDegrees: 10, time: Double(i) * 0.02) }
        let afterResult = s.add(angleDegrees: 100, time: 0.4)
        let after = try #require(afterResult)
        #expect(HeadingFixture.angularDistance(after.meanDegrees, 100) < 1e-9)
        #expect(after.sampleCount == 1)
        #expect(s.turnResetCount == 1)

        // Without the reset rule the mean lags far behind.
        var lagging = CircularSmoother(configuration: .init(resetTurnDegrees: 180))
        for i in 0..<20 { lagging.add(angleDegrees: 10, time: Double(i) * 0.02) }
        let lagResult = lagging.add(angleDegrees: 100, time: 0.4)
        let lag = try #require(lagResult)
        #expect(lag.meanDegrees < 20)

        // A 20° step is smoothed, not reset.
        var small = CircularSmoother()
        for i in 0..<4 { small.add(angleDegrees: 10, time: Double(i) * 0.02) }
        let stepResult = small.add(angleDegrees: 30, time: 0.08)
        let step = try #require(stepResult)
        #expect(step.sampleCount == 5 && step.meanDegrees > 10 && step.meanDegrees < 20)
        #expect(small.turnResetCount == 0)
        // Across north: 350° → 15° is a 25° turn: smoothed, mean stays near north.
        var north = CircularSmoother()
        north.add(angleDegrees: 350, time: 0)
        let nResult = north.add(angleDegrees: 15, time: 0.01)
        let n = try #require(nResult)
        #expect(n.sampleCount == 2 && abs(n.meanDegrees - 2.5) < 1e-9)
    }

    @Test func cancellingDirectionsAreUndefined() {
        var s = CircularSmoother(configuration: .init(resetTurnDegrees: 360))
        s.add(angleDegrees: 0, time: 0)
        #expect(s.add(angleDegrees: 180, time: 0.01) == nil)
        #expect(s.mean == nil)
        #expect(s.resultantLength < 1e-15)
        var three = CircularSmoother(configuration: .init(resetTurnDegrees: 360))
        three.add(angleDegrees: 0, time: 0)
        three.add(angleDegrees: 120, time: 0.01)
        #expect(three.add(angleDegrees: 240, time: 0.02) == nil)
    }

    @Test func fixedCapacityRingBuffer() throws {
        var s = CircularSmoother(configuration: .init(windowSeconds: 10, capacity: 4))
        for i in 0..<10 { s.add(angleDegrees: Double(i), time: Double(i) * 0.01) }
        #expect(s.sampleCount == 4)
        // Newest four: 6, 7, 8, 9 → mean 7.5.
        #expect(abs(try #require(s.mean).meanDegrees - 7.5) < 1e-9)
    }

    @Test func badInputIsIgnoredAndTimeReversalResets() throws {
        var s = CircularSmoother()
        s.add(angleDegrees: 10, time: 1)
        s.add(angleDegrees: 12, time: 1.1)
        #expect(s.add(angleDegrees: .nan, time: 1.2)?.sampleCount == 2)
        #expect(s.add(angleDegrees: 11, time: .infinity)?.sampleCount == 2)
        #expect(s.sampleCount == 2)
        let backResult = s.add(angleDegrees: 20, time: 0.5)
        let back = try #require(backResult)
        #expect(back.sampleCount == 1 && back.meanDegrees == 20)
        s.reset()
        #expect(s.mean == nil && s.sampleCount == 0 && s.resultantLength == 0)
    }
}
