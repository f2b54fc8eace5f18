// SPDX-License-Identifier: Apache-2.0
// A private connection to a message bus, integrated with QiblaEventLoop.
// References: D-Bus Specification 0.41, "Message Bus Specification" (RequestName, AddMatch);
// libdbus dbus-connection.h (watch/timeout/dispatch model).
import QiblaEventLoop

/// Result of `org.freedesktop.DBus.RequestName` (D-Bus Specification, "Message Bus Messages").
public enum RequestNameResult: Sendable, Hashable {
    /// `DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER` (1): the name is now ours.
    case primaryOwner
    /// `DBUS_REQUEST_NAME_REPLY_IN_QUEUE` (2): someone else owns it; we are queued.
    case inQueue
    /// `DBUS_REQUEST_NAME_REPLY_EXISTS` (3): someone else owns it and we did not queue.
    case exists
    /// `DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER` (4): we already owned it.
    case alreadyOwner
}

/// A private D-Bus connection (its own socket, not shared with other code in the process).
///
/// Threading: not `Sendable`. Create it, ``attach(to:)`` it and use it from the event loop only:
/// its thread, or a thread borrowing it (`EventLoop.runWhileAsleep`), one at a time. libdbus
/// itself is thread-safe (its locks are set up by default since 1.7), and a message sent from a
/// borrower is written at once, or queued with the loop woken (`dbus_connection_set_wakeup_main_function`).
/// Handlers (method calls, signals, async replies, ``onDisconnected``) run on that thread, during dispatch.
///
/// Lifetime: handlers that capture the connection form a cycle through libdbus; ``close()`` breaks it.
public final class DBusConnection {
    let raw: LibDBus.Connection
    private let router: MessageRouter

    /// Connects, authenticates and registers with the bus (`Hello`). Exit-on-disconnect is off:
    /// losing the bus is reported through ``onDisconnected`` instead of `_exit(1)`.
    public init(_ bus: BusAddress) throws(DBusError) {
        let router = MessageRouter()
        self.router = router
        raw = try LibDBus.Connection(bus, router: router)
    }

    deinit { raw.close() }

    /// Our unique name on the bus (`:1.42`); empty after ``close()``.
    public var uniqueName: String { raw.uniqueName ?? "" }

    /// Whether the socket is still connected.
    public var isConnected: Bool { raw.isConnected }

    /// Integrates the connection with `loop` (call on the loop thread): libdbus watches become
    /// `loop.watch`, its timeouts `loop.schedule`, incoming messages are dispatched in a
    /// `loop.beforeSleeping` hook, and wake-ups from other threads go through `loop.post`.
    /// Afterwards nothing blocks except the explicitly blocking calls. Attaching twice is ignored.
    public func attach(to loop: EventLoop) { raw.attach(to: loop) }

    // MARK: Bus names and match rules (blocking round trips to the bus daemon)

    /// Asks the bus for a well-known name (`RequestName`). Flags as in the D-Bus Specification:
    /// `allowReplacement` = 0x1, `replaceExisting` = 0x2, `doNotQueue` = 0x4.
    public func requestName(_ name: String, allowReplacement: Bool = false, replaceExisting: Bool = false,
                            doNotQueue: Bool = true) throws(DBusError) -> RequestNameResult {
        guard DBusNames.isValidWellKnownBusName(name) else { throw .invalidArgs("invalid well-known bus name \"\(name)\"") }
        var flags: UInt32 = 0
        if allowReplacement { flags |= 0x1 }
        if replaceExisting { flags |= 0x2 }
        if doNotQueue { flags |= 0x4 }
        switch try raw.requestName(name, flags: flags) {
        case 1: return .primaryOwner
        case 2: return .inQueue
        case 3: return .exists
        case 4: return .alreadyOwner
        case let other: throw .failed("RequestName returned unknown code \(other)")
        }
    }

    /// Gives a well-known name back (`ReleaseName`). Releasing a name we do not own is not an error.
    public func releaseName(_ name: String) throws(DBusError) {
        guard DBusNames.isValidWellKnownBusName(name) else { throw .invalidArgs("invalid well-known bus name \"\(name)\"") }
        try raw.releaseName(name)
    }

    /// Adds a match rule (`type='signal',interface='…'`, D-Bus Specification "Match Rules");
    /// the bus rejects malformed rules with `MatchRuleInvalid`.
    public func addMatch(_ rule: String) throws(DBusError) { try raw.addMatch(rule, add: true) }

    /// Removes a match rule added with ``addMatch(_:)``.
    public func removeMatch(_ rule: String) throws(DBusError) { try raw.addMatch(rule, add: false) }

    // MARK: Sending

    /// Queues `message`; an attached loop writes it out when the socket is writable (or call ``flush()``).
    /// Sending on a closed connection drops the message.
    public func send(_ message: DBusMessage) { raw.send(message.raw) }

    /// Blocks until every queued message is written.
    public func flush() { raw.flush() }

    /// Sends `message` and blocks until the reply arrives (for the CLI client and tests). An error
    /// reply is thrown as ``DBusError`` with its name and message; a timeout throws `NoReply`.
    public func call(_ message: DBusMessage, timeoutMilliseconds: Int32 = 25_000) throws(DBusError) -> DBusMessage {
        try raw.call(message.raw, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Sends `message` and calls `reply` on the loop thread (during dispatch) with the reply or the
    /// error (error replies, `NoReply` on timeout, `Disconnected`). On a closed connection `reply`
    /// is called at once with `Disconnected`. Timeouts need an attached loop (or ``readWriteDispatch(timeoutMilliseconds:)``).
    public func callAsync(_ message: DBusMessage, timeoutMilliseconds: Int32 = 25_000,
                          reply: @escaping (Result<DBusMessage, DBusError>) -> Void) {
        raw.callAsync(message.raw, timeoutMilliseconds: timeoutMilliseconds, completion: reply)
    }

    // MARK: Receiving

    /// Routes method calls whose path is exactly `path` to `handler`, which returns the reply
    /// (`nil` = no reply, or already sent). Replies to calls flagged no-reply-expected are dropped.
    /// Calls to unregistered paths get libdbus's `UnknownMethod` error reply. Registering a path
    /// again replaces its handler.
    public func registerObject(path: String, handler: @escaping (DBusMessage) -> DBusMessage?) {
        router.objects[path] = handler
    }

    /// Stops routing calls for `path`.
    public func unregisterObject(path: String) { router.objects[path] = nil }

    /// Calls `handler` for every incoming signal (those selected by ``addMatch(_:)`` and those sent
    /// to us directly such as `NameAcquired`), in registration order. `Disconnected` goes to ``onDisconnected`` instead.
    public func onSignal(_ handler: @escaping (DBusMessage) -> Void) { router.signalHandlers.append(handler) }

    /// Called once when the bus goes away (libdbus's `org.freedesktop.DBus.Local.Disconnected`),
    /// not after ``close()``.
    public var onDisconnected: (() -> Void)? {
        get { router.onDisconnected }
        set { router.onDisconnected = newValue }
    }

    /// Blocking pump for simple clients without an EventLoop: reads, writes and dispatches one
    /// message, waiting at most `timeoutMilliseconds` (-1 = forever). Returns false once disconnected.
    @discardableResult
    public func readWriteDispatch(timeoutMilliseconds: Int32) -> Bool {
        raw.readWriteDispatch(timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Closes the socket, detaches from the loop and drops all handlers. Idempotent.
    public func close() {
        raw.close()
        router.clear()
    }
}

/// Swift-side routing of dispatched messages (called from LibDBus's filter function).
final class MessageRouter {
    var objects: [String: (DBusMessage) -> DBusMessage?] = [:]
    var signalHandlers: [(DBusMessage) -> Void] = []
    var onDisconnected: (() -> Void)?

    enum Outcome {
        /// Let libdbus continue (it answers unhandled method calls with `UnknownMethod`).
        case notHandled
        /// Handled; send `reply` if present.
        case handled(reply: DBusMessage?)
    }

    func route(_ message: DBusMessage) -> Outcome {
        switch message.type {
        case .methodCall:
            guard let path = message.path, let handler = objects[path] else { return .notHandled }
            let reply = handler(message)
            return .handled(reply: message.noReplyExpected ? nil : reply)
        case .signal:
            if message.path == "/org/freedesktop/DBus/Local", message.interface == "org.freedesktop.DBus.Local",
               message.member == "Disconnected" {
                let handler = onDisconnected
                onDisconnected = nil
                handler?()
                return .handled(reply: nil)
            }
            for handler in signalHandlers { handler(message) }
            return .handled(reply: nil)
        case .methodReturn, .error:
            return .notHandled
        }
    }

    func clear() {
        objects = [:]
        signalHandlers = []
        onDisconnected = nil
    }
}
