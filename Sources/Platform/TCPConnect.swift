// SPDX-License-Identifier: Apache-2.0
import SystemPackage

/// A numeric TCP endpoint: an IPv4 or IPv6 address and a port. What a connection attempt needs
/// once a name is resolved, so that each attempt is one `socket(2)` and one non-blocking
/// `connect(2)` (issue 37: tens of microseconds, where a resolution may read files, load NSS
/// modules or ask DNS).
public struct TCPEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// 4 (IPv4) or 16 (IPv6) bytes, network order.
    public let addressBytes: [UInt8]
    public let port: UInt16

    /// A numeric host (`127.0.0.1`, `::1`, `192.0.2.7`), or nil for a name or a port outside 1…65535.
    public init?(numericHost host: String, port: Int) {
        guard (1...65535).contains(port), let bytes = Syscalls.numericAddress(host) else { return nil }
        addressBytes = bytes
        self.port = UInt16(port)
    }

    private init(addressBytes: [UInt8], port: UInt16) {
        self.addressBytes = addressBytes
        self.port = port
    }

    /// The endpoints of `host`, without the resolver when the host is numeric or `localhost`
    /// (RFC 6761 § 6.3: the loopback addresses; `127.0.0.1` and `::1`, as Debian's `gpsd.socket`
    /// listens on both); nil when the host is a name to resolve (``resolve(host:port:)``).
    public static func withoutResolver(host: String, port: Int) -> [TCPEndpoint]? {
        guard (1...65535).contains(port) else { return nil }
        if let numeric = TCPEndpoint(numericHost: host, port: port) { return [numeric] }
        let name = host.lowercased()
        guard name == "localhost" || name == "localhost." else { return nil }
        return [TCPEndpoint(numericHost: "127.0.0.1", port: port)!, TCPEndpoint(numericHost: "::1", port: port)!]
    }

    /// `getaddrinfo(3)`: **blocking** (files, NSS modules, DNS); call it off the event loop's thread.
    /// Throws the resolver's message.
    public static func resolve(host: String, port: Int) throws(TCPResolutionError) -> [TCPEndpoint] {
        guard (1...65535).contains(port) else { throw TCPResolutionError(description: "port \(port) is outside 1…65535") }
        do {
            let addresses = try Syscalls.resolveTCP(host: host, port: port)
            var unique: [TCPEndpoint] = []
            for bytes in addresses where !unique.contains(where: { $0.addressBytes == bytes }) {
                unique.append(TCPEndpoint(addressBytes: bytes, port: UInt16(port)))
            }
            guard !unique.isEmpty else { throw TCPResolutionError(description: "\(host) has no IPv4 or IPv6 address") }
            return unique
        } catch let error as Syscalls.ResolutionError {
            throw TCPResolutionError(description: "cannot resolve \(host): \(error.description)")
        } catch let error as TCPResolutionError {
            throw error
        } catch {
            throw TCPResolutionError(description: "cannot resolve \(host)")
        }
    }

    /// An address of this host's loopback interface: 127.0.0.0/8 or `::1` (RFC 1122 § 3.2.1.3, RFC 4291 § 2.5.3).
    public var isLoopback: Bool {
        addressBytes.count == 4 ? addressBytes[0] == 127 : addressBytes == [UInt8](repeating: 0, count: 15) + [1]
    }

    /// `127.0.0.1:2947`, `[::1]:2947`.
    public var description: String {
        let text = Syscalls.addressText(addressBytes)
        return addressBytes.count == 4 ? "\(text):\(port)" : "[\(text)]:\(port)"
    }
}

/// Why a name could not be resolved.
public struct TCPResolutionError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// One non-blocking TCP connection attempt (`socket(2)` with `SOCK_NONBLOCK | SOCK_CLOEXEC`, then
/// `connect(2)`): it never blocks the caller. On loopback the answer is usually there at once
/// (connected, or `ECONNREFUSED` when nothing listens); otherwise the caller polls the descriptor
/// for writable and reads the outcome with ``finish()``.
public struct TCPConnectAttempt: Sendable {
    /// The socket; the caller closes it (``close()``) when it is done with it.
    public let fileDescriptor: FileDescriptor
    /// True while the connection is being made (`EINPROGRESS`).
    public let isInProgress: Bool

    /// Starts connecting. Throws the `Errno` of a failure known at once (`ECONNREFUSED`,
    /// `ENETUNREACH`, `EADDRNOTAVAIL` for an IPv6 loopback on a host without IPv6); nothing
    /// stays open then.
    public init(to endpoint: TCPEndpoint) throws(Errno) {
        let (fd, inProgress) = try Syscalls.startTCPConnect(address: endpoint.addressBytes, port: endpoint.port)
        fileDescriptor = FileDescriptor(rawValue: fd)
        isInProgress = inProgress
    }

    /// After the descriptor polled writable: nil when connected, else the connection's error (`SO_ERROR`).
    public func finish() -> Errno? { Syscalls.socketError(fileDescriptor.rawValue) }

    public func close() { try? fileDescriptor.close() }
}
