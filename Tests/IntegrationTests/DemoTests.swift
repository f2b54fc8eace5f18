// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import QiblaSimulator
import Testing
import TestSupport

/// `qibla-sim demo`: the production qiblad on a simulated phone, started from outside the daemon.
@Suite struct DemoTests {
    /// Command lines of running processes that mention `text` (leftover qiblad or dbus-daemon).
    static func processes(mentioning text: String) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { Int($0) != nil }.compactMap { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
            let line = String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\u{0}", with: " ")
            return line.contains(text) && !line.contains("busctl") ? line : nil
        }
    }

    /// `busctl --json=short get-property` of a Qibla1 property on `address`; NaN when unset or unreadable.
    static func doubleProperty(_ name: String, address: String) -> Double {
        guard let r = try? run("busctl", ["--address=\(address)", "--json=short", "get-property", QibladHarness.name,
                                          QibladHarness.path, QibladHarness.interface, name]),
              r.status == 0,
              let object = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
              let value = object["data"] as? NSNumber else { return .nan }
        return value.doubleValue
    }

    /// Claims the compass with `qiblactl monitor` (which calls ClaimCompass), then expects a finite
    /// heading that moves while the simulated person turns to find London's Qibla, and that is
    /// near the scene's truth: the demo prints the `CLOCK_MONOTONIC` instant of scene time 0, and
    /// its scene is `PersonSceneMotion(.seekQibla, …, seed: 0x5EED)`, so the test rebuilds it.
    static func expectLiveHeading(address: String, output: @escaping () -> String, log: @escaping () -> String) throws {
        let monitor = try ChildProcess(product("qiblactl").path, ["monitor"], environment: ["DBUS_SESSION_BUS_ADDRESS": address])
        defer { monitor.terminate() }
        var first = Double.nan
        #expect(waitUntil(timeout: 20) { first = doubleProperty("Heading", address: address); return first.isFinite },
                "no heading after ClaimCompass: \(monitor.standardError)\n\(log())")
        var second = first
        _ = waitUntil(timeout: 10) { second = doubleProperty("Heading", address: address); return abs(second - first) > 0.5 }
        #expect(second.isFinite && abs(second - first) > 0.5, "heading did not move: \(first)° then \(second)°")
        #expect(monitor.isRunning, "qiblactl monitor stopped early: \(monitor.standardError)")
        // Against the truth: the published heading (0.5 s moving average, signalled at 10 Hz)
        // matches the true heading of some instant of the last 1.5 s within 25°.
        let marker = "scene time 0 at CLOCK_MONOTONIC "
        let zero = try #require(output().split(separator: "\n").first { $0.contains(marker) }
            .flatMap { Double($0.components(separatedBy: marker)[1].split(separator: " ")[0]) }, "no scene-time line: \(output())")
        let london = GeodeticPosition(uncheckedLatitude: 51.5074, longitude: -0.1278)
        let qibla = try #require(Qibla().solve(from: london).greatCircleBearing.value)
        let scene = PersonSceneMotion(.seekQibla, targetHeadingDegrees: qibla, seed: 0x5EED, durationSeconds: 3600)
            .scene(from: Scene(earthFieldNEDMicrotesla: Vector3(19, 0, 45), trajectory: .flatOnTable(headingDegrees: 0)))
        var errors: [Double] = []
        for _ in 0..<5 {
            let heading = doubleProperty("Heading", address: address)
            let now = ProcessInfo.processInfo.systemUptime - zero  // CLOCK_MONOTONIC on Linux
            let error = stride(from: now - 1.5, through: now + 0.3, by: 0.02).compactMap { t in
                scene.expectedTrueHeading(at: t).map { abs(Angle.normalized180(heading - $0)) }
            }.min() ?? .infinity
            errors.append(error)
            usleep(300_000)
        }
        #expect((errors.max() ?? .infinity) < 25, "heading against the scene's truth: \(errors)°")
    }

    @Test func withoutASessionBusTheDemoStartsOneServesALiveHeadingAndCleansUp() throws {
        let tmp = try TemporaryDirectory(prefix: "qibla-demo-tmpdir"); defer { tmp.remove() }
        let demo = try ChildProcess(product("qibla-sim").path, ["demo"],
                                    environment: ["DBUS_SESSION_BUS_ADDRESS": "", "TMPDIR": tmp.path])
        defer { demo.terminate() }
        var address: String?
        _ = waitUntil(timeout: 30) {
            address = demo.standardOutput.split(separator: "\n")
                .first { $0.contains("export DBUS_SESSION_BUS_ADDRESS=") }
                .map { String($0.split(separator: "=", maxSplits: 1)[1]) }
            return address != nil || !demo.isRunning
        }
        let bus = try #require(address, "no export line: \(demo.standardOutput)\n\(demo.standardError)")
        #expect(bus.hasPrefix("unix:path=\(tmp.path)/qiblad-demo-"))
        let served = waitUntil(timeout: 20) {
            (try? run("busctl", ["--address=\(bus)", "status", QibladHarness.name]))?.status == 0
        }
        #expect(served, "qiblad did not take its name: \(demo.standardError)")
        try Self.expectLiveHeading(address: bus, output: { demo.standardOutput }) { demo.standardError }

        demo.send(SIGINT)
        #expect(demo.wait(timeout: 20) == 0, "\(demo.standardError)")
        #expect(demo.standardError.contains("shutting down"), "qiblad did not get the forwarded SIGINT: \(demo.standardError)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) == [], "the demo left files behind")
        #expect(Self.processes(mentioning: tmp.path).isEmpty, "left running: \(Self.processes(mentioning: tmp.path))")
    }

    @Test func onAnExistingSessionBusTheDemoUsesItAndStopsOnSIGTERM() throws {
        let bus = try PrivateBus()
        let tmp = try TemporaryDirectory(prefix: "qibla-demo-tmpdir"); defer { tmp.remove() }
        let demo = try ChildProcess(product("qibla-sim").path, ["demo", "--lat=-33.9249", "--lon=18.4241"],
                                    environment: bus.environment.merging(["TMPDIR": tmp.path]) { $1 })
        defer { demo.terminate() }
        let q = try QibladHarness(bus: bus)
        #expect(waitUntil(timeout: 20) { (try? q.nameHasOwner()) == true || !demo.isRunning }, "\(demo.standardError)")
        #expect(!demo.standardOutput.contains("export DBUS_SESSION_BUS_ADDRESS"))
        #expect(try q.string("LocationSource") == "manual")
        // Cape Town's Qibla: 23.35° great circle (qiblactl qibla -33.9249 18.4241).
        #expect(abs(try q.double("QiblaBearing") - 23.35) < 0.01)

        demo.send(SIGTERM)
        #expect(demo.wait(timeout: 20) == 0, "\(demo.standardError)")
        #expect(waitUntil(timeout: 5) { (try? q.nameHasOwner()) == false })
        #expect((try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) == [])
        #expect(Self.processes(mentioning: tmp.path).isEmpty)
    }
}
