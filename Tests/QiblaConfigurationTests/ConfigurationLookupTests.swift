// SPDX-License-Identifier: Apache-2.0
// Where the configuration comes from (/etc/qiblad, then the user's file or --config), how the files
// merge (per key), and the run-policy keys (always-on, idle-exit).
import Foundation
import Logging
import QiblaConfiguration
import QiblaDaemon
import QiblaState
import Testing
import TestSupport

@Suite struct ConfigurationLookupTests {
    @Test func theSystemFileComesFirstThenTheUserFile() {
        let xdg = ConfigurationFiles(environment: ["XDG_CONFIG_HOME": "/home/a/.cfg", "HOME": "/home/a"])
        #expect(xdg.paths == ["/etc/qiblad/qiblad.conf", "/home/a/.cfg/qiblad/qiblad.conf"])
        let home = ConfigurationFiles(environment: ["HOME": "/home/a"])
        #expect(home.paths == ["/etc/qiblad/qiblad.conf", "/home/a/.config/qiblad/qiblad.conf"])
        // A relative XDG_CONFIG_HOME is invalid (XDG base directory specification) and ignored.
        let relative = ConfigurationFiles(environment: ["XDG_CONFIG_HOME": "cfg", "HOME": "/home/a"])
        #expect(relative.paths == ["/etc/qiblad/qiblad.conf", "/home/a/.config/qiblad/qiblad.conf"])
    }

    @Test func configReplacesTheUserFileAndSysconfdirMovesTheSystemFile() {
        let explicit = ConfigurationFiles(environment: ["HOME": "/home/a"], explicit: "/tmp/test.conf")
        #expect(explicit.paths == ["/etc/qiblad/qiblad.conf", "/tmp/test.conf"])
        let packaged = ConfigurationFiles(environment: ["HOME": "/home/a"], systemDirectory: "/usr/local/etc")
        #expect(packaged.paths == ["/usr/local/etc/qiblad/qiblad.conf", "/home/a/.config/qiblad/qiblad.conf"])
        // The system unit's --config /etc/qiblad/qiblad.conf: read once.
        let systemUnit = ConfigurationFiles(environment: [:], explicit: "/etc/qiblad/qiblad.conf")
        #expect(systemUnit.paths == ["/etc/qiblad/qiblad.conf"])
    }

    @Test func laterFilesWinKeyByKey() throws {
        let (config, warnings) = try DaemonConfiguration.parse(layers: [
            (file: "/etc/qiblad/qiblad.conf", text: "bearing-model = geodesic\nmax-signal-rate = 5\ngpsd = none\nfix-timeout = 30\nalways-on = true\n"),
            (file: "/home/a/.config/qiblad/qiblad.conf", text: "max-signal-rate = 2\ngpsd = gps.local:3000\nalways-on = false\n"),
        ])
        #expect(warnings.isEmpty)
        #expect(config.model.qibla.bearingModel == .geodesic, "a key only the system file sets is kept")
        #expect(config.publishing.maxSignalRateHertz == 2, "the user's value wins")
        #expect(config.gpsd?.host == "gps.local" && config.gpsd?.port == 3000, "the user turns gpsd back on")
        #expect(config.gpsd?.fixTimeoutSeconds == 30, "the system's fix-timeout applies to the user's gpsd")
        #expect(config.model.run.alwaysOn == false)
        #expect(config.sensors.sampleRateHertz == 20, "a key set nowhere keeps its default")
    }

    @Test func errorsAndWarningsNameTheFile() throws {
        let (_, warnings) = try DaemonConfiguration.parse(layers: [
            (file: "/etc/qiblad/qiblad.conf", text: "\nfuture-key = 1\n"), (file: "/home/a/q.conf", text: ""),
        ])
        #expect(warnings == ["/etc/qiblad/qiblad.conf: line 2: unknown key 'future-key' ignored"])
        #expect {
            _ = try DaemonConfiguration.parse(layers: [(file: "/etc/qiblad/qiblad.conf", text: "gpsd = none"),
                                                      (file: "/home/a/q.conf", text: "#\nidle-exit = soon")])
        } throws: { error in
            (error as? ConfigurationError)?.description == "/home/a/q.conf: line 2: idle-exit: 'soon' is not a number in 0.0...604800.0"
        }
        #expect {
            _ = try DaemonConfiguration.parse(layers: [(file: "/etc/qiblad/qiblad.conf", text: "no equals here")])
        } throws: { error in
            (error as? ConfigurationError)?.description.hasPrefix("/etc/qiblad/qiblad.conf: line 1: expected") == true
        }
    }

    @Test func theLoaderMergesTheFilesThatExist() throws {
        let directory = try TemporaryDirectory(prefix: "qiblad-config-lookup"); defer { directory.remove() }
        try directory.write("bearing-model = geodesic\nsample-rate = 10\n", to: "etc/qiblad/qiblad.conf")
        try directory.write("sample-rate = 40\n", to: "home/.config/qiblad/qiblad.conf")
        let environment = ["HOME": directory.path + "/home"]
        let logger = Logger(label: "test")
        let both = try ConfigurationLoader.load(ConfigurationFiles(environment: environment, systemDirectory: directory.path + "/etc"),
                                                logger: logger).get()
        #expect(both.model.qibla.bearingModel == .geodesic && both.sensors.sampleRateHertz == 40)
        // Only the system file (the user has none).
        let systemOnly = try ConfigurationLoader.load(
            ConfigurationFiles(environment: ["HOME": directory.path + "/nobody"], systemDirectory: directory.path + "/etc"), logger: logger).get()
        #expect(systemOnly.sensors.sampleRateHertz == 10)
        // Neither: the defaults.
        let none = try ConfigurationLoader.load(
            ConfigurationFiles(environment: ["HOME": directory.path + "/nobody"], systemDirectory: directory.path + "/none"), logger: logger).get()
        #expect(none == DaemonConfiguration())
        // A bad system file is an error naming it, even when the user's file is fine.
        try directory.write("sample-rate = 1000\n", to: "etc/qiblad/qiblad.conf")
        let bad = ConfigurationLoader.load(ConfigurationFiles(environment: environment, systemDirectory: directory.path + "/etc"), logger: logger)
        guard case .failure(let problem) = bad else { Issue.record("a bad system file was accepted"); return }
        #expect(problem.message.contains(directory.path + "/etc/qiblad/qiblad.conf: line 1: sample-rate"), "\(problem)")
    }
}

@Suite struct RunPolicyConfigurationTests {
    @Test func alwaysOnAndIdleExitAreOffByDefault() throws {
        let (config, _) = try DaemonConfiguration.parse("")
        #expect(config.model.run == RunPolicy())
        #expect(!config.model.run.alwaysOn && config.model.run.idleExitSeconds == nil)
    }

    @Test(arguments: [("true", true), ("yes", true), ("on", true), ("1", true), ("TRUE", true),
                      ("false", false), ("no", false), ("off", false), ("0", false)])
    func alwaysOnIsABoolean(text: String, value: Bool) throws {
        let (config, warnings) = try DaemonConfiguration.parse("always-on = \(text)")
        #expect(warnings.isEmpty && config.model.run.alwaysOn == value)
    }

    @Test(arguments: [("30", 30.0 as Double?), ("1", 1), ("0.5", 0.5), ("0", nil), ("off", nil), ("never", nil), ("none", nil)])
    func idleExitIsSecondsOrOff(text: String, seconds: Double?) throws {
        let (config, warnings) = try DaemonConfiguration.parse("idle-exit = \(text)")
        #expect(warnings.isEmpty && config.model.run.idleExitSeconds == seconds)
    }

    @Test(arguments: ["always-on = maybe", "always-on =", "idle-exit = -1", "idle-exit = soon", "idle-exit = 1e9", "idle-exit = nan"])
    func badRunPolicyValuesAreErrors(text: String) {
        #expect(throws: ConfigurationError.self) { try DaemonConfiguration.parse(text) }
    }
}
