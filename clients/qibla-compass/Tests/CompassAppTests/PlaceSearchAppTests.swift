// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

@Suite(.serialized) struct PlaceSearchAppTests {
    /// The location page lists "city, region, country" matches for what is typed (the README's
    /// search picture), accents and case as a person types them.
    @Test func theSearchPageListsMatches() throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        try rig.startPhone(headingDegrees: 10)
        try rig.startDaemon(location: "\(london.latitude),\(london.longitude)")
        let path = rig.directory.path + "/search.png"
        let r = try run(compassApp, ["--screenshot", path, "--size", "360x720", "--search", "sao paulo", "--verbose"],
                        environment: rig.appEnvironment, timeout: 60)
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("page=no-position"))
        let matches = r.stdout.split(separator: "\n").filter { $0.hasPrefix("match=") }.map { $0.dropFirst(6) }
        #expect(matches.first == "São Paulo, Brazil", "\(matches)")
        #expect(r.stderr.contains("search 'sao paulo'"))
        // Typed as the page opened: the list was read off the main loop, the search answered once it was there.
        #expect(r.stderr.contains("towns read in") && r.stderr.contains("off the main loop"), "\(r.stderr)")
        #expect(r.stderr.contains("after the keystroke"), "\(r.stderr)")
        try keepForReadme(path, name: "search")
    }

    /// Typed in the field and chosen with Enter, a place reaches qiblad (SetManualLocation) and
    /// the header then names the place nearest to the position ("near Cape Town").
    @Test func aChosenPlaceReachesTheDaemonAndNamesTheHeader() throws {
        let display = try HeadlessDisplay()
        let rig = try AppRig(display: display)
        try rig.startPhone(headingDegrees: 10)
        try rig.startDaemon(location: nil)
        let app = try ChildProcess(compassApp, ["--size", "360x720", "--verbose"], environment: rig.appEnvironment)
        let window = try #require(findWindow(pid: app.pid, display: display.display), "no window: \(app.standardError)")
        #expect(waitUntil(timeout: 10) { app.standardError.contains("showing no-position") }, "\(app.standardError)")
        let xdotool = ["DISPLAY": display.display]
        try run("xdotool", ["windowfocus", "--sync", window], environment: xdotool)
        try run("xdotool", ["type", "--delay", "40", "--", "cape town"], environment: xdotool)
        #expect(waitUntil(timeout: 10) { app.standardError.contains("search 'cape town'") }, "no search: \(app.standardError)")
        try run("xdotool", ["key", "Return"], environment: xdotool)
        #expect(waitUntil(timeout: 10) { (try? rig.property("LocationSource") as? String) == "manual" }, "\(app.standardError)")
        let latitude = try #require(rig.property("Latitude") as? Double), longitude = try #require(rig.property("Longitude") as? Double)
        #expect(abs(latitude - -33.92) <= 0.1 && abs(longitude - 18.42) <= 0.1, "set \(latitude), \(longitude)")
        #expect(app.standardError.contains("(Cape Town, Western Cape, South Africa)"), "\(app.standardError)")
        app.terminate()
        let (report, _, status) = try rig.screenshot()
        #expect(status == 0)
        #expect(report["header"] == "near Cape Town", "\(report)")
    }
}
