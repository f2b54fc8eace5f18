// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaSimulator
import Testing
import TestSupport

/// Issue 26: rough edges seen trying qiblad as a new user would, each through the real binaries.
@Suite(.serialized) struct RoughEdgesTests {
    static func rig() throws -> CompassRig {
        try CompassRig(scene: Scene(position: CalibrationIntegrationTests.london, decimalYear: CalibrationIntegrationTests.now,
                                    trajectory: .constant(.init(headingDegrees: 30))),
                       location: "51.5074,-0.1278", claim: false)
    }

    static func infoLines(_ log: String) -> [Substring] {
        log.split(separator: "\n").filter { !$0.contains("debug") }
    }

    /// `qiblactl claim -- COMMAND` holds a claim exactly while COMMAND runs and passes its status on.
    @Test func claimHoldsTheCompassWhileACommandRuns() throws {
        let rig = try Self.rig()
        let q = rig.daemon
        let qiblactl = product("qiblactl").path
        // The command sees the sensors on: HasCompass becomes true while it runs.
        let script = "for i in $(seq 1 50); do busctl --user get-property \(QibladHarness.name) \(QibladHarness.path) "
            + "\(QibladHarness.interface) HasCompass | grep -q true && exit 7; sleep 0.1; done; exit 1"
        let held = try run(qiblactl, ["claim", "--", "sh", "-c", script], environment: q.bus.environment)
        #expect(held.status == 7, "the compass came on for the command, and its status came back: \(held) \(q.log)")
        #expect(waitUntil(timeout: 5) { q.log.contains("last compass claim released") }, "\(q.log)")
        #expect(q.log.contains("first compass claim"))
        let missing = try run(qiblactl, ["claim", "--", "/nonexistent/command"], environment: q.bus.environment)
        #expect(missing.status == 127, "\(missing)")
        let bare = try run(qiblactl, ["claim"], environment: q.bus.environment)
        #expect(bare.status == 64 && bare.stderr.contains("after --"), "\(bare)")
        let help = try run(qiblactl, ["claim", "--help"])
        #expect(help.stdout.contains("busctl") && help.stdout.contains("qiblactl monitor"), "\(help.stdout)")
    }

    /// A client that claims and releases again and again (a panel on every screen-on) costs at most
    /// the claim's and the release's line each time: the device facts are logged once a run.
    @Test func repeatedClaimsDoNotRepeatTheDeviceFacts() throws {
        let rig = try Self.rig()
        let q = rig.daemon
        let qiblactl = product("qiblactl").path
        func cycle() throws {
            let r = try run(qiblactl, ["claim", "--", "sleep", "1.2"], environment: q.bus.environment)
            #expect(r.status == 0, "\(r)")
            #expect(waitUntil(timeout: 5) { q.log.components(separatedBy: "last compass claim released").count > released }, "\(q.log)")
            released = q.log.components(separatedBy: "last compass claim released").count
        }
        var released = 1
        try cycle()
        let first = Self.infoLines(q.log).count
        for _ in 0..<5 { try cycle() }
        let lines = Self.infoLines(q.log)
        let perClaim = Double(lines.count - first) / 5
        print("rough edges: \(perClaim) log lines per claim after the first (first claim: \(first) lines in all)")
        #expect(perClaim <= 2, "\(lines.suffix(lines.count - first).joined(separator: "\n"))")
        #expect(lines.filter { $0.contains("mount matrix") }.count == 2, "the two mount matrices, once each: \(q.log)")
    }
}

/// Issue 26: every command's and subcommand's help, at 80 columns, is wrapped by the argument
/// parser: no line longer than 80 columns (but the parser's own USAGE line) and no paragraph broken twice (a full line, then a
/// couple of words, then the paragraph going on) by line breaks written into the text.
@Suite struct HelpWrappingTests {
    static let commands: [(String, [String])] = [
        ("qiblactl", []), ("qiblactl", ["qibla"]), ("qiblactl", ["status"]), ("qiblactl", ["monitor"]),
        ("qiblactl", ["waybar"]), ("qiblactl", ["calibrate"]), ("qiblactl", ["claim"]), ("qiblactl", ["sun"]),
        ("qiblactl", ["set-location"]), ("qiblactl", ["clear-location"]), ("qiblad", []),
        ("qibla-sim", []), ("qibla-sim", ["create"]), ("qibla-sim", ["run"]), ("qibla-sim", ["demo"]),
    ]

    /// Lines that continue a paragraph after a line cut short: (line above, short line, line below).
    static func raggedLines(_ text: String, width: Int) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func indent(_ s: String) -> Int { s.prefix { $0 == " " }.count }
        var ragged: [String] = []
        guard lines.count >= 3 else { return [] }
        for i in 1..<(lines.count - 1) {
            let (above, line, below) = (lines[i - 1], lines[i], lines[i + 1])
            guard !above.isEmpty, !line.isEmpty, !below.isEmpty,
                  indent(above) == indent(line), indent(line) == indent(below) else { continue }
            if above.count >= width * 3 / 4, line.count < width / 3, !line.hasSuffix(":"), !line.hasSuffix(".") {
                ragged.append("\(above)⏎\(line)⏎\(below)")
            }
        }
        return ragged
    }

    @Test(arguments: commands.indices)
    func helpWrapsAtEightyColumns(index: Int) throws {
        let (tool, arguments) = Self.commands[index]
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = "80"
        let r = try run(product(tool).path, arguments + ["--help"], environment: environment)
        #expect(r.status == 0, "\(tool) \(arguments): \(r.stderr)")
        // The USAGE line is the argument parser's own (it does not wrap it).
        let long = r.stdout.split(separator: "\n").filter { $0.count > 80 && !$0.hasPrefix("USAGE:") }
        #expect(long.isEmpty, "\(tool) \(arguments.joined(separator: " ")) --help: lines over 80 columns:\n\(long.joined(separator: "\n"))")
        let ragged = Self.raggedLines(r.stdout, width: 80)
        #expect(ragged.isEmpty, "\(tool) \(arguments.joined(separator: " ")) --help: paragraphs broken twice:\n\(ragged.joined(separator: "\n"))")
    }
}
