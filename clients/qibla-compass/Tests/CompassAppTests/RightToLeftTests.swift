// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

/// The app in Arabic, Urdu or Persian: GTK mirrors the layout, the dial is drawn as in English
/// (north stays north, a clockwise turn stays clockwise, "turn left" still means left).
@Suite(.serialized) struct RightToLeftTests {
    /// The catalogue compiled where the app looks for it (QIBLA_COMPASS_LOCALEDIR).
    static func locale(_ language: String, in rig: AppRig) throws -> [String: String] {
        let locale = rig.directory.path + "/locale"
        try FileManager.default.createDirectory(atPath: locale + "/\(language)/LC_MESSAGES", withIntermediateDirectories: true)
        let compiled = try run("msgfmt", ["-o", locale + "/\(language)/LC_MESSAGES/qibla-compass.mo",
                                          repositoryRoot.appendingPathComponent("clients/qibla-compass/po/\(language).po").path])
        #expect(compiled.status == 0, "\(compiled.stderr)")
        return ["LANGUAGE": language, "LC_ALL": translatedLocale, "QIBLA_COMPASS_LOCALEDIR": locale]
    }

    /// In Arabic, in a wide window: the dial sits in the right half (the left in English,
    /// AppIntegrationTests.screenshotsAtPhoneAndDesktopSize), while the needle points where qiblad's
    /// QiblaRelativeBearing says (the English test's pixel check: ±2° from Qibla − heading) and
    /// north where the heading puts it; the words turn the same way as the needle, in Arabic digits.
    @Test func arabicMirrorsTheLayoutButNotTheDial() throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        try rig.startPhone(headingDegrees: 200)    // London's Qibla is 119°: turn left about 81°
        try rig.startDaemon(location: "\(london.latitude),\(london.longitude)")
        let monitor = try rig.holdClaim()
        defer { monitor.terminate() }
        let (report, path, status) = try rig.screenshot(size: "1000x640", name: "arabic", environment: try Self.locale("ar", in: rig))
        #expect(status == 0)
        #expect(report["page"] == "compass", "\(report)")
        #expect(report["direction"] == "rtl", "\(report)")

        let shot = try Screenshot(path: path)
        let dial = try #require(shot.dial(), "no dial hub in the screenshot")
        #expect(dial.centre.0 > Double(shot.width) / 2, "mirrored: the dial belongs in the right half, its centre is at \(dial.centre) in a \(shot.width)-wide window")

        let appHeading = try #require(Double(report["heading"] ?? ""))
        let relative = try #require(rig.property("QiblaRelativeBearing") as? Double)
        let heading = try #require(rig.property("Heading") as? Double)
        #expect(abs(angleDifference(heading, appHeading)) < 1.0, "the app drew heading \(appHeading)°, qiblad now says \(heading)°")
        let needle = try #require(dial.needleDegrees, "no needle (\(dial.needlePixels) pixels)")
        let north = try #require(dial.northDegrees, "no north (\(dial.northPixels) pixels)")
        let expectedNeedle = london.qibla - appHeading
        print("arabic: needle drawn at \(needle)° (Qibla − heading \(expectedNeedle)°, QiblaRelativeBearing \(relative)°), north at \(north)°, says \(report["instruction"] ?? "")")
        #expect(abs(angleDifference(needle, expectedNeedle)) <= 2, "needle drawn at \(needle)°, Qibla − heading = \(expectedNeedle)°")
        #expect(abs(angleDifference(needle, relative)) <= 3, "needle drawn at \(needle)°, QiblaRelativeBearing \(relative)°")
        #expect(abs(angleDifference(north, -appHeading)) <= 2, "north drawn at \(north)°, expected \(-appHeading)° (not mirrored)")

        // The words: left is left (يسار), with the degrees in Arabic-Indic digits.
        let instruction = report["instruction"] ?? ""
        // Compared without the vowel marks (يسارًا: the tanwin joins the ر into one Character).
        let letters = String(String.UnicodeScalarView(instruction.unicodeScalars.filter { $0.properties.generalCategory != .nonspacingMark }))
        #expect(relative < 0 && letters.contains("يسار") && !letters.contains("يمين"), "QiblaRelativeBearing \(relative)°, the app says \(instruction)")
        #expect(instruction.unicodeScalars.contains { (0x0660...0x0669).contains($0.value) }, "no Arabic-Indic digits in \(instruction)")
        try keepForReadme(path, name: "arabic")
    }

    /// Urdu, for which GTK itself has no catalogue: the app's catalogue still turns the layout
    /// right to left; Turkish stays left to right.
    @Test(arguments: [("ur", "rtl"), ("fa", "rtl"), ("tr", "ltr")])
    func theCatalogueDecidesTheDirection(language: String, direction: String) throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        try rig.startDaemon(location: nil)
        let (report, _, status) = try rig.screenshot(environment: try Self.locale(language, in: rig))
        #expect(status == 0)
        #expect(report["direction"] == direction, "\(language): \(report)")
    }
}
