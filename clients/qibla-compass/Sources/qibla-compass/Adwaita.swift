// SPDX-License-Identifier: Apache-2.0
// libadwaita 1.2: the only file of the app that calls it. The adaptive application window, the
// header bar, status pages, rows and toasts.
import CAdwaita
import CGtk
import CompassModel

enum Adwaita {
    /// Runs an AdwApplication (libadwaita's style manager, dark style, high contrast) and calls
    /// `activate` when it starts; returns the exit status. `unique`: one instance per session
    /// bus (a second start raises the first); tests and screenshots run non-unique.
    static func run(applicationID: String, unique: Bool, activate: @escaping (ObjectPointer) -> Void) -> Int32 {
        let app = adw_application_new(applicationID, unique ? G_APPLICATION_DEFAULT_FLAGS : G_APPLICATION_NON_UNIQUE)!
        let raw = UnsafeMutableRawPointer(app)
        Signal.connect0(raw, "activate") {
            // A second activation (the user started the app again) presents the existing window.
            if let window = gtk_application_get_active_window(cast(raw)) {
                gtk_window_present(window)
                return
            }
            activate(raw)
        }
        let status = g_application_run(cast(raw), 0, nil)
        g_object_unref(raw)
        return status
    }

    /// Whether the dark style is in use now; `changed` is called on each change.
    static func prefersDark(_ changed: @escaping (Bool) -> Void) -> Bool {
        let manager = adw_style_manager_get_default()
        Signal.connect1(UnsafeMutableRawPointer(manager!), "notify::dark") { _ in changed(adw_style_manager_get_dark(manager) != 0) }
        return adw_style_manager_get_dark(manager) != 0
    }

    static func quit(_ app: ObjectPointer) { g_application_quit(cast(app)) }

    /// An application window with `content`, titled, at the default size.
    static func window(app: ObjectPointer, title: String, width: Int32, height: Int32, content: Widget) -> Widget {
        let window = Widget(adw_application_window_new(cast(app)))
        // libadwaita 1.4 and later (Debian 13's 1.7) give the window a minimum of 360 × 200 px, wider
        // than a 320-px phone screen; the content fits 320 (WaylandTests), so that is the minimum.
        window.sizeRequest(width: 320, height: 200)
        gtk_window_set_title(window.c(), title)
        gtk_window_set_default_size(window.c(), width, height)
        adw_application_window_set_content(window.c(), content.pointer)
        return window
    }

    static func present(_ window: Widget) { gtk_window_present(window.c()) }

    /// A header bar with a title, `start` widgets and `end` widgets.
    static func headerBar(title: String, subtitle: String? = nil, start: [Widget] = [], end: [Widget] = []) -> (bar: Widget, title: Widget) {
        let bar = Widget(adw_header_bar_new())
        let titleWidget = Widget(adw_window_title_new(title, subtitle ?? ""))
        adw_header_bar_set_title_widget(bar.c(), titleWidget.pointer)
        for w in start { adw_header_bar_pack_start(bar.c(), w.pointer) }
        for w in end { adw_header_bar_pack_end(bar.c(), w.pointer) }
        return (bar, titleWidget)
    }

    static func setSubtitle(_ windowTitle: Widget, _ text: String) { adw_window_title_set_subtitle(windowTitle.c(), text) }
    static func subtitle(_ windowTitle: Widget) -> String { adw_window_title_get_subtitle(windowTitle.c()).map { String(cString: $0) } ?? "" }

    /// A status page: icon, title, description (Pango markup off) and an optional child.
    static func statusPage(icon: String, title: String, description: String, child: Widget? = nil) -> Widget {
        let page = Widget(adw_status_page_new())
        adw_status_page_set_icon_name(page.c(), icon)
        adw_status_page_set_title(page.c(), title)
        adw_status_page_set_description(page.c(), description)
        if let child { adw_status_page_set_child(page.c(), child.pointer) }
        return page
    }

    static func setStatusPage(_ page: Widget, title: String? = nil, description: String? = nil) {
        if let title { adw_status_page_set_title(page.c(), title) }
        if let description { adw_status_page_set_description(page.c(), description) }
    }

    /// A row with a title and a subtitle; returns the row and a label at its end for the value.
    static func valueRow(title: String) -> (row: Widget, value: Widget, subtitleSetter: (String) -> Void) {
        let row = Widget(adw_action_row_new())
        adw_preferences_row_set_title(row.c(), title)
        adw_preferences_row_set_use_markup(row.c(), 0)
        let value = Widget.label("", classes: ["numeric"])
        gtk_label_set_wrap(value.c(), 0)
        gtk_label_set_selectable(value.c(), 1)
        adw_action_row_add_suffix(row.c(), value.pointer)
        return (row, value, { adw_action_row_set_subtitle(row.c(), $0) })
    }

    /// A row of the place search: the name, and "city, region, country" under it; activatable.
    static func placeRow(title: String, subtitle: String) -> Widget {
        let row = Widget(adw_action_row_new())
        adw_preferences_row_set_title(row.c(), title)
        adw_preferences_row_set_use_markup(row.c(), 0)
        adw_action_row_set_subtitle(row.c(), subtitle)
        gtk_list_box_row_set_activatable(row.c(), 1)
        return row
    }

    /// A width-limited column (AdwClamp).
    static func clamp(_ child: Widget, maximumWidth: Int32) -> Widget {
        let clamp = Widget(adw_clamp_new())
        adw_clamp_set_maximum_size(clamp.c(), maximumWidth)
        adw_clamp_set_child(clamp.c(), child.pointer)
        return clamp
    }

    /// A toast overlay around `child`; the returned function shows a toast.
    static func toastOverlay(_ child: Widget) -> (overlay: Widget, show: (String) -> Void) {
        let overlay = Widget(adw_toast_overlay_new())
        adw_toast_overlay_set_child(overlay.c(), child.pointer)
        return (overlay, { text in
            let toast = adw_toast_new(text)
            adw_toast_set_timeout(toast, 5)
            adw_toast_overlay_add_toast(overlay.c(), toast)
        })
    }

    /// The About window (libadwaita 1.2–1.4) or dialog (1.5 and later; `qc_about_present`).
    static func about(parent: Widget, version: String) {
        qc_about_present(parent.pointer, tr("Qibla Compass"), "io.github.qiblad.Compass", version, "The qiblad developers",
                         GTK_LICENSE_APACHE_2_0, "https://github.com/qiblad/qiblad",
                         tr("The direction of the Kaaba, from qiblad's compass and position."))
    }

    /// A dialog with a heading, a body and responses (id, label); `done` gets the chosen id.
    static func ask(parent: Widget, heading: String, body: String, responses: [(String, String)],
                    suggested: String? = nil, done: @escaping (String) -> Void) {
        let dialog = Widget(qc_question_new(parent.pointer, heading, body))
        for (id, label) in responses { qc_question_add_response(dialog.pointer, id, label) }
        if let suggested { qc_question_suggest(dialog.pointer, suggested) }
        Signal.connect1(dialog.raw, "response") { response in
            done(response.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "close")
        }
        qc_question_present(dialog.pointer, parent.pointer)
    }
}
