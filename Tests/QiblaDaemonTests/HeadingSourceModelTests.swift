// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaInterface
import Testing
@testable import QiblaDaemon

/// Issue 31: which heading source runs and serves, as a table like the position sources'.
@Suite struct HeadingSourceModelTests {
    typealias Step = (input: HeadingSourceModel.Input, serving: HeadingSource, runsProxy: Bool, heading: Double?, why: String)

    func run(_ selection: HeadingSourceModel.Selection, _ steps: [Step]) {
        var model = HeadingSourceModel(selection: selection)
        for step in steps {
            model.apply(step.input)
            #expect(model.serving == step.serving, "\(selection): \(step.why)")
            #expect(model.runsSensorProxy == step.runsProxy, "\(selection): \(step.why) (claims the proxy)")
            let published = model.published(magnetometer: CompassState())
            if let heading = step.heading {
                #expect(published.magneticHeadingDegrees == heading, "\(selection): \(step.why)")
            } else if model.serving == .iioSensorProxy {
                #expect(published.magneticHeadingDegrees.isNaN, "\(selection): \(step.why): no heading published")
            }
        }
    }

    @Test func autoPrefersTheRawMagnetometerAndFallsBackToTheProxy() {
        run(.auto, [
            (.sensorProxyHeading(10), .none, false, nil, "before the raw sensors reported, the proxy is not claimed"),
            (.magnetometer(present: true), .magnetometer, false, nil, "a phone with a raw magnetometer: it serves, no claim on the proxy"),
            (.magnetometer(present: false), .none, true, nil, "the magnetometer went: claim the proxy"),
            (.sensorProxyCompass(present: true), .iioSensorProxy, true, nil, "the proxy has a compass: it serves, no heading yet"),
            (.sensorProxyHeading(350), .iioSensorProxy, true, 350, "its first fresh heading"),
            (.sensorProxyHeading(nil), .iioSensorProxy, true, nil, "unknown (-1, stale): withdrawn, still the source"),
            (.sensorProxyHeading(20), .iioSensorProxy, true, 20, "back"),
            (.magnetometer(present: true), .magnetometer, false, nil, "the raw magnetometer is back: it serves, the proxy is released"),
            (.sensorProxyHeading(30), .magnetometer, false, nil, "a late proxy event after the release changes nothing"),
            (.magnetometer(present: false), .none, true, nil, "gone again: the proxy must report its compass anew"),
            (.sensorProxyCompass(present: true), .iioSensorProxy, true, nil, "no heading carried over from before"),
            (.sensorProxyCompass(present: false), .none, true, nil, "the proxy lost its compass (or vanished)"),
            (.stopped, .none, false, nil, "the last claim went: nothing runs"),
        ])
    }

    @Test func aSelectedSourceServesAlone() {
        run(.magnetometer, [
            (.magnetometer(present: false), .none, false, nil, "no magnetometer: no heading, the proxy is never claimed"),
            (.sensorProxyCompass(present: true), .none, false, nil, "not selected"),
            (.magnetometer(present: true), .magnetometer, false, nil, "found"),
        ])
        run(.iioSensorProxy, [
            (.magnetometer(present: true), .none, true, nil, "a raw magnetometer is ignored when the proxy is chosen"),
            (.sensorProxyCompass(present: true), .iioSensorProxy, true, nil, "the proxy serves"),
            (.sensorProxyHeading(359.9), .iioSensorProxy, true, 359.9, "its heading"),
            (.stopped, .none, true, nil, "stopped: nothing serves, but the proxy is what a claim starts"),
        ])
        #expect(!HeadingSourceModel(selection: .iioSensorProxy).runsMagnetometer)
        #expect(HeadingSourceModel(selection: .auto).runsMagnetometer)
    }

    @Test func theProxysHeadingIsPublishedWithAStatedErrorAndNoCalibrationOfOurs() {
        var model = DaemonModel()
        model.apply(.manualSet(Location(position: GeodeticPosition(uncheckedLatitude: 51.5074, longitude: -0.1278),
                                        timestampUnixSeconds: newYear2026)), nowUnixSeconds: newYear2026)
        model.apply(.sensorsUnavailable, nowUnixSeconds: newYear2026)
        #expect(model.headingSource.runsSensorProxy)
        #expect(model.properties.headingSource == .none && !model.properties.hasCompass)
        model.apply(.sensorProxyCompass(present: true))
        var p = model.properties
        #expect(p.hasCompass && p.heading.isNaN && p.headingSource == .none, "a compass, but no fresh heading yet")
        model.apply(.sensorProxyHeading(100))
        p = model.properties
        #expect(p.headingSource == .iioSensorProxy)
        #expect(p.magneticHeading == 100)
        #expect(abs(p.heading - Angle.normalized360(100 + p.declination)) < 1e-9, "true = magnetic + declination")
        #expect(p.headingAxis == .top)
        #expect(p.headingError == HeadingSourceModel.sensorProxyHeadingErrorDegrees && p.compassAccuracy == .low)
        #expect(!p.calibrationNeeded && p.calibrationHint == .none && p.calibrationProgress == 0)
        #expect(p.calibrationResidual.isNaN && p.hardIronOffsetMagnitude.isNaN && !p.magneticInterference)
        #expect(p.qiblaRelativeBearing.isFinite)
        #expect(model.checkHeadingWithSun(alignment: .sun, nowUnixSeconds: newYear2026 + 43_200) == .failure(.notOwnCompass))
        // The live sources stop: nothing stale stays.
        model.apply(.stopped, nowUnixSeconds: newYear2026)
        #expect(model.properties.headingSource == .none && model.properties.heading.isNaN && !model.properties.hasCompass)
    }

    @Test func reconfiguringSwitchesWhatRuns() {
        var model = HeadingSourceModel()
        model.apply(.magnetometer(present: true))
        #expect(model.serving == .magnetometer && !model.runsSensorProxy)
        model.reconfigure(.iioSensorProxy)
        #expect(model.serving == .none && model.runsSensorProxy && !model.runsMagnetometer)
        model.reconfigure(.auto)
        #expect(!model.runsSensorProxy, "auto waits for the raw sensors to report again")
    }

    @Test func theSourceChangeIsLoggedOnceARun() {
        var log = DaemonLog()
        #expect(log.headingSourceChange(from: .none, to: .iioSensorProxy, running: true)?.level == .info)
        #expect(log.headingSourceChange(from: .iioSensorProxy, to: .none, running: false) == nil, "stopping says nothing")
        #expect(log.headingSourceChange(from: .none, to: .iioSensorProxy, running: true)?.level == .debug, "the next claim: a repeat")
        #expect(log.headingSourceChange(from: .iioSensorProxy, to: .magnetometer, running: true)?.text
            == "heading from the raw magnetometer again (was iio-sensor-proxy)")
        #expect(log.headingSourceChange(from: .none, to: .iioSensorProxy, running: true)?.level == .info, "after a change, news again")
        #expect(log.headingSourceChange(from: .none, to: .magnetometer, running: true) == nil, "the raw sensors log themselves")
    }
}
