// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

/// `make install` into a temporary DESTDIR, and `make install-user` into a temporary home: every
/// file lands where its consumer looks (asked of the consumer where it can say: systemd-analyze
/// unit-paths, manpath, dbus-daemon's own configuration), and works there (man, bash, systemd-analyze
/// verify with the installed man pages, D-Bus activation from the installed service file).
@Suite struct InstallTests {
    /// The built products (the test builds in debug; `make` itself would build release).
    static var buildDirectory: String { product("qiblad").deletingLastPathComponent().path }

    static func make(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
        try run("/usr/bin/make", ["-C", repositoryRoot.path, "BUILDDIR=\(buildDirectory)"] + arguments, environment: environment, timeout: 60)
    }

    /// Where each consumer looks, for PREFIX=/usr.
    static let systemFiles: [(path: String, consumer: String)] = [
        ("/usr/bin/qiblad", "PATH"), ("/usr/bin/qiblactl", "PATH"),
        ("/usr/lib/systemd/user/qiblad.service", "systemd --user"),
        ("/usr/lib/systemd/user/qibla-remind.service", "systemd --user (off until enabled)"),
        ("/usr/lib/systemd/system/qiblad.service", "systemd"),
        ("/usr/share/dbus-1/services/io.github.qiblad.Qibla1.service", "dbus session activation"),
        ("/usr/share/dbus-1/system-services/io.github.qiblad.Qibla1.service", "dbus system activation"),
        ("/usr/share/dbus-1/system.d/io.github.qiblad.Qibla1.conf", "dbus system policy"),
        ("/usr/share/dbus-1/system.d/qiblad-iio-sensor-proxy.conf", "dbus system policy (iio-sensor-proxy's compass)"),
        ("/usr/share/polkit-1/rules.d/qiblad-iio-sensor-proxy.rules", "polkit (iio-sensor-proxy 3.5's claims)"),
        ("/usr/share/dbus-1/interfaces/io.github.qiblad.Qibla1.xml", "D-Bus interface files"),
        ("/usr/lib/udev/rules.d/70-qiblad-iio.rules", "udev"),
        ("/usr/lib/sysusers.d/qiblad.conf", "systemd-sysusers"),
        ("/usr/share/doc/qiblad/qiblad.conf", "example configuration"),
        ("/usr/share/man/man8/qiblad.8", "man"), ("/usr/share/man/man1/qiblactl.1", "man"),
        ("/usr/share/man/man5/qiblad.conf.5", "man"),
        ("/usr/share/bash-completion/completions/qiblactl", "bash-completion"),
        ("/usr/share/bash-completion/completions/qiblad", "bash-completion"),
        ("/usr/share/zsh/site-functions/_qiblactl", "zsh"), ("/usr/share/zsh/site-functions/_qiblad", "zsh"),
        ("/usr/share/fish/vendor_completions.d/qiblactl.fish", "fish"),
        ("/usr/share/fish/vendor_completions.d/qiblad.fish", "fish"),
    ] + ["ar", "bn", "fa", "id", "ms", "tr", "ur"].map { ("/usr/share/locale/\($0)/LC_MESSAGES/qiblactl.mo", "gettext (qiblactl's words)") }

    static func lines(_ text: String) -> Set<String> { Set(text.split(separator: "\n").map(String.init)) }

    @Test func installPutsEveryFileWhereItsConsumerLooksAndUninstallRemovesThem() throws {
        let destdir = try TemporaryDirectory(prefix: "qiblad-destdir"); defer { destdir.remove() }
        let install = try Self.make(["install", "PREFIX=/usr", "DESTDIR=\(destdir.path)"])
        #expect(install.status == 0, "\(install.stderr)")
        for (path, consumer) in Self.systemFiles {
            #expect(FileManager.default.fileExists(atPath: destdir.path + path), "\(consumer): \(path) missing")
        }
        let installed = try FileManager.default.subpathsOfDirectory(atPath: destdir.path)
            .filter { var d: ObjCBool = false; return FileManager.default.fileExists(atPath: destdir.path + "/" + $0, isDirectory: &d) && !d.boolValue }
        #expect(Set(installed.map { "/" + $0 }) == Set(Self.systemFiles.map(\.path)), "unexpected files: \(installed)")

        // systemd: the unit directories are on its search paths.
        let runtime = try TemporaryDirectory(prefix: "qiblad-runtime"); defer { runtime.remove() }
        _ = try run("/bin/chmod", ["0700", runtime.path])
        let systemPaths = Self.lines(try run("systemd-analyze", ["unit-paths"]).stdout)
        let userPaths = Self.lines(try run("systemd-analyze", ["--user", "unit-paths"], environment: ["XDG_RUNTIME_DIR": runtime.path]).stdout)
        #expect(systemPaths.contains("/usr/lib/systemd/system"), "\(systemPaths)")
        #expect(userPaths.contains("/usr/lib/systemd/user"), "\(userPaths)")

        // The installed units verify, and their Documentation= man pages are the installed ones.
        for unit in ["/usr/lib/systemd/system/qiblad.service", "/usr/lib/systemd/user/qiblad.service"] {
            let text = try String(contentsOfFile: destdir.path + unit, encoding: .utf8)
            #expect(text.contains("ExecStart=/usr/bin/qiblad "), "\(unit) runs the installed binary")
            let copy = try TemporaryDirectory(prefix: "qiblad-verify"); defer { copy.remove() }
            try copy.write(text.replacingOccurrences(of: "/usr/bin/qiblad", with: destdir.path + "/usr/bin/qiblad"), to: "qiblad.service")
            let user = unit.contains("/user/")
            let verify = try run("systemd-analyze", (user ? ["--user"] : []) + ["verify", copy.path + "/qiblad.service"],
                                 environment: ["XDG_RUNTIME_DIR": runtime.path, "MANPATH": destdir.path + "/usr/share/man"])
            #expect(verify.status == 0 && verify.stderr.isEmpty, "\(unit): \(verify.stderr)")
        }

        // D-Bus: the system bus reads system.d and system-services under /usr/share/dbus-1, the
        // session bus $XDG_DATA_DIRS/dbus-1/services (standard_session_servicedirs).
        let systemConf = try String(contentsOfFile: "/usr/share/dbus-1/system.conf", encoding: .utf8)
        #expect(systemConf.contains("<includedir>system.d</includedir>") && systemConf.contains("<standard_system_servicedirs/>"))
        let sessionConf = try String(contentsOfFile: "/usr/share/dbus-1/session.conf", encoding: .utf8)
        #expect(sessionConf.contains("<standard_session_servicedirs"))

        // man: /usr/share/man is on the manual path; each page renders without warnings; `man -w` finds them by section.
        #expect(try run("manpath", ["-g"]).stdout.contains("/usr/share/man"))
        for (name, section) in [("qiblad", "8"), ("qiblactl", "1"), ("qiblad.conf", "5")] {
            let page = destdir.path + "/usr/share/man/man\(section)/\(name).\(section)"
            let rendered = try run("man", ["--warnings", "-l", page], environment: ["MANWIDTH": "80", "LC_ALL": "C.UTF-8", "MANPAGER": "cat", "PAGER": "cat"])
            #expect(rendered.status == 0 && rendered.stderr.isEmpty, "\(page): \(rendered.stderr)")
            #expect(rendered.stdout.contains("NAME") && rendered.stdout.contains("SEE ALSO"), "\(page)")
            let found = try run("man", ["-w", section, name], environment: ["MANPATH": destdir.path + "/usr/share/man"])
            #expect(found.stdout.hasPrefix(destdir.path + "/usr/share/man/man\(section)/\(name).\(section)"), "\(found)")
        }
        let qibladPage = try run("man", ["-l", destdir.path + "/usr/share/man/man8/qiblad.8"], environment: ["MANWIDTH": "200", "MANPAGER": "cat"]).stdout
        #expect(qibladPage.contains("--location -33.9,18.4") || qibladPage.contains("‐‐location ‐33.9,18.4"), "\(qibladPage)")

        // Shells: bash parses the completion and it completes qiblactl's subcommands; zsh and fish
        // scripts name their command (zsh and fish are not installed here).
        let bashScript = destdir.path + "/usr/share/bash-completion/completions/qiblactl"
        let complete = try run("/bin/bash", ["-c", "source '\(bashScript)' && COMP_WORDS=(qiblactl set-) COMP_CWORD=1 COMP_LINE='qiblactl set-' COMP_POINT=13 && _qiblactl 2>/dev/null; printf '%s\\n' \"${COMPREPLY[@]}\""])
        #expect(complete.stdout.contains("set-location"), "\(complete)")
        #expect(try String(contentsOfFile: destdir.path + "/usr/share/zsh/site-functions/_qiblactl", encoding: .utf8).hasPrefix("#compdef qiblactl"))
        #expect(try String(contentsOfFile: destdir.path + "/usr/share/fish/vendor_completions.d/qiblactl.fish", encoding: .utf8).contains("complete -c 'qiblactl'"))

        let uninstall = try Self.make(["uninstall", "PREFIX=/usr", "DESTDIR=\(destdir.path)"])
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        let left = try FileManager.default.subpathsOfDirectory(atPath: destdir.path)
            .filter { var d: ObjCBool = false; return FileManager.default.fileExists(atPath: destdir.path + "/" + $0, isDirectory: &d) && !d.boolValue }
        #expect(left.isEmpty, "left behind: \(left)")
    }

    @Test func installUserNeedsNoRootAndDBusActivationStartsTheInstalledDaemon() throws {
        let home = try TemporaryDirectory(prefix: "qiblad-home"); defer { home.remove() }
        let environment = ["HOME": home.path, "XDG_CONFIG_HOME": home.path + "/.config", "XDG_DATA_HOME": home.path + "/.local/share"]
        let install = try Self.make(["install-user"], environment: environment)
        #expect(install.status == 0, "\(install.stderr)")
        let unit = home.path + "/.config/systemd/user/qiblad.service"
        let service = home.path + "/.local/share/dbus-1/services/io.github.qiblad.Qibla1.service"
        for path in [home.path + "/.local/bin/qiblad", home.path + "/.local/bin/qiblactl", unit, service,
                     home.path + "/.local/share/dbus-1/interfaces/io.github.qiblad.Qibla1.xml",
                     home.path + "/.local/share/man/man8/qiblad.8",
                     home.path + "/.local/share/bash-completion/completions/qiblactl",
                     home.path + "/.local/share/locale/ar/LC_MESSAGES/qiblactl.mo"] {
            #expect(FileManager.default.fileExists(atPath: path), "\(path) missing")
        }
        #expect(!FileManager.default.fileExists(atPath: home.path + "/.local/lib/systemd/system"), "no system unit in user mode")
        #expect(try String(contentsOfFile: unit, encoding: .utf8).contains("ExecStart=\(home.path)/.local/bin/qiblad --session"))
        // The user manager looks in ~/.config/systemd/user.
        let runtime = try TemporaryDirectory(prefix: "qiblad-runtime"); defer { runtime.remove() }
        _ = try run("/bin/chmod", ["0700", runtime.path])
        let paths = Self.lines(try run("systemd-analyze", ["--user", "unit-paths"],
                                       environment: environment.merging(["XDG_RUNTIME_DIR": runtime.path]) { $1 }).stdout)
        #expect(paths.contains(home.path + "/.config/systemd/user"), "\(paths)")

        // A private session bus with the installed service directory: the first call starts qiblad.
        let bus = try PrivateBus(extra: "<servicedir>\(home.path)/.local/share/dbus-1/services</servicedir>",
                                 environment: environment.merging(["XDG_STATE_HOME": home.path + "/.local/state"]) { $1 })
        let address = bus.address
        let call = try run(home.path + "/.local/bin/qiblactl", ["status", "--json"], environment: ["DBUS_SESSION_BUS_ADDRESS": address])
        #expect(call.status == 0, "\(call.stderr) \(bus.daemon.standardError)")
        #expect(call.stdout.contains("\"LocationSource\""), "\(call.stdout)")
        let owner = try run("busctl", ["--address=\(address)", "status", "io.github.qiblad.Qibla1"])
        #expect(owner.status == 0 && owner.stdout.contains("Exe=\(home.path)/.local/bin/qiblad"), "the installed qiblad owns the name: \(owner)")

        let uninstall = try Self.make(["uninstall-user"], environment: environment)
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        #expect(!FileManager.default.fileExists(atPath: unit) && !FileManager.default.fileExists(atPath: home.path + "/.local/bin/qiblad"))
    }
}
