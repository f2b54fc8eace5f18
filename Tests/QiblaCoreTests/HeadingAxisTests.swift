// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import QiblaCore

@Suite struct HeadingAxisTests {
    @Test func hysteresisSwitchesAt55AndBackAt45() {
        var s = HeadingAxisSelector()
        #expect(s.axis == .none)
        let sequence: [(Double, HeadingAxis)] = [
            (10, .top), (50, .top), (55, .top), (56, .back), (50, .back), (46, .back), (45, .back),
            (44.9, .top), (54, .top), (80, .back), (90, .back), (120, .back), (136, .top),
            (170, .top), (180, .top),
        ]
        for (tilt, expected) in sequence {
            #expect(s.update(tiltDegrees: tilt) == expected, "tilt \(tilt)")
        }
    }

    @Test func startingModeAndNonFiniteTilt() {
        var s = HeadingAxisSelector()
        #expect(s.update(tiltDegrees: 50) == .top)
        s.reset()
        #expect(s.update(tiltDegrees: 60) == .back)
        #expect(s.update(tiltDegrees: .nan) == .none)
        #expect(s.update(tiltDegrees: 50) == .top)
    }

    @Test func customThresholdsAndSwappedArguments() {
        var s = HeadingAxisSelector(switchToBackAboveTiltDegrees: 30, switchToTopBelowTiltDegrees: 60)
        #expect(s.switchToBackAboveTiltDegrees == 60 && s.switchToTopBelowTiltDegrees == 30)
        #expect(s.update(tiltDegrees: 59) == .top)
        #expect(s.update(tiltDegrees: 61) == .back)
        #expect(s.update(tiltDegrees: 31) == .back)
        #expect(s.update(tiltDegrees: 29) == .top)
        #expect(HeadingAxis(rawValue: "back") == .back && HeadingAxis.none.rawValue == "none")
    }
}
