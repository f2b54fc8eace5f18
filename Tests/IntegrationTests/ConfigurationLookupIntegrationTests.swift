// SPDX-License-Identifier: Apache-2.0
// The real qiblad reads <sysconfdir>/qiblad/qiblad.conf under its user's file, key by key, logs
// which files it read, and reads both again on SIGHUP.
import Foundation
import Testing
import TestSupport

@Suite struct ConfigurationLookupIntegrationTests {
    @Test func theSystemFileIsReadUnderTheUserFileAndBothAreReloaded() throws {
        let q = try QibladHarness(arguments: ["--no-gpsd", "--location=51.5074,-0.1278"]); defer { q.stop() }
        let system = q.stateDirectory.path + "/etc/qiblad/qiblad.conf"
        try q.stateDirectory.write("bearing-model = geodesic\nmax-signal-rate = 3\n", to: "etc/qiblad/qiblad.conf")
        try q.stateDirectory.write("max-signal-rate = 5\n", to: "qiblad.conf")
        try q.start()
        #expect(q.log.contains("configuration from \(system), then \(q.stateDirectory.path)/qiblad.conf"), "\(q.log)")
        // bearing-model comes from the system file.
        #expect(try q.double("QiblaBearing") == (try q.double("QiblaBearingGeodesic")))

        // The user's file overrides it; SIGHUP reads both again.
        try q.stateDirectory.write("bearing-model = great-circle\n", to: "qiblad.conf")
        q.daemon?.send(SIGHUP)
        #expect(waitUntil(timeout: 10) {
            guard let plain = try? q.double("QiblaBearing"), let geodesic = try? q.double("QiblaBearingGeodesic") else { return false }
            return abs(plain - geodesic) > 0.01
        }, "\(q.log)")

        // A bad system file is refused on reload like a bad user file.
        try q.stateDirectory.write("max-signal-rate = fast\n", to: "etc/qiblad/qiblad.conf")
        q.daemon?.send(SIGHUP)
        #expect(waitUntil(timeout: 10) { q.log.contains("configuration reload failed, keeping the previous settings: \(system): line 1: max-signal-rate") },
                "\(q.log)")
    }

    @Test func aBadSystemFileStopsTheStartWithStatusTwo() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.stateDirectory.write("always-on = perhaps\n", to: "etc/qiblad/qiblad.conf")
        let daemon = try q.start(waitForName: false)
        #expect(daemon.wait(timeout: 10) == 2)
        #expect(q.log.contains("etc/qiblad/qiblad.conf: line 1: always-on"), "\(q.log)")
    }
}
