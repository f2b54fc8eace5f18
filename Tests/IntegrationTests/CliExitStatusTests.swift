// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaInterface
import Testing
import TestSupport

/// One table of exit statuses, the same in the code, every `--help`, the README and the man pages.
@Suite struct CliExitStatusTests {
    @Test(arguments: ["qiblad", "qiblactl", "qibla-sim"])
    func helpPrintsTheSharedTable(_ executable: String) throws {
        let r = try run(product(executable).path, ["--help"])
        #expect(r.status == 0)
        let help = r.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        for status in ExitStatus.allCases {
            #expect(help.contains("\(status.rawValue)  \(status.meaning)"), "\(executable) --help lacks \(status)")
        }
    }

    @Test func readmeAndManPagesListEveryStatus() throws {
        let readme = try String(contentsOf: repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let manual = try String(contentsOf: repositoryRoot.appendingPathComponent("man/qiblactl.1"), encoding: .utf8)
        for status in ExitStatus.allCases {
            #expect(readme.contains("| \(status.rawValue) |"), "README lacks \(status)")
            #expect(manual.contains(".B \(status.rawValue)\n"), "qiblactl(1) lacks \(status)")
        }
    }

    @Test func theThreeExecutablesShareOneVersion() throws {
        for executable in ["qiblad", "qiblactl", "qibla-sim"] {
            let r = try run(product(executable).path, ["--version"])
            #expect(r.status == 0 && r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == qiblaVersion, "\(executable): \(r)")
        }
    }
}
