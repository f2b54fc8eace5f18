// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaDaemon
import QiblaDBus
import QiblaInterface

/// A decoded, validated method call on `io.github.qiblad.Qibla1`.
enum ServiceRequest {
    case claimCompass(client: String)
    case releaseCompass(client: String)
    case setManualLocation(GeodeticPosition)
    case clearManualLocation
    case qiblaFor(GeodeticPosition)
    case resetCalibration
    case sunPosition(GeodeticPosition, unixSeconds: Double)
    case qiblaSunTimes(GeodeticPosition, startUnixSeconds: Double)
    case kaabaSunPassages(year: Int)
    case checkHeadingWithSun(SunModel.Alignment, store: Bool)
}

/// A typed error reply: one of the interface's own errors, or `org.freedesktop.DBus.Error.Failed`.
struct ServiceError: Error {
    var name: String
    var message: String

    init(_ error: QiblaErrorName, _ message: String) {
        name = error.busName
        self.message = message
    }

    /// `org.freedesktop.DBus.Error.Failed`: the call was valid but could not be carried out
    /// (a state file could not be written).
    static func failed(_ message: String) -> ServiceError {
        ServiceError(busName: DBusError.failedName, message: message)
    }

    private init(busName: String, message: String) {
        name = busName
        self.message = message
    }
}

/// The reply to one call, sent now or later (after a state file is safely written).
/// Used on the event-loop thread only: a deferred reply travels to the state writer and back
/// inside a completion that runs on the loop again, hence `@unchecked Sendable`.
struct PendingReply: @unchecked Sendable {
    fileprivate let call: DBusMessage
    fileprivate let connection: DBusConnection

    /// Sends a method return with `values`.
    func succeed(_ values: DBusValue...) {
        guard !call.noReplyExpected else { return }
        let reply = call.methodReturn()
        do { try reply.append(contentsOf: values) } catch {
            connection.send(call.errorReply(name: DBusError.failedName, message: "\(error)"))
            return
        }
        connection.send(reply)
    }

    func fail(_ error: ServiceError) {
        guard !call.noReplyExpected else { return }
        connection.send(call.errorReply(name: error.name, message: error.message))
    }
}

/// The D-Bus face of qiblad: `io.github.qiblad.Qibla1` at `/io/github/qiblad/Qibla1`, plus
/// org.freedesktop.DBus.Properties and .Introspectable. Decodes and validates calls against the
/// generated table (`QiblaMethod`, `QiblaProperty`), hands each as a ``ServiceRequest`` to
/// `onRequest`, answers `Get`/`GetAll` from the ``properties`` the wiring pushes in, and encodes
/// `PropertiesChanged`. Runs on the event-loop thread.
final class BusService {
    private let connection: DBusConnection
    private let onRequest: (ServiceRequest, PendingReply) -> Void

    /// The current values, set by the wiring after every change.
    var properties = PublishedProperties()
    /// Called after each call to the object has been handled (answered, refused, or handed on).
    var afterCall: (() -> Void)?
    /// `PropertiesChanged` of our interface, its constant names checked and marshalled once.
    private let propertiesChanged: DBusPropertiesChangedSignal

    init(connection: DBusConnection, onRequest: @escaping (ServiceRequest, PendingReply) -> Void) {
        self.connection = connection
        self.onRequest = onRequest
        do {
            propertiesChanged = try DBusPropertiesChangedSignal(path: QiblaBus.objectPath, interface: QiblaBus.interface)
        } catch {
            preconditionFailure("the generated interface's names are invalid: \(error)")
        }
    }

    /// Registers the object and its parents (so `busctl tree` can walk down to it).
    func register() {
        connection.registerObject(path: QiblaBus.objectPath) { [unowned self] message in
            defer { afterCall?() }
            return self.handle(message)
        }
        let components = QiblaBus.objectPath.split(separator: "/")
        for depth in 0..<components.count {
            let path = "/" + components[..<depth].joined(separator: "/")
            let child = String(components[depth])
            connection.registerObject(path: path) { message in
                Self.handleParent(message, path: path, child: child)
            }
        }
    }

    /// A parent path of the object: only introspection (so tools can walk down to the object);
    /// every other method call gets an error reply at once, never silence.
    static func handleParent(_ message: DBusMessage, path: String, child: String) -> DBusMessage? {
        guard message.type == .methodCall else { return nil }
        switch (message.interface, message.member) {
        case ("org.freedesktop.DBus.Introspectable", "Introspect"), (nil, "Introspect"):
            return reply(message, .string(parentXML(child: child)))
        case ("org.freedesktop.DBus.Introspectable", let member):
            return message.errorReply(name: DBusError.unknownMethodName,
                                      message: "no method '\(member ?? "")' in org.freedesktop.DBus.Introspectable")
        default:
            return message.errorReply(name: DBusError.unknownObjectName,
                                      message: "no object at \(path); qiblad serves \(QiblaBus.objectPath)")
        }
    }

    // MARK: Dispatch

    /// The longest string argument decoded: the D-Bus Specification's limit for interface and
    /// member names (255 bytes, "Valid Names"). Every string qiblad takes is a name (`Get`'s
    /// interface and property) or a word (`sun`, `shadow`); a longer one is refused before it is
    /// copied out of the message (issue 33: a hostile call up to the bus's message limit).
    static let maximumArgumentTextBytes = 255

    /// A call's arguments, or the error reply that refuses them.
    private enum Decoded {
        case arguments([DBusValue])
        case refused(DBusMessage)
    }

    /// Answers at once, or returns nil when the reply is sent later through a ``PendingReply``.
    /// Nothing of a call's body is decoded before its member and signature are known to be ours.
    private func handle(_ message: DBusMessage) -> DBusMessage? {
        guard message.type == .methodCall, let member = message.member else { return nil }
        func decoded(_ expected: String) -> Decoded {
            guard message.signature == expected else { return .refused(Self.badSignature(message, expected: expected)) }
            do { return .arguments(try message.arguments(maximumTextBytes: Self.maximumArgumentTextBytes)) } catch {
                return .refused(message.errorReply(name: DBusError.invalidArgsName, message: error.message))
            }
        }
        switch (message.interface, member) {
        case ("org.freedesktop.DBus.Introspectable", "Introspect"), (nil, "Introspect"):
            return Self.reply(message, .string(Self.objectXML))
        case ("org.freedesktop.DBus.Properties", "Get"):
            switch decoded("ss") {
            case .arguments(let arguments): return propertiesGet(message, arguments)
            case .refused(let refusal): return refusal
            }
        case ("org.freedesktop.DBus.Properties", "GetAll"):
            switch decoded("s") {
            case .arguments(let arguments): return propertiesGetAll(message, arguments)
            case .refused(let refusal): return refusal
            }
        case ("org.freedesktop.DBus.Properties", "Set"):
            return message.errorReply(name: DBusError.propertyReadOnlyName,
                                      message: "all \(QiblaBus.interface) properties are read-only")
        case (QiblaBus.interface, _), (nil, _):
            guard let method = QiblaMethod(rawValue: member) else {
                return message.errorReply(name: DBusError.unknownMethodName,
                                          message: "no method '\(member)' in \(QiblaBus.interface)")
            }
            let arguments: [DBusValue]
            switch decoded(method.inputSignature) {
            case .arguments(let decodedArguments): arguments = decodedArguments
            case .refused(let refusal): return refusal
            }
            let request: ServiceRequest
            switch Self.request(method, sender: message.sender ?? "", arguments) {
            case .success(let r): request = r
            case .failure(let error): return message.errorReply(name: error.name, message: error.message)
            }
            onRequest(request, PendingReply(call: message, connection: connection))
            return nil
        default:
            return message.errorReply(name: DBusError.unknownInterfaceName,
                                      message: "no interface '\(message.interface ?? "")' on \(QiblaBus.objectPath)")
        }
    }

    /// Decodes the arguments of a call whose signature already matched.
    private static func request(_ method: QiblaMethod, sender: String, _ arguments: [DBusValue]) -> Result<ServiceRequest, ServiceError> {
        func position() -> Result<GeodeticPosition, ServiceError> {
            guard case .double(let lat) = arguments[0], case .double(let lon) = arguments[1] else {
                return .failure(ServiceError(.invalidArgument, "expected two doubles"))
            }
            do { return .success(try GeodeticPosition(latitudeDegrees: lat, longitudeDegrees: lon)) } catch {
                return .failure(ServiceError(.invalidArgument, error.description))
            }
        }
        switch method {
        case .claimCompass: return .success(.claimCompass(client: sender))
        case .releaseCompass: return .success(.releaseCompass(client: sender))
        case .setManualLocation: return position().map { .setManualLocation($0) }
        case .clearManualLocation: return .success(.clearManualLocation)
        case .qiblaFor: return position().map { .qiblaFor($0) }
        case .resetCalibration: return .success(.resetCalibration)
        case .sunPosition, .qiblaSunTimes:
            return position().flatMap { position in
                time(arguments[2]).map {
                    method == .sunPosition ? .sunPosition(position, unixSeconds: $0) : .qiblaSunTimes(position, startUnixSeconds: $0)
                }
            }
        case .kaabaSunPassages:
            guard case .int32(let year) = arguments[0], KaabaSunPassages.validYears.contains(Int(year)) else {
                return .failure(ServiceError(.invalidArgument, "the year must be in \(KaabaSunPassages.validYears) (the ΔT model's range)"))
            }
            return .success(.kaabaSunPassages(year: Int(year)))
        case .checkHeadingWithSun:
            guard case .string(let text) = arguments[0], let alignment = SunModel.Alignment(rawValue: text),
                  case .bool(let store) = arguments[1] else {
                return .failure(ServiceError(.invalidArgument, "alignment must be 'sun' or 'shadow'"))
            }
            return .success(.checkHeadingWithSun(alignment, store: store))
        }
    }

    /// Microseconds since the epoch → seconds, inside the solar model's years (1900 to 2149).
    private static func time(_ value: DBusValue) -> Result<Double, ServiceError> {
        guard case .uint64(let microseconds) = value else { return .failure(ServiceError(.invalidArgument, "expected a time")) }
        let seconds = Double(microseconds) / 1e6
        guard SolarPositionAlgorithm.validUnixSeconds.contains(seconds) else {
            return .failure(ServiceError(.invalidArgument,
                                         "time \(microseconds) µs is outside 1970 to 2149 (the solar model's range, microseconds since the epoch)"))
        }
        return .success(seconds)
    }

    private func propertiesGet(_ message: DBusMessage, _ arguments: [DBusValue]) -> DBusMessage {
        guard case .string(let iface) = arguments[0], case .string(let name) = arguments[1] else {
            return Self.badSignature(message, expected: "ss")
        }
        guard iface == QiblaBus.interface || iface.isEmpty else {
            return message.errorReply(name: DBusError.unknownInterfaceName, message: "no interface '\(iface)'")
        }
        guard let property = QiblaProperty(rawValue: name) else {
            return message.errorReply(name: DBusError.unknownPropertyName, message: "no property '\(name)'")
        }
        return Self.reply(message, .variant(DBusValue(properties[property])))
    }

    private func propertiesGetAll(_ message: DBusMessage, _ arguments: [DBusValue]) -> DBusMessage {
        guard case .string(let iface) = arguments[0] else {
            return Self.badSignature(message, expected: "s")
        }
        guard iface == QiblaBus.interface || iface.isEmpty else {
            return Self.reply(message, .dictionary(keySignature: "s", valueSignature: "v", []))
        }
        return Self.reply(message, Self.dictionary(QiblaProperty.allCases, properties))
    }

    // MARK: Signals

    /// Broadcasts org.freedesktop.DBus.Properties.PropertiesChanged for `changed`.
    func emitPropertiesChanged(_ changed: PropertySet) throws(DBusError) {
        guard !changed.isEmpty else { return }
        let values = properties
        // Typed appends straight into a copy of the prepared signal: no names checked again, no
        // DBusValue tree (boxes, arrays) per signal.
        let signal = try propertiesChanged.message { entries throws(DBusError) in
            for property in changed {
                try entries.append(name: property.rawValue, value: DBusBasicValue(values[property]))
            }
        }
        connection.send(signal)
    }

    // MARK: Helpers

    private static func dictionary(_ names: some Sequence<QiblaProperty>, _ values: PublishedProperties) -> DBusValue {
        .dictionary(keySignature: "s", valueSignature: "v",
                    names.map { (DBusValue.string($0.rawValue), DBusValue.variant(DBusValue(values[$0]))) })
    }

    private static func reply(_ message: DBusMessage, _ values: DBusValue...) -> DBusMessage {
        let reply = message.methodReturn()
        do { try reply.append(contentsOf: values) } catch {
            return message.errorReply(name: DBusError.failedName, message: "\(error)")
        }
        return reply
    }

    private static func badSignature(_ message: DBusMessage, expected: String) -> DBusMessage {
        message.errorReply(name: DBusError.invalidArgsName,
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
        let xml = qiblaInterfaceXML
        guard let end = xml.ranges(of: "</node>").last else { return xml }
        return String(xml[..<end.lowerBound]) + standardInterfacesXML + String(xml[end.lowerBound...])
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

extension DBusBasicValue {
    /// The bus form of a property value.
    init(_ value: PropertyValue) {
        switch value {
        case .double(let v): self = .double(v)
        case .bool(let v): self = .bool(v)
        case .string(let v): self = .string(v)
        case .uint64(let v): self = .uint64(v)
        }
    }
}

extension DBusValue {
    /// The bus form of a property value.
    init(_ value: PropertyValue) { self = DBusBasicValue(value).value }
}
