// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

/// The command-line client, run as a user would.
@Suite struct QiblactlTests {
    @Test func qiblaPrintsBearingWordDistanceAndDeclination() throws {
        let r = try run(product("qiblactl").path, ["qibla", "40.7128", "-74.0059"])
        #expect(r.status == 0, "\(r.stderr)")
        // New York: 58.4817° great circle (Adhan test suite), ENE, 10,324 km (GeographicLib 2.1).
        #expect(r.stdout.contains("58.48° ENE"), "\(r.stdout)")
        #expect(r.stdout.contains("10,32"), "\(r.stdout)")
        #expect(r.stdout.contains("declination"))
    }

    @Test func qiblaJSONHasTheDocumentedKeys() throws {
        let r = try run(product("qiblactl").path, ["qibla", "51.5074", "-0.1278", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let o = try #require(object)
        for key in ["latitude", "longitude", "great_circle_bearing_deg", "geodesic_bearing_deg", "compass_point", "distance_m",
                    "distance_km", "distance_mi", "declination_deg", "declination_decimal_year", "magnetic_zone", "undefined_reason"] {
            #expect(o.keys.contains(key), "missing \(key)")
        }
        #expect(abs((o["great_circle_bearing_deg"] as? Double ?? 0) - 118.987) < 0.01)
        #expect(o["compass_point"] as? String == "ESE")
        #expect(o["undefined_reason"] is NSNull)
        // London's declination in 2025–2030 is within a degree of zero (WMM2025).
        #expect(abs(o["declination_deg"] as? Double ?? 99) < 2)
    }

    @Test func qiblaAtTheKaabaIsUndefinedNotANumber() throws {
        let r = try run(product("qiblactl").path, ["qibla", "21.4225241", "39.8261818", "--json"])
        #expect(r.status == 0)
        let o = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(o["great_circle_bearing_deg"] is NSNull)
        #expect(o["undefined_reason"] as? String == "at-kaaba")
    }

    @Test(arguments: [["91", "0"], ["0", "-181"], ["nan", "0"], ["abc", "1"], ["0", "inf"]])
    func invalidInputExitsTwoWithAMessage(_ args: [String]) throws {
        let r = try run(product("qiblactl").path, ["qibla"] + args)
        #expect(r.status == 2, "\(args): \(r.stdout) \(r.stderr)")
        #expect(!r.stderr.isEmpty)
        #expect(r.stdout.isEmpty)
    }

    @Test func statusSetAndClearTalkToTheDaemon() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.start()
        let env = q.bus.environment
        let set = try run(product("qiblactl").path, ["set-location", "-33.8688", "151.2093"], environment: env)
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout.contains("Qibla 277.") && set.stdout.contains("source manual"), "\(set.stdout)")
        let json = try run(product("qiblactl").path, ["status", "--json"], environment: env)
        let o = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(o["LocationSource"] as? String == "manual")
        #expect(o["Heading"] is NSNull)
        let bad = try run(product("qiblactl").path, ["set-location", "95", "0"], environment: env)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("latitude"))
        let clear = try run(product("qiblactl").path, ["clear-location"], environment: env)
        #expect(clear.status == 0)
        #expect(clear.stdout.contains("no location"))
    }

    @Test func statusWithoutADaemonSaysHowToStartIt() throws {
        let bus = try PrivateBus()
        let r = try run(product("qiblactl").path, ["status"], environment: bus.environment)
        #expect(r.status == 1)
        #expect(r.stderr.contains("not running") && r.stderr.contains("qibla-sim demo"), "\(r.stderr)")
    }
}
