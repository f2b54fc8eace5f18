// SPDX-License-Identifier: Apache-2.0
import Logging
import QiblaDBus

/// Notices when a claimant leaves the bus, without waking for anybody else: one
/// `NameOwnerChanged` match per claiming unique name (`arg0=':1.42'`), added on its claim and
/// removed on its release, as iio-sensor-proxy watches its claimants. An unclaimed qiblad has no
/// such match, so a busy session bus (every `busctl` call, every app start) never wakes it.
///
/// Nothing here blocks the loop: `AddMatch`, `RemoveMatch` and `GetNameOwner` go out as
/// asynchronous calls to the bus driver, which answers them in order, so a client that left between
/// its claim and the `AddMatch` is caught by the `GetNameOwner` that follows.
enum ClaimantWatch {
    private static func rule(_ client: String) -> String {
        "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',path='/org/freedesktop/DBus',arg0='\(client)'"
    }

    private static func busCall(_ member: String, _ argument: String) -> DBusMessage {
        let message = DBusMessage.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                             interface: "org.freedesktop.DBus", member: member)
        try? message.append(.string(argument))
        return message
    }

    /// Starts watching `client` (a unique name); `vanished` runs on the loop thread if it has
    /// already left the bus by the time the match is in place.
    static func watch(_ client: String, on connection: DBusConnection, logger: Logger,
                      vanished: @escaping () -> Void) {
        guard client.hasPrefix(":"), !client.contains("'"), !client.contains("\\") else { return }
        connection.callAsync(busCall("AddMatch", rule(client)), timeoutMilliseconds: 5000) { result in
            if case .failure(let error) = result {
                logger.warning("cannot watch compass client \(client): \(error)")
            }
        }
        connection.callAsync(busCall("GetNameOwner", client), timeoutMilliseconds: 5000) { result in
            if case .failure(let error) = result, error.name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
                vanished()
            }
        }
    }

    /// Stops watching `client` (fire and forget).
    static func unwatch(_ client: String, on connection: DBusConnection) {
        guard client.hasPrefix(":"), !client.contains("'"), !client.contains("\\") else { return }
        let message = busCall("RemoveMatch", rule(client))
        message.noReplyExpected = true
        connection.send(message)
    }

    /// The unique name that left the bus, if `message` is a NameOwnerChanged saying so.
    static func vanishedClient(_ message: DBusMessage) -> String? {
        // The signature first: a peer can send any signal straight to us, and only these three
        // bus names are decoded (issue 33).
        guard message.interface == "org.freedesktop.DBus", message.member == "NameOwnerChanged", message.signature == "sss",
              let args = try? message.arguments(maximumTextBytes: BusService.maximumArgumentTextBytes), args.count == 3,
              case .string(let name) = args[0], case .string(let newOwner) = args[2],
              newOwner.isEmpty, name.hasPrefix(":") else { return nil }
        return name
    }
}
