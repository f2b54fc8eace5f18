// SPDX-License-Identifier: Apache-2.0
// An event loop on the test thread driving a GeoCluePositionSource against the real GeoClue2 of a
// GeoClueEnvironment (TestSupport); events are recorded with their arrival time.
import Foundation
import Logging
import QiblaDBus
import QiblaEventLoop
@testable import QiblaGeoClue
import TestSupport

final class GeoClueSourceHarness {
    let loop: EventLoop
    let source: GeoCluePositionSource
    private(set) var events: [(instant: ContinuousClock.Instant, event: GeoClueEvent)] = []
    /// Called for every event after it is recorded.
    var onEvent: ((GeoClueEvent) -> Void)?

    init(bus address: String, whenMissing: GeoCluePositionSource.MissingServicePolicy = .waitForIt,
         callTimeoutSeconds: Double = 30) throws {
        let loop = try EventLoop()
        self.loop = loop
        var logger = Logger(label: "qiblad.geoclue.test")
        logger.logLevel = .info
        let box = EventBox()
        source = GeoCluePositionSource(
            configuration: .init(bus: .address(address), callTimeoutSeconds: callTimeoutSeconds),
            whenMissing: whenMissing, loop: loop, logger: logger) { event in box.harness?.record(event) }
        box.harness = self
    }

    private final class EventBox { weak var harness: GeoClueSourceHarness? }

    private func record(_ event: GeoClueEvent) {
        events.append((ContinuousClock.now, event))
        onEvent?(event)
    }

    var fixes: [GeoClueFix] { events.compactMap { if case .fix(let fix) = $0.event { fix } else { nil } } }
    func count(_ predicate: (GeoClueEvent) -> Bool) -> Int { events.filter { predicate($0.event) }.count }
    var startedCount: Int { count { $0 == .started } }
    var fixLostCount: Int { count { $0 == .fixLost } }
    var unavailable: [(GeoClueUnavailability, Bool)] {
        events.compactMap { if case .unavailable(let reason, let retrying) = $0.event { (reason, retrying) } else { nil } }
    }
    var denials: [String] { events.compactMap { if case .accessDenied(let m) = $0.event { m } else { nil } } }

    /// Runs the loop until `condition` holds or `timeout` seconds pass.
    @discardableResult
    func spin(timeout: Double, until condition: () -> Bool = { false }) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while !condition() && Date() < end {
            try? loop.runOnce(maximumWait: .milliseconds(20))
        }
        return condition()
    }
}

func milliseconds(_ d: Duration) -> Int {
    let (s, a) = d.components
    return Int(s) * 1000 + Int(a / 1_000_000_000_000_000)
}

func near(_ fix: GeoClueFix, _ latitude: Double, _ longitude: Double) -> Bool {
    abs(fix.position.latitudeDegrees - latitude) < 1e-6 && abs(fix.position.longitudeDegrees - longitude) < 1e-6
}

/// A GeoClue environment fed one position every 250 ms, and a source harness on its bus.
func fedGeoClue(_ qiblad: GeoClueEnvironment.QibladSection = .allowed, at position: (latitude: Double, longitude: Double),
                altitude: Double = 11, whenMissing: GeoCluePositionSource.MissingServicePolicy = .waitForIt,
                callTimeoutSeconds: Double = 30) throws -> (GeoClueEnvironment, NMEAFeeder, GeoClueSourceHarness) {
    let env = try GeoClueEnvironment(qiblad: qiblad)
    let feeder = NMEAFeeder(env.nmea, latitude: position.latitude, longitude: position.longitude, altitude: altitude)
    let harness = try GeoClueSourceHarness(bus: env.bus.address, whenMissing: whenMissing, callTimeoutSeconds: callTimeoutSeconds)
    return (env, feeder, harness)
}
