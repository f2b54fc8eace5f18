// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

/// The systemd units as systemd reads them: `systemd-analyze verify` passes, and the exposure score
/// of `systemd-analyze security --offline=yes` stays below iio-sensor-proxy's 7.7 (Debian 12).
@Suite struct InstallUnitTests {
    /// (repository path, user unit?)
    static let units = [("systemd/qiblad.service", true), ("systemd/system/qiblad.service", false)]

    /// The unit with ExecStart pointing at the built qiblad (verify checks the executable exists),
    /// in a directory of its own so it keeps its name.
    static func prepared(_ relative: String, in directory: TemporaryDirectory) throws -> String {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent(relative), encoding: .utf8)
        #expect(text.contains("ExecStart=/usr/bin/qiblad "))
        try directory.write(text.replacingOccurrences(of: "/usr/bin/qiblad", with: product("qiblad").path), to: "qiblad.service")
        return directory.path + "/qiblad.service"
    }

    static func systemdAnalyze(_ arguments: [String], user: Bool, runtime: TemporaryDirectory) throws -> (status: Int32, stdout: String, stderr: String) {
        // A user manager is looked up through $XDG_RUNTIME_DIR even offline.
        try run("systemd-analyze", (user ? ["--user"] : []) + arguments, environment: ["XDG_RUNTIME_DIR": runtime.path])
    }

    @Test(arguments: units)
    func unitPassesVerifyAndScoresBelowIioSensorProxy(_ relative: String, _ user: Bool) throws {
        let directory = try TemporaryDirectory(prefix: "qiblad-unit"); defer { directory.remove() }
        let runtime = try TemporaryDirectory(prefix: "qiblad-runtime"); defer { runtime.remove() }
        _ = try run("/bin/chmod", ["0700", runtime.path])
        let unit = try Self.prepared(relative, in: directory)
        // Man pages are checked where they are installed (InstallTests); here only the unit itself.
        let verify = try Self.systemdAnalyze(["verify", "--man=no", unit], user: user, runtime: runtime)
        #expect(verify.status == 0 && verify.stderr.isEmpty, "\(relative): \(verify.stderr)")
        let security = try Self.systemdAnalyze(["security", "--offline=yes", unit], user: user, runtime: runtime)
        let line = try #require(security.stdout.split(separator: "\n").first { $0.contains("Overall exposure level") }, "\(security)")
        let score = try #require(line.split(separator: " ").compactMap { Double($0) }.first, "\(line)")
        #expect(score < 7.7, "\(relative): \(line)")
        #expect(score <= 2.5, "\(relative): \(line) (was 2.0 user, 1.3 system when written)")
    }

    @Test func userUnitKeepsStateWhereSystemdSaysAndSandboxesWithPrivateUsers() throws {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("systemd/qiblad.service"), encoding: .utf8)
        let lines = Set(text.split(separator: "\n").map(String.init))
        #expect(lines.contains("StateDirectory=qiblad"))
        #expect(lines.contains("PrivateUsers=yes"))
        #expect(!text.contains("%S"), "%S is the configuration directory in a user unit on systemd < 254")
        #expect(lines.contains("Type=notify") && lines.contains("NotifyAccess=main"))
    }

    @Test func qibladUsesStateDirectoryFromSystemd() throws {
        let bus = try PrivateBus()
        let state = try TemporaryDirectory(prefix: "qiblad-statedir"); defer { state.remove() }
        let daemon = try ChildProcess(product("qiblad").path,
                                      ["--session", "--no-gpsd", "--config", state.path + "/none.conf", "--location", "-33.45,-70.66"],
                                      environment: bus.environment.merging(["STATE_DIRECTORY": state.path + "/qiblad:/elsewhere"]) { $1 })
        defer { daemon.terminate() }
        #expect(waitUntil(timeout: 15) { daemon.standardError.contains("serving") }, "\(daemon.standardError)")
        let set = try bus.busctl(["call", "--", "io.github.qiblad.Qibla1", "/io/github/qiblad/Qibla1", "io.github.qiblad.Qibla1",
                                  "SetManualLocation", "dd", "-33.45", "-70.66"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: state.path + "/qiblad/manual-location") },
                "\((try? FileManager.default.subpathsOfDirectory(atPath: state.path)) ?? [])")
    }
}
