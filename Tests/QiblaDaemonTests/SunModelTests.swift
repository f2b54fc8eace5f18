// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaInterface
import Testing
@testable import QiblaDaemon

@Suite struct SunModelTests {
    /// 2026-06-21T00:00:00Z.
    let midsummer2026 = 1_782_000_000.0 - 1_782_000_000.0.truncatingRemainder(dividingBy: 86_400)

    @Test("with no location nothing is known and no wake-up is asked for")
    func nothingKnown() {
        var model = DaemonModel()
        model.updateSun(nowUnixSeconds: newYear2026)
        #expect(model.sun.next == nil && model.sun.wakeUpUnixSeconds == nil)
        #expect(model.properties.nextQiblaSunTimeMicroseconds == 0)
        #expect(model.properties.nextQiblaSunKind == "none")
    }

    @Test("a location gives the next instant after now, and one wake-up at that instant")
    func nextInstantAndOneWakeUp() throws {
        var model = DaemonModel()
        model.apply(.manualSet(Location(position: london, timestampUnixSeconds: midsummer2026)), nowUnixSeconds: midsummer2026)
        let next = try #require(model.sun.next)
        #expect(next.unixSeconds > midsummer2026 && next.unixSeconds < midsummer2026 + 86_400)
        #expect(next.kind == .sun, "London's first instant of a June day is the morning sun in the Qibla")
        #expect(model.sun.wakeUpUnixSeconds == next.unixSeconds + 1)
        #expect(model.properties.nextQiblaSunTimeMicroseconds == UInt64(next.unixSeconds * 1e6))
        #expect(model.properties.nextQiblaSunKind == "sun")
        // Asked again before the wake-up, with the same place: nothing changes.
        model.updateSun(nowUnixSeconds: midsummer2026 + 60)
        #expect(model.sun.next == next)
        // After the instant: the next one is the evening shadow.
        model.updateSun(nowUnixSeconds: next.unixSeconds + 1)
        let second = try #require(model.sun.next)
        #expect(second.unixSeconds > next.unixSeconds && second.kind == .shadow)
        #expect(model.sun.wakeUpUnixSeconds == second.unixSeconds + 1)
    }

    @Test("at the Kaaba the Qibla is undefined: none, and no wake-up; in polar night a wake-up at the end of the window")
    func noneKnown() throws {
        var model = DaemonModel()
        model.apply(.manualSet(Location(position: Qibla.defaultKaaba, timestampUnixSeconds: newYear2026)), nowUnixSeconds: newYear2026)
        #expect(model.sun.next == nil && model.sun.wakeUpUnixSeconds == nil)
        let tromso = GeodeticPosition(uncheckedLatitude: 69.6492, longitude: 18.9553)
        let december = newYear2026 - 10 * 86_400
        model.apply(.manualSet(Location(position: tromso, timestampUnixSeconds: december)), nowUnixSeconds: december)
        #expect(model.sun.next == nil)
        #expect(model.sun.wakeUpUnixSeconds == december + 86_400)
        // The location goes: nothing to wait for.
        model.apply(.manualSet(nil), nowUnixSeconds: december)
        #expect(model.sun.wakeUpUnixSeconds == nil)
    }

    @Test("the sun check is refused without a claim, a location, a heading, with the phone moving or the sun low")
    func checkRefusals() {
        let sun = SunModel()
        let noon = midsummer2026 + 12 * 3600
        #expect(sun.check(alignment: .sun, claimed: false, position: london, measuredTrueHeadingDegrees: 180,
                          spreadDegrees: 0.1, nowUnixSeconds: noon) == .failure(.notClaimed))
        #expect(sun.check(alignment: .sun, claimed: true, position: nil, measuredTrueHeadingDegrees: 180,
                          spreadDegrees: 0.1, nowUnixSeconds: noon) == .failure(.noLocation))
        #expect(sun.check(alignment: .sun, claimed: true, position: london, measuredTrueHeadingDegrees: .nan,
                          spreadDegrees: 0.1, nowUnixSeconds: noon) == .failure(.noHeading))
        #expect(sun.check(alignment: .sun, claimed: true, position: london, measuredTrueHeadingDegrees: 180,
                          spreadDegrees: 5, nowUnixSeconds: noon) == .failure(.moving(spreadDegrees: 5)))
        if case .failure(.sunTooLow) = sun.check(alignment: .sun, claimed: true, position: london, measuredTrueHeadingDegrees: 180,
                                                  spreadDegrees: 0.1, nowUnixSeconds: midsummer2026) {} else {
            Issue.record("midnight in London must be refused")
        }
    }

    @Test("the sun check's error is measured − the sun's azimuth (or its opposite for a shadow), in (−180, 180]")
    func checkError() throws {
        let sun = SunModel()
        let noon = midsummer2026 + 12 * 3600
        let azimuth = try #require(SolarPositionAlgorithm.position(at: noon, for: london)).azimuthDegrees
        let e1 = sun.check(alignment: .sun, claimed: true, position: london, measuredTrueHeadingDegrees: azimuth + 7,
                           spreadDegrees: 0.2, nowUnixSeconds: noon)
        #expect(abs(try e1.get() - 7) < 1e-9)
        let e2 = sun.check(alignment: .shadow, claimed: true, position: london, measuredTrueHeadingDegrees: azimuth + 180 - 3,
                           spreadDegrees: 0.2, nowUnixSeconds: noon)
        #expect(abs(try e2.get() + 3) < 1e-9)
    }

    @Test("a stored correction is subtracted from the heading, survives new samples, and goes away with nil")
    func correctionInTheCompass() {
        var compass = CompassModel()
        let (m, a) = flatReadings(headingDegrees: 100, fieldMicrotesla: 49, inclinationDegrees: 66)
        compass.apply(.sensorsAvailable(hasAccelerometer: true), expectedField: nil)
        for i in 0..<20 {
            compass.apply(.acceleration(a, timeSeconds: Double(i) * 0.05), expectedField: nil)
            compass.apply(.magneticField(m, timeSeconds: Double(i) * 0.05), expectedField: nil)
        }
        #expect(abs(compass.state.magneticHeadingDegrees - 100) < 0.5)
        #expect(compass.state.headingSpreadDegrees < 0.5)
        compass.apply(.headingCorrection(7), expectedField: nil)
        #expect(abs(compass.state.magneticHeadingDegrees - 93) < 0.5)
        compass.apply(.acceleration(a, timeSeconds: 1.05), expectedField: nil)
        compass.apply(.magneticField(m, timeSeconds: 1.05), expectedField: nil)
        #expect(abs(compass.state.magneticHeadingDegrees - 93) < 0.5)
        #expect(compass.state.headingErrorDegrees <= (0.5 * 0.5 + 1).squareRoot())
        compass.apply(.headingCorrection(nil), expectedField: nil)
        #expect(abs(compass.state.magneticHeadingDegrees - 100) < 0.5)
        #expect(compass.state.headingCorrectionDegrees == 0)
    }
}
