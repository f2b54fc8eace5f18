// SPDX-License-Identifier: Apache-2.0
// A D-Bus message (D-Bus Specification 0.41, "Message Format"): header fields plus a body of
// typed arguments. The libdbus object underneath is reference counted by ``LibDBus/Message``.

/// The four message types of the D-Bus Specification ("Message Types").
public enum DBusMessageType: Sendable, Hashable {
    case methodCall, methodReturn, error, signal
}

/// A D-Bus message. Messages built here are writable until they are sent; messages received
/// from the bus are read-only (``append(_:)`` throws `InvalidArgs` for them).
///
/// Not `Sendable`: like the connection, a message belongs to the event-loop thread.
public final class DBusMessage {
    let raw: LibDBus.Message

    init(raw: LibDBus.Message) { self.raw = raw }

    /// A method call. `path`, `interface`, `member` and `destination` must be syntactically valid
    /// (see ``DBusNames``); names are compile-time constants in qiblad, so an invalid one is a
    /// programming error and stops the process. Use ``methodCall(validatingDestination:path:interface:member:)``
    /// for names that come from user input.
    public static func methodCall(destination: String?, path: String, interface: String?, member: String) -> DBusMessage {
        do {
            return try methodCall(validatingDestination: destination, path: path, interface: interface, member: member)
        } catch {
            preconditionFailure("DBusMessage.methodCall: \(error)")
        }
    }

    /// A method call, throwing `InvalidArgs` for malformed names instead of stopping.
    public static func methodCall(validatingDestination destination: String?, path: String, interface: String?,
                                  member: String) throws(DBusError) -> DBusMessage {
        if let destination, !DBusNames.isValidBusName(destination) {
            throw .invalidArgs("invalid bus name \"\(destination)\"")
        }
        try checkPath(path)
        if let interface, !DBusNames.isValidInterfaceName(interface) {
            throw .invalidArgs("invalid interface name \"\(interface)\"")
        }
        try checkMember(member)
        return DBusMessage(raw: LibDBus.Message(methodCallTo: destination, path: path, interface: interface, member: member))
    }

    /// A signal emitted from `path`. Invalid names stop the process (see ``methodCall(destination:path:interface:member:)``).
    public static func signal(path: String, interface: String, member: String) -> DBusMessage {
        do {
            return try signal(validatingPath: path, interface: interface, member: member)
        } catch {
            preconditionFailure("DBusMessage.signal: \(error)")
        }
    }

    /// A signal, throwing `InvalidArgs` for malformed names instead of stopping.
    public static func signal(validatingPath path: String, interface: String, member: String) throws(DBusError) -> DBusMessage {
        try checkPath(path)
        guard DBusNames.isValidInterfaceName(interface) else { throw .invalidArgs("invalid interface name \"\(interface)\"") }
        try checkMember(member)
        return DBusMessage(raw: LibDBus.Message(signalFrom: path, interface: interface, member: member))
    }

    /// A method return addressed to the sender of this message, with an empty body.
    public func methodReturn() -> DBusMessage {
        DBusMessage(raw: LibDBus.Message(methodReturnTo: raw))
    }

    /// An error reply to this message. An invalid `name` is replaced by
    /// `org.freedesktop.DBus.Error.Failed` (with the bad name prepended to the message) rather than crashing;
    /// NUL characters in `message` are dropped.
    public func errorReply(name: String, message: String) -> DBusMessage {
        let validName = DBusNames.isValidErrorName(name) ? name : DBusError.failedName
        var text = validName == name ? message : "\(name): \(message)"
        if text.utf8.contains(0) { text = String(text.unicodeScalars.filter { $0 != "\0" }) }
        return DBusMessage(raw: LibDBus.Message(errorReplyTo: raw, name: validName, message: text))
    }

    /// An error reply carrying `error`'s name and message.
    public func errorReply(_ error: DBusError) -> DBusMessage { errorReply(name: error.name, message: error.message) }

    // MARK: Header fields

    /// Method call, method return, error or signal.
    public var type: DBusMessageType {
        switch raw.typeCode {
        case 1: .methodCall
        case 2: .methodReturn
        case 3: .error
        default: .signal  // libdbus never hands out INVALID (0); future types are treated like signals.
        }
    }
    /// Unique bus name of the sender (set by the bus daemon).
    public var sender: String? { raw.header(.sender) }
    /// Bus name the message is addressed to, if any.
    public var destination: String? { raw.header(.destination) }
    /// Object path of a call or signal.
    public var path: String? { raw.header(.path) }
    /// Interface of a call or signal (optional for calls).
    public var interface: String? { raw.header(.interface) }
    /// Method or signal name.
    public var member: String? { raw.header(.member) }
    /// Signature of the body, e.g. `sd`; empty for no arguments.
    public var signature: String { raw.header(.signature) ?? "" }
    /// Error name of an error message.
    public var errorName: String? { raw.header(.errorName) }
    /// Serial number assigned when the message was sent; 0 before.
    public var serial: UInt32 { raw.serial }
    /// Serial of the message this one replies to; 0 for calls and signals.
    public var replySerial: UInt32 { raw.replySerial }

    /// Whether the caller asked for no reply (`NO_REPLY_EXPECTED` flag). Setting it on a sent or
    /// received message is ignored.
    public var noReplyExpected: Bool {
        get { raw.noReplyExpected }
        set { if !raw.isLocked { raw.noReplyExpected = newValue } }
    }

    /// Sets the destination bus name (e.g. for a unicast signal).
    public func setDestination(_ name: String?) throws(DBusError) {
        if let name, !DBusNames.isValidBusName(name) { throw .invalidArgs("invalid bus name \"\(name)\"") }
        guard !raw.isLocked else { throw .invalidArgs("the message was already sent or received") }
        raw.setDestination(name)
    }

    // MARK: Body

    /// Appends the body of `org.freedesktop.DBus.Properties.PropertiesChanged` (`sa{sv}as`):
    /// `interface`, the `changed` names with basic values, and an empty list of invalidated
    /// properties. Written straight into the message, without a ``DBusValue`` tree: no boxes,
    /// arrays or signature strings per signal. `entry` turns each element of `changed` into a name
    /// and a value; it is not stored (so what it captures is not copied to the heap) and is called
    /// twice per element: all strings are checked first, so on a throw nothing was appended.
    /// (The daemon's own signals use ``DBusPropertiesChangedSignal``, which checks and marshals the
    /// header and the interface once.)
    public func appendPropertiesChanged<Changed: Sequence>(
        interface: String, changed: Changed, entry: (Changed.Element) -> (name: String, value: DBusBasicValue)
    ) throws(DBusError) {
        guard !raw.isLocked else { throw .invalidArgs("the message was already sent or received") }
        guard DBusNames.isValidInterfaceName(interface) else { throw .invalidArgs("invalid interface name \"\(interface)\"") }
        for element in changed {
            let (name, value) = entry(element)
            try DBusPropertiesChangedEntries.check(name: name, value: value)
        }
        try raw.appendPropertiesChanged(interface: interface) { entries throws(DBusError) in
            for element in changed {
                let (name, value) = entry(element)
                try entries.append(name: name, value: value)
            }
        }
    }

    /// ``appendPropertiesChanged(interface:changed:entry:)`` for pairs already made.
    public func appendPropertiesChanged(interface: String, changed: [(name: String, value: DBusBasicValue)]) throws(DBusError) {
        try appendPropertiesChanged(interface: interface, changed: changed) { $0 }
    }

    /// Appends `values` to the body. All values are checked first (see ``DBusValue``), so on a
    /// throw nothing was appended.
    public func append(_ values: DBusValue...) throws(DBusError) {
        try append(contentsOf: values)
    }

    /// Appends `values` to the body. All values are checked first, so on a throw nothing was appended.
    public func append(contentsOf values: [DBusValue]) throws(DBusError) {
        guard !raw.isLocked else { throw .invalidArgs("the message was already sent or received") }
        for value in values { try value.validate() }
        try raw.append(values)
    }

    /// Appends one byte array (`ay`) argument, copied once from `bytes` (a ``DBusValue`` array
    /// holds a value per byte: for large payloads, such as the hostile calls of the tests).
    public func appendByteArray(_ bytes: [UInt8]) throws(DBusError) {
        guard !raw.isLocked else { throw .invalidArgs("the message was already sent or received") }
        guard bytes.count <= Int(Int32.max) else { throw .invalidArgs("a byte array of \(bytes.count) bytes") }
        let failure: DBusError? = bytes.withUnsafeBytes { buffer in
            do throws(DBusError) { try raw.appendByteArray(buffer) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// Decodes every argument of the body (all types of ``DBusValue``; unsupported ones such as
    /// Unix file descriptors throw `NotSupported`). A string (or object path, or signature) longer
    /// than `maximumTextBytes` throws `InvalidArgs` before anything of it is copied: a service
    /// whose arguments are short refuses a hostile one without a second copy of it (issue 33).
    public func arguments(maximumTextBytes: Int = .max) throws(DBusError) -> [DBusValue] {
        try raw.arguments(maximumTextBytes: maximumTextBytes)
    }

    /// Decodes the body and checks that its signature is exactly `expected`; otherwise throws
    /// `InvalidArgs` naming both signatures, ready to send back with ``errorReply(_:)``.
    public func arguments(expecting expected: String) throws(DBusError) -> [DBusValue] {
        guard signature == expected else {
            throw .invalidArgs("expected arguments of type \"\(expected)\", got \"\(signature)\"")
        }
        return try arguments()
    }

    /// For an error message: its name and its first string argument as a ``DBusError``.
    public var error: DBusError? {
        guard type == .error else { return nil }
        let text = (try? arguments())?.first?.string ?? ""
        return DBusError(name: errorName ?? DBusError.failedName, message: text)
    }

    private static func checkPath(_ path: String) throws(DBusError) {
        guard DBusNames.isValidObjectPath(path) else { throw .invalidArgs("invalid object path \"\(path)\"") }
    }

    private static func checkMember(_ member: String) throws(DBusError) {
        guard DBusNames.isValidMemberName(member) else { throw .invalidArgs("invalid member name \"\(member)\"") }
    }
}

extension DBusMessage: CustomStringConvertible {
    public var description: String {
        "DBusMessage(\(type), sender: \(sender ?? "-"), path: \(path ?? "-"), "
            + "interface: \(interface ?? "-"), member: \(member ?? errorName ?? "-"), signature: \"\(signature)\")"
    }
}

/// `org.freedesktop.DBus.Properties.PropertiesChanged` of one object's interface, from a prototype:
/// the header (path, `org.freedesktop.DBus.Properties`, `PropertiesChanged`) and the first
/// argument (the interface name) are checked and marshalled once, in ``init(path:interface:)``.
/// Each ``message(_:)`` copies the prototype (`dbus_message_copy`: no names checked again, by us
/// or by libdbus, no header marshalled field by field) and appends only the changed properties.
/// The daemon signals this for every heading change, its most frequent message (issue 12).
///
/// Not `Sendable`: like messages, it belongs to the event-loop thread.
public final class DBusPropertiesChangedSignal {
    private let prototype: LibDBus.Message
    public let path: String
    public let interface: String

    /// Throws `InvalidArgs` for a malformed object path or interface name.
    public init(path: String, interface: String) throws(DBusError) {
        let prototype = try DBusMessage.signal(validatingPath: path, interface: "org.freedesktop.DBus.Properties",
                                               member: "PropertiesChanged")
        guard DBusNames.isValidInterfaceName(interface) else { throw .invalidArgs("invalid interface name \"\(interface)\"") }
        try prototype.append(.string(interface))
        self.prototype = prototype.raw
        self.path = path
        self.interface = interface
    }

    /// A new signal: the prototype's copy with the entries `writeEntries` appends, then the empty
    /// list of invalidated properties. `writeEntries` is not stored (what it captures is not
    /// copied to the heap). On a throw (a NUL in a name or a string value, or no memory) no
    /// message is returned.
    public func message(_ writeEntries: (inout DBusPropertiesChangedEntries) throws(DBusError) -> Void) throws(DBusError) -> DBusMessage {
        let raw = prototype.copy()
        try raw.appendPropertiesChanged(interface: nil, writeEntries)
        return DBusMessage(raw: raw)
    }
}

/// The changed properties of a `PropertiesChanged` being written, lent to a closure by
/// ``DBusPropertiesChangedSignal/message(_:)``; never copied (it holds libdbus's iterator).
public struct DBusPropertiesChangedEntries: ~Copyable {
    var raw = LibDBus.PropertiesChangedEntries()

    init() {}

    /// Appends `name` with `value` (in a variant). Throws `InvalidArgs` for a NUL in `name` or in
    /// a string value, before anything of this entry is written.
    public mutating func append(name: String, value: DBusBasicValue) throws(DBusError) {
        try Self.check(name: name, value: value)
        try raw.append(name: name, value: value)
    }

    /// D-Bus strings cannot contain NUL (Swift strings are valid UTF-8 already).
    static func check(name: String, value: DBusBasicValue) throws(DBusError) {
        guard !name.utf8.contains(0) else { throw .invalidArgs("D-Bus strings cannot contain NUL") }
        if case .string(let text) = value, text.utf8.contains(0) {
            throw .invalidArgs("D-Bus strings cannot contain NUL")
        }
    }
}
