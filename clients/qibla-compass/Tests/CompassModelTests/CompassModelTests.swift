// SPDX-License-Identifier: Apache-2.0
import CompassModel
import QiblaInterface
import Testing

/// Properties as qiblad would publish them, by D-Bus name.
private func properties(_ pairs: [(QiblaProperty, PropertyValue)]) -> DaemonProperties {
    var p = DaemonProperties()
    for (name, value) in pairs { p.values[name] = value }
    return p
}

/// Cape Town, claimed, calibrated: Qibla 24.4° (great circle), heading 48.4°.
private let capeTown: [(QiblaProperty, PropertyValue)] = [
    (.latitude, .double(-33.9)), (.longitude, .double(18.4)), (.locationSource, .string("manual")),
    (.locationAccuracy, .double(.nan)), (.locationTimestamp, .uint64(0)),
    (.qiblaBearing, .double(24.4)), (.kaabaDistance, .double(6_968_000)),
    (.hasCompass, .bool(true)), (.heading, .double(48.4)), (.qiblaRelativeBearing, .double(-24.0)),
    (.headingError, .double(2.5)), (.compassAccuracy, .string("high")),
    (.calibrationState, .string("calibrated")), (.calibrationNeeded, .bool(false)),
    (.magneticInterference, .bool(false)),
]

@Suite struct CompassScreenTests {
    @Test func pagesFollowWhatIsKnown() {
        let now = 1_800_000_000.0
        #expect(CompassScreen(properties: properties(capeTown), daemonPresent: false, nowUnixSeconds: now).page == .noDaemon)
        #expect(CompassScreen(properties: DaemonProperties(), daemonPresent: true, nowUnixSeconds: now).page == .connecting)
        let noPosition = properties([(.locationSource, .string("none")), (.qiblaBearing, .double(.nan)), (.hasCompass, .bool(true))])
        #expect(CompassScreen(properties: noPosition, daemonPresent: true, nowUnixSeconds: now).page == .noPosition)
        var noCompass = properties(capeTown)
        noCompass.values[.hasCompass] = .bool(false)
        noCompass.values[.heading] = .double(.nan)
        #expect(CompassScreen(properties: noCompass, daemonPresent: true, nowUnixSeconds: now).page == .noCompass)
        // Just claimed: HasCompass false may mean "not started yet".
        #expect(CompassScreen(properties: noCompass, daemonPresent: true, compassStarting: true, nowUnixSeconds: now).page == .compass)
        #expect(CompassScreen(properties: properties(capeTown), daemonPresent: true, nowUnixSeconds: now).page == .compass)
    }

    @Test func theNeedleAndTheWordsAgree() {
        let screen = CompassScreen(properties: properties(capeTown), daemonPresent: true, nowUnixSeconds: 0)
        #expect(screen.dialNorthScreenDegrees == 360 - 48.4)
        #expect(screen.qiblaBearingDegrees == 24.4)
        #expect(screen.turnDegrees == -24.0)
        #expect(!screen.isFacing)
        #expect(screen.instruction == "Turn left 24°")
        #expect(screen.accessibleDescription == "Qibla 24° to your left")
        #expect(screen.bearingText == "24° NNE")
        #expect(screen.headingText == "Heading 48° NE")
        #expect(screen.placeText == "33.90° S, 18.40° E")
        #expect(screen.distanceText.hasPrefix("6"))
        #expect(screen.accuracyText == "High · ±2.5°")
        #expect(screen.calibration == nil)
        #expect(screen.interferenceWarning == nil)
    }

    @Test func facingIsWithinTheHeadingError() {
        var p = properties(capeTown)
        p.values[.qiblaRelativeBearing] = .double(2.4)
        #expect(CompassScreen(properties: p, daemonPresent: true, nowUnixSeconds: 0).isFacing)
        #expect(CompassScreen(properties: p, daemonPresent: true, nowUnixSeconds: 0).instruction == "Facing the Qibla")
        p.values[.qiblaRelativeBearing] = .double(2.6)
        #expect(!CompassScreen(properties: p, daemonPresent: true, nowUnixSeconds: 0).isFacing)
        #expect(CompassScreen(properties: p, daemonPresent: true, nowUnixSeconds: 0).instruction == "Turn right 3°")
        // A wide error does not make everything "facing": at most 10°.
        p.values[.headingError] = .double(40)
        p.values[.qiblaRelativeBearing] = .double(12)
        #expect(!CompassScreen(properties: p, daemonPresent: true, nowUnixSeconds: 0).isFacing)
        #expect(CompassScreen.facingTolerance(headingError: nil) == 5)
        #expect(CompassScreen.facingTolerance(headingError: 0.2) == 1)
    }

    @Test func calibrationAndInterferenceAreShownWithTheirHint() {
        var p = properties(capeTown)
        p.values[.calibrationState] = .string("collecting")
        p.values[.calibrationProgress] = .double(0.42)
        p.values[.calibrationHint] = .string("tilt-forward-back")
        p.values[.magneticInterference] = .bool(true)
        let screen = CompassScreen(properties: p, daemonPresent: true, nowUnixSeconds: 0)
        #expect(screen.calibration?.progress == 0.42)
        #expect(screen.calibration?.hint == "Tip the top edge of the phone up and down.")
        #expect(screen.interferenceWarning != nil)
        p.values[.calibrationProgress] = .double(.nan)
        #expect(CompassScreen(properties: p, daemonPresent: true, nowUnixSeconds: 0).calibration?.progress == 0)
    }

    @Test func noNaNReachesTheWords() {
        var p = properties(capeTown)
        for property in [QiblaProperty.heading, .qiblaRelativeBearing, .headingError, .kaabaDistance] {
            p.values[property] = .double(.nan)
        }
        let screen = CompassScreen(properties: p, daemonPresent: true, nowUnixSeconds: 0)
        #expect(screen.dialNorthScreenDegrees == nil)
        #expect(screen.turnDegrees == nil)
        #expect(screen.wedgeHalfWidthDegrees == nil)
        for text in [screen.instruction, screen.accessibleDescription, screen.distanceText, screen.accuracyText, screen.bearingText] {
            #expect(!text.lowercased().contains("nan"), "\(text)")
        }
        #expect(screen.accessibleDescription == "Qibla 24° NNE from true north; no heading")
    }

    @Test func sourceShowsAccuracyAndAge() {
        var p = properties(capeTown)
        p.values[.locationSource] = .string("gpsd")
        p.values[.locationAccuracy] = .double(4.6)
        p.values[.locationTimestamp] = .uint64(1_000_000_000 * 1_000_000)
        let screen = CompassScreen(properties: p, daemonPresent: true, nowUnixSeconds: 1_000_000_012.5)
        #expect(screen.sourceText == "GPS · ±5 m · 12 s ago")
    }

    /// The compass page names where the heading comes from (HeadingSource, HeadingFused).
    @Test(arguments: [
        ("magnetometer", false, "Compass: this phone's magnetometer"),
        ("magnetometer", true, "Compass: this phone's magnetometer, gyroscope-aided"),
        ("iio-sensor-proxy", false, "Compass: iio-sensor-proxy"),
        ("none", false, ""), ("something-new", true, ""),
    ])
    func theHeadingsSourceIsNamed(source: String, fused: Bool, words: String) {
        var p = properties(capeTown)
        p.values[.headingSource] = .string(source)
        p.values[.headingFused] = .bool(fused)
        #expect(CompassScreen(properties: p, daemonPresent: true, nowUnixSeconds: 0).headingSourceText == words)
    }

    /// The calibration card follows qiblad's magnetometer: not while iio-sensor-proxy serves the
    /// heading (CalibrationState then stays the unused magnetometer's "collecting").
    @Test(arguments: [
        ("magnetometer", "collecting", false, true),
        ("magnetometer", "calibrated", false, false),
        ("magnetometer", "calibrated", true, true),
        ("iio-sensor-proxy", "collecting", false, false),
        ("iio-sensor-proxy", "collecting", true, true),
        (nil, "collecting", false, true),
    ] as [(String?, String, Bool, Bool)])
    func theCalibrationCardIsShownOnlyForQibladsOwnCalibration(source: String?, state: String, needed: Bool, shown: Bool) {
        var p = properties(capeTown)
        if let source { p.values[.headingSource] = .string(source) } else { p.values[.headingSource] = nil }
        p.values[.calibrationState] = .string(state)
        p.values[.calibrationNeeded] = .bool(needed)
        #expect((CompassScreen(properties: p, daemonPresent: true, nowUnixSeconds: 0).calibration != nil) == shown)
    }

    @Test func coordinatesWrapLongitudesAbove180() {
        #expect(CompassScreen.coordinates(latitude: 21.4225, longitude: 359.5) == "21.42° N, 0.50° W")
        #expect(CompassScreen.coordinates(latitude: -0.004, longitude: -0.004) == "0.00° S, 0.00° W")
    }
}

@Suite struct ManualLocationInputTests {
    @Test(arguments: [
        ("-33.9 18.4", -33.9, 18.4),
        ("-33.9, 18.4", -33.9, 18.4),
        ("\u{2212}33.9 18.4", -33.9, 18.4),
        ("33.9 S 18.4 E", -33.9, 18.4),
        ("33.9S, 18.4E", -33.9, 18.4),
        ("51.5072 -0.1276", 51.5072, -0.1276),
        ("  40.7°N 74.0°W ", 40.7, -74.0),
        ("-90 180", -90, 180),
    ])
    func typedPositionsAreRead(text: String, latitude: Double, longitude: Double) throws {
        let position = try ManualLocationInput.parse(text).get()
        #expect(position.latitude == latitude)
        #expect(position.longitude == longitude)
    }

    @Test(arguments: [
        ("", "Type your latitude"),
        ("-33.9", "Type two numbers"),
        ("1 2 3", "Type two numbers"),
        ("abc 18", "is not a number"),
        ("91 0", "latitude must be between"),
        ("0 181", "longitude must be between"),
        ("nan 0", "is not a number"),
        ("S 18", "must follow a number"),
        ("10 E 20 N", "latitude comes first"),
    ])
    func mistakesAreExplained(text: String, expected: String) {
        guard case .failure(let problem) = ManualLocationInput.parse(text) else {
            Issue.record("\(text) was accepted")
            return
        }
        #expect(problem.message.contains(expected), "\(problem.message)")
    }
}

@Suite struct DialAnimationTests {
    @Test func turnsTheShortWayWithoutOvershootAndSettles() {
        var dial = DialAnimation(at: 350)
        dial.setTarget(10)
        var frames = 0
        var maxPastTarget = 0.0
        var minShown = 360.0
        while !dial.isSettled && frames < 600 {
            dial.advance(by: 1.0 / 60)
            frames += 1
            let offset = (dial.shownDegrees - 10 + 540).truncatingRemainder(dividingBy: 360) - 180
            maxPastTarget = max(maxPastTarget, offset)
            if dial.shownDegrees > 180 { minShown = min(minShown, dial.shownDegrees) }
        }
        #expect(dial.isSettled)
        #expect(frames < 60, "settled in \(frames) frames")
        #expect(maxPastTarget < 0.05, "overshoot \(maxPastTarget)°")
        #expect(minShown >= 350, "went the long way (\(minShown)°)")
        #expect(dial.shownDegrees == 10)
    }

    @Test func aLongGapDoesNotExplode() {
        var dial = DialAnimation(at: 0)
        dial.setTarget(180)
        dial.advance(by: 30)
        #expect(dial.shownDegrees.isFinite)
        #expect(dial.isSettled)
    }
}

@Suite struct ClaimPolicyTests {
    @Test func theClaimFollowsVisibilityAndTheDaemon() {
        var policy = ClaimPolicy()
        #expect(policy.daemonOwner(":1.5") == nil)           // not shown yet
        #expect(policy.windowMapped(true) == .claim)
        #expect(policy.windowMapped(true) == nil)            // no second claim
        #expect(policy.minimised(true) == .release)
        #expect(policy.minimised(false) == .claim)
        #expect(policy.screenLocked(true) == .release)
        #expect(policy.screenLocked(false) == .claim)
        #expect(policy.daemonOwner(nil) == nil)              // gone: nothing to release
        #expect(policy.daemonOwner(":1.9") == .claim)        // a new qiblad: claim again
        #expect(policy.daemonOwner(":1.12") == .claim)       // replaced without a gap
        #expect(policy.windowMapped(false) == .release)
        #expect(!policy.wantsClaim)
    }

    /// Every locker is followed on its own: unlocked only when none of them says locked.
    @Test func theScreenIsLockedWhileAnyLockerSaysSo() {
        var policy = ClaimPolicy()
        _ = policy.daemonOwner(":1.5")
        #expect(policy.windowMapped(true) == .claim)
        #expect(policy.screenLocked(true, by: .logindSession) == .release)
        #expect(policy.screenLocked(true, by: .freedesktopScreenSaver) == nil)
        #expect(policy.screenLocked(false, by: .logindSession) == nil)        // KDE's locker still says locked
        #expect(policy.screenLocked(false, by: .gnomeScreenSaver) == nil)     // one that never locked says unlocked
        #expect(policy.screenLocked(false, by: .freedesktopScreenSaver) == .claim)
    }

    /// On a phone shell the app behind another one (or under the overview) is not seen; on a
    /// desktop an inactive window still is.
    @Test func onAPhoneShellTheAppInFrontHoldsTheClaim() {
        var phone = ClaimPolicy(inactiveMeansHidden: true)
        _ = phone.daemonOwner(":1.5")
        #expect(phone.windowMapped(true) == .claim)
        #expect(phone.active(false) == .release)
        #expect(phone.active(true) == .claim)
        var desktop = ClaimPolicy(inactiveMeansHidden: false)
        _ = desktop.daemonOwner(":1.5")
        #expect(desktop.windowMapped(true) == .claim)
        #expect(desktop.active(false) == nil)
    }

    @Test(arguments: [("Phosh:GNOME", true), ("sxmo", true), ("GNOME", false), ("KDE", false), (nil, false), ("", false)] as [(String?, Bool)])
    func phoneShellsByName(desktop: String?, phone: Bool) {
        #expect(ClaimPolicy.isPhoneShell(currentDesktop: desktop) == phone)
    }

    /// Wide only when wider than tall and at least 700 px: a 360 px phone either way up stacks.
    @Test(arguments: [(360, 720, false), (720, 360, true), (640, 360, false), (1000, 640, true), (800, 1280, false)])
    func theLayoutFollowsTheWindowsShape(width: Int, height: Int, wide: Bool) {
        #expect(CompassLayout.isWide(width: width, height: height) == wide)
    }
}

@Suite struct SunGuidanceTests {
    @Test func upcomingInstantsInWords() {
        let times = [
            SunGuidance.QiblaSunTime(timeMicroseconds: 3_000_000, kind: "shadow", elevationDegrees: 30),
            SunGuidance.QiblaSunTime(timeMicroseconds: 1_000_000, kind: "sun", elevationDegrees: 10),
            SunGuidance.QiblaSunTime(timeMicroseconds: 2_000_000, kind: "sun", elevationDegrees: 20),
        ]
        let words = SunGuidance.instructions(times, nowMicroseconds: 1_500_000) { "t\($0 / 1_000_000)" }
        #expect(words == ["Face the sun at t2: it stands in the Qibla", "Your shadow points to the Qibla at t3"])
        #expect(SunGuidance.passage(kind: "nadir", date: "28 November").contains("shadow points to the Qibla"))
        #expect(SunGuidance.passage(kind: "zenith", date: "27 May").contains("face it"))
    }
}
