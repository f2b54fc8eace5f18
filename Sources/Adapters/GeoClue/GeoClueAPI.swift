// SPDX-License-Identifier: Apache-2.0
// The GeoClue2 D-Bus API as qiblad uses it: names, the accuracy levels and the few messages.
// Reference: GeoClue 2.6 interface XML, /usr/share/dbus-1/interfaces/org.freedesktop.GeoClue2.
// {Manager,Client,Location}.xml (Debian package geoclue-2.0), and its libgeoclue enum
// GClueAccuracyLevel (gclue-enums.h). The bus daemon calls follow the D-Bus Specification 0.41,
// "Message Bus Messages".
import QiblaDBus

/// Names of the GeoClue2 service on the system bus.
enum GeoClue2 {
    /// The service's well-known name (`org.freedesktop.GeoClue2`).
    static let busName = "org.freedesktop.GeoClue2"
    /// The one manager object (`org.freedesktop.GeoClue2.Manager`).
    static let managerPath = "/org/freedesktop/GeoClue2/Manager"
    static let managerInterface = "org.freedesktop.GeoClue2.Manager"
    /// A client object, made by `Manager.CreateClient` (`/org/freedesktop/GeoClue2/Client/N`).
    static let clientInterface = "org.freedesktop.GeoClue2.Client"
    /// A location object, named by `Client.LocationUpdated(o old, o new)`.
    static let locationInterface = "org.freedesktop.GeoClue2.Location"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"

    /// `Location.Altitude` when the altitude is unknown: `-G_MAXDOUBLE`
    /// (geocode-glib's `GEOCODE_LOCATION_ALTITUDE_UNKNOWN`).
    static let unknownAltitude = -Double.greatestFiniteMagnitude

    // MARK: Messages to GeoClue2

    /// `Manager.CreateClient() → o` (GeoClue ≥ 2.5; `GetClient` returns one shared client per connection).
    static func createClient() -> DBusMessage {
        DBusMessage.methodCall(destination: busName, path: managerPath, interface: managerInterface, member: "CreateClient")
    }

    /// `Manager.GetClient() → o`, for GeoClue 2.4 which has no `CreateClient`.
    static func getClient() -> DBusMessage {
        DBusMessage.methodCall(destination: busName, path: managerPath, interface: managerInterface, member: "GetClient")
    }

    /// `Manager.DeleteClient(o client)`: drops the client object (GeoClue also drops it when we leave the bus).
    static func deleteClient(_ client: String) throws(DBusError) -> DBusMessage {
        let message = DBusMessage.methodCall(destination: busName, path: managerPath, interface: managerInterface,
                                             member: "DeleteClient")
        try message.append(.objectPath(client))
        return message
    }

    /// `Client.Start()` or `Client.Stop()`.
    static func client(_ client: String, _ member: String) throws(DBusError) -> DBusMessage {
        try DBusMessage.methodCall(validatingDestination: busName, path: client, interface: clientInterface, member: member)
    }

    /// `org.freedesktop.DBus.Properties.Set(s interface, s name, v value)` on a client object.
    static func setClientProperty(_ client: String, _ name: String, _ value: DBusValue) throws(DBusError) -> DBusMessage {
        let message = try DBusMessage.methodCall(validatingDestination: busName, path: client,
                                                 interface: propertiesInterface, member: "Set")
        try message.append(.string(clientInterface), .string(name), .variant(value))
        return message
    }

    /// `org.freedesktop.DBus.Properties.GetAll(s interface) → a{sv}` on a location object.
    static func getAllLocationProperties(_ location: String) throws(DBusError) -> DBusMessage {
        let message = try DBusMessage.methodCall(validatingDestination: busName, path: location,
                                                 interface: propertiesInterface, member: "GetAll")
        try message.append(.string(locationInterface))
        return message
    }

    // MARK: Match rules (D-Bus Specification, "Match Rules")

    /// The service appearing, vanishing or changing hands.
    static let nameOwnerChangedRule = BusDaemon.nameOwnerChangedRule(for: busName)

    /// Signals from one client object: `LocationUpdated` (GeoClue addresses it to us) and
    /// `PropertiesChanged` (broadcast, carries `Active`).
    static func clientSignalsRule(_ client: String) -> String {
        "type='signal',sender='\(busName)',path='\(client)'"
    }
}

/// How precise a location the client asks for (`Client.RequestedAccuracyLevel`), GeoClue's
/// `GClueAccuracyLevel`.
public enum GeoClueAccuracyLevel: UInt32, Sendable, Equatable, CaseIterable {
    /// `GCLUE_ACCURACY_LEVEL_NONE` (0): no location.
    case none = 0
    /// `GCLUE_ACCURACY_LEVEL_COUNTRY` (1).
    case country = 1
    /// `GCLUE_ACCURACY_LEVEL_CITY` (4).
    case city = 4
    /// `GCLUE_ACCURACY_LEVEL_NEIGHBORHOOD` (5).
    case neighborhood = 5
    /// `GCLUE_ACCURACY_LEVEL_STREET` (6).
    case street = 6
    /// `GCLUE_ACCURACY_LEVEL_EXACT` (8): satellite navigation (GPS, NMEA sources).
    case exact = 8
}
