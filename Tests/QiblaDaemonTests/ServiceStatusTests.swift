// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaDaemon
import QiblaInterface
import Testing

/// The STATUS= line follows states, not samples.
@Suite struct ServiceStatusTests {
    @Test func idleSaysWhereThePositionComesFrom() {
        var p = PublishedProperties()
        #expect(ServiceStatus.text(p, claimed: false) == "idle; no position")
        p.locationSource = .lastKnown
        p.heading = 12
        #expect(ServiceStatus.text(p, claimed: false) == "idle; position from last-known")
    }

    @Test func claimedSaysWhetherThereIsACompassAndHowGoodItIs() {
        var p = PublishedProperties()
        p.locationSource = .gpsd
        #expect(ServiceStatus.text(p, claimed: true) == "no compass; position from gpsd")
        p.hasCompass = true
        p.compassAccuracy = .high
        #expect(ServiceStatus.text(p, claimed: true) == "compass high; position from gpsd")
        p.calibrationNeeded = true
        p.magneticInterference = true
        #expect(ServiceStatus.text(p, claimed: true) == "compass high, calibration needed, magnetic interference; position from gpsd")
    }

    @Test func aNewSampleDoesNotChangeTheLine() {
        var p = PublishedProperties()
        p.hasCompass = true
        p.compassAccuracy = .medium
        p.locationSource = .manual
        let before = ServiceStatus.text(p, claimed: true)
        p.heading = 181.5
        p.qiblaRelativeBearing = -20
        p.headingError = 4
        #expect(ServiceStatus.text(p, claimed: true) == before)
    }
}
