// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

/// The configuration file and SIGHUP (systemctl --user reload qiblad).
@Suite struct ConfigurationReloadTests {
    @Test func sighupAppliesANewBearingModelAndABadFileIsRefused() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.stateDirectory.write("bearing-model = great-circle\n", to: "qiblad.conf")
        try q.start()
        #expect(try q.call("SetManualLocation", "dd", ["40.7128", "-74.0059"]).status == 0)
        // New York: great circle 58.4817°, geodesic 58.396° (Tests/Reference/qibla-cities.csv).
        #expect(abs(try q.double("QiblaBearing") - 58.4817) < 0.001)
        let monitor = try q.monitor(); defer { monitor.terminate() }

        try q.stateDirectory.write("bearing-model = geodesic\n", to: "qiblad.conf")
        q.daemon?.send(SIGHUP)
        #expect(waitUntil(timeout: 5) { abs(((try? q.double("QiblaBearing")) ?? 0) - 58.396) < 0.001 })
        #expect(try q.double("QiblaBearing") == q.double("QiblaBearingGeodesic"))
        #expect(waitUntil(timeout: 5) { monitor.standardOutput.contains("QiblaBearing") }, "the change is broadcast")
        #expect(q.log.contains("configuration reloaded"))

        try q.stateDirectory.write("bearing-model = rhumb-line\n", to: "qiblad.conf")
        q.daemon?.send(SIGHUP)
        #expect(waitUntil(timeout: 5) { q.log.contains("configuration reload failed, keeping the previous settings") })
        #expect(q.log.contains("line 1: bearing-model"))
        #expect(abs(try q.double("QiblaBearing") - 58.396) < 0.001)
        #expect(q.daemon?.isRunning == true)
    }

    @Test func anInvalidConfigurationAtStartupExitsTwoWithTheLine() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.stateDirectory.write("# ok\nmax-signal-rate = lots\n", to: "qiblad.conf")
        let child = try q.start(waitForName: false)
        #expect(child.wait(timeout: 10) == 2)
        #expect(child.standardError.contains("line 2: max-signal-rate"), "\(child.standardError)")
    }
}
