// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

/// The D-Bus contract, exercised against the real qiblad binary on a private dbus-daemon.
@Suite(.serialized) struct DBusServiceTests {
    @Test func introspectionServesTheInterfaceXMLFromTheRepository() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.start()
        let r = try q.bus.busctl(["introspect", "--xml-interface", QibladHarness.name, QibladHarness.path])
        #expect(r.status == 0)
        let xml = try String(contentsOf: repositoryRoot.appendingPathComponent("dbus/io.github.qiblad.Qibla1.xml"), encoding: .utf8)
        // The whole <interface name="io.github.qiblad.Qibla1"> block of the file is in the reply, verbatim.
        let served = r.stdout
        let start = xml.range(of: "<interface name=\"io.github.qiblad.Qibla1\">")!
        let end = xml.range(of: "</interface>", range: start.upperBound..<xml.endIndex)!
        let block = String(xml[start.lowerBound..<end.upperBound])
        #expect(served.contains(block), "served XML differs from dbus/io.github.qiblad.Qibla1.xml")
        // busctl understands it: every property and method is listed with the documented type.
        let listing = try q.bus.busctl(["introspect", QibladHarness.name, QibladHarness.path, QibladHarness.interface]).stdout
        for line in ["QiblaBearing", "KaabaDistance", "LocationTimestamp", "ClaimCompass", "QiblaFor"] {
            #expect(listing.contains(".\(line)"), "\(line) missing from busctl introspect")
        }
        #expect(listing.range(of: #"\.QiblaFor\s+method\s+dd\s+dddd"#, options: .regularExpression) != nil)
    }

    /// Issue 26: a call on a parent path of the object (or anywhere else) is answered at once with
    /// an error; the caller never waits its whole timeout. Introspection of the parents still works.
    @Test func everyMethodCallOnEveryPathGetsAReply() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.start()
        for path in ["/", "/io", "/io/github", "/io/github/qiblad", "/nonexistent"] {
            let started = Date()
            let r = try q.bus.busctl(["call", "--timeout=3", QibladHarness.name, path, "org.freedesktop.DBus.Properties",
                                      "GetAll", "s", QibladHarness.interface])
            let seconds = Date().timeIntervalSince(started)
            #expect(r.status != 0, "\(path): \(r.stdout)")
            #expect(seconds < 2, "\(path): answered after \(seconds) s: \(r.stderr)")
            if path != "/nonexistent" {
                #expect(r.stderr.contains("no object at \(path)"), "\(path): \(r.stderr)")
            }
        }
        let wrongMember = try q.bus.busctl(["call", "--timeout=3", QibladHarness.name, "/io", "org.freedesktop.DBus.Introspectable", "Nope"])
        #expect(wrongMember.status != 0 && wrongMember.stderr.contains("no method 'Nope'"), "\(wrongMember.stderr)")
        let tree = try q.bus.busctl(["introspect", "--xml-interface", QibladHarness.name, "/io/github/qiblad"])
        #expect(tree.status == 0 && tree.stdout.contains("<node name=\"Qibla1\""), "\(tree.stdout)")
    }

    @Test func everyPropertyIsReadableWithItsDocumentedType() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.start()
        let expected: [String: String] = [
            "Latitude": "d", "Longitude": "d", "Altitude": "d", "LocationAccuracy": "d", "LocationTimestamp": "t",
            "LocationSource": "s", "QiblaBearing": "d", "QiblaBearingGeodesic": "d", "KaabaDistance": "d",
            "Declination": "d", "HasCompass": "b", "Heading": "d", "MagneticHeading": "d", "HeadingAxis": "s",
            "QiblaRelativeBearing": "d", "CompassAccuracy": "s", "HeadingError": "d", "CalibrationNeeded": "b",
            "CalibrationProgress": "d", "MagneticInterference": "b", "Version": "s",
            "CalibrationState": "s", "CalibrationResidual": "d", "HardIronOffsetMagnitude": "d",
        ]
        for (name, type) in expected {
            #expect(try q.property(name).type == type, "\(name)")
        }
        // With no location at all, the location group is unknown, not zero.
        #expect(try q.string("LocationSource") == "none")
        #expect(try q.double("QiblaBearing").isNaN)
        #expect(try q.uint64("LocationTimestamp") == 0)
        #expect(try q.string("CompassAccuracy") == "unknown")
        #expect(try q.string("HeadingAxis") == "none")
        #expect(try q.string("CalibrationState") == "collecting")
        #expect(try q.double("CalibrationResidual").isNaN)
        // Properties are read-only.
        let set = try q.bus.busctl(["set-property", QibladHarness.name, QibladHarness.path, QibladHarness.interface, "Latitude", "d", "1"])
        #expect(set.status != 0)
        #expect(set.stderr.contains("read-only") || set.stderr.contains("PropertyReadOnly"))
    }

    @Test func manualLocationChangeIsBroadcastToAnUnrelatedMonitor() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.start()
        let monitor = try q.monitor(); defer { monitor.terminate() }
        let r = try q.call("SetManualLocation", "dd", ["51.5074", "-0.1278"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(waitUntil(timeout: 5) { monitor.standardOutput.contains("QiblaBearing") })
        let out = monitor.standardOutput
        #expect(out.contains("PropertiesChanged"))
        #expect(out.contains("Latitude") && out.contains("LocationSource") && out.contains("\"manual\""))
        #expect(try q.string("LocationSource") == "manual")
        #expect(abs(try q.double("Latitude") - 51.5074) < 1e-9)
        // London's great-circle Qibla is 118.987° (reference: Tests/Reference/qibla-cities.csv).
        #expect(abs(try q.double("QiblaBearing") - 118.987) < 0.01)
        // Setting the same location again changes nothing, so nothing new is broadcast.
        let before = monitor.standardOutput.components(separatedBy: "PropertiesChanged").count
        _ = try q.call("SetManualLocation", "dd", ["51.5074", "-0.1278"])
        usleep(500_000)
        let after = monitor.standardOutput.components(separatedBy: "PropertiesChanged").count
        #expect(after - before <= 1, "only LocationTimestamp may change")
    }

    @Test func qiblaForMatchesPublishedValuesAndChangesNoState() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.start()
        // Adhan test-suite values (great circle, Kaaba 21.4225241, 39.8261818): Tests/Reference/qibla-cities.csv.
        for (lat, lon, bearing) in [("40.7128", "-74.0059", 58.4817), ("37.7749", "-122.4194", 18.8438), ("61.2181", "-149.9003", 350.883)] {
            let r = try q.call("QiblaFor", "dd", [lat, lon])
            #expect(r.status == 0, "\(r.stderr)")
            let v = doubles(fromBusctl: r.stdout)
            try #require(v.count == 4)
            #expect(abs(v[0] - bearing) < 0.001, "\(lat),\(lon): \(v[0])")
            #expect(v[1].isFinite && v[2] > 1_000_000 && v[3].isFinite)
        }
        #expect(try q.string("LocationSource") == "none")
        // At the Kaaba the bearing is undefined (NaN), the distance about zero.
        let kaaba = doubles(fromBusctl: try q.call("QiblaFor", "dd", ["21.4225241", "39.8261818"]).stdout)
        try #require(kaaba.count == 4)
        #expect(kaaba[0].isNaN && kaaba[1].isNaN && kaaba[2] < 1)
    }

    @Test func invalidArgumentsAreRejectedAndChangeNothing() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.start()
        #expect(try q.call("SetManualLocation", "dd", ["10", "20"]).status == 0)
        for (lat, lon) in [("nan", "0"), ("0", "nan"), ("inf", "0"), ("0", "-inf"), ("91", "0"), ("-90.0001", "0"), ("0", "-181"), ("0", "360")] {
            for method in ["SetManualLocation", "QiblaFor"] {
                let r = try q.call(method, "dd", [lat, lon])
                #expect(r.status != 0, "\(method)(\(lat), \(lon)) was accepted")
                #expect(r.stderr.contains("io.github.qiblad.Qibla1.Error.InvalidArgument") || r.stderr.contains("is outside") || r.stderr.contains("finite"),
                        "\(method)(\(lat), \(lon)): \(r.stderr)")
            }
        }
        let wrong = try q.call("SetManualLocation", "s", ["hello"])
        #expect(wrong.status != 0)
        #expect(wrong.stderr.contains("signature") || wrong.stderr.contains("InvalidArgs"), "\(wrong.stderr)")
        let unknown = try q.call("Frobnicate")
        #expect(unknown.status != 0)
        #expect(abs(try q.double("Latitude") - 10) < 1e-12)
        #expect(abs(try q.double("Longitude") - 20) < 1e-12)
        #expect(q.daemon?.isRunning == true)
    }

    @Test func claimsAreCountedPerClientAndDroppedWhenAClientDies() throws {
        let q = try QibladHarness(arguments: ["--no-gpsd", "--sysfs-root", "/nonexistent-qiblad-test"]); defer { q.stop() }
        try q.start()
        let env = q.bus.environment
        // Two long-lived clients hold claims (qiblactl monitor claims and keeps its connection).
        let a = try ChildProcess(product("qiblactl").path, ["monitor"], environment: env)
        let b = try ChildProcess(product("qiblactl").path, ["monitor"], environment: env)
        #expect(waitUntil(timeout: 10) { q.log.contains("first compass claim") })
        #expect(waitUntil(timeout: 10) { q.log.contains("2 holder(s)") })
        #expect(q.log.components(separatedBy: "first compass claim").count == 2, "the second claim must not restart sources")
        // SIGKILL: the client cannot release; the daemon must notice it left the bus.
        a.send(SIGKILL)
        #expect(waitUntil(timeout: 10) { q.log.contains("left the bus; dropping its compass claim") })
        #expect(!q.log.contains("last compass claim released"))
        // The last one releases cleanly on SIGINT (Ctrl-C).
        b.send(SIGINT)
        #expect(b.wait(timeout: 10) == 0)
        #expect(waitUntil(timeout: 10) { q.log.contains("last compass claim released") })
        // Releasing without a claim and claiming twice from one connection are no-ops.
        #expect(try q.call("ReleaseCompass").status == 0)
        #expect(q.daemon?.isRunning == true)
    }

    @Test func manualLocationSurvivesARestart() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.start()
        #expect(try q.call("SetManualLocation", "dd", ["-6.2088", "106.8456"]).status == 0)
        q.daemon?.send(SIGTERM)
        #expect(q.daemon?.wait(timeout: 10) == 0)
        try q.start()
        #expect(try q.string("LocationSource") == "manual")
        #expect(abs(try q.double("Latitude") - -6.2088) < 1e-12)
        #expect(abs(try q.double("Longitude") - 106.8456) < 1e-12)
        #expect(try q.call("ClearManualLocation").status == 0)
        #expect(try q.string("LocationSource") == "none")
        q.stop()
        try q.start()
        #expect(try q.string("LocationSource") == "none")
    }

    @Test func aCorruptStateFileIsSetAsideNotDeleted() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.stateDirectory.write("latitude = banana\nthis is not a state file\n", to: "manual-location")
        try q.start()
        #expect(try q.string("LocationSource") == "none")
        let files = try FileManager.default.contentsOfDirectory(atPath: q.stateDirectory.path)
        let aside = files.filter { $0.hasPrefix("manual-location.corrupt-") }
        #expect(aside.count == 1, "\(files)")
        if let name = aside.first {
            let kept = try String(contentsOfFile: q.stateDirectory.path + "/" + name, encoding: .utf8)
            #expect(kept.contains("banana"))
        }
        #expect(q.log.contains("state file rejected"))
        // And the daemon works: a new manual location is stored.
        #expect(try q.call("SetManualLocation", "dd", ["1", "2"]).status == 0)
    }

    @Test func aSecondDaemonOnTheSameBusExitsWithStatusOne() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.start()
        let second = try ChildProcess(product("qiblad").path, ["--session", "--no-gpsd", "--state-dir", q.stateDirectory.path + "/2"],
                                      environment: q.bus.environment)
        #expect(second.wait(timeout: 10) == 1)
        #expect(second.standardError.contains("already owned"))
        #expect(q.daemon?.isRunning == true)
    }

    @Test func theDaemonExitsNonZeroWhenTheBusDies() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.start()
        q.bus.kill()
        let status = q.daemon?.wait(timeout: 10)
        #expect(status != nil && status != 0)
        #expect(q.log.contains("connection was lost"))
    }

    @Test func sigtermReleasesTheNameAndExitsZero() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.start()
        q.daemon?.send(SIGTERM)
        #expect(q.daemon?.wait(timeout: 10) == 0)
        #expect(try q.nameHasOwner() == false)
    }
}
