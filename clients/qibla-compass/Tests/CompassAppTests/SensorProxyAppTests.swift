// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import Testing
import TestSupport

// Issue 31's app test: a Qualcomm-style phone (qibla-sim's preset: an accelerometer only, no raw
// magnetometer) whose heading comes from Debian's real iio-sensor-proxy under umockdev on a private
// system bus (Tests/TestSupport/SensorProxyRig.swift, shared with the daemon's
// SensorProxyIntegrationTests), read by the real qiblad, shown by the app on Xvfb.

/// The app's accessible objects on the accessibility bus (AT-SPI: at-spi-bus-launcher on the
/// test's session bus), one "name<TAB>description" line each, read by pyatspi's walk of the tree
/// while the app runs without `--screenshot` (so it stays up to be read).
func accessibleTexts(of rig: AppRig, until done: ([String]) -> Bool) throws -> [String] {
    let launcher = try ChildProcess("/usr/libexec/at-spi-bus-launcher", ["--launch-immediately"], environment: rig.bus.environment)
    defer {
        // The launcher's own dbus-daemon (the accessibility bus) goes with it.
        _ = try? run("pkill", ["-TERM", "-P", "\(launcher.pid)"])
        launcher.terminate()
    }
    guard waitUntil(timeout: 10, {
        (try? rig.bus.busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                              "NameHasOwner", "s", "org.a11y.Bus"]).stdout.contains("true")) == true
    }) else { throw TestSupportError.startFailed("at-spi-bus-launcher: \(launcher.standardError)") }
    var environment = rig.appEnvironment
    environment["NO_AT_BRIDGE"] = nil
    environment["GTK_A11Y"] = "atspi"
    let app = try ChildProcess(compassApp, ["--size", "360x720", "--verbose"], environment: environment)
    defer { app.terminate() }
    let script = """
        import gi, sys
        gi.require_version('Atspi', '2.0')
        from gi.repository import Atspi
        def walk(node, depth):
            if node is None or depth > 60: return
            print((node.get_name() or '').replace('\\n', ' ') + '\\t' + (node.get_description() or '').replace('\\n', ' '))
            for i in range(node.get_child_count()):
                walk(node.get_child_at_index(i), depth + 1)
        desktop = Atspi.get_desktop(0)
        for i in range(desktop.get_child_count()):
            walk(desktop.get_child_at_index(i), 0)
        """
    var lines: [String] = []
    _ = waitUntil(timeout: 30) {
        guard let r = try? run("/usr/bin/python3", ["-c", script], environment: rig.bus.environment, timeout: 30) else { return false }
        lines = r.stdout.split(separator: "\n").map(String.init)
        if done(lines) { return true }
        usleep(500_000)
        return false
    }
    if !done(lines) { print("qibla-compass: \(app.standardError)") }
    return lines
}

@Suite(.serialized, .enabled(if: SensorProxyRig.available, "Debian's iio-sensor-proxy is not installed"))
struct SensorProxyAppTests {
    /// The rigs of one test: iio-sensor-proxy (with qiblad's policy drop-in for this user), the
    /// headless display, and qiblad on a simulated Qualcomm phone at London whose system bus is
    /// iio-sensor-proxy's; a `qiblactl monitor` claim keeps qiblad's heading live between app runs.
    final class Setup {
        let proxy: SensorProxyRig
        let display: HeadlessDisplay
        let rig: AppRig
        private(set) var monitor: ChildProcess?

        init(sensorHubRawHeading: Int32? = nil) throws {
            proxy = try SensorProxyRig(dropIn: true)
            try proxy.startProxy(sensorHubRawHeading: sensorHubRawHeading)
            display = try HeadlessDisplay()
            rig = try AppRig(display: display)
            try rig.startPhone(headingDegrees: 0, phone: "qualcomm")
            try rig.startDaemon(location: "\(london.latitude),\(london.longitude)", environment: proxy.environment)
            monitor = try rig.holdClaim()
            guard waitUntil(timeout: 20, { (try? rig.property("HeadingSource") as? String) == "iio-sensor-proxy" }) else {
                throw TestSupportError.startFailed("qiblad never took iio-sensor-proxy's heading: \(rig.daemonLog)\n\(proxy.proxy?.standardError.suffix(2000) ?? "")")
            }
        }

        func double(_ name: String) -> Double { ((try? rig.property(name)) as? Double) ?? .nan }

        deinit { monitor?.terminate() }
    }

    /// A tablet-style HID sensor hub behind iio-sensor-proxy (its IIO buffer compass) holds a
    /// still heading, so the picture can be held against what qiblad publishes: the compass page,
    /// its needle where `QiblaRelativeBearing` says (±2°, read from the pixels), north where the
    /// heading puts it, the accessible description saying the same turn. The README's picture.
    @Test func theCompassPageDrawsIioSensorProxysHeading() throws {
        // 2345 × 0.1 (the channel's scale) = 234.5° magnetic.
        let setup = try Setup(sensorHubRawHeading: 2345)
        let rig = setup.rig
        #expect(waitUntil(timeout: 20) { abs(setup.double("MagneticHeading") - 234.5) < 1e-3 }, "\(rig.daemonLog)")
        #expect(try rig.property("HasCompass") as? Bool == true)
        let (report, path, status) = try rig.screenshot(name: "iio-sensor-proxy")
        #expect(status == 0)
        #expect(report["page"] == "compass", "\(report)")
        // What qiblad publishes, read by another client after the picture (the heading holds still).
        let heading = setup.double("Heading"), relative = setup.double("QiblaRelativeBearing")
        #expect(heading.isFinite && relative.isFinite)
        #expect(try rig.property("HeadingSource") as? String == "iio-sensor-proxy")
        let appHeading = try #require(Double(report["heading"] ?? ""))
        #expect(abs(angleDifference(appHeading, heading)) < 0.01, "the app drew heading \(appHeading)°, qiblad says \(heading)°")

        let dial = try #require(try Screenshot(path: path).dial(), "no dial in the screenshot: \(report)")
        let needle = try #require(dial.needleDegrees, "no needle (\(dial.needlePixels) pixels)")
        let north = try #require(dial.northDegrees, "no north (\(dial.northPixels) pixels)")
        print("iio-sensor-proxy: heading \(heading)°, QiblaRelativeBearing \(relative)°, needle drawn at \(needle)° (off by \(angleDifference(needle, relative))°), north at \(north)° (off by \(angleDifference(north, -heading))°), says \(report["accessible"] ?? "")")
        #expect(abs(angleDifference(needle, relative)) <= 2, "needle drawn at \(needle)°, QiblaRelativeBearing \(relative)°")
        #expect(abs(angleDifference(north, -heading)) <= 2, "north drawn at \(north)°, heading \(heading)°")
        let spoken = try #require(signedTurn(fromAccessible: report["accessible"] ?? ""), "accessible: \(report["accessible"] ?? "")")
        #expect(abs(angleDifference(spoken, relative)) <= 1.5, "says \(spoken)°, qiblad publishes \(relative)°")
        try keepForReadme(path, name: "iio-sensor-proxy")
    }

    /// iio-sensor-proxy's fake compass (`FAKE_COMPASS`, turning 10° a second): the compass page,
    /// not the no-compass page; the heading it drew is one the fake compass gave (magnetic, a
    /// multiple of 10°, plus London's declination); and the page names the source,
    /// "Compass: iio-sensor-proxy", read from the accessibility tree.
    @Test func theCompassPageNamesIioSensorProxyAsTheSource() throws {
        let setup = try Setup()
        let rig = setup.rig
        let (report, path, status) = try rig.screenshot(name: "fake-compass")
        #expect(status == 0)
        #expect(report["page"] == "compass", "\(report)")
        #expect(try Screenshot(path: path).dial()?.needleDegrees != nil, "no needle on the compass page")
        let declination = setup.double("Declination")
        #expect(declination.isFinite && abs(declination) < 5, "London's declination: \(declination)")
        let appHeading = try #require(Double(report["heading"] ?? ""), "\(report)")
        let magnetic = Angle.normalized360(appHeading - declination)
        #expect(abs(magnetic - (magnetic / 10).rounded() * 10) < 1e-6, "the app drew \(appHeading)°: not a fake-compass heading (\(magnetic)° magnetic)")

        // GTK 4.8's accessibility tree holds every page of the app's stack, each named
        // "GtkStackPage" (and reports none of them as showing): the compass page is the one with
        // the dial. GTK 4.18's (Debian 13) names a page by its title and holds the children of the
        // visible page only: there the whole tree is that page. The source is named on it.
        let source = "Compass: iio-sensor-proxy"
        let texts = try accessibleTexts(of: rig) { lines in lines.contains { $0.contains(source) } }
        let pages = texts.contains { $0.hasPrefix("GtkStackPage\t") }
            ? Array(texts.split { $0.hasPrefix("GtkStackPage\t") }.dropFirst()) : [texts[...]]
        let compassPage = try #require(pages.first { page in page.contains { $0.hasPrefix("Qibla compass dial\t") } }, "\(texts)")
        #expect(compassPage.contains { $0.hasPrefix(source + "\t") }, "'\(source)' not on the compass page: \(compassPage)")
        // Its calibration is not qiblad's: no calibration card (qiblad's unused magnetometer's
        // CalibrationState says "collecting").
        #expect(!compassPage.contains { $0.hasPrefix("Calibrating the compass\t") }, "\(compassPage)")
        print("the compass page: \(compassPage.filter { !$0.hasPrefix("\t") })")
    }
}

