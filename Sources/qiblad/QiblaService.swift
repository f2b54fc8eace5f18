import QiblaCore
import QiblaDBus

/// The D-Bus face of the daemon: `io.github.qiblad.Qibla1` at `/io/github/qiblad/Qibla1`, plus
/// org.freedesktop.DBus.Properties and .Introspectable. Decodes calls, validates arguments,
/// forwards to the ``Daemon`` and encodes replies. Runs on the event-loop thread.
final class QiblaService {
    static let busName = "io.github.qiblad.Qibla1"
    static let objectPath = "/io/github/qiblad/Qibla1"
    static let interface = "io.github.qiblad.Qibla1"
    static let errorPrefix = "io.github.qiblad.Qibla1.Error."

    private let connection: DBusConnection
    private unowned let daemon: Daemon

    init(connection: DBusConnection, daemon: Daemon) {
        self.connection = connection
        self.daemon = daemon
    }

    /// Registers the object and its parents (so `busctl tree` can walk down to it).
    func register() {
        connection.registerObject(path: Self.objectPath) { [unowned self] message in
            self.handle(message)
        }
        let components = Self.objectPath.split(separator: "/")
        for depth in 0..<components.count {
            let path = "/" + components[..<depth].joined(separator: "/")
            let child = String(components[depth])
            connection.registerObject(path: path) { message in
                guard message.interface == "org.freedesktop.DBus.Introspectable" || message.interface == nil,
                      message.member == "Introspect" else { return nil }
                return Self.reply(message, .string(Self.parentXML(child: child)))
            }
        }
    }

    // MARK: Dispatch

    private func handle(_ message: DBusMessage) -> DBusMessage? {
        guard message.type == .methodCall, let member = message.member else { return nil }
        let arguments: [DBusValue]
        do { arguments = try message.arguments() } catch {
            return message.errorReply(name: "org.freedesktop.DBus.Error.InvalidArgs", message: "\(error)")
        }
        switch (message.interface, member) {
        case ("org.freedesktop.DBus.Introspectable", "Introspect"), (nil, "Introspect"):
            return Self.reply(message, .string(Self.objectXML))
        case ("org.freedesktop.DBus.Properties", "Get"):
            return propertiesGet(message, arguments)
        case ("org.freedesktop.DBus.Properties", "GetAll"):
            return propertiesGetAll(message, arguments)
        case ("org.freedesktop.DBus.Properties", "Set"):
            return message.errorReply(name: "org.freedesktop.DBus.Error.PropertyReadOnly",
                                      message: "all io.github.qiblad.Qibla1 properties are read-only")
        case (Self.interface, _), (nil, _):
            return qiblaMethod(member, message, arguments)
        default:
            return message.errorReply(name: "org.freedesktop.DBus.Error.UnknownInterface",
                                      message: "no interface '\(message.interface ?? "")' on \(Self.objectPath)")
        }
    }

    private func qiblaMethod(_ member: String, _ message: DBusMessage, _ arguments: [DBusValue]) -> DBusMessage {
        let sender = message.sender ?? ""
        switch member {
        case "ClaimCompass":
            guard message.signature.isEmpty else { return Self.badSignature(message, expected: "") }
            daemon.claim(by: sender)
            return message.methodReturn()
        case "ReleaseCompass":
            guard message.signature.isEmpty else { return Self.badSignature(message, expected: "") }
            daemon.release(by: sender)
            return message.methodReturn()
        case "SetManualLocation":
            guard message.signature == "dd", case .double(let lat) = arguments[0], case .double(let lon) = arguments[1] else {
                return Self.badSignature(message, expected: "dd")
            }
            do {
                let position = try GeodeticPosition(latitudeDegrees: lat, longitudeDegrees: lon)
                try daemon.setManualLocation(position)
                return message.methodReturn()
            } catch let error as CoordinateError {
                return message.errorReply(name: Self.errorPrefix + "InvalidArgument", message: error.description)
            } catch {
                return message.errorReply(name: "org.freedesktop.DBus.Error.Failed", message: "\(error)")
            }
        case "ClearManualLocation":
            guard message.signature.isEmpty else { return Self.badSignature(message, expected: "") }
            do {
                try daemon.clearManualLocation()
                return message.methodReturn()
            } catch {
                return message.errorReply(name: "org.freedesktop.DBus.Error.Failed", message: "\(error)")
            }
        case "QiblaFor":
            guard message.signature == "dd", case .double(let lat) = arguments[0], case .double(let lon) = arguments[1] else {
                return Self.badSignature(message, expected: "dd")
            }
            do {
                let position = try GeodeticPosition(latitudeDegrees: lat, longitudeDegrees: lon)
                let answer = daemon.qibla(for: position)
                return Self.reply(message, .double(answer.bearing), .double(answer.bearingGeodesic),
                                  .double(answer.distanceMetres), .double(answer.declination))
            } catch {
                return message.errorReply(name: Self.errorPrefix + "InvalidArgument", message: error.description)
            }
        case "ResetCalibration":
            guard message.signature.isEmpty else { return Self.badSignature(message, expected: "") }
            switch daemon.resetCalibration() {
            case .success: return message.methodReturn()
            case .failure(let error): return message.errorReply(name: Self.errorPrefix + error.name, message: error.message)
            }
        default:
            return message.errorReply(name: "org.freedesktop.DBus.Error.UnknownMethod",
                                      message: "no method '\(member)' in \(Self.interface)")
        }
    }

    private func propertiesGet(_ message: DBusMessage, _ arguments: [DBusValue]) -> DBusMessage {
        guard message.signature == "ss", case .string(let iface) = arguments[0], case .string(let name) = arguments[1] else {
            return Self.badSignature(message, expected: "ss")
        }
        guard iface == Self.interface || iface.isEmpty else {
            return message.errorReply(name: "org.freedesktop.DBus.Error.UnknownInterface", message: "no interface '\(iface)'")
        }
        guard let value = daemon.properties.value(of: name) else {
            return message.errorReply(name: "org.freedesktop.DBus.Error.UnknownProperty", message: "no property '\(name)'")
        }
        return Self.reply(message, .variant(value))
    }

    private func propertiesGetAll(_ message: DBusMessage, _ arguments: [DBusValue]) -> DBusMessage {
        guard message.signature == "s", case .string(let iface) = arguments[0] else {
            return Self.badSignature(message, expected: "s")
        }
        guard iface == Self.interface || iface.isEmpty else {
            return Self.reply(message, .dictionary(keySignature: "s", valueSignature: "v", []))
        }
        let properties = daemon.properties
        let entries = PublishedProperties.names.compactMap { name in
            properties.value(of: name).map { (DBusValue.string(name), DBusValue.variant($0)) }
        }
        return Self.reply(message, .dictionary(keySignature: "s", valueSignature: "v", entries))
    }

    // MARK: Signals

    /// Broadcasts org.freedesktop.DBus.Properties.PropertiesChanged for `names`.
    func emitPropertiesChanged(_ names: [String], values: PublishedProperties) {
        guard !names.isEmpty else { return }
        let signal = DBusMessage.signal(path: Self.objectPath, interface: "org.freedesktop.DBus.Properties",
                                        member: "PropertiesChanged")
        let changed = names.compactMap { name in values.value(of: name).map { (DBusValue.string(name), DBusValue.variant($0)) } }
        do {
            try signal.append(.string(Self.interface),
                              .dictionary(keySignature: "s", valueSignature: "v", changed),
                              .array(elementSignature: "s", []))
            connection.send(signal)
        } catch {
            daemon.logger.error("could not build PropertiesChanged: \(error)")
        }
    }

    // MARK: Helpers

    private static func reply(_ message: DBusMessage, _ values: DBusValue...) -> DBusMessage {
        let reply = message.methodReturn()
        do { try reply.append(contentsOf: values) } catch {
            return message.errorReply(name: "org.freedesktop.DBus.Error.Failed", message: "\(error)")
        }
        return reply
    }

    private static func badSignature(_ message: DBusMessage, expected: String) -> DBusMessage {
        message.errorReply(name: "org.freedesktop.DBus.Error.InvalidArgs",
                           message: "\(message.member ?? "call") takes signature '\(expected)', got '\(message.signature)'")
    }

    static let standardInterfacesXML = """
      <interface name="org.freedesktop.DBus.Properties">
        <method name="Get"><arg name="interface_name" type="s" direction="in"/><arg name="property_name" type="s" direction="in"/><arg name="value" type="v" direction="out"/></method>
        <method name="GetAll"><arg name="interface_name" type="s" direction="in"/><arg name="props" type="a{sv}" direction="out"/></method>
        <method name="Set"><arg name="interface_name" type="s" direction="in"/><arg name="property_name" type="s" direction="in"/><arg name="value" type="v" direction="in"/></method>
        <signal name="PropertiesChanged"><arg name="interface_name" type="s"/><arg name="changed_properties" type="a{sv}"/><arg name="invalidated_properties" type="as"/></signal>
      </interface>
      <interface name="org.freedesktop.DBus.Introspectable">
        <method name="Introspect"><arg name="xml_data" type="s" direction="out"/></method>
      </interface>
      <interface name="org.freedesktop.DBus.Peer">
        <method name="Ping"/>
        <method name="GetMachineId"><arg name="machine_uuid" type="s" direction="out"/></method>
      </interface>

    """

    /// The object's introspection: dbus/io.github.qiblad.Qibla1.xml with the standard interfaces
    /// inserted before `</node>`.
    static let objectXML: String = {
        guard let end = interfaceXML.ranges(of: "</node>").last else { return interfaceXML }
        return String(interfaceXML[..<end.lowerBound]) + standardInterfacesXML + String(interfaceXML[end.lowerBound...])
    }()

    static func parentXML(child: String) -> String {
        """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>
        \(standardInterfacesXML)  <node name="\(child)"/>
        </node>
        """
    }
}

/// A typed daemon error mapped to `io.github.qiblad.Qibla1.Error.<name>`.
struct ServiceError: Error {
    var name: String
    var message: String
}
