// SPDX-License-Identifier: Apache-2.0
// Plain value types shared by the QiblaDBus API: bus addresses, errors and name validation.
// Reference: D-Bus Specification 0.41, "Message Protocol" → "Valid Names" and "Message Bus Specification".

/// Which message bus a ``DBusConnection`` talks to.
public enum BusAddress: Sendable, Hashable {
    /// The per-login-session bus (`$DBUS_SESSION_BUS_ADDRESS`).
    case session
    /// The system-wide bus (`/run/dbus/system_bus_socket` unless `$DBUS_SYSTEM_BUS_ADDRESS` says otherwise).
    case system
    /// An explicit server address such as `unix:path=/tmp/bus` (D-Bus Specification, "Server Addresses").
    /// The connection still registers with a message bus daemon (`Hello`).
    case address(String)
}

/// A D-Bus error: a dotted error name (`org.freedesktop.DBus.Error.InvalidArgs`) and a human-readable message.
///
/// Error replies received from peers are thrown as this type with the peer's name and message;
/// failures inside libdbus (no memory, disconnected, timeouts) use the standard
/// `org.freedesktop.DBus.Error.*` names.
public struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error name, e.g. `org.freedesktop.DBus.Error.InvalidArgs`.
    public var name: String
    /// Free-form explanation for humans.
    public var message: String

    /// An error named `name` (dotted, like an interface name) explaining `message`.
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// `name: message`.
    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    // Standard names from the D-Bus Specification and dbus-protocol.h.
    public static let failedName = "org.freedesktop.DBus.Error.Failed"
    public static let noMemoryName = "org.freedesktop.DBus.Error.NoMemory"
    public static let invalidArgsName = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let unknownMethodName = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let unknownObjectName = "org.freedesktop.DBus.Error.UnknownObject"
    public static let unknownInterfaceName = "org.freedesktop.DBus.Error.UnknownInterface"
    public static let unknownPropertyName = "org.freedesktop.DBus.Error.UnknownProperty"
    public static let propertyReadOnlyName = "org.freedesktop.DBus.Error.PropertyReadOnly"
    public static let notSupportedName = "org.freedesktop.DBus.Error.NotSupported"
    public static let disconnectedName = "org.freedesktop.DBus.Error.Disconnected"
    public static let noReplyName = "org.freedesktop.DBus.Error.NoReply"
    public static let timeoutName = "org.freedesktop.DBus.Error.Timeout"
    public static let accessDeniedName = "org.freedesktop.DBus.Error.AccessDenied"

    /// `org.freedesktop.DBus.Error.Failed` with `message`.
    public static func failed(_ message: String) -> DBusError { DBusError(name: failedName, message: message) }
    /// `org.freedesktop.DBus.Error.InvalidArgs` with `message`.
    public static func invalidArgs(_ message: String) -> DBusError { DBusError(name: invalidArgsName, message: message) }
    /// `org.freedesktop.DBus.Error.NotSupported` with `message`.
    public static func notSupported(_ message: String) -> DBusError { DBusError(name: notSupportedName, message: message) }
    /// `org.freedesktop.DBus.Error.Disconnected` with `message`.
    public static func disconnected(_ message: String = "the connection is closed") -> DBusError {
        DBusError(name: disconnectedName, message: message)
    }
    static let noMemory = DBusError(name: noMemoryName, message: "libdbus ran out of memory")
}

/// Syntax checks for the names used in D-Bus headers (D-Bus Specification, "Valid Names"), as
/// implemented by libdbus's `dbus_validate_*` (dbus-syntax.h). None of them crash on any input.
public enum DBusNames {
    /// `/`, or `/`-separated non-empty elements of `[A-Za-z0-9_]`, no trailing `/`.
    public static func isValidObjectPath(_ path: String) -> Bool { LibDBus.validate(path, .objectPath) }
    /// Unique (`:1.42`) or well-known (`org.qibla.Compass`) bus name, at most 255 bytes.
    public static func isValidBusName(_ name: String) -> Bool { LibDBus.validate(name, .busName) }
    /// A well-known (not unique) bus name, the only kind a connection may request.
    public static func isValidWellKnownBusName(_ name: String) -> Bool {
        !name.hasPrefix(":") && isValidBusName(name)
    }
    /// At least two `.`-separated elements of `[A-Za-z_][A-Za-z0-9_]*`, at most 255 bytes.
    public static func isValidInterfaceName(_ name: String) -> Bool { LibDBus.validate(name, .interface) }
    /// Error names have the syntax of interface names.
    public static func isValidErrorName(_ name: String) -> Bool { LibDBus.validate(name, .errorName) }
    /// A method or signal name: `[A-Za-z_][A-Za-z0-9_]*`, at most 255 bytes.
    public static func isValidMemberName(_ name: String) -> Bool { LibDBus.validate(name, .member) }
    /// Zero or more complete types (`sa{sv}(dd)`), nesting limits included.
    public static func isValidSignature(_ signature: String) -> Bool { LibDBus.validateSignature(signature, single: false) }
    /// Exactly one complete type (`a{sv}`).
    public static func isValidSingleTypeSignature(_ signature: String) -> Bool {
        LibDBus.validateSignature(signature, single: true)
    }
}
