// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaInterface
import Testing
@testable import QiblaDaemon

/// A live fix carries the source it came from, and `LocationSource` names it.
@Suite struct LiveSourceTests {
    func fix(_ lat: Double, _ lon: Double, at t: Double = 100) -> Location {
        Location(position: GeodeticPosition(uncheckedLatitude: lat, longitude: lon), horizontalAccuracyMetres: 3,
                 timestampUnixSeconds: t)
    }

    @Test func aGeoClueFixIsPublishedAsGeoclue() {
        var m = LocationModel()
        m.apply(.manualSet(fix(1, 1)))
        let changed = m.apply(.liveFix(fix(21.4, 39.8), from: .geoclue))
        #expect(changed)
        #expect(m.current?.source == .geoclue && m.liveSource == .geoclue)
        m.apply(.liveFixLost)
        #expect(m.current?.source == .manual && m.liveSource == nil)
    }

    @Test func aFixFromTheOtherSourceIsRepublishedEvenWithoutAMoveWhenItTakesOver() {
        var m = LocationModel()
        m.apply(.liveFix(fix(51.5, 0), from: .geoclue))
        // gpsd, 1 m away and as accurate: GeoClue2 keeps the published fix (no flapping) …
        m.apply(.liveFix(fix(51.500009, 0, at: 101), from: .gpsd))  // changes LocationSources (gpsd=live) only
        #expect(m.current?.source == .geoclue && m.current?.location == fix(51.5, 0))
        let ignored = m.apply(.liveFix(fix(51.500009, 0, at: 101.5), from: .gpsd))
        #expect(!ignored, "nothing published changed")
        // … until GeoClue2 loses its fix: gpsd's takes over at once, source and all.
        let changed = m.apply(.sourceLost(.geoclue))
        #expect(changed)
        #expect(m.current?.source == .gpsd && m.current?.location == fix(51.500009, 0, at: 101.5))
        let same = m.apply(.liveFix(fix(51.500018, 0, at: 102), from: .gpsd))
        #expect(!same, "jitter from the same source is still not republished")
    }

    @Test func theDaemonModelPublishesTheSourceName() {
        var model = DaemonModel()
        model.apply(.liveFix(fix(-6.2088, 106.8456), from: .geoclue), nowUnixSeconds: newYear2026)
        #expect(model.properties.locationSource == .geoclue)
        #expect(LocationSource.geoclue.rawValue == "geoclue")
        #expect(model.properties.qiblaBearing.isFinite)
    }

    /// Issue 23: arbitration between live sources, as a table of (input, expected published source,
    /// expected accuracy of the published fix).
    @Test func theBetterCurrentFixWinsWithHysteresis() {
        func at(_ accuracy: Double?, _ t: Double, lat: Double = 51.5) -> Location {
            Location(position: GeodeticPosition(uncheckedLatitude: lat, longitude: 0), horizontalAccuracyMetres: accuracy,
                     timestampUnixSeconds: t)
        }
        typealias Step = (input: LocationModel.Input, source: LocationSource, accuracy: Double?, why: String)
        let steps: [Step] = [
            (.sourceState(.geoclue, .waiting), .none, nil, "started, nothing yet"),
            (.sourceState(.gpsd, .waiting), .none, nil, "both started"),
            (.liveFix(at(5, 1), from: .gpsd), .gpsd, 5, "the first fix is published at once, whoever sends it"),
            (.liveFix(at(1, 2, lat: 51.50001), from: .geoclue), .geoclue, 1, "1 m beats 5 m (under half)"),
            (.liveFix(at(4, 3), from: .gpsd), .geoclue, 1, "a worse fix does not take over"),
            (.liveFix(at(2000, 4, lat: 51.51), from: .geoclue), .geoclue, 2000,
             "the published source's own newer fix is published, even a coarse one"),
            (.liveFix(at(4, 5), from: .gpsd), .gpsd, 4, "4 m beats 2 km"),
            (.liveFix(at(3, 6, lat: 51.5001), from: .geoclue), .gpsd, 4, "3 m is not under half of 4 m: no flapping"),
            (.sourceLost(.gpsd), .geoclue, 3, "the published source lost its fix: the other takes over at once"),
            (.sourceState(.geoclue, .refused), .lastKnown, 3, "a source that stops serving drops its fix"),
            (.liveFix(at(nil, 7), from: .gpsd), .gpsd, nil, "a fix without an accuracy is still a live fix"),
            (.liveFix(at(30, 8, lat: 51.6), from: .geoclue), .geoclue, 30, "any accuracy beats none"),
            (.liveFixLost, .lastKnown, 30, "every source stopped"),
        ]
        var m = LocationModel()
        for (index, step) in steps.enumerated() {
            m.apply(step.input)
            #expect(m.current?.source ?? .none == step.source, "step \(index): \(step.why)")
            if step.source != .none {
                #expect(m.current?.location.horizontalAccuracyMetres == step.accuracy, "step \(index): \(step.why)")
            }
        }
        #expect(m.sourcesSummary.isEmpty, "states forgotten when every source stopped")
    }

    @Test func locationSourcesSaysWhatEachSourceDoes() {
        var m = LocationModel()
        #expect(m.sourcesSummary == "")
        m.apply(.sourceState(.gpsd, .waiting))
        m.apply(.sourceState(.geoclue, .waiting))
        #expect(m.sourcesSummary == "geoclue=waiting gpsd=waiting")
        m.apply(.liveFix(fix(51.5, 0), from: .gpsd))
        #expect(m.sourcesSummary == "geoclue=waiting gpsd=live")
        m.apply(.sourceLost(.gpsd))
        m.apply(.sourceState(.geoclue, .absent))
        #expect(m.sourcesSummary == "geoclue=absent gpsd=no-fix")
        var model = DaemonModel()
        model.apply(.sourceState(.geoclue, .refused), nowUnixSeconds: newYear2026)
        #expect(model.properties.locationSources == "geoclue=refused")
    }
}
