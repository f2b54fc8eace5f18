// SPDX-License-Identifier: Apache-2.0
// GTK 4, GDK, GSK and cairo: the only file of the app that handles their raw pointers. Widgets
// are `Widget` values (a GtkWidget pointer, kept alive by its parent as GTK does); drawing goes
// through `Cairo`, a thin value over cairo_t.
import CGtk

/// A GtkWidget of any kind. GTK's type-cast macros are C macros; their checks are not needed for
/// pointers this file made itself, so `as(_:)` casts directly.
struct Widget {
    let pointer: UnsafeMutablePointer<GtkWidget>

    init(_ pointer: UnsafeMutablePointer<GtkWidget>) { self.pointer = pointer }
    init(_ raw: OpaquePointer) { pointer = UnsafeMutablePointer(raw) }

    var raw: ObjectPointer { UnsafeMutableRawPointer(pointer) }
    var opaque: OpaquePointer { OpaquePointer(pointer) }
    /// The widget as the pointer type a GTK or libadwaita function takes (the C cast macros'
    /// job): a typed pointer for public structs, an OpaquePointer for final types.
    func c<T>() -> UnsafeMutablePointer<T> { raw.assumingMemoryBound(to: T.self) }
    func c() -> OpaquePointer { opaque }
    func `as`<T>(_: T.Type) -> UnsafeMutablePointer<T> { UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: T.self) }

    /// Whether GTK lays this widget out right to left (mirrored).
    var isRightToLeft: Bool { gtk_widget_get_direction(pointer) == GTK_TEXT_DIR_RTL }
    /// The direction new widgets take (GTK's default, from its own catalogue, until set).
    static func setDefaultDirection(rightToLeft: Bool) {
        gtk_widget_set_default_direction(rightToLeft ? GTK_TEXT_DIR_RTL : GTK_TEXT_DIR_LTR)
    }

    // MARK: Constructors
    static func label(_ text: String = "", classes: [String] = []) -> Widget {
        let w = Widget(gtk_label_new(text)); w.addClasses(classes)
        gtk_label_set_wrap(w.c(), 1)
        gtk_label_set_justify(w.c(), GTK_JUSTIFY_CENTER)
        return w
    }
    static func box(vertical: Bool, spacing: Int32 = 12) -> Widget {
        Widget(gtk_box_new(vertical ? GTK_ORIENTATION_VERTICAL : GTK_ORIENTATION_HORIZONTAL, spacing))
    }
    static func button(_ label: String, classes: [String] = []) -> Widget {
        let w = Widget(gtk_button_new_with_label(label)); w.addClasses(classes); return w
    }
    static func iconButton(_ icon: String, tooltip: String) -> Widget {
        let w = Widget(gtk_button_new_from_icon_name(icon)); gtk_widget_set_tooltip_text(w.pointer, tooltip); return w
    }
    /// A button showing a menu (the header bar's primary menu); the button keeps the model.
    static func menuButton(icon: String, tooltip: String, menu: ObjectPointer) -> Widget {
        let w = Widget(gtk_menu_button_new())
        gtk_menu_button_set_icon_name(w.c(), icon)
        gtk_menu_button_set_menu_model(w.c(), cast(menu))
        gtk_widget_set_tooltip_text(w.pointer, tooltip)
        g_object_unref(menu)
        return w
    }
    static func entry(placeholder: String) -> Widget {
        let w = Widget(gtk_entry_new())
        gtk_entry_set_placeholder_text(w.c(), placeholder)
        gtk_entry_set_input_purpose(w.c(), GTK_INPUT_PURPOSE_NUMBER)
        return w
    }
    /// A search field (a GtkSearchEntry: `changed` is its `search-changed`, sent a moment after
    /// the last key, so a fast typist costs one search, not one per key).
    static func searchEntry(placeholder: String) -> Widget {
        let w = Widget(gtk_search_entry_new())
        // GTK 4.8 has the property but not yet its setter (4.10).
        var value = GValue()
        g_value_init(&value, GType(16 << G_TYPE_FUNDAMENTAL_SHIFT))  // G_TYPE_STRING
        g_value_set_string(&value, placeholder)
        g_object_set_property(w.c(), "placeholder-text", &value)
        g_value_unset(&value)
        return w
    }
    static func progressBar() -> Widget { Widget(gtk_progress_bar_new()) }
    static func stack() -> Widget {
        let w = Widget(gtk_stack_new()); gtk_stack_set_transition_type(w.c(), GTK_STACK_TRANSITION_TYPE_CROSSFADE); return w
    }
    /// A vertically scrolling view of `child`. `widthFollowsContent` false: the view asks for no
    /// width of its own (GTK_POLICY_EXTERNAL), so the child's width request does not reach the window.
    static func scrolled(_ child: Widget, widthFollowsContent: Bool = true) -> Widget {
        let w = Widget(gtk_scrolled_window_new())
        gtk_scrolled_window_set_policy(w.c(), widthFollowsContent ? GTK_POLICY_NEVER : GTK_POLICY_EXTERNAL, GTK_POLICY_AUTOMATIC)
        gtk_scrolled_window_set_child(w.c(), child.pointer)
        return w
    }
    static func listBox(selectable: Bool = false) -> Widget {
        let w = Widget(gtk_list_box_new())
        gtk_list_box_set_selection_mode(w.c(), selectable ? GTK_SELECTION_SINGLE : GTK_SELECTION_NONE)
        w.addClasses(["boxed-list"])
        return w
    }

    // MARK: Common properties
    func addClasses(_ classes: [String]) { for c in classes { gtk_widget_add_css_class(pointer, c) } }
    func removeClass(_ c: String) { gtk_widget_remove_css_class(pointer, c) }
    func setClass(_ c: String, _ on: Bool) { on ? addClasses([c]) : removeClass(c) }
    var isVisible: Bool {
        get { gtk_widget_get_visible(pointer) != 0 }
        nonmutating set { if isVisible != newValue { gtk_widget_set_visible(pointer, newValue ? 1 : 0) } }
    }
    func expand(horizontal: Bool, vertical: Bool) {
        gtk_widget_set_hexpand(pointer, horizontal ? 1 : 0); gtk_widget_set_vexpand(pointer, vertical ? 1 : 0)
    }
    func margins(_ m: Int32) {
        gtk_widget_set_margin_top(pointer, m); gtk_widget_set_margin_bottom(pointer, m)
        gtk_widget_set_margin_start(pointer, m); gtk_widget_set_margin_end(pointer, m)
    }
    func align(horizontal: GtkAlign, vertical: GtkAlign) {
        gtk_widget_set_halign(pointer, horizontal); gtk_widget_set_valign(pointer, vertical)
    }
    func sizeRequest(width: Int32, height: Int32) { gtk_widget_set_size_request(pointer, width, height) }
    func grabFocus() { _ = gtk_widget_grab_focus(pointer) }
    func queueDraw() { gtk_widget_queue_draw(pointer) }
    var width: Int { Int(gtk_widget_get_width(pointer)) }
    var height: Int { Int(gtk_widget_get_height(pointer)) }

    // MARK: Containers and content
    func append(_ child: Widget) { gtk_box_append(c(), child.pointer) }
    func setOrientation(vertical: Bool) {
        gtk_orientable_set_orientation(c(), vertical ? GTK_ORIENTATION_VERTICAL : GTK_ORIENTATION_HORIZONTAL)
    }
    func setHomogeneous(_ on: Bool) { gtk_box_set_homogeneous(c(), on ? 1 : 0) }
    func addPage(_ child: Widget, name: String) { _ = gtk_stack_add_named(c(), child.pointer, name) }
    func showPage(_ name: String) {
        if let current = gtk_stack_get_visible_child_name(opaque), String(cString: current) == name { return }
        gtk_stack_set_visible_child_name(c(), name)
    }
    func listAppend(_ row: Widget) { gtk_list_box_append(c(), row.pointer) }
    func removeAllRows() {
        while let row = gtk_list_box_get_row_at_index(c(), 0) { gtk_list_box_remove(c(), UnsafeMutableRawPointer(row).assumingMemoryBound(to: GtkWidget.self)) }
    }
    func setText(_ text: String) {
        if let current = gtk_label_get_text(opaque), String(cString: current) == text { return }
        gtk_label_set_text(c(), text)
    }
    func setFraction(_ f: Double) { gtk_progress_bar_set_fraction(c(), f) }
    var entryText: String {
        get { String(cString: gtk_editable_get_text(opaque)) }
        nonmutating set { gtk_editable_set_text(c(), newValue) }
    }

    // MARK: Signals
    func onClicked(_ action: @escaping () -> Void) { Signal.connect0(raw, "clicked", action) }
    func onActivate(_ action: @escaping () -> Void) { Signal.connect0(raw, "activate", action) }
    func onChanged(_ action: @escaping () -> Void) { Signal.connect0(raw, "changed", action) }
    /// A search entry's `search-changed`: a moment after the last key.
    func onSearchChanged(_ action: @escaping () -> Void) { Signal.connect0(raw, "search-changed", action) }
    /// A list box's `row-activated`, with the row's index.
    func onRowActivated(_ action: @escaping (Int) -> Void) {
        Signal.connect1(raw, "row-activated") { row in
            guard let row else { return }
            action(Int(gtk_list_box_row_get_index(row.assumingMemoryBound(to: GtkListBoxRow.self))))
        }
    }
    func onMap(_ action: @escaping (Bool) -> Void) {
        Signal.connect0(raw, "map") { action(true) }
        Signal.connect0(raw, "unmap") { action(false) }
    }

    // MARK: Accessibility
    /// The description a screen reader speaks for this widget (ARIA `aria-description`).
    func setAccessibleDescription(_ text: String) {
        var value = GValue()
        g_value_init(&value, GType(16 << G_TYPE_FUNDAMENTAL_SHIFT))  // G_TYPE_STRING
        g_value_set_string(&value, text)
        var property = GTK_ACCESSIBLE_PROPERTY_DESCRIPTION
        gtk_accessible_update_property_value(c(), 1, &property, &value)
        g_value_unset(&value)
    }
    func setAccessibleLabel(_ text: String) {
        var value = GValue()
        g_value_init(&value, GType(16 << G_TYPE_FUNDAMENTAL_SHIFT))
        g_value_set_string(&value, text)
        var property = GTK_ACCESSIBLE_PROPERTY_LABEL
        gtk_accessible_update_property_value(c(), 1, &property, &value)
        g_value_unset(&value)
    }
}

// MARK: Drawing

/// A drawing area that calls `draw` with a cairo context and its size, and a frame-clocked
/// animation hook: ``animate(_:)`` asks for frames until its step returns false.
final class DrawingArea {
    let widget: Widget
    private let draw: (Cairo, Double, Double) -> Void
    private var tickID: guint = 0
    private var lastFrameMicroseconds: Int = 0
    private var step: ((Double) -> Bool)?

    /// - Parameter label: what screen readers call it; the area is an image to them (ARIA role img).
    init(label: String, draw: @escaping (Cairo, Double, Double) -> Void) {
        // The accessible role is a construct-only property: set it as the object is made.
        var role = GValue()
        g_value_init(&role, gtk_accessible_role_get_type())
        g_value_set_enum(&role, gint(GTK_ACCESSIBLE_ROLE_IMG.rawValue))
        var names: [UnsafePointer<CChar>?] = []
        let object = "accessible-role".withCString { name -> UnsafeMutablePointer<GObject>? in
            names = [name]
            return names.withUnsafeMutableBufferPointer { g_object_new_with_properties(gtk_drawing_area_get_type(), 1, $0.baseAddress, &role) }
        }
        g_value_unset(&role)
        widget = Widget(UnsafeMutableRawPointer(object!).assumingMemoryBound(to: GtkWidget.self))
        widget.setAccessibleLabel(label)
        self.draw = draw
        let drawFunction: GtkDrawingAreaDrawFunc = { _, cairo, width, height, data in
            guard let cairo, let data else { return }
            let area = Unmanaged<DrawingArea>.fromOpaque(data).takeUnretainedValue()
            area.draw(Cairo(cairo), Double(width), Double(height))
        }
        // The widget owns no reference to self: the window keeps the DrawingArea alive for its lifetime.
        gtk_drawing_area_set_draw_func(widget.c(), drawFunction, Unmanaged.passUnretained(self).toOpaque(), nil)
    }

    /// Runs `step(seconds since the previous frame)` on each frame until it returns false, redrawing each time.
    func animate(_ step: @escaping (Double) -> Bool) {
        self.step = step
        guard tickID == 0 else { return }
        lastFrameMicroseconds = 0
        let tick: GtkTickCallback = { _, clock, data in
            let area = Unmanaged<DrawingArea>.fromOpaque(data!).takeUnretainedValue()
            let now = Int(gdk_frame_clock_get_frame_time(clock))
            let seconds = area.lastFrameMicroseconds == 0 ? 1.0 / 60 : Double(now - area.lastFrameMicroseconds) / 1e6
            area.lastFrameMicroseconds = now
            let more = area.step?(seconds) ?? false
            area.widget.queueDraw()
            if !more { area.tickID = 0; area.step = nil }
            return more ? 1 : 0  // G_SOURCE_CONTINUE / G_SOURCE_REMOVE
        }
        tickID = gtk_widget_add_tick_callback(widget.pointer, tick, Unmanaged.passUnretained(self).toOpaque(), nil)
    }

    var isAnimating: Bool { tickID != 0 }

}

/// cairo_t, as the drawing code needs it.
struct Cairo {
    let context: OpaquePointer
    init(_ context: OpaquePointer) { self.context = context }

    func save() { cairo_save(context) }
    func restore() { cairo_restore(context) }
    func translate(_ x: Double, _ y: Double) { cairo_translate(context, x, y) }
    /// Rotates clockwise on screen by `degrees` (cairo's y axis points down).
    func rotate(degrees: Double) { cairo_rotate(context, degrees * .pi / 180) }
    func color(_ r: Double, _ g: Double, _ b: Double, _ a: Double = 1) { cairo_set_source_rgba(context, r, g, b, a) }
    func color(_ c: RGB, alpha: Double = 1) { color(c.r, c.g, c.b, alpha) }
    func lineWidth(_ w: Double) { cairo_set_line_width(context, w) }
    func roundCaps() { cairo_set_line_cap(context, CAIRO_LINE_CAP_ROUND) }
    func move(_ x: Double, _ y: Double) { cairo_move_to(context, x, y) }
    func line(_ x: Double, _ y: Double) { cairo_line_to(context, x, y) }
    func close() { cairo_close_path(context) }
    func newPath() { cairo_new_path(context) }
    /// An arc from `from` to `to` degrees clockwise from the top (screen convention).
    func arc(_ x: Double, _ y: Double, radius: Double, from: Double = 0, to: Double = 360) {
        cairo_arc(context, x, y, radius, (from - 90) * .pi / 180, (to - 90) * .pi / 180)
    }
    func fill() { cairo_fill(context) }
    func fillPreserve() { cairo_fill_preserve(context) }
    func stroke() { cairo_stroke(context) }
}

/// A path copied out of a cairo context (a text outline), filled again without re-making it.
final class CairoPath {
    let path: UnsafeMutablePointer<cairo_path_t>
    init(_ path: UnsafeMutablePointer<cairo_path_t>) { self.path = path }
    deinit { cairo_path_destroy(path) }
}

extension Cairo {
    /// The outline of `text` centred on (x, y), in the current transformation's user space.
    func textOutline(_ text: String, x: Double, y: Double, size: Double, bold: Bool) -> CairoPath {
        cairo_select_font_face(context, "Cantarell", CAIRO_FONT_SLANT_NORMAL, bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(context, size)
        var extents = cairo_text_extents_t()
        cairo_text_extents(context, text, &extents)
        cairo_new_path(context)
        cairo_move_to(context, x - extents.width / 2 - extents.x_bearing, y - extents.height / 2 - extents.y_bearing)
        cairo_text_path(context, text)
        let path = CairoPath(cairo_copy_path(context))
        cairo_new_path(context)
        return path
    }

    /// Fills a stored path with the current source.
    func fill(_ path: CairoPath) {
        cairo_new_path(context)
        cairo_append_path(context, path.path)
        cairo_fill(context)
    }
}

/// A colour, components 0…1.
struct RGB: Equatable {
    var r, g, b: Double
    init(_ r: Double, _ g: Double, _ b: Double) { self.r = r; self.g = g; self.b = b }
    /// From 0…255 components.
    init(bytes r: Int, _ g: Int, _ b: Int) { self.init(Double(r) / 255, Double(g) / 255, Double(b) / 255) }
}

// MARK: The window as a picture

enum Snapshot {
    /// Renders `widget` (a realised window) as it is drawn now and saves it as PNG; false when it
    /// cannot (not realised, or the file cannot be written).
    static func savePNG(of widget: Widget, to path: String) -> Bool {
        guard let native = gtk_widget_get_native(widget.pointer), let renderer = gtk_native_get_renderer(native) else { return false }
        let width = gtk_widget_get_width(widget.pointer), height = gtk_widget_get_height(widget.pointer)
        guard width > 0, height > 0 else { return false }
        let paintable = gtk_widget_paintable_new(widget.pointer)
        defer { g_object_unref(UnsafeMutableRawPointer(paintable)) }
        let snapshot = gtk_snapshot_new()
        gdk_paintable_snapshot(paintable, snapshot, Double(width), Double(height))
        guard let node = gtk_snapshot_free_to_node(snapshot) else { return false }
        defer { gsk_render_node_unref(node) }
        var bounds = graphene_rect_t(origin: graphene_point_t(x: 0, y: 0), size: graphene_size_t(width: Float(width), height: Float(height)))
        guard let texture = gsk_renderer_render_texture(renderer, node, &bounds) else { return false }
        defer { g_object_unref(UnsafeMutableRawPointer(texture)) }
        return gdk_texture_save_to_png(texture, path) != 0
    }
}

/// The toplevel's surface: its size as laid out, and whether it is minimised.
enum Toplevel {
    /// Calls `layout(width, height)` whenever the window's surface is laid out, and `minimised` on
    /// each change of the toplevel's minimised state. Call once the window is realised.
    static func observe(_ window: Widget, layout: @escaping (Int, Int) -> Void, minimised: @escaping (Bool) -> Void) {
        guard let native = gtk_widget_get_native(window.pointer), let surface = gtk_native_get_surface(native) else { return }
        let raw = UnsafeMutableRawPointer(surface)
        Signal.connectSize(raw, "layout", layout)
        Signal.connect1(raw, "notify::state") { _ in
            let state = gdk_toplevel_get_state(OpaquePointer(raw))
            minimised(state.rawValue & GDK_TOPLEVEL_STATE_MINIMIZED.rawValue != 0)
        }
    }
}

/// Whether one of the app's windows has the keyboard focus (GTK's `is-active`).
enum AppFocus {
    /// Calls `changed(any window active)` once focus settles after each change of any of the app's
    /// windows (looked at 300 ms after the change: focus passes from the main window to its own
    /// dialog without counting as lost). Call before the app's first window is made.
    static func follow(app: ObjectPointer, _ changed: @escaping (Bool) -> Void) {
        final class State { var pending = false; var last: Bool? }
        let state = State()
        let look = {
            guard !state.pending else { return }
            state.pending = true
            MainLoop.everyMilliseconds(300) {
                state.pending = false
                var active = false
                var list = gtk_application_get_windows(cast(app))
                while let node = list { if gtk_window_is_active(node.pointee.data.assumingMemoryBound(to: GtkWindow.self)) != 0 { active = true }; list = node.pointee.next }
                if active != state.last { state.last = active; changed(active) }
                return false
            }
        }
        Signal.connect1(app, "window-added") { window in
            guard let window else { return }
            Signal.connect1(window, "notify::is-active") { _ in look() }
        }
    }
}
