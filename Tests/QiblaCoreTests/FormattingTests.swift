// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import QiblaCore

@Suite("Compass words and distance formats")
struct FormattingTests {
    @Test("16-point compass words and sector boundaries")
    func compassWords() {
        let expected = ["N", "NNE", "NE", "ENE", "E", "ESE", "SE", "SSE", "S", "SSW", "SW", "WSW", "W", "WNW", "NW", "NNW"]
        for (index, word) in expected.enumerated() {
            let centre = Double(index) * 22.5
            #expect(CompassPoint.name(forBearing: centre) == word)
            #expect(CompassPoint.name(forBearing: centre + 11.2) == word)
            #expect(CompassPoint.name(forBearing: centre - 11.2) == word)
        }
        #expect(CompassPoint.name(forBearing: 11.25) == "NNE")
        #expect(CompassPoint.name(forBearing: 348.75) == "N")
        #expect(CompassPoint.name(forBearing: 359.999) == "N")
        #expect(CompassPoint.name(forBearing: 360) == "N")
        #expect(CompassPoint.name(forBearing: -22.5) == "NNW")
        #expect(CompassPoint.name(forBearing: 720 + 90) == "E")
        // Published Qibla bearings: London 118.987 (ESE), New York 58.4817 (ENE), Tokyo 293.021 (WNW),
        // Jakarta 295.1442 (WNW), Sydney 277.4996 (W), Anchorage 350.883 (N).
        #expect(CompassPoint.name(forBearing: 118.987) == "ESE")
        #expect(CompassPoint.name(forBearing: 58.4817) == "ENE")
        #expect(CompassPoint.name(forBearing: 45) == "NE")
        #expect(CompassPoint.name(forBearing: 293.021) == "WNW")
        #expect(CompassPoint.name(forBearing: 295.1442) == "WNW")
        #expect(CompassPoint.name(forBearing: 277.4996) == "W")
        #expect(CompassPoint.name(forBearing: 350.883) == "N")
        #expect(CompassPoint.name(forBearing: .nan) == "")
        #expect(CompassPoint.name(forBearing: .infinity) == "")
        #expect(CompassPoint(bearingDegrees: .nan) == nil)
        #expect(CompassPoint(bearingDegrees: 200)?.centreBearingDegrees == 202.5)
        #expect(CompassPoint.allCases.count == 16)
    }

    @Test("kilometres with comma grouping")
    func kilometres() {
        #expect(DistanceFormat.kilometres(4_794_752.67) == "4,795 km")
        #expect(DistanceFormat.kilometres(10_323_900) == "10,324 km")
        #expect(DistanceFormat.kilometres(850) == "850 m")
        #expect(DistanceFormat.kilometres(0) == "0 m")
        #expect(DistanceFormat.kilometres(0.4) == "0 m")
        #expect(DistanceFormat.kilometres(999.4) == "999 m")
        #expect(DistanceFormat.kilometres(999.5) == "1.0 km")
        #expect(DistanceFormat.kilometres(4_840) == "4.8 km")
        #expect(DistanceFormat.kilometres(9_949) == "9.9 km")
        #expect(DistanceFormat.kilometres(9_950) == "10 km")
        #expect(DistanceFormat.kilometres(999_500) == "1,000 km")
        #expect(DistanceFormat.kilometres(20_003_931.46) == "20,004 km")
        #expect(DistanceFormat.kilometres(1_234_567_890_000) == "1,234,567,890 km")
        #expect(DistanceFormat.kilometres(-1) == "—")
        #expect(DistanceFormat.kilometres(.nan) == "—")
        #expect(DistanceFormat.kilometres(.infinity) == "—")
        #expect(DistanceFormat.kilometres(1e300) == "—")
    }

    @Test("miles with comma grouping")
    func miles() {
        // London → Kaaba 4,794.75 km = 2,979.3 mi.
        #expect(DistanceFormat.miles(4_794_752.67) == "2,979 mi")
        #expect(DistanceFormat.miles(4_795_000) == "2,979 mi")
        #expect(DistanceFormat.miles(1_609.344 * 2_980) == "2,980 mi")
        #expect(DistanceFormat.miles(1_609.344 * 3.14) == "3.1 mi")
        #expect(DistanceFormat.miles(100) == "328 ft")
        #expect(DistanceFormat.miles(0) == "0 ft")
        #expect(DistanceFormat.miles(1_609.344 * 0.1) == "0.1 mi")
        #expect(DistanceFormat.miles(1_609.344 * 12_000) == "12,000 mi")
        #expect(DistanceFormat.miles(.nan) == "—")
        #expect(DistanceFormat.miles(-5) == "—")
    }
}
