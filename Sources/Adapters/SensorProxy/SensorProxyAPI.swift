// SPDX-License-Identifier: Apache-2.0
// iio-sensor-proxy's compass as qiblad uses it: names, the messages and reading a heading.
// Reference: iio-sensor-proxy's introspection (src/net.hadess.SensorProxy.xml; the gtk-doc page
// gdbus-net.hadess.SensorProxy.Compass.html of Debian's package), its bus policy
// (/etc/dbus-1/system.d/net.hadess.SensorProxy.conf) and src/iio-sensor-proxy.c, 3.0.
import QiblaDBus

/// Names of iio-sensor-proxy's compass on the system bus.
enum SensorProxy {
    /// The service's well-known name.
    static let busName = "net.hadess.SensorProxy"
    /// The compass object and interface (a separate object: by iio-sensor-proxy's policy only
    /// GeoClue's user may call it, unless a drop-in such as dbus/qiblad-iio-sensor-proxy.conf
    /// allows another).
    static let compassPath = "/net/hadess/SensorProxy/Compass"
    static let compassInterface = "net.hadess.SensorProxy.Compass"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"

    /// `ClaimCompass()` or `ReleaseCompass()`: iio-sensor-proxy polls the compass from the first
    /// claim to the last release (or the claimant leaving the bus).
    static func compass(_ member: String) -> DBusMessage {
        DBusMessage.methodCall(destination: busName, path: compassPath, interface: compassInterface, member: member)
    }

    /// `org.freedesktop.DBus.Properties.GetAll("net.hadess.SensorProxy.Compass") → a{sv}`.
    static func getAllCompassProperties() throws(DBusError) -> DBusMessage {
        let message = DBusMessage.methodCall(destination: busName, path: compassPath, interface: propertiesInterface,
                                             member: "GetAll")
        try message.append(.string(compassInterface))
        return message
    }

    /// `org.freedesktop.DBus.Properties.Get("net.hadess.SensorProxy.Compass", name) → v`.
    static func getCompassProperty(_ name: String) throws(DBusError) -> DBusMessage {
        let message = DBusMessage.methodCall(destination: busName, path: compassPath, interface: propertiesInterface,
                                             member: "Get")
        try message.append(.string(compassInterface), .string(name))
        return message
    }

    // MARK: Match rules (D-Bus Specification, "Match Rules")

    /// The service appearing, vanishing or restarting.
    static let nameOwnerChangedRule = BusDaemon.nameOwnerChangedRule(for: busName)

    /// `PropertiesChanged` of the compass object (`HasCompass`, `CompassHeading`).
    static let compassChangedRule =
        "type='signal',sender='\(busName)',path='\(compassPath)',interface='\(propertiesInterface)',member='PropertiesChanged'"
}

/// One `CompassHeading` value as iio-sensor-proxy sends it.
public enum SensorProxyHeadingReading: Sendable, Equatable {
    /// Degrees from magnetic north, clockwise, in [0, 360).
    case degrees(Double)
    /// iio-sensor-proxy's "unknown" (-1.0, documented for `CompassHeading`).
    case unknown
    /// Not a heading (wrong type, not finite, outside [0, 360]): rejected, never published.
    case invalid(String)

    /// Reads a `CompassHeading` value (`d`, possibly in a variant). 360 is north (0); any negative
    /// value is "unknown" (the interface documents -1.0).
    public init(_ value: DBusValue?) {
        guard let value else { self = .invalid("no value"); return }
        guard let degrees = value.unwrappingVariants.double else {
            self = .invalid("CompassHeading is \"\(value.unwrappingVariants.signature)\", not a double")
            return
        }
        guard degrees.isFinite else { self = .invalid("CompassHeading is \(degrees)"); return }
        if degrees < 0 { self = .unknown; return }
        guard degrees <= 360 else { self = .invalid("CompassHeading \(degrees)° is outside 0...360"); return }
        self = .degrees(degrees == 360 ? 0 : degrees)
    }
}
