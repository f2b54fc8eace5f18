// SPDX-License-Identifier: Apache-2.0
// GLib, GObject and GIO (GDBus): the only file of the app that handles their raw pointers.
// Signals take Swift closures (boxed, released by GLib's destroy notify); GVariants become
// PropertyValue and Swift tuples; bus calls are asynchronous and answer on the main loop.
import CGtk
import QiblaInterface
#if canImport(Glibc)
import Glibc
#endif

/// A GObject pointer of any type, as GLib's functions take it.
typealias ObjectPointer = UnsafeMutableRawPointer

/// A GObject pointer as the typed pointer a function takes (GLib's cast macros' job).
func cast<T>(_ p: ObjectPointer) -> UnsafeMutablePointer<T> { p.assumingMemoryBound(to: T.self) }

/// Takes a GLib string (freeing it when `free` is true).
func swiftString(_ pointer: UnsafeMutablePointer<gchar>?, free: Bool) -> String? {
    guard let pointer else { return nil }
    defer { if free { g_free(pointer) } }
    return String(cString: pointer)
}

// MARK: Signals

/// What GLib holds as a handler's user data; released by the destroy notify.
private class AnyHandler {}

private final class Handler<Arguments>: AnyHandler {
    let call: (Arguments) -> Void
    init(_ call: @escaping (Arguments) -> Void) { self.call = call }
}

private func box<A>(_ f: @escaping (A) -> Void) -> gpointer {
    Unmanaged.passRetained(Handler(f)).toOpaque()
}

/// The destroy notify of every handler box.
private func release<A>(_ type: A.Type) -> GClosureNotify {
    { data, _ in if let data { Unmanaged<AnyHandler>.fromOpaque(data).release() } }
}

enum Signal {
    /// Handler signature `(instance, user_data)`: `clicked`, `activate`, `map`, `unmap`.
    static func connect0(_ object: ObjectPointer, _ name: String, _ action: @escaping () -> Void) {
        let handler: @convention(c) (gpointer?, gpointer?) -> Void = { _, data in
            Unmanaged<Handler<Void>>.fromOpaque(data!).takeUnretainedValue().call(())
        }
        g_signal_connect_data(object, name, unsafeBitCast(handler, to: GCallback.self), box { (_: Void) in action() },
                              release(Void.self), GConnectFlags(rawValue: 0))
    }

    /// Handler signature `(instance, pointer argument, user_data)`: `notify::…`, `response`.
    static func connect1(_ object: ObjectPointer, _ name: String, _ action: @escaping (gpointer?) -> Void) {
        let handler: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, argument, data in
            Unmanaged<Handler<gpointer?>>.fromOpaque(data!).takeUnretainedValue().call(argument)
        }
        g_signal_connect_data(object, name, unsafeBitCast(handler, to: GCallback.self), box(action),
                              release(gpointer?.self), GConnectFlags(rawValue: 0))
    }

    /// Handler signature `(instance, pointer, pointer, user_data)`: `g-properties-changed`.
    static func connect2(_ object: ObjectPointer, _ name: String, _ action: @escaping () -> Void) {
        let handler: @convention(c) (gpointer?, gpointer?, gpointer?, gpointer?) -> Void = { _, _, _, data in
            Unmanaged<Handler<Void>>.fromOpaque(data!).takeUnretainedValue().call(())
        }
        g_signal_connect_data(object, name, unsafeBitCast(handler, to: GCallback.self), box { (_: Void) in action() },
                              release(Void.self), GConnectFlags(rawValue: 0))
    }

    /// Handler signature `(instance, int, int, user_data)`: GdkSurface `layout`.
    static func connectSize(_ object: ObjectPointer, _ name: String, _ action: @escaping (Int, Int) -> Void) {
        let handler: @convention(c) (gpointer?, gint, gint, gpointer?) -> Void = { _, width, height, data in
            Unmanaged<Handler<(Int, Int)>>.fromOpaque(data!).takeUnretainedValue().call((Int(width), Int(height)))
        }
        g_signal_connect_data(object, name, unsafeBitCast(handler, to: GCallback.self), box(action),
                              release((Int, Int).self), GConnectFlags(rawValue: 0))
    }
}

// MARK: Actions and menus

enum Actions {
    /// Adds a parameterless action `name` to an action map (the application: `app.NAME`), which
    /// menus, keyboard shortcuts and other processes (org.gtk.Actions on the bus) activate.
    static func add(to map: ObjectPointer, name: String, _ activate: @escaping () -> Void) {
        guard let action = g_simple_action_new(name, nil) else { return }
        Signal.connect1(UnsafeMutableRawPointer(action), "activate") { _ in activate() }
        g_action_map_add_action(OpaquePointer(map), action)
        g_object_unref(UnsafeMutableRawPointer(action))
    }

    /// A boolean action `name` (a check item in a menu): activating it asks `changed` for the new
    /// state; the returned function sets the shown state (once the change is done, or from outside).
    static func addToggle(to map: ObjectPointer, name: String, _ changed: @escaping (Bool) -> Void) -> (Bool) -> Void {
        guard let action = g_simple_action_new_stateful(name, nil, g_variant_new_boolean(0)) else { return { _ in } }
        let raw = UnsafeMutableRawPointer(action)
        Signal.connect1(raw, "change-state") { value in
            guard let value else { return }
            changed(g_variant_get_boolean(OpaquePointer(value)) != 0)
        }
        g_action_map_add_action(OpaquePointer(map), action)
        return { state in g_simple_action_set_state(action, g_variant_new_boolean(state ? 1 : 0)) }
    }

    /// A menu model of (label, detailed action name) items.
    static func menu(_ items: [(String, String)]) -> ObjectPointer {
        let menu = g_menu_new()!
        for (label, action) in items { g_menu_append(menu, label, action) }
        return UnsafeMutableRawPointer(menu)
    }
}

// MARK: Main loop

enum MainLoop {
    /// Calls `action` every `milliseconds` until it returns false (GLib's monotonic timeout).
    @discardableResult
    static func everyMilliseconds(_ milliseconds: UInt32, _ action: @escaping () -> Bool) -> UInt32 {
        final class Repeating { let f: () -> Bool; init(_ f: @escaping () -> Bool) { self.f = f } }
        let handler: @convention(c) (gpointer?) -> gboolean = { data in
            Unmanaged<Repeating>.fromOpaque(data!).takeUnretainedValue().f() ? 1 : 0
        }
        let destroy: GDestroyNotify = { data in Unmanaged<Repeating>.fromOpaque(data!).release() }
        return g_timeout_add_full(G_PRIORITY_DEFAULT, milliseconds, handler,
                                  Unmanaged.passRetained(Repeating(action)).toOpaque(), destroy)
    }

    /// Runs `work` on a thread of its own (a GThread, detached), then `done` with its result on
    /// the main loop (an idle source of the default main context, which `g_idle_add` may be
    /// given from any thread): the way slow work leaves the GTK main loop free. `done` is called
    /// once, on the thread that runs the main loop.
    static func inBackground<Result: Sendable>(named name: String, _ work: @escaping @Sendable () -> Result,
                                               then done: @escaping (Result) -> Void) {
        let job = BackgroundJob(work: work, done: done)
        let run: @convention(c) (gpointer?) -> gpointer? = { data in
            let job = Unmanaged<AnyBackgroundJob>.fromOpaque(data!).takeUnretainedValue()
            job.runWork()
            let deliver: @convention(c) (gpointer?) -> gboolean = { data in
                Unmanaged<AnyBackgroundJob>.fromOpaque(data!).takeUnretainedValue().deliver()
                return 0  // G_SOURCE_REMOVE
            }
            let release: GDestroyNotify = { data in Unmanaged<AnyBackgroundJob>.fromOpaque(data!).release() }
            // The job's reference passes to the idle source, which releases it after delivering.
            g_idle_add_full(G_PRIORITY_DEFAULT, deliver, data, release)
            return nil
        }
        let thread = g_thread_new(name, run, Unmanaged<AnyBackgroundJob>.passRetained(job).toOpaque())
        g_thread_unref(thread)  // detached: nobody joins it
    }

    /// Runs the default main context until `body`'s `quit` is called (the app's own loop is
    /// GApplication's; this one is for `--find-place`, which has no window).
    static func run(_ body: (_ quit: @escaping () -> Void) -> Void) {
        let loop = g_main_loop_new(nil, 0)
        body { g_main_loop_quit(loop) }
        g_main_loop_run(loop)
        g_main_loop_unref(loop)
    }

    /// Whether the caller is the thread running the main loop (the owner of GLib's default main context).
    static var isOnMainLoop: Bool { g_main_context_is_owner(nil) != 0 }

    /// GLib's monotonic clock, microseconds (for durations).
    static var monotonicMicroseconds: UInt64 { UInt64(max(0, g_get_monotonic_time())) }

    /// The processor time this thread has used, microseconds (CLOCK_THREAD_CPUTIME_ID): what a
    /// step costs, whatever else the machine runs.
    static var threadCPUMicroseconds: UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return UInt64(t.tv_sec) * 1_000_000 + UInt64(t.tv_nsec) / 1000
    }

    /// The wall clock, microseconds since the Unix epoch.
    static var nowMicroseconds: UInt64 { UInt64(max(0, g_get_real_time())) }

    /// A time as local "14:32" (format as strftime/GDateTime, e.g. "%H:%M", "%-d %B").
    static func localTime(_ microseconds: UInt64, format: String) -> String {
        guard let dateTime = g_date_time_new_from_unix_local(gint64(microseconds / 1_000_000)) else { return "" }
        defer { g_date_time_unref(dateTime) }
        return swiftString(g_date_time_format(dateTime, format), free: true) ?? ""
    }
}

/// What ``MainLoop/inBackground(named:_:then:)`` hands between its two threads, type-erased for
/// the C callbacks.
private class AnyBackgroundJob: @unchecked Sendable {
    func runWork() {}
    func deliver() {}
}

/// `work` and its result are touched by the worker thread until it adds the idle source; `done`
/// and the result afterwards by the main loop only (g_idle_add's lock of the main context orders
/// the two), hence unchecked.
private final class BackgroundJob<Result: Sendable>: AnyBackgroundJob, @unchecked Sendable {
    private let work: @Sendable () -> Result
    private let done: (Result) -> Void
    private var result: Result?

    init(work: @escaping @Sendable () -> Result, done: @escaping (Result) -> Void) {
        self.work = work
        self.done = done
    }

    override func runWork() { result = work() }
    override func deliver() { if let result { done(result) } }
}

// MARK: The process

enum Environment {
    /// An environment variable, nil when unset.
    static func value(_ name: String) -> String? { g_getenv(name).map { String(cString: $0) } }
    static var processID: Int32 { getpid() }
}

// MARK: GVariant

/// A GVariant reference (owned: unreffed when released).
final class Variant {
    let pointer: OpaquePointer
    init(owning pointer: OpaquePointer) { self.pointer = pointer }
    deinit { g_variant_unref(pointer) }

    var typeString: String { String(cString: g_variant_get_type_string(pointer)) }
    var childCount: Int { Int(g_variant_n_children(pointer)) }
    func child(_ index: Int) -> Variant { Variant(owning: g_variant_get_child_value(pointer, gsize(index))) }
    var double: Double { g_variant_get_double(pointer) }
    var uint64: UInt64 { UInt64(g_variant_get_uint64(pointer)) }
    var bool: Bool { g_variant_get_boolean(pointer) != 0 }
    var string: String { String(cString: g_variant_get_string(pointer, nil)) }
    /// The value inside a `v`; itself for any other type.
    var unboxed: Variant { typeString == "v" ? Variant(owning: g_variant_get_variant(pointer)) : self }
    /// The value under `key` in an `a{sv}`, nil when absent.
    func lookup(_ key: String) -> Variant? {
        guard typeString == "a{sv}", let value = g_variant_lookup_value(pointer, key, nil) else { return nil }
        return Variant(owning: value)
    }
    /// An object path (`o`) or string.
    var objectPath: String { string }

    /// The property value for the interface's basic types (d, b, s, t); nil for any other.
    var propertyValue: PropertyValue? {
        switch typeString {
        case "d": .double(double)
        case "b": .bool(bool)
        case "s": .string(string)
        case "t": .uint64(uint64)
        default: nil
        }
    }

    /// A floating tuple of arguments, for a call.
    static func tuple(_ items: [OpaquePointer]) -> OpaquePointer {
        var children: [OpaquePointer?] = items
        return children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
    }
    static func double(_ x: Double) -> OpaquePointer { g_variant_new_double(x) }
    static func string(_ s: String) -> OpaquePointer { g_variant_new_string(s) }
    static func bool(_ b: Bool) -> OpaquePointer { g_variant_new_boolean(b ? 1 : 0) }
    static func int32(_ i: Int32) -> OpaquePointer { g_variant_new_int32(i) }
    static func uint64(_ t: UInt64) -> OpaquePointer { g_variant_new_uint64(guint64(t)) }
    static func uint32(_ u: UInt32) -> OpaquePointer { g_variant_new_uint32(guint32(u)) }
    /// An `as`.
    static func strings(_ items: [String]) -> OpaquePointer {
        let type = g_variant_type_new("s")
        defer { g_variant_type_free(type) }
        var children: [OpaquePointer?] = items.map { g_variant_new_string($0) }
        return children.withUnsafeMutableBufferPointer { g_variant_new_array(type, $0.baseAddress, gsize($0.count)) }
    }
    /// An empty `a{sv}`.
    static func emptyDictionary() -> OpaquePointer {
        let type = g_variant_type_new("{sv}")
        defer { g_variant_type_free(type) }
        return g_variant_new_array(type, nil, 0)
    }
}

// MARK: The bus

/// What a failed call said: the D-Bus error name (remote) and message.
struct BusError: Error {
    var name: String
    var message: String
}

/// A GDBus connection (session or system bus) for calls to, and signals from, other services.
final class BusConnection {
    let connection: OpaquePointer

    init(system: Bool) throws(BusError) {
        var error: UnsafeMutablePointer<GError>?
        guard let connection = g_bus_get_sync(system ? G_BUS_TYPE_SYSTEM : G_BUS_TYPE_SESSION, nil, &error) else {
            throw BusProxy.take(error)
        }
        self.connection = connection
    }

    init(connection: OpaquePointer) { self.connection = connection }

    /// A call whose reply is ignored (feedbackd).
    func send(destination: String, path: String, interface: String, method: String, _ arguments: [OpaquePointer]) {
        g_dbus_connection_call(connection, destination, path, interface, method, Variant.tuple(arguments), nil,
                               G_DBUS_CALL_FLAGS_NO_AUTO_START, 2000, nil, nil, nil)
    }

    /// Subscribes to a signal (any sender; any path when `path` is nil); `action` gets its first
    /// argument when it is a boolean (`ActiveChanged` of org.gnome.ScreenSaver and org.freedesktop.ScreenSaver).
    func onBooleanSignal(interface: String, member: String, path: String?, _ action: @escaping (Bool) -> Void) {
        subscribe(sender: nil, interface: interface, member: member, path: path) { tuple in
            guard tuple.childCount >= 1 else { return }
            let first = tuple.child(0)
            if first.typeString == "b" { action(first.bool) }
        }
    }

    /// Follows one boolean property of an object (`PropertiesChanged`, then a `Get`):
    /// logind's session `LockedHint`. `changed` gets each value the property takes.
    func followBooleanProperty(destination: String, path: String, interface: String, name: String,
                               _ changed: @escaping (Bool) -> Void) {
        subscribe(sender: destination, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: path) { tuple in
            guard tuple.childCount >= 2, tuple.child(0).typeString == "s", tuple.child(0).string == interface else { return }
            if let value = tuple.child(1).lookup(name), value.typeString == "b" { changed(value.bool) }
        }
        call(destination: destination, path: path, interface: "org.freedesktop.DBus.Properties", method: "Get",
             [Variant.string(interface), Variant.string(name)]) { reply in
            guard let reply, reply.childCount == 1 else { return }
            let value = reply.child(0).unboxed
            if value.typeString == "b" { changed(value.bool) }
        }
    }

    /// A method call to another service; `done` gets the reply's tuple, or nil on any error (no
    /// such service, no such method). No D-Bus activation, a 2 s timeout: for optional services.
    func call(destination: String, path: String, interface: String, method: String, _ arguments: [OpaquePointer] = [],
              _ done: @escaping (Variant?) -> Void) {
        callReporting(destination: destination, path: path, interface: interface, method: method, arguments,
                      autoStart: false, timeoutMilliseconds: 2000) { done(try? $0.get()) }
    }

    /// A method call with its error: `done` gets the reply's tuple or the error (systemd's manager).
    func callReporting(destination: String, path: String, interface: String, method: String, _ arguments: [OpaquePointer] = [],
                       autoStart: Bool = true, timeoutMilliseconds: Int32 = 25_000,
                       _ done: @escaping (Result<Variant, BusError>) -> Void) {
        final class Done { let f: (Result<Variant, BusError>) -> Void; init(_ f: @escaping (Result<Variant, BusError>) -> Void) { self.f = f } }
        let callback: GAsyncReadyCallback = { source, result, data in
            let done = Unmanaged<Done>.fromOpaque(data!).takeRetainedValue()
            var error: UnsafeMutablePointer<GError>?
            guard let reply = g_dbus_connection_call_finish(OpaquePointer(source), result, &error) else {
                done.f(.failure(BusProxy.take(error)))
                return
            }
            done.f(.success(Variant(owning: reply)))
        }
        g_dbus_connection_call(connection, destination, path, interface, method, arguments.isEmpty ? nil : Variant.tuple(arguments),
                               nil, autoStart ? G_DBUS_CALL_FLAGS_NONE : G_DBUS_CALL_FLAGS_NO_AUTO_START, timeoutMilliseconds, nil,
                               callback, Unmanaged.passRetained(Done(done)).toOpaque())
    }

    /// A method call whose reply is one boolean (`GetActive`); nil when there is no such service
    /// or the reply is something else.
    func callForBoolean(destination: String, path: String, interface: String, method: String,
                        _ done: @escaping (Bool?) -> Void) {
        call(destination: destination, path: path, interface: interface, method: method) { reply in
            guard let reply, reply.childCount == 1, reply.child(0).typeString == "b" else { done(nil); return }
            done(reply.child(0).bool)
        }
    }

    /// Subscribes to a signal; `action` gets its arguments' tuple.
    func subscribe(sender: String?, interface: String, member: String, path: String?, _ action: @escaping (Variant) -> Void) {
        let handler: GDBusSignalCallback = { _, _, _, _, _, parameters, data in
            guard let parameters else { return }
            Unmanaged<Handler<Variant>>.fromOpaque(data!).takeUnretainedValue().call(Variant(owning: g_variant_ref(parameters)))
        }
        let destroy: GDestroyNotify = { data in Unmanaged<AnyHandler>.fromOpaque(data!).release() }
        g_dbus_connection_signal_subscribe(connection, sender, interface, member, path, nil, G_DBUS_SIGNAL_FLAGS_NONE,
                                           handler, box(action), destroy)
    }
}

/// A GDBus connection and a proxy of one object, living on GTK's main loop.
final class BusProxy {
    let connection: OpaquePointer
    let proxy: ObjectPointer
    private let interface: String
    /// The same connection, for other services on the bus.
    let bus: BusConnection

    /// Connects to the session (or system) bus and makes a proxy that follows the name's owner
    /// and caches the properties (GetAll on each new owner, then PropertiesChanged).
    init(system: Bool, name: String, path: String, interface: String) throws(BusError) {
        var error: UnsafeMutablePointer<GError>?
        guard let connection = g_bus_get_sync(system ? G_BUS_TYPE_SYSTEM : G_BUS_TYPE_SESSION, nil, &error) else {
            throw Self.take(error)
        }
        self.connection = connection
        // No auto-start at construction: the window shows "qiblad is not running" at once rather than
        // blocking on activation; the claim (a method call) asks the bus to start it.
        guard let proxy = g_dbus_proxy_new_sync(connection, G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START, nil, name, path,
                                                interface, nil, &error) else {
            throw Self.take(error)
        }
        self.proxy = UnsafeMutableRawPointer(proxy)
        self.interface = interface
        bus = BusConnection(connection: connection)
    }

    private var typedProxy: UnsafeMutablePointer<GDBusProxy> { proxy.assumingMemoryBound(to: GDBusProxy.self) }

    /// The unique name of the owner, nil while nobody owns the name.
    var nameOwner: String? { swiftString(g_dbus_proxy_get_name_owner(typedProxy), free: true) }

    /// Every cached property, by name.
    var cachedProperties: [String: PropertyValue] {
        guard let names = g_dbus_proxy_get_cached_property_names(typedProxy) else { return [:] }
        defer { g_strfreev(names) }
        var result: [String: PropertyValue] = [:]
        var index = 0
        while let name = names[index] {
            if let variant = g_dbus_proxy_get_cached_property(typedProxy, name),
               let value = Variant(owning: variant).propertyValue {
                result[String(cString: name)] = value
            }
            index += 1
        }
        return result
    }

    /// Calls when the owner changes (`notify::g-name-owner`) and when properties change.
    func onOwnerChange(_ action: @escaping () -> Void) { Signal.connect1(proxy, "notify::g-name-owner") { _ in action() } }
    func onPropertiesChange(_ action: @escaping () -> Void) { Signal.connect2(proxy, "g-properties-changed", action) }

    /// An asynchronous method call; `reply` gets the reply's tuple or the error, on the main loop.
    /// `autoStart`: let the bus start the service (D-Bus activation) for this call.
    func call(_ method: String, _ arguments: [OpaquePointer] = [], autoStart: Bool = false,
              reply: @escaping (Result<Variant, BusError>) -> Void) {
        final class Reply { let f: (Result<Variant, BusError>) -> Void; init(_ f: @escaping (Result<Variant, BusError>) -> Void) { self.f = f } }
        let parameters = arguments.isEmpty ? nil : Variant.tuple(arguments)
        let done: GAsyncReadyCallback = { source, result, data in
            let reply = Unmanaged<Reply>.fromOpaque(data!).takeRetainedValue()
            var error: UnsafeMutablePointer<GError>?
            if let value = g_dbus_proxy_call_finish(source.map { cast(UnsafeMutableRawPointer($0)) }, result, &error) {
                reply.f(.success(Variant(owning: value)))
            } else {
                reply.f(.failure(BusProxy.take(error)))
            }
        }
        let flags = autoStart ? G_DBUS_CALL_FLAGS_NONE : G_DBUS_CALL_FLAGS_NO_AUTO_START
        g_dbus_proxy_call(typedProxy, method, parameters, flags, 10_000, nil, done,
                          Unmanaged.passRetained(Reply(reply)).toOpaque())
    }

    static func take(_ error: UnsafeMutablePointer<GError>?) -> BusError {
        guard let error else { return BusError(name: "", message: "unknown error") }
        defer { g_error_free(error) }
        let remote = swiftString(g_dbus_error_get_remote_error(error), free: true) ?? ""
        var message = String(cString: error.pointee.message)
        if !remote.isEmpty { g_dbus_error_strip_remote_error(error); message = String(cString: error.pointee.message) }
        return BusError(name: remote, message: message)
    }
}
