// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

/// Every coordinate on every command line, south and west, in every spelling: negative values
/// with a space, with `=`, and after `--`; unknown options named as such; the shared exit statuses
/// (0 ok, 1 runtime failure, 2 invalid value, 64 usage).
@Suite struct CliCoordinateTests {
    /// Santiago de Chile: south and west. Great-circle Qibla 81.83°.
    static let lat = "-33.45", lon = "-70.66"

    @Test(arguments: [
        ["qibla", lat, lon],
        ["qibla", "--", lat, lon],
        ["qibla", lat, "--", lon],
        ["qibla", "--json", "--", lat, lon],
        ["qibla", lat, lon, "--json"],
    ])
    func qiblactlQiblaTakesSouthernAndWesternCoordinates(_ arguments: [String]) throws {
        let r = try run(product("qiblactl").path, arguments)
        #expect(r.status == 0, "\(arguments): \(r.stderr)")
        if arguments.contains("--json") {
            let o = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            #expect(o["latitude"] as? Double == -33.45)
            #expect(o["longitude"] as? Double == -70.66)
        } else {
            #expect(r.stdout.contains("Qibla from -33.4500, -70.6600"), "\(r.stdout)")
        }
    }

    @Test(arguments: [
        (["qibla", "--jsn", "1", "2"], Int32(64), "unknown option '--jsn'"),
        (["qibla", "-x", "-33.45", "-70.66"], 64, "unknown option '-x'"),
        (["qibla", "-33.45"], 64, "expected LATITUDE LONGITUDE"),
        (["qibla", "--", "-33.45", "-70.66", "1"], 64, "got 3"),
        (["qibla", "-91", "0"], 2, "latitude"),
        (["qibla", "--", "0", "-181"], 2, "longitude"),
        (["qibla", "1e", "0"], 2, "numbers"),
        (["set-location", "--sytem", "1", "2"], 64, "unknown option '--sytem'"),
        (["set-location", "--", "-95", "2"], 2, "latitude"),
    ])
    func qiblactlNamesUnknownOptionsAndSeparatesUsageFromValues(_ arguments: [String], _ status: Int32, _ message: String) throws {
        let r = try run(product("qiblactl").path, arguments)
        #expect(r.status == status, "\(arguments): \(r.status) \(r.stderr)")
        #expect(r.stderr.contains(message), "\(arguments): \(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    @Test func qiblactlSetLocationSendsSouthernAndWesternCoordinates() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.start()
        for (arguments, longitude) in [(["set-location", "-33.45", "-70.66"], -70.66),
                                       (["set-location", "--", "-33.45", "-70.5"], -70.5),
                                       (["set-location", "--system", "--", "-1", "-2"], -2.0)] {
            let r = try run(product("qiblactl").path, arguments, environment: q.bus.environment)
            if arguments.contains("--system") {
                // Parsed (no usage error); the system bus of this machine has no qiblad or refuses us.
                #expect(r.status == 1, "\(r.stderr)")
                continue
            }
            #expect(r.status == 0, "\(arguments): \(r.stderr)")
            #expect(try q.string("LocationSource") == "manual")
            #expect(try q.double("Longitude") == longitude)
            #expect(try q.double("Latitude") < 0)
        }
    }

    @Test(arguments: [["--location", "-33.45,-70.66"], ["--location=-33.45,-70.66"]])
    func qibladTakesASouthernAndWesternLocation(_ arguments: [String]) throws {
        let q = try QibladHarness(arguments: ["--no-gpsd"] + arguments); defer { q.stop() }
        try q.start()
        #expect(try q.double("Latitude") == -33.45)
        #expect(try q.double("Longitude") == -70.66)
        #expect(abs(try q.double("QiblaBearing") - 81.83) < 0.01)
    }

    @Test(arguments: [
        (["--location", "-95,0"], Int32(2), "latitude"),
        (["--location", "-33.45"], 2, "LAT,LON"),
        (["--locaton", "-33.45,-70.66"], 64, "Unknown option '--locaton'"),
        (["--session", "--system"], 64, "exclude each other"),
    ])
    func qibladRefusesBadCommandLinesWithTheSharedStatuses(_ arguments: [String], _ status: Int32, _ message: String) throws {
        let bus = try PrivateBus()
        let r = try run(product("qiblad").path, ["--no-gpsd"] + arguments, environment: bus.environment)
        #expect(r.status == status, "\(arguments): \(r.status) \(r.stderr)")
        #expect(r.stderr.contains(message), "\(arguments): \(r.stderr)")
    }

    @Test(arguments: [["--lat", "-33.45", "--lon", "-70.66"], ["--lat=-33.45", "--lon=-70.66"],
                      ["--lat", "-33.45", "--lon=-70.66", "--heading-deg", "-20", "--hard-iron", "-1,2,3"]])
    func qiblaSimRunTakesSouthernAndWesternCoordinates(_ coordinates: [String]) throws {
        let root = try TemporaryDirectory(prefix: "qibla-sim-cli"); defer { root.remove() }
        let r = try run(product("qibla-sim").path,
                        ["run", "--root", root.path, "--phone", "pinephone", "--duration", "0"] + coordinates)
        #expect(r.status == 0, "\(coordinates): \(r.stderr)")
        // The scene was built for the south: the field points up (its down component is negative).
        let line = try #require(r.stdout.split(separator: "\n").first { $0.hasPrefix("earth field N,E,D") })
        let down = line.split(separator: ":")[1].split(separator: ";")[0].split(separator: ",")[2]
        #expect(down.trimmingCharacters(in: .whitespaces).hasPrefix("-"), "\(line)")
    }

    @Test(arguments: [
        (["--lat", "-33.45", "--lon", "-70.66"], Int32(1), "no qiblad at"),
        (["--lat=-33.45", "--lon=-70.66"], 1, "no qiblad at"),
        (["--lat", "-95", "--lon", "-70.66"], 2, "latitude"),
        (["--lat", "south", "--lon", "-70.66"], 2, "numbers"),
        (["--lat", "-33.45", "--lonn", "-70.66"], 64, "Unknown option '--lonn'"),
    ])
    func qiblaSimDemoParsesCoordinatesBeforeLookingForQiblad(_ arguments: [String], _ status: Int32, _ message: String) throws {
        // A missing qiblad is a runtime failure (1), found only once the command line was accepted.
        let r = try run(product("qibla-sim").path, ["demo", "--qiblad", "/nonexistent/qiblad"] + arguments)
        #expect(r.status == status, "\(arguments): \(r.status) \(r.stderr)")
        #expect(r.stderr.contains(message), "\(arguments): \(r.stderr)")
    }
}
