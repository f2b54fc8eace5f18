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

    @Test func aFixFromTheOtherSourceIsRepublishedEvenWithoutAMove() {
        var m = LocationModel()
        m.apply(.liveFix(fix(51.5, 0), from: .geoclue))
        // 1 m away: below the republish distance, but the source changed.
        let changed = m.apply(.liveFix(fix(51.500009, 0, at: 101), from: .gpsd))
        #expect(changed)
        #expect(m.current?.source == .gpsd)
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
}
