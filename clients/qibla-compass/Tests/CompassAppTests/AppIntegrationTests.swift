// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

// The app against the real components, each started here: a private dbus-daemon, a qiblad reading a
// simulated phone (qibla-sim writing a fake IIO sysfs tree), and a headless X server (Xvfb) for GTK.
// qiblad and qibla-sim are the daemon package's debug builds (`swift test` at the repository root
// builds them first; QIBLAD_BUILD_DIR overrides where they are).

/// The daemon package's executables.
func daemonProduct(_ name: String) -> String {
    let directory = ProcessInfo.processInfo.environment["QIBLAD_BUILD_DIR"]
        ?? repositoryRoot.appendingPathComponent(".build/debug").path
    return directory + "/" + name
}

/// The app built by this package.
let compassApp = product("qibla-compass").path

/// London: the Qibla published by the Adhan test suites, 118.987° (great circle, Kaaba
/// 21.4225241, 39.8261818) — Tests/Reference/qibla-cities.csv, from shared/reference.
let london = (latitude: 51.5074, longitude: -0.1278, qibla: 118.987)

/// A place where the sun is high now: the longitude of local solar noon (within the equation of
/// time's quarter of an hour) at the latitude of the sun's declination, roughly (±23.4° over the
/// year, by the day of the year); and its antipode, where it is night.
func sunlitPlace(now: Date = Date()) -> (day: (Double, Double), night: (Double, Double)) {
    let seconds = now.timeIntervalSince1970
    let utcHours = (seconds / 3600).truncatingRemainder(dividingBy: 24)
    var longitude = (12 - utcHours) * 15
    if longitude < -180 { longitude += 360 }
    // Declination ≈ −23.44° cos(2π (d + 10) / 365.24), d the day of the year (the December solstice is on day −10).
    let day = Calendar(identifier: .gregorian).ordinality(of: .day, in: .year, for: now) ?? 1
    let declination = -23.44 * cos(2 * .pi * (Double(day) + 10) / 365.24)
    let antipodeLongitude = longitude > 0 ? longitude - 180 : longitude + 180
    return ((declination, longitude), (-declination, antipodeLongitude))
}

/// A headless X server on a display of its own.
final class HeadlessDisplay: @unchecked Sendable {
    let server: ChildProcess
    let display: String

    init() throws {
        var failures: [String] = []
        for _ in 0..<3 {
            // -displayfd: Xvfb picks a free display and prints its number once it accepts clients.
            let server = try ChildProcess("Xvfb", ["-displayfd", "1", "-screen", "0", "1600x1200x24", "-nolisten", "tcp"])
            guard waitUntil(timeout: 15, { server.standardOutput.contains("\n") }) else {
                failures.append("no display number: \(server.standardError)")
                server.terminate(grace: 1)
                continue
            }
            let display = ":" + server.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
            // Suites run side by side, each with its own server: a display number another server
            // was just leaving could be taken while its socket went away (once seen: the app
            // "cannot open display: :1" right after Xvfb gave :1). A client must connect.
            if let probe = try? run("xdotool", ["getdisplaygeometry"], environment: ["DISPLAY": display], timeout: 10),
               probe.status == 0 {
                (self.server, self.display) = (server, display)
                return
            }
            failures.append("\(display) accepted no client")
            server.terminate(grace: 1)
        }
        throw TestSupportError.startFailed("Xvfb: \(failures.joined(separator: "; "))")
    }

    deinit { server.terminate(grace: 1) }
}

/// Reads the accessibility bus as a screen reader does: `names` prints every node's name,
/// `describe NAME` the description of the first image of that name, `click NAME` clicks the first
/// button of that name (exit 1 when there is no such node).
let accessibilityScript = """
    import gi, sys
    gi.require_version('Atspi', '2.0')
    from gi.repository import Atspi
    nodes = []
    def walk(node, depth=0):
        if depth > 40: return
        nodes.append(node)
        for i in range(node.get_child_count()):
            child = node.get_child_at_index(i)
            if child is not None: walk(child, depth + 1)
    desktop = Atspi.get_desktop(0)
    for i in range(desktop.get_child_count()):
        walk(desktop.get_child_at_index(i))
    if sys.argv[1] == 'names':
        print('\\n'.join(n.get_name() or '' for n in nodes))
        sys.exit(0)
    if sys.argv[1] == 'describe':
        for n in nodes:
            if n.get_role() == Atspi.Role.IMAGE and n.get_name() == sys.argv[2]:
                print(n.get_description()); sys.exit(0)
        sys.exit(1)
    for n in nodes:
        # GTK 4.8 names a button by its label twice ("Cancel Cancel").
        name = n.get_name() or ''
        if n.get_role() == Atspi.Role.PUSH_BUTTON and sys.argv[2] in (name, name[:len(name) // 2]):
            n.do_action(0); sys.exit(0)
    sys.exit(1)
    """

/// A qiblad on its own bus, reading a simulated phone at a fixed true heading (or no sensors),
/// with an optional manual location; and the app started against it.
final class AppRig: @unchecked Sendable {
    let display: HeadlessDisplay
    let bus: PrivateBus
    let directory: TemporaryDirectory
    private(set) var simulator: ChildProcess?
    private(set) var daemon: ChildProcess?

    init(display: HeadlessDisplay) throws {
        self.display = display
        bus = try PrivateBus()
        directory = try TemporaryDirectory(prefix: "qibla-compass-test")
    }

    /// The accessibility bus (at-spi-bus-launcher on the rig's session bus), for tests that read
    /// the app's widgets as a screen reader does; stop it with ``stopAccessibilityBus(_:)``.
    private func startAccessibilityBus() throws -> ChildProcess {
        let launcher = try ChildProcess("/usr/libexec/at-spi-bus-launcher", ["--launch-immediately"], environment: bus.environment)
        guard waitUntil(timeout: 10, {
            (try? self.bus.busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                   "NameHasOwner", "s", "org.a11y.Bus"]).stdout.contains("true")) == true
        }) else {
            stopAccessibilityBus(launcher)
            throw TestSupportError.startFailed("no accessibility bus: \(launcher.standardError)")
        }
        return launcher
    }

    func stopAccessibilityBus(_ launcher: ChildProcess) {
        // The launcher's own dbus-daemon (the accessibility bus) goes with it.
        if let children = try? run("pkill", ["-TERM", "-P", "\(launcher.pid)"]) { _ = children }
        launcher.terminate()
    }

    /// The names of the accessible nodes of every application on the accessibility bus, one a line.
    func accessibleNames() -> String {
        (try? run("/usr/bin/python3", ["-c", accessibilityScript, "names"], environment: bus.environment, timeout: 30).stdout) ?? ""
    }

    /// The description of the first image named `name` on the accessibility bus (status 1 when
    /// there is none).
    func accessibleDescription(ofImage name: String) -> (status: Int32, stdout: String, stderr: String) {
        guard let result = try? run("/usr/bin/python3", ["-c", accessibilityScript, "describe", name],
                                    environment: bus.environment, timeout: 30) else { return (-1, "", "python3 did not run") }
        return (result.status, result.stdout, result.stderr)
    }

    /// Clicks the first button named `name` on the accessibility bus; false when there is none.
    func clickAccessibleButton(_ name: String) -> Bool {
        (try? run("/usr/bin/python3", ["-c", accessibilityScript, "click", name], environment: bus.environment, timeout: 30).status) == 0
    }

    /// The accessibility bus and the app (360 × 720, verbose) with GTK's AT-SPI bridge on; stop
    /// the app, then the bus with ``stopAccessibilityBus(_:)``.
    func startAccessibleApp() throws -> (launcher: ChildProcess, app: ChildProcess) {
        let launcher = try startAccessibilityBus()
        var environment = appEnvironment
        environment["NO_AT_BRIDGE"] = nil
        environment["GTK_A11Y"] = "atspi"
        do {
            return (launcher, try ChildProcess(compassApp, ["--size", "360x720", "--verbose"], environment: environment))
        } catch {
            stopAccessibilityBus(launcher)
            throw error
        }
    }

    /// Starts qibla-sim writing a still phone (a qibla-sim preset) at `headingDegrees` (true) at London.
    func startPhone(headingDegrees: Double, phone: String = "pinephone") throws {
        simulator = try ChildProcess(daemonProduct("qibla-sim"), [
            "run", "--root", directory.path + "/sys", "--phone", phone,
            "--lat", "\(london.latitude)", "--lon", "\(london.longitude)", "--heading-deg", "\(headingDegrees)",
            "--noise-ut", "0.3", "--rate", "20",
        ])
        guard waitUntil(timeout: 10, { FileManager.default.fileExists(atPath: directory.path + "/sys/bus/iio/devices") }) else {
            throw TestSupportError.startFailed("qibla-sim: \(simulator?.standardError ?? "")")
        }
    }

    /// Starts qiblad; `location` "LAT,LON" pins a manual location for the run; `environment`
    /// adds to or overrides qiblad's (a system bus of the test's: `DBUS_SYSTEM_BUS_ADDRESS`).
    func startDaemon(location: String?, environment: [String: String] = [:]) throws {
        try FileManager.default.createDirectory(atPath: directory.path + "/sys/bus/iio/devices", withIntermediateDirectories: true)
        let state = directory.path + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let child = try ChildProcess(daemonProduct("qiblad"), [
            "--session", "--no-gpsd", "--sysfs-root", directory.path + "/sys", "--state-dir", state,
            "--config", state + "/qiblad.conf", "--sysconfdir", state + "/etc", "--udev-data-dir", state + "/udev", "--verbose",
        ] + (location.map { ["--location=\($0)"] } ?? []),
            environment: bus.environment.merging([
                "XDG_CONFIG_HOME": state + "/config",
                "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/qibla-compass-tests-have-no-system-bus",
            ]) { $1 }.merging(environment) { $1 })
        daemon = child
        guard waitUntil(timeout: 15, { child.standardError.contains("serving io.github.qiblad.Qibla1") || !child.isRunning }),
              child.isRunning else {
            throw TestSupportError.startFailed("qiblad: \(child.standardError)")
        }
    }

    var daemonLog: String { daemon?.standardError ?? "" }

    /// Another client's claim (`qiblactl monitor`), so qiblad's properties stay live after the app quits.
    func holdClaim() throws -> ChildProcess {
        let monitor = try ChildProcess(daemonProduct("qiblactl"), ["monitor"], environment: bus.environment)
        guard waitUntil(timeout: 10, { daemonLog.contains("first compass claim") }) else {
            throw TestSupportError.startFailed("qiblactl monitor: \(monitor.standardError)")
        }
        return monitor
    }

    /// The app's environment: the private bus, the headless display, GTK's software renderer, no
    /// dconf or accessibility bus of the machine's.
    var appEnvironment: [String: String] {
        bus.environment.merging([
            "DISPLAY": display.display, "GDK_BACKEND": "x11", "GSK_RENDERER": "cairo", "GSETTINGS_BACKEND": "memory",
            "GTK_A11Y": "none", "NO_AT_BRIDGE": "1", "LANGUAGE": "en", "LC_ALL": translatedLocale,
            "XDG_CONFIG_HOME": directory.path + "/app-config", "XDG_CACHE_HOME": directory.path + "/app-cache",
        ]) { $1 }
    }

    /// Runs the app with --screenshot; returns what it printed (key=value lines) and the picture's path.
    /// `environment`: more of it, or instead of the X server's (a Wayland compositor's).
    func screenshot(size: String = "360x720", name: String = "shot", environment: [String: String] = [:]) throws -> (report: [String: String], path: String, status: Int32) {
        let path = directory.path + "/\(name).png"
        let result = try run(compassApp, ["--screenshot", path, "--size", size, "--verbose"],
                             environment: appEnvironment.merging(environment) { $1 }, timeout: 60)
        var report: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { report[String(parts[0])] = String(parts[1]) }
        }
        if result.status != 0 { print("qibla-compass: \(result.stdout)\n\(result.stderr)") }
        return (report, path, result.status)
    }

    /// A property read with busctl (an unrelated client), as JSON data.
    func property(_ name: String) throws -> Any? {
        let r = try bus.busctl(["--json=short", "get-property", "io.github.qiblad.Qibla1", "/io/github/qiblad/Qibla1",
                                "io.github.qiblad.Qibla1", name])
        guard r.status == 0, let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] else { return nil }
        return object["data"]
    }

    deinit {
        daemon?.terminate()
        simulator?.terminate()
        directory.remove()
    }
}

/// "Qibla 24° to your left" → −24, "… right" → +24, "Facing the Qibla…" → 0.
func signedTurn(fromAccessible text: String) -> Double? {
    if text.hasPrefix("Facing the Qibla") { return 0 }
    let digits = text.split(separator: " ").first { $0.hasSuffix("°") }.flatMap { Double($0.dropLast()) }
    guard let digits else { return nil }
    if text.hasSuffix("to your left") { return -digits }
    if text.hasSuffix("to your right") { return digits }
    return nil
}

@Suite(.serialized) struct AppIntegrationTests {
    /// The needle points where qiblad says (±2°) at several headings, north is drawn where the
    /// heading puts it, and the accessible description says the same turn.
    @Test(arguments: [40.0, 118.0, 200.0, 330.0])
    func theNeedlePointsToTheQibla(headingDegrees: Double) throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        try rig.startPhone(headingDegrees: headingDegrees)
        try rig.startDaemon(location: "\(london.latitude),\(london.longitude)")
        let monitor = try rig.holdClaim()
        defer { monitor.terminate() }
        let (report, path, status) = try rig.screenshot()
        #expect(status == 0)
        #expect(report["page"] == "compass")
        // What qiblad publishes now, read by another client: the heading the app had to draw.
        let heading = try #require(rig.property("Heading") as? Double)
        let appHeading = try #require(Double(report["heading"] ?? ""))
        #expect(abs(angleDifference(heading, appHeading)) < 1.0, "the app drew heading \(appHeading)°, qiblad now says \(heading)°")
        // The daemon itself is close to the simulated truth (a sanity check of the scene, not of the app).
        #expect(abs(angleDifference(heading, headingDegrees)) < 6, "qiblad heading \(heading)° for a phone at \(headingDegrees)°")

        let shot = try Screenshot(path: path)
        let dial = try #require(shot.dial(), "no dial hub in the screenshot")
        let needle = try #require(dial.needleDegrees, "no needle (\(dial.needlePixels) pixels)")
        let north = try #require(dial.northDegrees, "no north (\(dial.northPixels) pixels)")
        let expectedNeedle = london.qibla - appHeading
        print("heading \(headingDegrees)°: qiblad \(heading)°, needle drawn at \(needle)° (expected \(expectedNeedle)°, off by \(angleDifference(needle, expectedNeedle))°), north at \(north)° (off by \(angleDifference(north, -appHeading))°), says \(report["accessible"] ?? "")")
        #expect(abs(angleDifference(needle, expectedNeedle)) <= 2,
                "needle drawn at \(needle)°, Qibla − heading = \(expectedNeedle)° (heading \(appHeading)°)")
        #expect(abs(angleDifference(north, -appHeading)) <= 2, "north drawn at \(north)°, expected \(-appHeading)°")

        let spoken = try #require(signedTurn(fromAccessible: report["accessible"] ?? ""), "accessible: \(report["accessible"] ?? "")")
        if report["facing"] == "true" {
            #expect(abs(angleDifference(needle, 0)) <= 10)
        } else {
            #expect(abs(angleDifference(needle, spoken)) <= 2.5, "says \(spoken)°, the needle is drawn at \(needle)°")
        }
    }

    /// A screen reader hears the needle: the dial is an image named "Qibla compass dial" on the
    /// accessibility bus (AT-SPI, at-spi-bus-launcher on the test's session bus), and its
    /// description says the turn qiblad publishes.
    @Test func aScreenReaderHearsTheTurn() throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        try rig.startPhone(headingDegrees: 60)
        try rig.startDaemon(location: "\(london.latitude),\(london.longitude)")
        let (launcher, app) = try rig.startAccessibleApp()
        defer { app.terminate(); rig.stopAccessibilityBus(launcher) }
        #expect(waitUntil(timeout: 15) { app.standardError.contains("showing compass") }, "\(app.standardError)")
        #expect(waitUntil(timeout: 10) { (try? rig.property("QiblaRelativeBearing") as? Double) != nil })
        usleep(1_500_000)   // the smoothing window fills; the phone is still

        let heard = rig.accessibleDescription(ofImage: "Qibla compass dial")
        #expect(heard.status == 0, "no dial on the accessibility bus: \(heard.stderr)")
        let description = heard.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let spoken = try #require(signedTurn(fromAccessible: description), "description: '\(description)'")
        let published = try #require(rig.property("QiblaRelativeBearing") as? Double)
        #expect(abs(spoken - published) <= 1.5, "the screen reader hears \(spoken)°, qiblad publishes \(published)°")
        print("screen reader: '\(description)'; QiblaRelativeBearing \(published)°")
    }

    /// The main menu's About: libadwaita's About window (1.2–1.4) or dialog (1.5 and later, where
    /// the window is deprecated; `qc_about_present`) over the app's window, with the app's name,
    /// version and developers on the accessibility bus.
    @Test func theAboutWindowOpensFromTheMenu() throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        let (launcher, app) = try rig.startAccessibleApp()
        defer { app.terminate(); rig.stopAccessibilityBus(launcher) }
        #expect(waitUntil(timeout: 15) { app.standardError.contains("showing no-daemon") }, "\(app.standardError)")
        #expect(!rig.accessibleNames().contains("The qiblad developers"), "an About before it was asked for")
        let activated = try rig.bus.busctl(["call", "io.github.qiblad.Compass", "/io/github/qiblad/Compass", "org.gtk.Actions",
                                            "Activate", "sava{sv}", "about", "0", "0"])
        #expect(activated.status == 0, "\(activated.stderr)")
        var names = ""
        let shown = waitUntil(timeout: 10) {
            names = rig.accessibleNames()
            return names.contains("The qiblad developers")
        }
        #expect(shown, "no About on the accessibility bus; names: \(names.split(separator: "\n").filter { !$0.isEmpty }.prefix(40))")
        // The version the About shows is the one `--version` prints ("qibla-compass 0.2.0").
        let version = try run(compassApp, ["--version"]).stdout.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        #expect(!version.isEmpty && names.split(separator: "\n").contains { $0.contains(version) }, "no version '\(version)' in the About")
        #expect(!app.standardError.contains("CRITICAL"), "\(app.standardError)")
    }

    /// The sun check's question (libadwaita's message dialog, 1.2–1.4, or alert dialog, 1.5 and
    /// later; `qc_question_new`): offered by the compass page's button while the sun is up, its
    /// responses on the accessibility bus, and Cancel closes it without a check.
    @Test func theSunCheckAsksAndCancelCloses() throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        let day = sunlitPlace().day
        try rig.startPhone(headingDegrees: 10)
        try rig.startDaemon(location: "\(day.0),\(day.1)")
        let (launcher, app) = try rig.startAccessibleApp()
        defer { app.terminate(); rig.stopAccessibilityBus(launcher) }
        #expect(waitUntil(timeout: 15) { app.standardError.contains("showing compass") }, "\(app.standardError)")
        let responses = ["Check at the sun", "Check along the shadow", "Cancel"]
        #expect(!rig.accessibleNames().contains(responses[0]), "a question before it was asked")
        #expect(waitUntil(timeout: 10) { rig.clickAccessibleButton("Check the needle with the sun") }, "no sun check button; names: \(rig.accessibleNames())")
        var seen = ""
        #expect(waitUntil(timeout: 10) {
            seen = rig.accessibleNames()
            return responses.allSatisfy { seen.contains($0) }
        }, "the question's responses are not all there: \(seen)")
        #expect(rig.clickAccessibleButton("Cancel"))
        #expect(waitUntil(timeout: 10) { !rig.accessibleNames().contains(responses[0]) }, "the question stayed after Cancel")
        #expect(!rig.daemonLog.contains("sun check ("), "a check after Cancel: \(rig.daemonLog)")
        #expect(!app.standardError.contains("CRITICAL"), "\(app.standardError)")
    }

    /// Facing the Qibla: the distinct state, the needle straight up, and a vibration asked of
    /// feedbackd (the call seen on the bus by `busctl monitor`; no feedbackd runs here).
    @Test func facingTheQiblaIsItsOwnState() throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        try rig.startPhone(headingDegrees: london.qibla)
        try rig.startDaemon(location: "\(london.latitude),\(london.longitude)")
        let monitor = try ChildProcess("busctl", ["--address=\(rig.bus.address)", "monitor", "--match",
                                                  "type='method_call',interface='org.sigxcpu.Feedback'"])
        defer { monitor.terminate() }
        usleep(300_000)
        let (report, path, status) = try rig.screenshot()
        #expect(waitUntil(timeout: 3) { monitor.standardOutput.contains("TriggerFeedback") }, "no feedback asked: \(monitor.standardOutput)")
        #expect(monitor.standardOutput.contains("io.github.qiblad.Compass"))
        #expect(status == 0)
        #expect(report["facing"] == "true", "\(report)")
        #expect(report["instruction"] == "Facing the Qibla")
        #expect(report["accessible"]?.hasPrefix("Facing the Qibla") == true)
        let dial = try #require(try Screenshot(path: path).dial())
        let needle = try #require(dial.needleDegrees)
        #expect(abs(angleDifference(needle, 0)) <= 3, "needle at \(needle)°")
    }

    /// The check against the sun is offered where the sun is up, not where it is night.
    @Test func theSunCheckIsOfferedWhileTheSunIsUp() throws {
        let places = sunlitPlace()
        for (place, expected) in [(places.day, "shown"), (places.night, "hidden")] {
            let display = try HeadlessDisplay()
            let rig = try AppRig(display: display)
            try rig.startPhone(headingDegrees: 10)
            try rig.startDaemon(location: "\(place.0),\(place.1)")
            let (report, _, status) = try rig.screenshot()
            #expect(status == 0)
            #expect(report["page"] == "compass")
            #expect(report["sun-check"] == expected, "at \(place): \(report)")
        }
    }

    /// No qiblad on the bus: the page that says how to start it.
    @Test func withoutQibladTheAppSaysHowToStartIt() throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        let (report, path, status) = try rig.screenshot()
        #expect(status == 0)
        #expect(report["page"] == "no-daemon")
        #expect(try Screenshot(path: path).dial() == nil, "a dial without a daemon")
    }

    /// A compass but no position: the manual entry page.
    @Test func withoutAPositionTheAppAsksForOne() throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        try rig.startPhone(headingDegrees: 10)
        try rig.startDaemon(location: nil)
        let (report, path, status) = try rig.screenshot()
        #expect(status == 0)
        #expect(report["page"] == "no-position")
        try keepForReadme(path, name: "no-position")
        #expect(report["accessible"] == "Qibla unknown: no position")
    }

    /// A position but no sensors: the bearing as a number and the sun as the compass.
    @Test func withoutACompassTheSunShowsTheWay() throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        try rig.startDaemon(location: "\(london.latitude),\(london.longitude)")
        let (report, path, status) = try rig.screenshot()
        #expect(status == 0)
        #expect(report["page"] == "no-compass")
        #expect(report["accessible"] == "Qibla 119° ESE from true north; no heading")
        #expect(try Screenshot(path: path).dial() == nil, "a dial without a compass")
        try keepForReadme(path, name: "no-compass")
        #expect(try rig.property("HasCompass") as? Bool == false)
    }

    /// In French the compass points come translated (QiblaCore names them in English): from
    /// Jakarta the Qibla is 295° WNW, "295° ONO".
    @Test func compassPointsAreTranslated() throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        try rig.startDaemon(location: "-6.2,106.85")
        let locale = rig.directory.path + "/locale"
        try FileManager.default.createDirectory(atPath: locale + "/fr/LC_MESSAGES", withIntermediateDirectories: true)
        let compiled = try run("msgfmt", ["-o", locale + "/fr/LC_MESSAGES/qibla-compass.mo",
                                          repositoryRoot.appendingPathComponent("clients/qibla-compass/po/fr.po").path])
        #expect(compiled.status == 0, "\(compiled.stderr)")
        let (report, _, status) = try rig.screenshot(environment: ["LANGUAGE": "fr", "QIBLA_COMPASS_LOCALEDIR": locale])
        #expect(status == 0)
        #expect(report["page"] == "no-compass")
        #expect(report["accessible"]?.hasPrefix("Qibla à 295° ONO par rapport au nord géographique") == true, "\(report)")
        #expect(report["header"] == "près de Jakarta", "\(report)")
    }

    /// Typing a position (as a person types it: a minus sign, a space) reaches SetManualLocation;
    /// the menu forgets it and resets the calibration.
    @Test func typedPositionReachesTheDaemon() throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        try rig.startPhone(headingDegrees: 10)
        try rig.startDaemon(location: nil)
        let app = try ChildProcess(compassApp, ["--size", "360x720", "--verbose"], environment: rig.appEnvironment)
        defer { app.terminate() }
        let window = try #require(findWindow(pid: app.pid, display: display.display), "no window: \(app.standardError)")
        #expect(waitUntil(timeout: 10) { app.standardError.contains("showing no-position") }, "\(app.standardError)")
        let xdotool = ["DISPLAY": display.display]
        // The entry has the focus on the no-position page; give the window X's input focus.
        try run("xdotool", ["windowfocus", "--sync", window], environment: xdotool)
        try run("xdotool", ["type", "--delay", "30", "--", "-33.9 18.4"], environment: xdotool)
        try run("xdotool", ["key", "Return"], environment: xdotool)
        let manual = waitUntil(timeout: 10) { (try? rig.property("LocationSource") as? String) == "manual" }
        #expect(manual, "LocationSource stayed \(String(describing: try? rig.property("LocationSource"))); app: \(app.standardError)")
        // busctl prints 20 significant digits, which JSONSerialization reads back to within an ulp or two.
        #expect(abs((try rig.property("Latitude") as? Double ?? .nan) - -33.9) < 1e-9)
        #expect(abs((try rig.property("Longitude") as? Double ?? .nan) - 18.4) < 1e-9)
        #expect(app.standardError.contains("SetManualLocation -33.9 18.4"))

        // The main menu's actions, activated as a menu item would (org.gtk.Actions, which
        // GApplication exports on the session bus): forget the typed position, calibrate again.
        func activate(_ action: String) throws -> Int32 {
            try rig.bus.busctl(["call", "io.github.qiblad.Compass", "/io/github/qiblad/Compass", "org.gtk.Actions",
                                "Activate", "sava{sv}", action, "0", "0"]).status
        }
        #expect(try activate("forget-location") == 0)
        #expect(waitUntil(timeout: 5) { (try? rig.property("LocationSource") as? String) != "manual" },
                "still manual after forget-location: \(app.standardError)")
        #expect(try activate("reset-calibration") == 0)
        #expect(waitUntil(timeout: 5) { rig.daemonLog.contains("reset; learning it again") }, "no reset: \(app.standardError)")
    }

    /// The claim follows visibility: held while the window is shown, released when it is
    /// minimised (an X unmap of a shown window is GDK's "minimised" without a window manager) or
    /// the screen locks, taken again when it is back, and dropped by qiblad when the app quits.
    @Test func theClaimFollowsTheWindow() throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        try rig.startPhone(headingDegrees: 10)
        try rig.startDaemon(location: "\(london.latitude),\(london.longitude)")
        func claims() -> Int { rig.daemonLog.components(separatedBy: "first compass claim").count - 1 }
        func releases() -> Int { rig.daemonLog.components(separatedBy: "last compass claim released").count - 1 }
        let app = try ChildProcess(compassApp, ["--size", "360x720", "--verbose"], environment: rig.appEnvironment)
        defer { app.terminate() }
        #expect(waitUntil(timeout: 15) { claims() == 1 }, "no claim: \(rig.daemonLog)")
        #expect(waitUntil(timeout: 5) { (try? rig.property("HasCompass") as? Bool) == true })
        let window = try #require(findWindow(pid: app.pid, display: display.display))
        let xdotool = ["DISPLAY": display.display]
        try run("xdotool", ["windowunmap", "--sync", window], environment: xdotool)
        #expect(waitUntil(timeout: 5) { releases() == 1 }, "not released when minimised: \(app.standardError)")
        #expect(rig.daemonLog.contains("stopping sensors"), "sensors still on")
        try run("xdotool", ["windowmap", "--sync", window], environment: xdotool)
        #expect(waitUntil(timeout: 5) { claims() == 2 }, "not claimed again when shown: \(app.standardError)")
        // The screen locks and unlocks (org.gnome.ScreenSaver's signal, as Phosh and GNOME send it).
        _ = try rig.bus.busctl(["emit", "/org/gnome/ScreenSaver", "org.gnome.ScreenSaver", "ActiveChanged", "b", "true"])
        #expect(waitUntil(timeout: 5) { releases() == 2 }, "not released when the screen locked: \(app.standardError)")
        _ = try rig.bus.busctl(["emit", "/org/gnome/ScreenSaver", "org.gnome.ScreenSaver", "ActiveChanged", "b", "false"])
        #expect(waitUntil(timeout: 5) { claims() == 3 }, "not claimed again when unlocked: \(app.standardError)")
        app.terminate()
        #expect(waitUntil(timeout: 5) { releases() == 3 }, "claim kept after the app quit")
    }

    /// KDE's locker (org.freedesktop.ScreenSaver, at /ScreenSaver as Plasma sends it) and logind's
    /// LockedHint (python-dbusmock's logind on a private system bus, the app's session named by
    /// XDG_SESSION_ID) each release the claim; it comes back only when no locker says locked.
    @Test func theClaimFollowsEveryScreenLocker() throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        try rig.startPhone(headingDegrees: 10)
        try rig.startDaemon(location: "\(london.latitude),\(london.longitude)")
        let system = try PrivateBus(type: "system")
        let logind = try ChildProcess("/usr/bin/python3", ["-m", "dbusmock", "--system", "--template", "logind"],
                                      environment: ["DBUS_SYSTEM_BUS_ADDRESS": system.address])
        defer { logind.terminate() }
        #expect(waitUntil(timeout: 15) { logind.standardOutput.contains("org.freedesktop.login1") || logind.standardError.contains("org.freedesktop.login1")
            || ((try? system.busctl(["status", "org.freedesktop.login1"]).status) == 0) }, "no logind mock: \(logind.standardError)")
        let added = try system.busctl(["call", "org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.DBus.Mock",
                                       "AddSession", "ssusb", "c7", "seat0", "0", "root", "true"])
        #expect(added.status == 0, "\(added.stderr)")
        func claims() -> Int { rig.daemonLog.components(separatedBy: "first compass claim").count - 1 }
        func releases() -> Int { rig.daemonLog.components(separatedBy: "last compass claim released").count - 1 }
        func lockedHint(_ on: Bool) throws {
            let r = try system.busctl(["call", "org.freedesktop.login1", "/org/freedesktop/login1/session/c7",
                                       "org.freedesktop.login1.Session", "SetLockedHint", "b", on ? "true" : "false"])
            #expect(r.status == 0, "\(r.stderr)")
        }
        let app = try ChildProcess(compassApp, ["--size", "360x720", "--verbose"], environment: rig.appEnvironment.merging([
            "DBUS_SYSTEM_BUS_ADDRESS": system.address, "XDG_SESSION_ID": "c7"]) { $1 })
        defer { app.terminate() }
        #expect(waitUntil(timeout: 15) { claims() == 1 && app.standardError.contains("following LockedHint") }, "no claim: \(app.standardError)")
        try lockedHint(true)
        #expect(waitUntil(timeout: 5) { releases() == 1 }, "not released when logind said locked: \(app.standardError)")
        _ = try rig.bus.busctl(["emit", "/ScreenSaver", "org.freedesktop.ScreenSaver", "ActiveChanged", "b", "true"])
        try lockedHint(false)
        #expect(waitUntil(timeout: 5) { app.standardError.contains("logind says the screen is unlocked") })
        usleep(500_000)
        #expect(claims() == 1, "claimed while KDE's locker still said locked: \(app.standardError)")
        _ = try rig.bus.busctl(["emit", "/ScreenSaver", "org.freedesktop.ScreenSaver", "ActiveChanged", "b", "false"])
        #expect(waitUntil(timeout: 5) { claims() == 2 }, "not claimed again once every locker said unlocked: \(app.standardError)")
    }

    /// The README's screenshots at a phone's and a desktop's size (written into screenshots/
    /// when QIBLA_COMPASS_UPDATE_SCREENSHOTS=1).
    @Test func screenshotsAtPhoneAndDesktopSize() throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        try rig.startPhone(headingDegrees: 100)
        try rig.startDaemon(location: "\(london.latitude),\(london.longitude)")
        for (name, size) in [("phone", "360x720"), ("desktop", "1000x640")] {
            let (report, path, status) = try rig.screenshot(size: size, name: name)
            #expect(status == 0)
            #expect(report["page"] == "compass")
            let shot = try Screenshot(path: path)
            let dial = try #require(shot.dial())
            if name == "desktop" {
                // Wide: the dial sits in the left half, the cards beside it.
                #expect(dial.centre.0 < Double(shot.width) / 2, "dial centre \(dial.centre) in a \(shot.width)-wide window")
            } else {
                #expect(abs(dial.centre.0 - Double(shot.width) / 2) < 20, "dial not centred: \(dial.centre)")
            }
            try keepForReadme(path, name: name)
        }
    }
}

/// With QIBLA_COMPASS_UPDATE_SCREENSHOTS=1, copies a screenshot to clients/qibla-compass/screenshots/NAME.png (README's pictures).
func keepForReadme(_ path: String, name: String) throws {
    guard ProcessInfo.processInfo.environment["QIBLA_COMPASS_UPDATE_SCREENSHOTS"] == "1" else { return }
    let target = repositoryRoot.appendingPathComponent("clients/qibla-compass/screenshots/\(name).png").path
    try? FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try? FileManager.default.removeItem(atPath: target)
    try FileManager.default.copyItem(atPath: path, toPath: target)
}

/// The X window id of the app's toplevel (GTK sets _NET_WM_PID), once it is mapped.
func findWindow(pid: Int32, display: String) -> String? {
    var found: String?
    _ = waitUntil(timeout: 15) {
        guard let r = try? run("xdotool", ["search", "--onlyvisible", "--pid", "\(pid)"], environment: ["DISPLAY": display], timeout: 5) else { return false }
        found = r.stdout.split(separator: "\n").last.map(String.init)
        return found != nil
    }
    return found
}
