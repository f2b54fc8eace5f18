// SPDX-License-Identifier: Apache-2.0
// What a client of a service on another bus needs on the event loop (the GeoClue2 and
// iio-sensor-proxy adapters): a private connection opened on demand with its match rules,
// asynchronous calls whose replies count only for the attempt that made them, and the bus
// daemon's own messages. Reference: D-Bus Specification 0.41, "Message Bus Messages" and "Match Rules".
import QiblaEventLoop

/// The bus daemon's own calls and rules.
public enum BusDaemon {
    /// A call to `org.freedesktop.DBus` (`NameHasOwner`, `AddMatch`, `ListActivatableNames`, …).
    public static func call(_ member: String, _ arguments: DBusValue...) throws(DBusError) -> DBusMessage {
        let message = DBusMessage.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                             interface: "org.freedesktop.DBus", member: member)
        try message.append(contentsOf: arguments)
        return message
    }

    /// The match rule for `name` appearing, vanishing or changing hands (`NameOwnerChanged`).
    public static func nameOwnerChangedRule(for name: String) -> String {
        "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',"
            + "member='NameOwnerChanged',arg0='\(name)'"
    }

    /// `NameOwnerChanged(name, old, new)` for `name`, if `message` is that signal from the bus daemon.
    public static func ownerChange(of name: String, in message: DBusMessage) -> (oldOwner: String, newOwner: String)? {
        guard message.type == .signal, message.interface == "org.freedesktop.DBus", message.member == "NameOwnerChanged",
              message.sender == "org.freedesktop.DBus", let args = try? message.arguments(expecting: "sss"),
              args[0].string == name, let oldOwner = args[1].string, let newOwner = args[2].string else { return nil }
        return (oldOwner, newOwner)
    }
}

extension DBusError {
    /// The service is not there: no owner and not activatable, or its activation failed.
    public var meansServiceMissing: Bool {
        ["org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
         "org.freedesktop.DBus.Error.Spawn.ChildExited", "org.freedesktop.DBus.Error.Spawn.Failed"].contains(name)
    }

    /// No reply within the call's timeout.
    public var meansNoAnswer: Bool { name == DBusError.noReplyName || name == DBusError.timeoutName }
}

/// A client's private connection to a service's bus, driven by an ``QiblaEventLoop/EventLoop``.
///
/// - Confined to the loop's thread.
/// - ``open(matchRules:)`` connects (a blocking round trip to the bus daemon, `Hello`, not to the
///   service) and adds the rules asynchronously; ``close()`` drops the connection and, with it,
///   every rule.
/// - Every call belongs to an **attempt** (``generation``): ``newAttempt()`` and ``close()`` move
///   to the next one, and a reply that comes for an earlier attempt is dropped, so that a client
///   that gave up, retried or stopped never acts on an old answer.
public final class ServiceClientConnection {
    public let bus: BusAddress
    /// The timeout of calls that name none, seconds.
    public var callTimeoutSeconds: Double
    /// The open connection (nil: closed).
    public private(set) var connection: DBusConnection?
    /// The current attempt.
    public private(set) var generation: UInt64 = 0
    private let loop: EventLoop
    private let debug: (String) -> Void
    private let onSignal: (DBusMessage) -> Void
    private let onDisconnected: () -> Void

    /// - Parameters:
    ///   - debug: a line for the debug log (a match rule the bus refused).
    ///   - onSignal: every signal the rules select.
    ///   - onDisconnected: the bus went away (the connection is closed by then).
    public init(bus: BusAddress, loop: EventLoop, callTimeoutSeconds: Double, debug: @escaping (String) -> Void,
                onSignal: @escaping (DBusMessage) -> Void, onDisconnected: @escaping () -> Void) {
        self.bus = bus
        self.loop = loop
        self.callTimeoutSeconds = callTimeoutSeconds
        self.debug = debug
        self.onSignal = onSignal
        self.onDisconnected = onDisconnected
    }

    /// Must run on the loop thread, like every other member.
    deinit { connection?.close() }

    /// The open connection, or a new one with `matchRules` added.
    public func open(matchRules: [String]) throws(DBusError) -> DBusConnection {
        if let connection, connection.isConnected { return connection }
        close()
        let opened = try DBusConnection(bus)
        opened.attach(to: loop)
        opened.onSignal { [weak self] message in self?.onSignal(message) }
        opened.onDisconnected = { [weak self] in
            guard let self else { return }
            close()
            onDisconnected()
        }
        connection = opened
        for rule in matchRules { addMatch(rule) }
        return opened
    }

    /// Moves to a new attempt and returns it: replies to calls of earlier attempts are dropped.
    @discardableResult
    public func newAttempt() -> UInt64 {
        generation &+= 1
        return generation
    }

    /// Closes the connection (its match rules go with it). Its pending calls complete at once
    /// with `Disconnected`: the attempt moves on first, so that they are dropped. Idempotent.
    public func close() {
        newAttempt()
        let closing = connection
        connection = nil
        closing?.close()
    }

    /// `AddMatch`, asynchronously (the rule is in place before any later message of ours is
    /// handled: the bus reads our messages in order).
    public func addMatch(_ rule: String) { busDaemonCall("AddMatch", rule) }

    public func removeMatch(_ rule: String) { busDaemonCall("RemoveMatch", rule) }

    /// Sends `message` expecting no reply, and flushes.
    public func sendWithoutReply(_ message: DBusMessage) {
        guard let connection else { return }
        message.noReplyExpected = true
        connection.send(message)
        connection.flush()
    }

    /// Calls `message` asynchronously; `reply` runs with its arguments or its error only if
    /// `attempt` is still the current one when the answer comes.
    public func call(_ message: DBusMessage, attempt: UInt64, timeoutSeconds: Double? = nil,
                     reply: @escaping (Result<[DBusValue], DBusError>) -> Void) {
        guard let connection else {
            reply(.failure(.disconnected("not connected")))
            return
        }
        connection.callAsync(message, timeoutMilliseconds: Self.milliseconds(timeoutSeconds ?? callTimeoutSeconds)) { [weak self] result in
            guard let self, generation == attempt else { return }
            switch result {
            case .success(let answer):
                guard let arguments = try? answer.arguments() else {
                    return reply(.failure(.failed("cannot decode the reply to \(message.member ?? "a call")")))
                }
                reply(.success(arguments))
            case .failure(let error):
                reply(.failure(error))
            }
        }
    }

    private func busDaemonCall(_ member: String, _ rule: String) {
        guard let connection, let message = try? BusDaemon.call(member, .string(rule)) else { return }
        connection.callAsync(message, timeoutMilliseconds: Self.milliseconds(callTimeoutSeconds)) { [weak self] result in
            if case .failure(let error) = result, error.name != DBusError.disconnectedName {
                self?.debug("\(member) \(rule) failed: \(error)")
            }
        }
    }

    static func milliseconds(_ seconds: Double) -> Int32 {
        Int32(clamping: Int((seconds * 1000).rounded()))
    }
}
