// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import QiblaInterface
import Testing
import TestSupport

/// What feeds widgets and panels: `qiblactl monitor` (redrawn, lines, JSON Lines, across a
/// restart of qiblad), `status --claim`, `--json` on every command that prints, and `waybar`.
/// The real qiblad reads a simulated phone in London (Qibla 118.99°) turned to 30°.
@Suite struct QiblactlWidgetTests {
    static let london = "51.5074,-0.1278"

    /// qiblad reading a phone in London that points at 30° true; nobody claims the compass yet.
    static func rig() throws -> CompassRig {
        let position = try GeodeticPosition(latitudeDegrees: 51.5074, longitudeDegrees: -0.1278)
        return try CompassRig(scene: scene(at: position, orientation: .init(headingDegrees: 30)), location: london, claim: false)
    }

    /// qiblad in London with no magnetometer or accelerometer at all.
    static func daemonWithoutCompass() throws -> (QibladHarness, TemporaryDirectory) {
        let sysfs = try TemporaryDirectory(prefix: "qiblad-empty-sysfs")
        let q = try QibladHarness(arguments: ["--no-gpsd", "--sysfs-root", sysfs.path, "--location=\(london)"])
        try q.start()
        return (q, sysfs)
    }

    // MARK: monitor

    @Test func monitorJSONLinesOutliveARestartOfQiblad() throws {
        let rig = try Self.rig()
        let q = rig.daemon
        let monitor = try ChildProcess(product("qiblactl").path, ["monitor", "--json"], environment: q.bus.environment)
        defer { monitor.terminate() }
        func heading(_ o: [String: Any]) -> Double? { (o["properties"] as? [String: Any])?["Heading"] as? Double }

        #expect(waitUntil(timeout: 15) { jsonLines(monitor.standardOutput).contains { heading($0) != nil } },
                "no heading: \(monitor.standardOutput.suffix(2000)) \(monitor.standardError)")
        let firstOwner = try #require(jsonLines(monitor.standardOutput).first?["owner"] as? String)
        for line in jsonLines(monitor.standardOutput) {
            #expect(line["qiblad"] as? String == "running")
            #expect((line["properties"] as? [String: Any])?.count == QiblaProperty.allCases.count)
            #expect(!((line["changed"] as? [String]) ?? []).isEmpty)
            #expect(line["time_us"] is NSNumber)
        }

        // A crash: the monitor says it is waiting and keeps running.
        q.daemon?.send(SIGKILL)
        _ = q.daemon?.wait(timeout: 10)
        #expect(waitUntil(timeout: 10) { jsonLines(monitor.standardOutput).contains { $0["qiblad"] as? String == "waiting" } },
                "\(monitor.standardOutput.suffix(1000)) \(monitor.standardError)")
        let waiting = try #require(jsonLines(monitor.standardOutput).first { $0["qiblad"] as? String == "waiting" })
        #expect(waiting["owner"] is NSNull)
        #expect((waiting["properties"] as? [String: Any])?.values.allSatisfy { $0 is NSNull } == true)
        usleep(500_000)
        #expect(monitor.isRunning, "monitor exited when qiblad went away: \(monitor.standardError)")

        // A new qiblad: the monitor claims the compass again and shows its fresh values.
        try q.start()
        func fresh() -> [[String: Any]] {
            let lines = jsonLines(monitor.standardOutput)
            let after = lines.lastIndex { $0["qiblad"] as? String == "waiting" } ?? 0
            return lines[after...].filter { ($0["owner"] as? String).map { $0 != firstOwner } ?? false }
        }
        #expect(waitUntil(timeout: 15) { fresh().contains { heading($0) != nil } },
                "no heading from the new qiblad: \(monitor.standardOutput.suffix(2000)) \(monitor.standardError) \(q.log)")
        #expect(monitor.isRunning)
        #expect(q.log.contains("first compass claim"), "the new qiblad was claimed")

        monitor.send(SIGINT)
        #expect(monitor.wait(timeout: 10) == 0)
        #expect(waitUntil(timeout: 10) { q.log.contains("last compass claim released") })
    }

    @Test func monitorOnceAndCountStopAfterThatManyUpdates() throws {
        let rig = try Self.rig()
        let env = rig.daemon.bus.environment

        let once = try run(product("qiblactl").path, ["monitor", "--once", "--json"], environment: env)
        #expect(once.status == 0, "\(once.stderr)")
        let lines = jsonLines(once.stdout)
        #expect(lines.count == 1 && once.stdout.split(separator: "\n").count == 1, "\(once.stdout)")
        let properties = try #require(lines.first?["properties"] as? [String: Any])
        #expect(properties["LocationSource"] as? String == "manual")
        #expect(abs((properties["QiblaBearing"] as? Double ?? 0) - 118.987) < 0.01)

        let three = try run(product("qiblactl").path, ["monitor", "--json", "-n", "3"], environment: env)
        #expect(three.status == 0, "\(three.stderr)")
        #expect(jsonLines(three.stdout).count == 3 && three.stdout.split(separator: "\n").count == 3, "\(three.stdout)")

        // On a pipe without --json: one line per update, as before.
        let two = try run(product("qiblactl").path, ["monitor", "--count", "2"], environment: env)
        #expect(two.status == 0, "\(two.stderr)")
        let text = two.stdout.split(separator: "\n")
        #expect(text.count == 2 && text[0].hasPrefix("Qibla 118.99° ESE") && text[1].contains(" | Qibla 118.99° ESE"), "\(two.stdout)")

        for bad in [["monitor", "--once", "-n", "2"], ["monitor", "-n", "0"]] {
            #expect(try run(product("qiblactl").path, bad, environment: env).status == 64, "\(bad)")
        }
    }

    @Test func monitorRedrawsOneBlockInPlaceOnATerminal() throws {
        let rig = try Self.rig()
        // A pseudo-terminal from Python's pty module; its exit status is qiblactl's.
        let r = try run("/usr/bin/python3", ["-c", "import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)",
                                             product("qiblactl").path, "monitor", "-n", "6"],
                        environment: rig.daemon.bus.environment)
        #expect(r.status == 0, "\(r.stderr) \(r.stdout)")
        let out = r.stdout
        // Six updates of a four-line block: drawn once, then five times moved up four lines and redrawn.
        #expect(out.components(separatedBy: "\u{1B}[2K").count - 1 == 24, "\(out.debugDescription)")
        #expect(out.components(separatedBy: "\u{1B}[4F").count - 1 == 5, "\(out.debugDescription)")
        let visible = out.replacingOccurrences(of: "\u{1B}[2K", with: "").replacingOccurrences(of: "\u{1B}[4F", with: "")
        #expect(!visible.contains("\u{1B}"), "only CSI F and CSI 2K: \(out.debugDescription)")
        for line in visible.components(separatedBy: "\r\n") {
            #expect(line.count <= 80, "wider than 80 columns: \(line)")
        }
        #expect(visible.contains("Qibla 118.99° ESE · 4,795 km · manual"), "\(visible)")
        #expect(visible.contains("Heading ") && visible.contains("turn right"), "\(visible)")
    }

    // MARK: status --claim and --json

    @Test func statusClaimWaitsForAHeadingThenReleases() throws {
        let rig = try Self.rig()
        let q = rig.daemon
        let plain = try run(product("qiblactl").path, ["status", "--json"], environment: q.bus.environment)
        let unclaimed = try #require(try JSONSerialization.jsonObject(with: Data(plain.stdout.utf8)) as? [String: Any])
        #expect(unclaimed["Heading"] is NSNull, "no claim, no heading")

        let claimed = try run(product("qiblactl").path, ["status", "--claim", "--json", "--timeout", "15"], environment: q.bus.environment)
        #expect(claimed.status == 0, "\(claimed.stderr)")
        let o = try #require(try JSONSerialization.jsonObject(with: Data(claimed.stdout.utf8)) as? [String: Any])
        #expect(Set(o.keys) == Set(QiblaProperty.allCases.map(\.rawValue)))
        let heading = try #require(o["Heading"] as? Double, "\(claimed.stdout)")
        #expect(abs(heading - 30) < 10, "\(heading)")
        #expect(o["HasCompass"] as? Bool == true)
        #expect(o["LocationTimestamp"] is NSNumber)
        #expect(waitUntil(timeout: 10) { q.log.contains("last compass claim released") }, "\(q.log)")

        let text = try run(product("qiblactl").path, ["status", "--claim"], environment: q.bus.environment)
        #expect(text.status == 0 && text.stdout.contains("heading ") && text.stdout.contains("° true"), "\(text.stdout)")
    }

    @Test func statusClaimWithoutACompassGivesUpAtTheTimeoutAndWithoutADaemonSaysSo() throws {
        let (q, sysfs) = try Self.daemonWithoutCompass(); defer { q.stop(); sysfs.remove() }
        let r = try run(product("qiblactl").path, ["status", "--claim", "--timeout", "1", "--json"], environment: q.bus.environment)
        #expect(r.status == 0, "\(r.stderr)")
        let o = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(o["Heading"] is NSNull && o["HasCompass"] as? Bool == false, "\(r.stdout)")

        let bus = try PrivateBus()
        let none = try run(product("qiblactl").path, ["status", "--claim"], environment: bus.environment)
        #expect(none.status == 1 && none.stderr.contains("not running"), "\(none)")
    }

    @Test func everyCommandThatPrintsTakesJSONWithNumbersAndNullsOnly() throws {
        let (q, sysfs) = try Self.daemonWithoutCompass(); defer { q.stop(); sysfs.remove() }
        let commands: [[String]] = [
            ["status", "--json"],
            ["status", "--claim", "--timeout", "0.5", "--json"],
            ["set-location", "--json", "-33.9249", "18.4241"],
            ["clear-location", "--json"],
            ["qibla", "--json", "21.4225241", "39.8261818"],
            ["qibla", "--json", "-33.9", "-70.6"],
            ["sun", "--json", "-33.9", "18.4"],
            ["calibrate", "--json", "--timeout", "1"],
            ["monitor", "--json", "--once"],
        ]
        for command in commands {
            let r = try run(product("qiblactl").path, command, environment: q.bus.environment)
            #expect([0, 1, 3].contains(r.status), "\(command): \(r.stderr)")
            let lines = r.stdout.split(separator: "\n")
            #expect(!lines.isEmpty, "\(command) printed nothing")
            for line in lines {
                #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "\(command): not JSON: \(line)")
                #expect(line.range(of: #"\b(nan|inf|infinity)\b"#, options: [.regularExpression, .caseInsensitive]) == nil,
                        "\(command): \(line)")
            }
        }
        // And every command that prints says so in its help.
        for command in ["qibla", "status", "monitor", "calibrate", "sun", "set-location", "clear-location"] {
            #expect(try run(product("qiblactl").path, [command, "--help"]).stdout.contains("--json"), "\(command) --help")
        }
    }

    // MARK: waybar

    @Test func waybarPrintsThePanelJSONAndWaitsForQibladAcrossARestart() throws {
        let rig = try Self.rig()
        let q = rig.daemon
        let waybar = try ChildProcess(product("qiblactl").path, ["waybar"], environment: q.bus.environment)
        defer { waybar.terminate() }
        // And a monitor on a pipe, which says so in a line of its own.
        let monitor = try ChildProcess(product("qiblactl").path, ["monitor"], environment: q.bus.environment)
        defer { monitor.terminate() }
        let accuracies: Set<String> = ["unknown", "unreliable", "low", "medium", "high"]
        func withHeading() -> [[String: Any]] {
            jsonLines(waybar.standardOutput).filter { accuracies.contains($0["class"] as? String ?? "") && ($0["text"] as? String ?? "").contains("↻") }
        }
        #expect(waitUntil(timeout: 15) { !withHeading().isEmpty }, "\(waybar.standardOutput.suffix(2000)) \(waybar.standardError)")
        let module = try #require(withHeading().last)
        // Facing 30°, the Qibla at 119°: turn right about 89°.
        let text = try #require(module["text"] as? String)
        #expect(text.hasPrefix("🕋 ↻ ") && text.hasSuffix("°"), "\(text)")
        let degrees = try #require(Int(text.dropFirst(4).dropLast()), "\(text)")
        #expect(abs(degrees - 89) <= 10, "\(text)")
        let percentage = try #require(module["percentage"] as? Int)
        #expect(abs(percentage - (100 - degrees * 100 / 180)) <= 2, "\(module)")
        #expect(module["alt"] as? String == module["class"] as? String)
        let tooltip = try #require(module["tooltip"] as? String)
        #expect(tooltip.contains("Qibla 119.0° ESE") && tooltip.contains("Turn right") && tooltip.contains("Position: manual"), "\(tooltip)")
        // One line per change: never the same line twice in a row.
        let lines = waybar.standardOutput.split(separator: "\n")
        #expect(zip(lines, lines.dropFirst()).allSatisfy { $0 != $1 })

        q.daemon?.send(SIGTERM)
        _ = q.daemon?.wait(timeout: 10)
        #expect(waitUntil(timeout: 10) { jsonLines(waybar.standardOutput).last?["class"] as? String == "no-qiblad" })
        #expect(waybar.isRunning, "\(waybar.standardError)")
        #expect(waitUntil(timeout: 10) { monitor.standardOutput.hasSuffix("\nwaiting for qiblad on the bus\n") }, "\(monitor.standardOutput.suffix(500))")
        #expect(monitor.isRunning)
        let before = waybar.standardOutput.count
        try q.start()
        #expect(waitUntil(timeout: 15) {
            jsonLines(String(waybar.standardOutput.dropFirst(before))).contains { accuracies.contains($0["class"] as? String ?? "") }
        }, "\(waybar.standardOutput.suffix(1000)) \(waybar.standardError)")
        #expect(waitUntil(timeout: 10) {
            monitor.standardOutput.components(separatedBy: "waiting for qiblad on the bus\nQibla 118.99° ESE").count == 2
        }, "\(monitor.standardOutput.suffix(500))")
        waybar.send(SIGTERM)
        #expect(waybar.wait(timeout: 10) == 0)
    }

    @Test func waybarWithoutACompassAndInPlainTextForI3blocks() throws {
        let (q, sysfs) = try Self.daemonWithoutCompass(); defer { q.stop(); sysfs.remove() }
        let env = q.bus.environment
        let json = try ChildProcess(product("qiblactl").path, ["waybar"], environment: env)
        defer { json.terminate() }
        let plain = try ChildProcess(product("qiblactl").path, ["waybar", "--plain", "--ascii"], environment: env)
        defer { plain.terminate() }
        let custom = try ChildProcess(product("qiblactl").path, ["waybar", "--plain", "--format-no-heading", "{qibla}|{point}|{turn}|{source}|{x}"],
                                      environment: env)
        defer { custom.terminate() }
        #expect(waitUntil(timeout: 10) { jsonLines(json.standardOutput).contains { $0["class"] as? String == "no-compass" } },
                "\(json.standardOutput) \(json.standardError)")
        let module = try #require(jsonLines(json.standardOutput).last)
        #expect(module["text"] as? String == "🕋 119° ESE" && module["percentage"] as? Int == 0, "\(module)")
        #expect(waitUntil(timeout: 10) { plain.standardOutput.split(separator: "\n").last == "Q 119 ESE" }, "\(plain.standardOutput)")
        #expect(plain.standardOutput.unicodeScalars.allSatisfy { $0.isASCII })
        #expect(waitUntil(timeout: 10) { custom.standardOutput.split(separator: "\n").last == "119|ESE|?|manual|{x}" }, "\(custom.standardOutput)")
    }

    // MARK: The examples

    @Test func theWaybarAndI3blocksExamplesRunQiblactlWaybar() throws {
        let examples = repositoryRoot.appendingPathComponent("examples")
        let jsonc = try String(contentsOf: examples.appendingPathComponent("waybar-config.jsonc"), encoding: .utf8)
        let json = jsonc.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
        let config = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let module = try #require(config["custom/qibla"] as? [String: Any])
        #expect(module["exec"] as? String == "qiblactl waybar" && module["return-type"] as? String == "json")
        let i3blocks = try String(contentsOf: examples.appendingPathComponent("i3blocks.conf"), encoding: .utf8)
        #expect(i3blocks.contains("\ncommand=qiblactl waybar --plain\ninterval=persist\n"))
    }
}

/// The complete lines of `text` that parse as JSON objects.
func jsonLines(_ text: String) -> [[String: Any]] {
    text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
}
