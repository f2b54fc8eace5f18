// SPDX-License-Identifier: Apache-2.0
// The real GeoClue2 for tests: /usr/libexec/geoclue (Debian package geoclue-2.0, 2.6) on a private
// "system" bus, with its own /etc/geoclue bind-mounted in a private mount namespace (`unshare -m`,
// root only), fed NMEA sentences through the Unix socket its `[network-nmea] nmea-socket` names
// (GeoClue connects to it as a client; the test listens), and GeoClue's own demo agent
// (/usr/libexec/geoclue-2.0/demos/agent) registered for our uid, because GeoClue 2.6 holds
// `CreateClient` while no agent is registered for the caller's uid (without a limit; a test that
// wants that starts the environment with `agent: false`).
import Foundation

/// A private `dbus-daemon` standing in for the system bus: GeoClue2's bus policy from the
/// package is included, and an optional service directory makes GeoClue2 activatable.
public final class PrivateSystemBus: @unchecked Sendable {
    public let bus: PrivateBus
    public var address: String { bus.address }
    public var daemon: ChildProcess { bus.daemon }

    /// GeoClue's bus policy files (Debian 12 puts them in /etc, newer packages in /usr/share).
    static let geoCluePolicies = [
        "/etc/dbus-1/system.d/org.freedesktop.GeoClue2.conf",
        "/usr/share/dbus-1/system.d/org.freedesktop.GeoClue2.conf",
        "/etc/dbus-1/system.d/org.freedesktop.GeoClue2.Agent.conf",
        "/usr/share/dbus-1/system.d/org.freedesktop.GeoClue2.Agent.conf",
    ]

    /// - Parameter command: `org.freedesktop.GeoClue2` becomes activatable with this command
    ///   line (the bus starts it on the first call to the name).
    public init(activating command: String? = nil) throws {
        // Not <type>system</type>: a system bus would activate through the setuid launch helper
        // and its own configuration.
        bus = try PrivateBus(type: "qiblad-test-system") { directory in
            var extra = Self.geoCluePolicies.map { "<include ignore_missing=\"yes\">\($0)</include>" }
            if let command {
                // The bus passes its own environment on; GeoClue must find this bus as its system bus.
                try directory.write("""
                    #!/bin/sh
                    export DBUS_SYSTEM_BUS_ADDRESS=unix:path=\(directory.path)/bus G_MESSAGES_DEBUG=Geoclue
                    exec \(command)

                    """, to: "activate-geoclue.sh")
                chmod(directory.path + "/activate-geoclue.sh", 0o755)
                try directory.write("""
                    [D-BUS Service]
                    Name=org.freedesktop.GeoClue2
                    Exec=\(directory.path)/activate-geoclue.sh

                    """, to: "services/org.freedesktop.GeoClue2.service")
                extra.append("<servicedir>\(directory.path)/services</servicedir>")
            }
            return extra.joined(separator: "\n")
        }
    }

    /// Points clients at this bus as their system bus.
    public var environment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": address] }

    /// `busctl --address=…` against this bus.
    public func busctl(_ arguments: [String], timeout: Double = 15) throws -> (status: Int32, stdout: String, stderr: String) {
        try bus.busctl(arguments, timeout: timeout)
    }

    /// Whether `name` has an owner now.
    public func hasOwner(_ name: String) -> Bool {
        let r = try? busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                             "NameHasOwner", "s", name])
        return r?.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "b true"
    }

    /// Unique names of the connections that process `pid` holds on this bus.
    public func connections(of pid: Int32) -> [String] {
        guard let r = try? busctl(["--json=short", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                   "org.freedesktop.DBus", "ListNames"]),
              let object = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
              let data = object["data"] as? [[String]], let names = data.first else { return [] }
        return names.filter { $0.hasPrefix(":") }.filter { name in
            guard let r = try? busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                       "GetConnectionUnixProcessID", "s", name]) else { return false }
            return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "u \(pid)"
        }
    }
}

/// A Unix stream socket the test listens on; GeoClue's NMEA source connects to it and reads
/// NMEA 0183 sentences, one per line. Every line written goes to every connected client.
public final class NMEASocketServer: @unchecked Sendable {
    public let path: String
    private let listener: Int32
    private let lock = NSLock()
    private var clients: [Int32] = []
    private var accepted = 0
    private var closed = false

    public init(path: String) throws {
        self.path = path
        unlink(path)
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw TestSupportError.startFailed("socket(AF_UNIX): errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw TestSupportError.startFailed("socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(listener, 8) == 0 else {
            throw TestSupportError.startFailed("bind/listen \(path): errno \(errno)")
        }
        let listening = listener
        Thread { [weak self] in
            while true {
                let fd = accept(listening, nil, nil)
                if fd < 0 {
                    if errno == EINTR { continue }
                    return
                }
                guard let self else { Glibc.close(fd); return }
                self.lock.lock()
                if self.closed { Glibc.close(fd) } else { self.clients.append(fd); self.accepted += 1 }
                self.lock.unlock()
            }
        }.start()
    }

    /// Connections accepted so far, and those still open.
    public var acceptedCount: Int { lock.lock(); defer { lock.unlock() }; return accepted }
    public var connectedCount: Int { lock.lock(); defer { lock.unlock() }; return clients.count }

    /// Writes `sentence` (with CR LF) to every client; clients that hung up are dropped.
    public func send(_ sentence: String) {
        let data = Array((sentence + "\r\n").utf8)
        lock.lock(); defer { lock.unlock() }
        clients = clients.filter { fd in
            let n = data.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n == data.count { return true }
            Glibc.close(fd)
            return false
        }
    }

    public func close() {
        lock.lock()
        closed = true
        for fd in clients { Glibc.close(fd) }
        clients = []
        lock.unlock()
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        unlink(path)
    }

    deinit { if !closed { close() } }
}

/// NMEA 0183 v3.01 sentences: `$BODY*CS` where CS is the XOR of the characters between `$` and
/// `*` in two upper-case hex digits (as scripts/generate_nmea.py writes them).
public enum NMEASentence {
    /// A GGA (fix data) sentence at the current UTC time of day: GPS fix (quality 1), 8
    /// satellites, the given HDOP, altitude above mean sea level in metres.
    public static func gga(latitude: Double, longitude: Double, altitudeMetres: Double = 11, hdop: Double = 0.9,
                           time: Date = Date()) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.hour, .minute, .second, .nanosecond], from: time)
        let clock = String(format: "%02d%02d%02d.%02d", c.hour!, c.minute!, c.second!, c.nanosecond! / 10_000_000)
        let body = String(format: "GPGGA,%@,%@,%@,1,08,%.1f,%.2f,M,45.40,M,,", clock,
                          field(latitude, degreeDigits: 2, positive: "N", negative: "S"),
                          field(longitude, degreeDigits: 3, positive: "E", negative: "W"), hdop, altitudeMetres)
        return "$\(body)*\(checksum(body))"
    }

    /// `ddmm.mmmmmm,H` / `dddmm.mmmmmm,H`.
    static func field(_ degrees: Double, degreeDigits: Int, positive: String, negative: String) -> String {
        let a = abs(degrees)
        let whole = Int(a)
        let minutes = (a - Double(whole)) * 60
        return String(format: "%0\(degreeDigits)d%09.6f,%@", whole, minutes, degrees >= 0 ? positive : negative)
    }

    public static func checksum(_ body: String) -> String {
        String(format: "%02X", body.utf8.reduce(UInt8(0)) { $0 ^ $1 })
    }
}

/// The real GeoClue2 daemon against a ``PrivateSystemBus``, configured for tests: only the NMEA
/// source (reading the harness's ``NMEASocketServer``), the GeoIP lookup pointed at a closed local
/// port, qiblad allowed, denied or absent in its application section, GeoClue's demo agent registered.
public final class GeoClueEnvironment: @unchecked Sendable {
    /// `[qiblad]` in geoclue.conf.
    public enum QibladSection: Sendable {
        case allowed, disallowed, absent
    }

    public static let geoclueExecutable = "/usr/libexec/geoclue"
    public static let agentExecutable = "/usr/libexec/geoclue-2.0/demos/agent"

    public let directory: TemporaryDirectory
    public let bus: PrivateSystemBus
    public let nmea: NMEASocketServer
    public private(set) var geoclue: ChildProcess?
    public private(set) var agent: ChildProcess?
    /// Logs of earlier GeoClue processes (after a restart).
    public private(set) var earlierLogs = ""

    /// Whether GeoClue's demo agent is started with GeoClue (without one, GeoClue 2.6 holds every
    /// `CreateClient` for this uid without a limit).
    public let withAgent: Bool

    /// Starts the bus, the NMEA socket and (unless `startGeoClue` is false) GeoClue and its agent
    /// (unless `agent` is false). With `activatable` GeoClue is not started here but by the bus on
    /// the first call.
    public init(qiblad: QibladSection = .allowed, activatable: Bool = false, startGeoClue: Bool = true,
                agent: Bool = true) throws {
        withAgent = agent
        directory = try TemporaryDirectory(prefix: "qiblad-geoclue")
        nmea = try NMEASocketServer(path: directory.path + "/nmea.sock")
        let section = switch qiblad {
        case .allowed: "[qiblad]\nallowed=true\nsystem=false\nusers=\n"
        case .disallowed: "[qiblad]\nallowed=false\nsystem=false\nusers=\n"
        case .absent: ""
        }
        try directory.write("""
            [agent]
            whitelist=geoclue-demo-agent
            [network-nmea]
            enable=true
            nmea-socket=\(nmea.path)
            [3g]
            enable=false
            [cdma]
            enable=false
            [modem-gps]
            enable=false
            [wifi]
            enable=false
            url=http://127.0.0.1:9/geolocate
            submit-data=false
            [compass]
            enable=false
            \(section)
            """, to: "etc/geoclue.conf")
        bus = try PrivateSystemBus(activating: activatable ? Self.commandLine(etc: directory.path + "/etc") : nil)
        if startGeoClue && !activatable { try start() }
        if activatable, agent { try startAgent() }
    }

    /// `unshare -m sh -c 'mount --bind ETC /etc/geoclue && exec geoclue -t 0'`: GeoClue sees our
    /// configuration, nobody else does, and it never exits for inactivity.
    static func commandLine(etc: String) -> String {
        "unshare -m sh -c 'mount --bind \(etc) /etc/geoclue && exec \(geoclueExecutable) -t 0'"
    }

    public var environment: [String: String] { bus.environment.merging(["G_MESSAGES_DEBUG": "Geoclue"]) { $1 } }

    /// Starts GeoClue (and the agent, if not running) and waits until both are on the bus.
    public func start() throws {
        let child = try ChildProcess("/bin/sh", ["-c", "exec " + Self.commandLine(etc: directory.path + "/etc")],
                                     environment: environment)
        geoclue = child
        guard waitUntil(timeout: 15, { bus.hasOwner("org.freedesktop.GeoClue2") || !child.isRunning }), child.isRunning else {
            throw TestSupportError.startFailed("geoclue: \(Self.output(of: child))")
        }
        guard withAgent else { return }
        try startAgent()
        guard waitUntil(timeout: 15, { Self.output(of: child).contains("New agent for user ID") }) else {
            throw TestSupportError.startFailed("geoclue's demo agent did not register: \(Self.output(of: child))")
        }
    }

    private func startAgent() throws {
        if agent?.isRunning == true { return }
        agent = try ChildProcess(Self.agentExecutable, [], environment: bus.environment)
    }

    /// Sends `signal` to GeoClue and waits for it to leave the bus.
    public func kill(_ signal: Int32 = SIGKILL) {
        guard let geoclue else { return }
        geoclue.send(signal)
        _ = geoclue.wait(timeout: 10)
        earlierLogs += Self.output(of: geoclue)
        _ = waitUntil(timeout: 10) { !bus.hasOwner("org.freedesktop.GeoClue2") }
    }

    /// Everything GeoClue logged (debug level), for failure messages.
    public var log: String { earlierLogs + (geoclue.map(Self.output) ?? "") }

    /// GLib writes debug messages to standard output, warnings to standard error.
    static func output(of child: ChildProcess) -> String { child.standardOutput + child.standardError }

    deinit {
        geoclue?.terminate(grace: 2)
        agent?.terminate(grace: 1)
        nmea.close()
        directory.remove()
    }
}

/// Writes a GGA sentence for the current position every `interval` seconds on its own thread
/// (GeoClue reads the socket only while one of its clients runs, and only what arrives then).
public final class NMEAFeeder: @unchecked Sendable {
    private let lock = NSLock()
    private var current: (latitude: Double, longitude: Double, altitude: Double)
    private var hdop = 0.9
    private var running = true
    private let done = DispatchSemaphore(value: 0)
    /// Sentences written so far.
    public private(set) var sent = 0

    public init(_ server: NMEASocketServer, latitude: Double, longitude: Double, altitude: Double = 11,
                interval: Double = 0.25) {
        current = (latitude, longitude, altitude)
        Thread { [self] in
            while true {
                lock.lock()
                let (keepGoing, position, dilution) = (running, current, hdop)
                lock.unlock()
                guard keepGoing else { break }
                server.send(NMEASentence.gga(latitude: position.latitude, longitude: position.longitude,
                                             altitudeMetres: position.altitude, hdop: dilution))
                lock.lock(); sent += 1; lock.unlock()
                usleep(UInt32(interval * 1_000_000))
            }
            done.signal()
        }.start()
    }

    /// Changes the horizontal dilution of precision the sentences carry (GeoClue's accuracy follows it).
    public func setHDOP(_ value: Double) {
        lock.lock(); hdop = value; lock.unlock()
    }

    /// Moves the receiver.
    public func move(latitude: Double, longitude: Double, altitude: Double = 11) {
        lock.lock(); current = (latitude, longitude, altitude); lock.unlock()
    }

    public func stop() {
        lock.lock()
        let wasRunning = running
        running = false
        lock.unlock()
        if wasRunning { done.wait() }
    }

    deinit { stop() }
}
