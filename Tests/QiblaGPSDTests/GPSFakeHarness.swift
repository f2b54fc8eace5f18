// SPDX-License-Identifier: Apache-2.0
// Helpers for the QiblaGPSD tests: a real gpsd started by gpsfake on a free port, an event loop driven
// on the test thread, the expected values written by scripts/generate_nmea.py, and a raw gpsd client
// used as a timing reference. Nothing here imitates gpsd.
import Foundation
import Logging
import QiblaCore
import QiblaEventLoop
@testable import QiblaGPSD
import TestSupport

let logsDirectory = repositoryRoot.appendingPathComponent("Tests/QiblaGPSDTests/Logs")

extension GPSFake {
    /// gpsfake over one of this suite's logs.
    convenience init(log: String, port: Int, cycleSeconds: Double = 0.1, readyTimeout: Double = 15,
                     launcher: [String] = ["gpsfake"]) throws {
        try self.init(logPath: logsDirectory.appendingPathComponent(log).path, port: port, cycleSeconds: cycleSeconds,
                      readyTimeout: readyTimeout, launcher: launcher)
    }
}

/// One row of a `<log>.expected.csv`.
struct ExpectedFix {
    var kind: String
    var latitude: Double?
    var longitude: Double?
    var altitudeHAE: Double?
    var epx: Double?
    var epy: Double?

    func matches(_ fix: PositionFix, tolerance: Double = 1e-6) -> Bool {
        guard let latitude, let longitude else { return false }
        return abs(fix.position.latitudeDegrees - latitude) <= tolerance
            && abs(fix.position.longitudeDegrees - longitude) <= tolerance
    }

    static func load(_ log: String) throws -> [ExpectedFix] {
        let url = logsDirectory.appendingPathComponent(log.replacingOccurrences(of: ".log", with: ".expected.csv"))
        let text = try String(contentsOf: url, encoding: .utf8)
        return text.split(separator: "\n").dropFirst().map { line in
            let cells = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            return ExpectedFix(kind: cells[0], latitude: Double(cells[1]), longitude: Double(cells[2]),
                               altitudeHAE: Double(cells[3]), epx: Double(cells[4]), epy: Double(cells[5]))
        }
    }
}

/// An event loop on the test thread plus a source whose events are recorded with their arrival time.
final class SourceHarness {
    let loop: EventLoop
    let source: GPSDPositionSource
    private(set) var events: [(instant: ContinuousClock.Instant, event: GPSDEvent)] = []
    /// Called for every event after it is recorded (to stop the source from the handler, say).
    var onEvent: ((GPSDEvent) -> Void)?

    /// `controlSocketDirectory`: none by default, so that `absentRetrySeconds` paces the attempts
    /// (the source's default watches `/run`).
    init(port: Int, host: String = "127.0.0.1", fixTimeoutSeconds: Double = 10, absentRetrySeconds: Double = 30,
         controlSocketDirectory: String? = nil) throws {
        let loop = try EventLoop()
        self.loop = loop
        var logger = Logger(label: "qiblad.gpsd.test")
        logger.logLevel = .info
        let box = EventBox()
        source = GPSDPositionSource(
            configuration: .init(host: host, port: port, fixTimeoutSeconds: fixTimeoutSeconds, absentRetrySeconds: absentRetrySeconds,
                                 controlSocketDirectory: controlSocketDirectory),
            loop: loop, logger: logger) { event in box.harness?.record(event) }
        box.harness = self
    }

    private final class EventBox { weak var harness: SourceHarness? }

    private func record(_ event: GPSDEvent) {
        events.append((ContinuousClock.now, event))
        onEvent?(event)
    }

    var fixes: [PositionFix] {
        events.compactMap { if case .fix(let fix) = $0.event { fix } else { nil } }
    }

    func count(_ predicate: (GPSDEvent) -> Bool) -> Int { events.filter { predicate($0.event) }.count }

    var connectedCount: Int { count { $0 == .connected } }
    var disconnectedCount: Int { count { if case .disconnected = $0 { true } else { false } } }
    var fixLostCount: Int { count { $0 == .fixLost } }

    /// Runs the loop until `condition` holds or `timeout` seconds pass; returns whether it held.
    @discardableResult
    func spin(timeout: Double, until condition: () -> Bool = { false }) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: .seconds(timeout))
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? loop.runOnce(maximumWait: .milliseconds(50))
        }
        return condition()
    }
}

/// Established TCP connections whose remote port is `port` (IPv4 and IPv6), from /proc/net/tcp*.
/// With gpsd on `port`, these are its clients' sockets.
///
/// Read to the end of file: `String(contentsOfFile:)` returns only the kernel's first page of
/// these files (about 26 sockets), so with the TIME_WAIT sockets of earlier tests the connection
/// looked for was often not in what it returned.
func establishedClientConnections(toPort port: Int) -> Int {
    var total = 0
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        guard let data = FileHandle(forReadingAtPath: table).flatMap({ try? $0.readToEnd() }) else { continue }
        let text = String(decoding: data, as: UTF8.self)
        for line in text.split(separator: "\n").dropFirst() {
            let columns = line.split(separator: " ")
            guard columns.count > 3 else { continue }
            let remote = columns[2].split(separator: ":")
            guard let remotePort = remote.last.flatMap({ Int($0, radix: 16) }) else { continue }
            if remotePort == port && columns[3] == "01" { total += 1 }
        }
    }
    return total
}

/// A plain TCP listener on 127.0.0.1 (non-blocking), to see whether anything connects.
final class PlainListener {
    let fd: Int32
    init(port: Int) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        listen(fd, 8)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }
    /// Accepts one pending connection if any; returns its descriptor (caller closes) or nil.
    func acceptPending() -> Int32? {
        let client = accept(fd, nil, nil)
        return client >= 0 ? client : nil
    }
    deinit { close(fd) }
}

/// A raw gpsd JSON client on its own thread, recording when each TPV line arrives, as the reference
/// for the source's fix-to-event latency (both clients are fed by the same gpsd write loop).
final class RawGPSDClient: @unchecked Sendable {
    private let lock = NSLock()
    private var arrivals: [(instant: ContinuousClock.Instant, time: String)] = []
    private let fd: Int32
    private var thread: Thread?

    init?(port: Int) {
        guard let fd = connectedLoopbackSocket(port: port) else { return nil }
        self.fd = fd
        let watch = "?WATCH={\"enable\":true,\"json\":true};\n"
        _ = watch.withCString { write(fd, $0, strlen($0)) }
        let thread = Thread { [self] in self.readLoop() }
        self.thread = thread
        thread.start()
    }

    private func readLoop() {
        var pending = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { return }
            let now = ContinuousClock.now
            pending.append(contentsOf: buffer[0..<count])
            while let newline = pending.firstIndex(of: 10) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                guard line.hasPrefix("{\"class\":\"TPV\""), let range = line.range(of: "\"time\":\"") else { continue }
                let time = String(line[range.upperBound...].prefix { $0 != "\"" })
                lock.lock(); arrivals.append((now, time)); lock.unlock()
            }
        }
    }

    /// Latest arrival of a TPV with `time` at or before `instant`.
    func arrival(of time: String, before instant: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        lock.lock(); defer { lock.unlock() }
        return arrivals.filter { $0.time == time && $0.instant <= instant }.map(\.instant).max()
    }

    func close() { shutdown(fd, Int32(SHUT_RDWR)); Glibc.close(fd) }
}

/// gpsd's TPV time format, e.g. `2026-11-22T12:00:07.000Z`.
func gpsdTimeString(_ unixSeconds: Double) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.string(from: Date(timeIntervalSince1970: unixSeconds))
}

func milliseconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) * 1e3 + Double(attoseconds) / 1e15
}
