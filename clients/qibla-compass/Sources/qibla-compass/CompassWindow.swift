// SPDX-License-Identifier: Apache-2.0
import CGtk
import CompassModel
import QiblaGeonames
import QiblaInterface
import QiblaPlaces

/// The window and everything it shows. Data flows one way: qiblad's properties (and the window's
/// visibility) in → ``CompassScreen`` → widgets. The claim follows ``ClaimPolicy``.
final class CompassWindow {
    struct Options {
        var screenshotPath: String?
        /// Opens the location page with this typed into its search field.
        var searchText: String?
        var width: Int32 = 420
        var height: Int32 = 760
        var systemBus = false
        var verbose = false
    }

    static let applicationID = "io.github.qiblad.Compass"

    private let options: Options
    private let app: ObjectPointer
    private let bus: BusProxy?
    private let busProblem: String?
    private var systemBus: BusConnection?

    private var properties = DaemonProperties()
    private var screen: CompassScreen
    private var claimPolicy = ClaimPolicy(inactiveMeansHidden: ClaimPolicy.isPhoneShell(currentDesktop: Environment.value("XDG_CURRENT_DESKTOP")))
    private var claimedAtMicroseconds: UInt64 = 0
    private var dialAnimation = DialAnimation(at: 0)
    private var dialHasHeading = false
    private var wasFacing = false
    private var lastFeedbackMicroseconds: UInt64 = 0
    private var manualRequested = false
    private var shownPage: CompassPage?
    private var observingSurface = false
    private var wide = false
    private var laidOutSize = (0, 0)
    private var dark = false
    private let startedMicroseconds = MainLoop.nowMicroseconds

    // Sun information for the current place.
    private var sunPlace: (Double, Double)?
    private var sunIsUp = false
    private var sunInstructions: [String] = []
    private var kaabaPassage = ""
    private var sunTimer: UInt32 = 0

    // Widgets.
    private var window: Widget!
    private var windowTitle: Widget!
    private var stack: Widget!
    private var showToast: (String) -> Void = { _ in }
    private var dial: DrawingArea!
    private let faceCache = DialView.FaceCache()
    private var mainBox: Widget!
    private var instructionLabel: Widget!
    private var headingLabel: Widget!
    private var calibrationBox: Widget!
    private var calibrationTitle: Widget!
    private var calibrationBar: Widget!
    private var calibrationHint: Widget!
    private var interferenceLabel: Widget!
    private var bearingRow: (row: Widget, value: Widget, subtitleSetter: (String) -> Void)!
    private var distanceRow: (row: Widget, value: Widget, subtitleSetter: (String) -> Void)!
    private var placeRow: (row: Widget, value: Widget, subtitleSetter: (String) -> Void)!
    private var accuracyRow: (row: Widget, value: Widget, subtitleSetter: (String) -> Void)!
    private var sunCheckButton: Widget!
    private var noCompassBearing: Widget!
    private var noCompassDetails: Widget!
    private var noCompassSun: Widget!
    private var noDaemonPage: Widget!
    private var manualPage: Widget!
    private var manualEntry: Widget!
    private var manualError: Widget!
    private var manualCancel: Widget!
    private var placeList: Widget!
    private var placeMatches: [Place] = []
    private var searchedOnce = false
    private lazy var towns = TownList { [unowned self] message in log(message) }
    /// When the search field last changed with no index yet (GLib's monotonic µs): that search
    /// runs when the index arrives; nil when none waits.
    private var searchWaitingSince: UInt64?
    /// Enter was pressed while the search waited for the index: the best match is used once it is found.
    private var submitWaiting = false
    private var nearPlace: (latitude: Double, longitude: Double, words: String)?
    private var locationButton: Widget!

    // The screenshot hook.
    private var firstCompletePageMicroseconds: UInt64?
    private var completePage: CompassPage?
    private var screenshotTaken = false

    init(app: ObjectPointer, options: Options) {
        self.app = app
        self.options = options
        do {
            bus = try BusProxy(system: options.systemBus, name: QiblaBus.name, path: QiblaBus.objectPath,
                               interface: QiblaBus.interface)
            busProblem = nil
        } catch {
            bus = nil
            busProblem = error.message
        }
        screen = CompassScreen(properties: DaemonProperties(), daemonPresent: false, nowUnixSeconds: 0)
        build()
        connectBus()
        update()
        if let text = options.searchText {
            manualRequested = true
            update()
            manualEntry.entryText = text
        }
        if options.screenshotPath != nil {
            // Whatever happens, the screenshot is taken within 25 s; pages that only need time are looked at every 250 ms.
            MainLoop.everyMilliseconds(25_000) { [unowned self] in captureAndQuit(complete: false); return false }
            MainLoop.everyMilliseconds(250) { [unowned self] in screenshotIfComplete(); return !screenshotTaken }
        }
    }

    func present() { Adwaita.present(window) }

    // MARK: Building

    private func build() {
        let locationButton = Widget.iconButton("mark-location-symbolic", tooltip: tr("Set the location by hand"))
        self.locationButton = locationButton
        Actions.add(to: app, name: "set-location") { [unowned self] in manualRequested = true; update(); manualEntry.grabFocus() }
        Actions.add(to: app, name: "forget-location") { [unowned self] in forgetLocation() }
        Actions.add(to: app, name: "reset-calibration") { [unowned self] in resetCalibration() }
        Actions.add(to: app, name: "about") { [unowned self] in Adwaita.about(parent: window, version: qiblaVersion) }
        showReminders = Actions.addToggle(to: app, name: "remind") { [unowned self] on in setReminders(on) }
        let menu = Widget.menuButton(icon: "open-menu-symbolic", tooltip: tr("Main menu"), menu: Actions.menu([
            (tr("Set the location by hand…"), "app.set-location"),
            (tr("Remind me at the Qibla-sun times"), "app.remind"),
            (tr("Forget the location typed by hand"), "app.forget-location"),
            (tr("Calibrate the compass again"), "app.reset-calibration"),
            (tr("About Qibla Compass"), "app.about"),
        ]))
        let header = Adwaita.headerBar(title: tr("Qibla Compass"), end: [menu, locationButton])
        windowTitle = header.title
        locationButton.onClicked { [unowned self] in manualRequested = true; update(); manualEntry.grabFocus() }

        stack = Widget.stack()
        stack.expand(horizontal: true, vertical: true)
        stack.addPage(buildCompassPage(), name: CompassPage.compass.rawValue)
        stack.addPage(buildNoCompassPage(), name: CompassPage.noCompass.rawValue)
        stack.addPage(buildManualPage(), name: CompassPage.noPosition.rawValue)
        noDaemonPage = Adwaita.statusPage(
            icon: "dialog-information-symbolic", title: tr("qiblad is not running"),
            description: tr("The compass needs the qiblad service. Start it with\n\nsystemctl --user start qiblad\n\nor try the demonstration: qibla-sim demo"))
        stack.addPage(noDaemonPage, name: CompassPage.noDaemon.rawValue)
        let connecting = Adwaita.statusPage(icon: "content-loading-symbolic", title: tr("Connecting to qiblad…"), description: "")
        stack.addPage(connecting, name: CompassPage.connecting.rawValue)

        let toasts = Adwaita.toastOverlay(stack)
        showToast = toasts.show
        let content = Widget.box(vertical: true, spacing: 0)
        content.append(header.bar)
        content.append(toasts.overlay)

        AppFocus.follow(app: app) { [unowned self] active in
            log("the app is \(active ? "active" : "not active")")
            apply(claimPolicy.active(active))
        }
        dark = Adwaita.prefersDark { [unowned self] isDark in dark = isDark; dial.widget.queueDraw() }
        window = Adwaita.window(app: app, title: tr("Qibla Compass"), width: options.width, height: options.height, content: content)
        window.onMap { [unowned self] mapped in
            // The surface lives as long as the window: its signals are connected at the first map only.
            if mapped, !observingSurface {
                observingSurface = true
                Toplevel.observe(window, layout: { [unowned self] _, _ in layout() },
                                 minimised: { [unowned self] m in apply(claimPolicy.minimised(m)) })
            }
            apply(claimPolicy.windowMapped(mapped))
            if mapped { refreshSun() }
        }
    }

    private func buildCompassPage() -> Widget {
        dial = DrawingArea(label: tr("Qibla compass dial")) { [unowned self] cr, width, height in
            DialView.draw(cr, width: width, height: height, state: dialState, cache: faceCache)
        }
        // A fixed minimum, never set from the window's size (on Wayland a request that follows the
        // allocation ratchets the window wider than the screen); the dial takes what room is left
        // (it expands both ways) and draws itself square in it.
        dial.widget.sizeRequest(width: Self.dialMinimumPixels, height: Self.dialMinimumPixels)
        dial.widget.expand(horizontal: true, vertical: true)
        instructionLabel = Widget.label("", classes: ["title-1"])
        headingLabel = Widget.label("", classes: ["dim-label", "numeric"])
        let dialColumn = Widget.box(vertical: true, spacing: 6)
        dialColumn.append(dial.widget)
        dialColumn.append(instructionLabel)
        dialColumn.append(headingLabel)
        dialColumn.expand(horizontal: true, vertical: true)

        calibrationBox = Widget.box(vertical: true, spacing: 6)
        calibrationBox.addClasses(["card"])
        calibrationTitle = Widget.label("", classes: ["heading"])
        calibrationBar = Widget.progressBar()
        calibrationHint = Widget.label("", classes: [])
        for w in [calibrationTitle!, calibrationBar!, calibrationHint!] { w.margins(6); calibrationBox.append(w) }

        interferenceLabel = Widget.label("", classes: ["card", "error"])
        interferenceLabel.margins(0)

        let list = Widget.listBox()
        bearingRow = Adwaita.valueRow(title: tr("Qibla"))
        bearingRow.subtitleSetter(tr("from true north"))
        distanceRow = Adwaita.valueRow(title: tr("Distance to the Kaaba"))
        placeRow = Adwaita.valueRow(title: tr("Place"))
        accuracyRow = Adwaita.valueRow(title: tr("Compass accuracy"))
        for row in [bearingRow!, distanceRow!, placeRow!, accuracyRow!] { list.listAppend(row.row) }

        sunCheckButton = Widget.button(tr("Check the needle with the sun"), classes: ["pill"])
        sunCheckButton.align(horizontal: GTK_ALIGN_CENTER, vertical: GTK_ALIGN_CENTER)
        sunCheckButton.onClicked { [unowned self] in checkWithSun() }

        let infoColumn = Widget.box(vertical: true, spacing: 12)
        infoColumn.append(calibrationBox)
        infoColumn.append(interferenceLabel)
        infoColumn.append(list)
        infoColumn.append(sunCheckButton)
        infoColumn.expand(horizontal: true, vertical: false)
        infoColumn.align(horizontal: GTK_ALIGN_FILL, vertical: GTK_ALIGN_CENTER)

        mainBox = Widget.box(vertical: true, spacing: 18)
        mainBox.margins(12)
        mainBox.append(dialColumn)
        mainBox.append(infoColumn)
        // Horizontally the page never asks the window for its width (GTK_POLICY_EXTERNAL): whatever
        // the dial and the cards ask for side by side, the window may still be as narrow as the
        // screen, and the next layout stacks them.
        return Widget.scrolled(Adwaita.clamp(mainBox, maximumWidth: 1100), widthFollowsContent: false)
    }

    private func buildNoCompassPage() -> Widget {
        let box = Widget.box(vertical: true, spacing: 12)
        box.margins(18)
        let title = Widget.label(tr("No compass on this device"), classes: ["title-2"])
        noCompassBearing = Widget.label("", classes: ["title-1", "numeric"])
        noCompassDetails = Widget.label("", classes: ["dim-label"])
        noCompassSun = Widget.label("", classes: ["card"])
        noCompassSun.margins(0)
        let explain = Widget.label(tr("Without a compass, the sun shows the way: at these times face the sun, or follow your shadow."), classes: ["dim-label"])
        for w in [title, noCompassBearing!, noCompassDetails!, explain, noCompassSun!] { box.append(w) }
        box.align(horizontal: GTK_ALIGN_FILL, vertical: GTK_ALIGN_CENTER)
        return Widget.scrolled(Adwaita.clamp(box, maximumWidth: 600))
    }

    private func buildManualPage() -> Widget {
        let box = Widget.box(vertical: true, spacing: 12)
        manualEntry = Widget.searchEntry(placeholder: tr("A town, or -33.9 18.4"))
        manualEntry.setAccessibleLabel(tr("Place name, or latitude and longitude"))
        manualError = Widget.label("", classes: ["error"])
        placeList = Widget.listBox(selectable: false)
        placeList.isVisible = false
        placeList.onRowActivated { [unowned self] index in
            if index < placeMatches.count { setLocation(placeMatches[index]) }
        }
        let use = Widget.button(tr("Use this location"), classes: ["suggested-action", "pill"])
        manualCancel = Widget.button(tr("Cancel"), classes: ["pill"])
        use.align(horizontal: GTK_ALIGN_CENTER, vertical: GTK_ALIGN_CENTER)
        manualCancel.align(horizontal: GTK_ALIGN_CENTER, vertical: GTK_ALIGN_CENTER)
        for w in [manualEntry!, placeList!, manualError!, use, manualCancel!] { box.append(w) }
        use.onClicked { [unowned self] in submitManualLocation() }
        manualEntry.onActivate { [unowned self] in submitManualLocation() }
        manualEntry.onChanged { [unowned self] in manualError.setText("") }
        manualEntry.onSearchChanged { [unowned self] in searchPlaces() }
        manualCancel.onClicked { [unowned self] in manualRequested = false; update() }
        manualPage = Adwaita.statusPage(
            icon: "mark-location-symbolic", title: tr("Where are you?"),
            description: tr("qiblad has no position: no GPS fix and no location service. Type the name of your town, or your latitude and longitude in degrees, south and west negative, for example -33.9 18.4"),
            child: Adwaita.clamp(box, maximumWidth: 360))
        return manualPage
    }

    // MARK: Reminders

    /// The user service that posts a notification at each Qibla-sun time (`qiblactl remind`).
    static let reminderUnit = "qibla-remind.service"
    private var showReminders: (Bool) -> Void = { _ in }

    /// Whether the reminders are switched on: systemd's user manager, on the session bus.
    private func readReminderState() {
        bus?.bus.callReporting(destination: "org.freedesktop.systemd1", path: "/org/freedesktop/systemd1",
                               interface: "org.freedesktop.systemd1.Manager", method: "GetUnitFileState",
                               [Variant.string(Self.reminderUnit)]) { [unowned self] result in
            if case .success(let reply) = result, reply.childCount == 1 {
                let state = reply.child(0).string
                log("\(Self.reminderUnit) is \(state)")
                showReminders(state == "enabled")
            }
        }
    }

    /// Switches the reminders on or off as `systemctl --user enable --now` / `disable --now` do,
    /// through systemd's D-Bus API: the unit file enabled and the manager reloaded, then started
    /// (or stopped, then disabled).
    private func setReminders(_ on: Bool) {
        guard let bus = bus?.bus else { return }
        let manager = ("org.freedesktop.systemd1", "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager")
        func call(_ method: String, _ arguments: [OpaquePointer], then next: @escaping () -> Void) {
            bus.callReporting(destination: manager.0, path: manager.1, interface: manager.2, method: method, arguments) { [unowned self] result in
                switch result {
                case .success: log("systemd \(method) \(Self.reminderUnit)"); next()
                case .failure(let error):
                    log("systemd \(method) failed: \(error.name) \(error.message)")
                    showToast(fill(tr("Cannot switch the reminders: {reason}"), ["reason": error.message]))
                    readReminderState()
                }
            }
        }
        if on {
            call("EnableUnitFiles", [Variant.strings([Self.reminderUnit]), Variant.bool(false), Variant.bool(false)]) { [unowned self] in
                call("Reload", []) { [unowned self] in
                    call("StartUnit", [Variant.string(Self.reminderUnit), Variant.string("replace")]) { [unowned self] in
                        showReminders(true)
                        showToast(tr("Reminders on: a notification at each Qibla-sun time"))
                    }
                }
            }
        } else {
            call("StopUnit", [Variant.string(Self.reminderUnit), Variant.string("replace")]) { [unowned self] in
                call("DisableUnitFiles", [Variant.strings([Self.reminderUnit]), Variant.bool(false)]) { [unowned self] in
                    showReminders(false)
                    showToast(tr("Reminders off"))
                }
            }
        }
    }

    // MARK: Places by name

    /// Starts reading libgeonames' towns on their own thread (``TownList``): when the location
    /// page first shows or a position is to be named, so the first keystroke usually finds the
    /// index built, and never waits on the main loop for it.
    private func preparePlaces() {
        guard towns.index == nil else { return }
        towns.prepare()
        towns.whenReady { [unowned self] _ in update() }
    }

    /// The matches for what is typed so far, listed under the entry (at most 8: the best of
    /// them; a 1-letter query costs one pass over the list, as any other). Typed before the index
    /// is built, the search waits for it (``TownList/whenReady(_:)``) and then runs on what the
    /// field holds by then. "After the keystroke" in the log counts from GtkSearchEntry's
    /// `search-changed`, which GTK sends 150 ms after the last key.
    private func searchPlaces() {
        let text = manualEntry.entryText
        let isCoordinates = (try? ManualLocationInput.parse(text).get()) != nil
        let started = MainLoop.monotonicMicroseconds
        let needsIndex = !isCoordinates && !text.trimmingSpaces.isEmpty
        guard let index = towns.index, needsIndex else {
            if needsIndex {
                if searchWaitingSince == nil {
                    searchWaitingSince = started
                    log("search '\(text)': waiting for the list of towns")
                    towns.whenReady { [unowned self] _ in searchPlaces() }
                }
                return
            }
            searchWaitingSince = nil
            submitWaiting = false
            showMatches([], for: text, isCoordinates: isCoordinates)
            return
        }
        let keystroke = searchWaitingSince ?? started
        searchWaitingSince = nil
        let matches = index.search(text, limit: 8, near: currentPosition)
        let now = MainLoop.monotonicMicroseconds
        log("search '\(text)': \(matches.count) matches in \(now - started) µs, answered \(now - keystroke) µs after the keystroke")
        showMatches(matches, for: text, isCoordinates: isCoordinates)
        if submitWaiting {
            submitWaiting = false
            submitManualLocation()
        }
    }

    private func showMatches(_ matches: [Place], for text: String, isCoordinates: Bool) {
        placeMatches = matches
        placeList.removeAllRows()
        for place in placeMatches {
            placeList.listAppend(Adwaita.placeRow(title: place.name, subtitle: place.localizedTitle))
        }
        placeList.isVisible = !placeMatches.isEmpty
        searchedOnce = true
        screenshotIfComplete()
        if placeMatches.isEmpty, !isCoordinates, SearchText.folded(text).contains(where: { $0.isLetter }) {
            manualError.setText(PlaceIndex.noMatchMessage(text))
        }
    }

    private var currentPosition: (latitudeDegrees: Double, longitudeDegrees: Double)? {
        guard let latitude = properties.double(.latitude), let longitude = properties.double(.longitude) else { return nil }
        return (latitude, longitude)
    }

    /// "near Cape Town" when a town of the list is within 50 km, else the coordinates. The list
    /// is read on its own thread when the window opens (BENCHMARKS.md has how long); until then, the coordinates.
    private func headerPlace() -> String {
        guard let (latitude, longitude) = currentPosition else { return screen.placeText }
        guard let index = towns.index else {
            preparePlaces()
            return screen.placeText
        }
        if let near = nearPlace, near.latitude == latitude, near.longitude == longitude { return near.words }
        let words = index.nearest(latitudeDegrees: latitude, longitudeDegrees: longitude, withinMetres: 50_000)
            .map { fill(tr("near {place}"), ["place": $0.name]) } ?? screen.placeText
        nearPlace = (latitude, longitude, words)
        return words
    }

    // MARK: The bus

    private func connectBus() {
        guard let bus else { return }
        bus.onOwnerChange { [unowned self] in ownerChanged() }
        bus.onPropertiesChange { [unowned self] in propertiesChanged() }
        // No claim while the screen is locked, whoever locks it: Phosh and GNOME through
        // org.gnome.ScreenSaver, KDE Plasma (Mobile) through org.freedesktop.ScreenSaver (at
        // /ScreenSaver and /org/freedesktop/ScreenSaver), and any locker that sets logind's LockedHint.
        for (source, name, path) in [(ClaimPolicy.LockSource.gnomeScreenSaver, "org.gnome.ScreenSaver", "/org/gnome/ScreenSaver"),
                                     (.freedesktopScreenSaver, "org.freedesktop.ScreenSaver", "/org/freedesktop/ScreenSaver")] {
            bus.bus.onBooleanSignal(interface: name, member: "ActiveChanged", path: nil) { [unowned self] locked in
                log("\(name) says the screen is \(locked ? "locked" : "unlocked")")
                apply(claimPolicy.screenLocked(locked, by: source))
            }
            bus.bus.callForBoolean(destination: name, path: path, interface: name, method: "GetActive") { [unowned self] locked in
                if let locked { apply(claimPolicy.screenLocked(locked, by: source)) }
            }
        }
        followLogindLock()
        readReminderState()
        ownerChanged()
    }

    /// logind's `LockedHint` of this session (XDG_SESSION_ID, else the session of this process),
    /// on the system bus.
    private func followLogindLock() {
        guard let system = try? BusConnection(system: true) else { log("no system bus: logind's LockedHint is not followed"); return }
        systemBus = system
        let manager = ("org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager")
        let follow: (Variant?) -> Void = { [unowned self] reply in
            guard let reply, reply.childCount == 1 else { log("no logind session: its LockedHint is not followed"); return }
            let session = reply.child(0).objectPath
            log("following LockedHint of \(session)")
            system.followBooleanProperty(destination: manager.0, path: session, interface: "org.freedesktop.login1.Session",
                                         name: "LockedHint") { [unowned self] locked in
                log("logind says the screen is \(locked ? "locked" : "unlocked")")
                apply(claimPolicy.screenLocked(locked, by: .logindSession))
            }
        }
        if let id = Environment.value("XDG_SESSION_ID"), !id.isEmpty {
            system.call(destination: manager.0, path: manager.1, interface: manager.2, method: "GetSession", [Variant.string(id)], follow)
        } else {
            system.call(destination: manager.0, path: manager.1, interface: manager.2, method: "GetSessionByPID",
                        [Variant.uint32(UInt32(Environment.processID))], follow)
        }
    }

    private func ownerChanged() {
        guard let bus else { return }
        let owner = bus.nameOwner
        if owner == nil { properties = DaemonProperties() } else { propertiesChanged(updating: false) }
        log("qiblad \(owner.map { "is \($0)" } ?? "is not on the bus")")
        apply(claimPolicy.daemonOwner(owner))
        update()
    }

    private func propertiesChanged(updating: Bool = true) {
        guard let bus else { return }
        var fresh = DaemonProperties()
        for (name, value) in bus.cachedProperties { fresh.set(name, value) }
        properties = fresh
        if updating { update() }
    }

    private func apply(_ action: ClaimPolicy.Action?) {
        guard let action, let bus else { return }
        switch action {
        case .claim:
            claimedAtMicroseconds = MainLoop.nowMicroseconds
            log("claiming the compass")
            bus.call(QiblaMethod.claimCompass.rawValue, autoStart: true) { [unowned self] result in
                if case .failure(let error) = result { log("ClaimCompass failed: \(error.message)") }
                update()
            }
            // HasCompass turns true a moment after the claim; look again once it should have.
            MainLoop.everyMilliseconds(3_100) { [unowned self] in update(); return false }
        case .release:
            log("releasing the compass")
            bus.call(QiblaMethod.releaseCompass.rawValue) { [unowned self] result in
                if case .failure(let error) = result { log("ReleaseCompass failed: \(error.message)") }
            }
        }
    }

    // MARK: Updating

    private var dialState: DialView.State {
        DialView.State(northScreenDegrees: dialHasHeading ? dialAnimation.shownDegrees : nil,
                       qiblaBearingDegrees: screen.qiblaBearingDegrees,
                       wedgeHalfWidthDegrees: screen.wedgeHalfWidthDegrees,
                       isFacing: screen.isFacing, dark: dark,
                       maximumSide: wide ? Double(max(Int(Self.dialMinimumPixels), window.height - 170)) : nil)
    }

    private func update() {
        let now = MainLoop.nowMicroseconds
        // Until a claim is a moment old, HasCompass false only means "not started yet".
        let starting = claimPolicy.claimedOn == nil || now - claimedAtMicroseconds < 3_000_000
        let previous = screen
        screen = CompassScreen(properties: properties, daemonPresent: bus?.nameOwner != nil,
                               compassStarting: starting, nowUnixSeconds: Double(now) / 1e6)
        var page = screen.page
        if page == .compass || page == .noCompass, manualRequested { page = .noPosition }
        stack.showPage(page.rawValue)
        if page == .noPosition && shownPage != .noPosition {
            manualEntry.grabFocus()
            preparePlaces()
        }
        if page != shownPage { log("showing \(page.rawValue)") }
        shownPage = page
        manualCancel.isVisible = manualRequested
        locationButton.isVisible = page != .noDaemon && page != .connecting
        if let busProblem, page == .noDaemon {
            Adwaita.setStatusPage(noDaemonPage, description: fill(tr("No session bus: {problem}"), ["problem": busProblem]))
        }
        Adwaita.setSubtitle(windowTitle, headerPlace())

        // The dial follows the heading through the spring; a first heading is taken at once.
        if let north = screen.dialNorthScreenDegrees {
            if !dialHasHeading { dialAnimation.jump(to: north); dialHasHeading = true }
            else { dialAnimation.setTarget(north) }
            if !dialAnimation.isSettled && !dial.isAnimating {
                dial.animate { [unowned self] seconds in
                    dialAnimation.advance(by: seconds)
                    if dialAnimation.isSettled { screenshotIfComplete() }
                    return !dialAnimation.isSettled
                }
            }
        } else {
            dialHasHeading = false
        }
        if screen.qiblaBearingDegrees != previous.qiblaBearingDegrees || screen.wedgeHalfWidthDegrees != previous.wedgeHalfWidthDegrees
            || screen.isFacing != previous.isFacing || (screen.dialNorthScreenDegrees == nil) != (previous.dialNorthScreenDegrees == nil) {
            dial.widget.queueDraw()
        }

        instructionLabel.setText(screen.instruction)
        instructionLabel.setClass("success", screen.isFacing)
        headingLabel.setText(screen.headingText)
        dial.widget.setAccessibleDescription(screen.accessibleDescription)
        bearingRow.value.setText(screen.bearingText)
        distanceRow.value.setText(screen.distanceText)
        placeRow.value.setText(screen.placeText)
        placeRow.subtitleSetter(screen.sourceText)
        accuracyRow.value.setText(screen.accuracyText)
        accuracyRow.subtitleSetter(screen.headingSourceText)
        for c in ["high", "medium", "low", "unreliable"] { accuracyRow.value.setClass("accuracy-\(c)", screen.accuracyClass == c) }
        accuracyRow.value.setClass("warning", ["low", "unreliable"].contains(screen.accuracyClass))
        accuracyRow.value.setClass("success", screen.accuracyClass == "high")
        if let calibration = screen.calibration {
            calibrationBox.isVisible = true
            calibrationTitle.setText(calibration.title)
            calibrationBar.setFraction(calibration.progress)
            calibrationHint.setText(calibration.hint)
        } else {
            calibrationBox.isVisible = false
        }
        interferenceLabel.isVisible = screen.interferenceWarning != nil
        interferenceLabel.setText(screen.interferenceWarning ?? "")
        sunCheckButton.isVisible = sunIsUp && screen.turnDegrees != nil

        noCompassBearing.setText(screen.qiblaBearingDegrees.map { "\(Int($0.rounded()) % 360)°" } ?? "—")
        noCompassDetails.setText(fill(tr("{bearing} from true north · {distance} to the Kaaba"),
                                      ["bearing": screen.bearingText, "distance": screen.distanceText]))
        noCompassSun.setText(([sunInstructions.isEmpty ? tr("No Qibla-sun time in the next 24 hours here.") : sunInstructions.joined(separator: "\n")]
                              + (kaabaPassage.isEmpty ? [] : [kaabaPassage])).joined(separator: "\n\n"))

        if screen.isFacing && !wasFacing { facingFeedback() }
        wasFacing = screen.isFacing

        if let latitude = properties.double(.latitude), let longitude = properties.double(.longitude),
           sunPlace.map({ abs($0.0 - latitude) > 0.01 || abs($0.1 - longitude) > 0.01 }) ?? true {
            sunPlace = (latitude, longitude)
            refreshSun()
        }
        screenshotIfComplete()
    }

    /// The dial's minimum side, pixels: fits a 320-px-wide screen with the page's margins.
    static let dialMinimumPixels: Int32 = 200

    /// Lays the page out for the window's shape (its content, as GTK allocated it; the surface's
    /// size also counts client-side shadows): dial beside the cards when wide, above them when tall.
    /// Nothing here changes what the window asks for (the page is in a scrolled window that does
    /// not pass its width request on), so a rotation either way gets the compositor's size.
    private func layout() {
        let nowWide = CompassLayout.isWide(width: window.width, height: window.height)
        if (window.width, window.height) != laidOutSize {
            laidOutSize = (window.width, window.height)
            log("window \(window.width)x\(window.height), \(nowWide ? "dial beside the cards" : "dial above the cards")")
        }
        if nowWide != wide { wide = nowWide; mainBox.setOrientation(vertical: !wide); mainBox.setHomogeneous(wide) }
        dial.widget.queueDraw()
    }

    // MARK: Actions

    /// Enter or "Use this location": coordinates as typed, else the best match of the place search.
    private func submitManualLocation() {
        switch ManualLocationInput.parse(manualEntry.entryText) {
        case .failure(let problem):
            if searchWaitingSince != nil { submitWaiting = true; return }
            if let best = placeMatches.first { setLocation(best); return }
            let letters = SearchText.folded(manualEntry.entryText).contains { $0.isLetter }
            manualError.setText(letters ? PlaceIndex.noMatchMessage(manualEntry.entryText) : problem.message)
        case .success(let position):
            setManualLocation(latitude: position.latitude, longitude: position.longitude,
                              named: CompassScreen.coordinates(latitude: position.latitude, longitude: position.longitude))
        }
    }

    private func setLocation(_ place: Place) {
        setManualLocation(latitude: place.latitudeDegrees, longitude: place.longitudeDegrees, named: place.localizedTitle)
    }

    /// SetManualLocation; on success the page closes and a toast names the place.
    private func setManualLocation(latitude: Double, longitude: Double, named name: String) {
        guard let bus else { return }
        bus.call(QiblaMethod.setManualLocation.rawValue, [Variant.double(latitude), Variant.double(longitude)],
                 autoStart: true) { [unowned self] result in
            switch result {
            case .success:
                manualRequested = false
                manualEntry.entryText = ""
                showToast(fill(tr("Location set: {place}"), ["place": name]))
                log("SetManualLocation \(latitude) \(longitude) (\(name))")
                update()
            case .failure(let error):
                manualError.setText(error.message)
            }
        }
    }

    /// ClearManualLocation: the live position (or the last known one) is published again.
    private func forgetLocation() {
        bus?.call(QiblaMethod.clearManualLocation.rawValue, autoStart: true) { [unowned self] result in
            switch result {
            case .success: showToast(tr("The location typed by hand is forgotten")); log("ClearManualLocation")
            case .failure(let error): showToast(fill(tr("Cannot forget the location: {reason}"), ["reason": error.message]))
            }
        }
    }

    /// ResetCalibration: qiblad forgets the magnetometer's calibration and learns it again.
    private func resetCalibration() {
        bus?.call(QiblaMethod.resetCalibration.rawValue, autoStart: true) { [unowned self] result in
            switch result {
            case .success: showToast(tr("Calibrating again: move the phone slowly in a figure eight")); log("ResetCalibration")
            case .failure(let error): showToast(fill(tr("Cannot reset the calibration: {reason}"), ["reason": error.message]))
            }
        }
    }

    /// A short vibration where feedbackd runs (Phosh), once per entry into the facing state.
    private func facingFeedback() {
        let now = MainLoop.nowMicroseconds
        guard now - lastFeedbackMicroseconds > 3_000_000, let bus else { return }
        lastFeedbackMicroseconds = now
        bus.bus.send(destination: "org.sigxcpu.Feedback", path: "/org/sigxcpu/Feedback", interface: "org.sigxcpu.Feedback",
                 method: "TriggerFeedback",
                 [Variant.string(Self.applicationID), Variant.string("button-pressed"), Variant.emptyDictionary(), Variant.int32(-1)])
    }

    /// Whether the sun is up (for the check) and the Qibla-sun times and next Kaaba passage, from qiblad's calculators.
    private func refreshSun() {
        guard let bus, let (latitude, longitude) = sunPlace else { return }
        let now = MainLoop.nowMicroseconds
        bus.call(QiblaMethod.sunPosition.rawValue, [Variant.double(latitude), Variant.double(longitude), Variant.uint64(now)]) { [unowned self] result in
            if case .success(let reply) = result, reply.childCount == 2 { sunIsUp = reply.child(1).double >= 5 }
            sunPositionArrived = true
            update()
        }
        bus.call(QiblaMethod.qiblaSunTimes.rawValue, [Variant.double(latitude), Variant.double(longitude), Variant.uint64(now)]) { [unowned self] result in
            guard case .success(let reply) = result, reply.childCount == 1 else { return }
            let array = reply.child(0)
            var times: [SunGuidance.QiblaSunTime] = []
            for i in 0..<array.childCount {
                let item = array.child(i)
                guard item.childCount == 3 else { continue }
                times.append(.init(timeMicroseconds: item.child(0).uint64, kind: item.child(1).string, elevationDegrees: item.child(2).double))
            }
            sunInstructions = SunGuidance.instructions(times, nowMicroseconds: MainLoop.nowMicroseconds) { MainLoop.localTime($0, format: "%H:%M") }
            sunInfoArrived = true
            update()
        }
        let year = Int32(MainLoop.localTime(now, format: "%Y")) ?? 2026
        kaabaPassages(year: year, after: now)
        if sunTimer == 0 {
            sunTimer = MainLoop.everyMilliseconds(600_000) { [unowned self] in
                guard claimPolicy.windowMapped else { sunTimer = 0; return false }
                refreshSun()
                return true
            }
        }
    }
    private var sunInfoArrived = false
    private var sunPositionArrived = false

    private func kaabaPassages(year: Int32, after now: UInt64) {
        bus?.call(QiblaMethod.kaabaSunPassages.rawValue, [Variant.int32(year)]) { [unowned self] result in
            guard case .success(let reply) = result, reply.childCount == 1 else { return }
            let array = reply.child(0)
            for i in 0..<array.childCount {
                let item = array.child(i)
                let time = item.child(0).uint64
                if time > now {
                    kaabaPassage = SunGuidance.passage(kind: item.child(1).string,
                                                       date: MainLoop.localTime(time, format: "%-d %B, %H:%M"))
                    update()
                    return
                }
            }
            if year < 2149 { kaabaPassages(year: year + 1, after: now) }
        }
    }

    /// CheckHeadingWithSun: point the top edge at the sun, keep still, and see the error; then keep it as a correction or not.
    private func checkWithSun() {
        Adwaita.ask(parent: window, heading: tr("Check the needle with the sun"),
                    body: tr("Point the top edge of the phone at the sun, or lay the phone flat along the shadow of a vertical object (a pole, a door frame), hold it still, then press Check."),
                    responses: [("cancel", tr("Cancel")), ("shadow", tr("Check along the shadow")), ("sun", tr("Check at the sun"))],
                    suggested: "sun") { [unowned self] response in
            guard response == "sun" || response == "shadow", let bus else { return }
            let alignment = response
            bus.call(QiblaMethod.checkHeadingWithSun.rawValue, [Variant.string(alignment), Variant.bool(false)]) { [unowned self] result in
                switch result {
                case .failure(let error):
                    showToast(fill(tr("Cannot check now: {reason}"), ["reason": error.message]))
                case .success(let reply):
                    let error = reply.childCount == 1 ? reply.child(0).double : .nan
                    guard error.isFinite else { return }
                    let degrees = "\(Int(abs(error).rounded()))"
                    let heading = error >= 0 ? tr("The compass reads {degrees}° clockwise of the truth") : tr("The compass reads {degrees}° anticlockwise of the truth")
                    Adwaita.ask(parent: window, heading: fill(heading, ["degrees": degrees]),
                                body: tr("Correct the compass by this much from now on? Keep the phone as it is while it measures again."),
                                responses: [("keep", tr("Leave it")), ("store", tr("Correct"))], suggested: "store") { [unowned self] answer in
                        guard answer == "store" else { return }
                        bus.call(QiblaMethod.checkHeadingWithSun.rawValue, [Variant.string(alignment), Variant.bool(true)]) { [unowned self] result in
                            if case .failure(let error) = result { showToast(fill(tr("Cannot check now: {reason}"), ["reason": error.message])) }
                            else { showToast(tr("The compass is corrected")) }
                        }
                    }
                }
            }
        }
    }

    // MARK: The screenshot hook

    /// With `--screenshot`: once the page is complete (the compass page with a heading and the dial
    /// at rest, a second after the first heading; the others once their data arrived), renders
    /// the window to PNG, prints what it shows and quits.
    private func screenshotIfComplete() {
        guard options.screenshotPath != nil, !screenshotTaken else { return }
        let now = MainLoop.nowMicroseconds
        var page = screen.page
        if options.searchText != nil, manualRequested { page = .noPosition }
        let complete: Bool
        switch page {
        case .compass: complete = screen.dialNorthScreenDegrees != nil && screen.qiblaBearingDegrees != nil
            && screen.wedgeHalfWidthDegrees != nil && sunPositionArrived
        case .noCompass: complete = sunInfoArrived
        case .noPosition: complete = options.searchText != nil ? searchedOnce : !manualRequested
        case .noDaemon: complete = now - startedMicroseconds > 1_500_000
        case .connecting: complete = false
        }
        guard complete else { firstCompletePageMicroseconds = nil; return }
        if completePage != page || firstCompletePageMicroseconds == nil { firstCompletePageMicroseconds = now; completePage = page }
        let waited = now - (firstCompletePageMicroseconds ?? now)
        // The compass page waits for the daemon's smoothing window to fill (1.5 s) and the dial to settle.
        let wait: UInt64 = page == .compass ? 1_500_000 : 500_000
        if waited >= wait, dialAnimation.isSettled || page != .compass {
            MainLoop.everyMilliseconds(200) { [unowned self] in captureAndQuit(complete: true); return false }
            screenshotTaken = true
        }
    }

    private func captureAndQuit(complete: Bool, attempt: Int = 1) {
        guard let path = options.screenshotPath else { return }
        screenshotTaken = true
        let saved = Snapshot.savePNG(of: window, to: path)
        // The window's paintable is empty until its first frame after a change was drawn: look again shortly.
        if !saved && attempt < 20 {
            log("screenshot: nothing rendered yet (attempt \(attempt))")
            window.queueDraw()
            MainLoop.everyMilliseconds(100) { [unowned self] in captureAndQuit(complete: complete, attempt: attempt + 1); return false }
            return
        }
        print("page=\(shownPage?.rawValue ?? screen.page.rawValue)")
        print("header=\(Adwaita.subtitle(windowTitle))")
        for place in placeMatches { print("match=\(place.title)") }
        print("accessible=\(screen.accessibleDescription)")
        print("instruction=\(screen.instruction)")
        print("facing=\(screen.isFacing)")
        print("sun-check=\(sunCheckButton.isVisible ? "shown" : "hidden")")
        print("heading=\(properties.double(.heading).map { "\($0)" } ?? "nan")")
        print("qibla=\(properties.double(.qiblaBearing).map { "\($0)" } ?? "nan")")
        print("size=\(window.width)x\(window.height)")
        print("direction=\(window.isRightToLeft ? "rtl" : "ltr")")
        print("saved=\(saved)")
        exitStatus = saved && complete ? 0 : 1
        Adwaita.quit(app)
    }

    private(set) var exitStatus: Int32 = 0

    private func log(_ message: String) {
        if options.verbose { printError("qibla-compass: \(message)") }
    }
}
