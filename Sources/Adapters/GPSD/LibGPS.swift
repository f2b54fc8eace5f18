// SPDX-License-Identifier: Apache-2.0
// The only file in qiblad that touches `struct gps_data_t` and its raw pointers.
//
// API reference: libgps(3) and gps.h of gpsd 3.22 (GPSD_API_MAJOR_VERSION 11). The CGPS shim refuses
// to compile against API majors outside 9...14; every field read here (`fix.mode`, `fix.time` as a
// `timespec`, `fix.latitude`, `fix.longitude`, `fix.altHAE`, `fix.epx`, `fix.epy`, `fix.eph`) exists
// with the same meaning in all of them (`altHAE` replaced the undefined `altitude` in API 9), so no
// per-version field selection is needed in Swift. `fix.status` is never read (it moved between
// structs in API 12 and must not gate a fix anyway).
import CGPS
import QiblaPlatform
import SystemPackage

/// Why libgps refused to open a session.
struct LibGPSError: Error, Sendable, CustomStringConvertible {
    var description: String
}

/// One decoded gpsd TPV ("time-position-velocity") report, in gpsd_json(5) units. Fields gpsd did
/// not send are NaN (libgps' convention), `timeUnixSeconds` is nil when the report has no time.
struct TPVReport: Sendable {
    /// gpsd fix mode: 0 not seen, 1 no fix, 2 two-dimensional, 3 three-dimensional.
    var mode: Int32
    var latitudeDegrees: Double
    var longitudeDegrees: Double
    /// Height above the WGS84 ellipsoid, metres (`altHAE`).
    var altitudeHAEMetres: Double
    /// Longitude and latitude error estimates, metres ("95 % confidence" per gpsd_json(5)).
    var epxMetres: Double
    var epyMetres: Double
    /// Horizontal error estimate, metres.
    var ephMetres: Double
    /// Fix time, seconds since the Unix epoch (UTC).
    var timeUnixSeconds: Double?
}

/// What one `gps_read` produced.
enum LibGPSReadResult {
    /// A complete line was consumed: a TPV report, another gpsd JSON class, or not gpsd JSON.
    case tpv(TPVReport)
    case otherReport
    case notGPSDJSON
    /// No complete line is buffered and the socket has nothing more right now (`EAGAIN`).
    case noCompleteLine
    /// The peer closed the connection, or a read error (`gps_read` returned -1).
    case closed
}

/// An open libgps socket session. Owns a heap `gps_data_t`; confined to one thread at a time (the
/// connecting thread hands it to the loop thread whole, through ``LibGPSSession/Transfer``).
final class LibGPSSession {
    private let data: UnsafeMutablePointer<gps_data_t>
    private var isOpen = true
    /// Receives the first bytes of each line (`gps_read`'s message copy) to tell report classes apart.
    private let line: UnsafeMutablePointer<CChar>
    private static let lineCapacity = 48

    private init(data: UnsafeMutablePointer<gps_data_t>) {
        self.data = data
        line = .allocate(capacity: Self.lineCapacity)
        line.initialize(repeating: 0, count: Self.lineCapacity)
    }

    deinit {
        close()
        line.deallocate()
        data.deallocate()
    }

    /// libgps' API major version this module was compiled against.
    static let apiMajorVersion = Int(GPSD_API_MAJOR_VERSION)

    /// `gps_open(host, port)`: resolves and connects with a blocking `connect(2)`. Call off the loop thread.
    static func open(host: String, port: Int) -> Result<LibGPSSession, LibGPSError> {
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: MemoryLayout<gps_data_t>.size, alignment: MemoryLayout<gps_data_t>.alignment)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<gps_data_t>.size)
        let data = raw.bindMemory(to: gps_data_t.self, capacity: 1)
        Errno.current = Errno(rawValue: 0)
        let status = gps_open(host, String(port), data)
        if status != 0 {
            let code = Errno.current.rawValue
            data.deallocate()
            let reason = gps_errstr(code).map { String(cString: $0) } ?? "error \(code)"
            return .failure(LibGPSError(description: reason))
        }
        return .success(LibGPSSession(data: data))
    }

    /// The socket, for `poll(2)`.
    var fileDescriptor: Int32 { data.pointee.gps_fd }

    /// Sets `O_NONBLOCK` so `gps_read` returns instead of waiting (libgps maps `EAGAIN` to 0).
    func makeNonBlocking() -> Bool {
        (try? FileDescriptor(rawValue: fileDescriptor).setNonBlocking()) != nil
    }

    /// `gps_stream(WATCH_ENABLE | WATCH_JSON)`: asks gpsd for JSON reports (and to power the receiver).
    func enableWatch() -> Bool {
        withoutSIGPIPE { gps_stream(data, UInt32(WATCH_ENABLE | WATCH_JSON), nil) == 0 }
    }

    /// `gps_stream(WATCH_DISABLE)`: gpsd may power the receiver down when no client watches.
    func disableWatch() {
        withoutSIGPIPE { _ = gps_stream(data, UInt32(WATCH_DISABLE), nil) }
    }

    /// libgps sends with `write(2)`, which raises SIGPIPE (fatal by default) if gpsd already closed the
    /// socket. Block SIGPIPE on this thread for the call and discard one that became pending
    /// (the usual POSIX recipe; the write then fails with EPIPE and gps_stream returns -1).
    private func withoutSIGPIPE<T>(_ body: () -> T) -> T { Signal.pipe.suppressed(during: body) }

    /// Whether libgps holds buffered bytes or the socket is readable now (`gps_waiting(data, 0)`).
    var hasBufferedData: Bool { isOpen && gps_waiting(data, 0) }

    /// One non-blocking `gps_read(data, message, length)`.
    func read() -> LibGPSReadResult {
        guard isOpen else { return .closed }
        line[0] = 0
        let status = gps_read(data, line, Int32(Self.lineCapacity))
        if status < 0 { return .closed }
        if status == 0 { return .noCompleteLine }
        let prefix = String(cString: line)
        if prefix.hasPrefix("{\"class\":\"TPV\"") { return .tpv(currentTPV()) }
        if prefix.hasPrefix("{\"class\":\"") { return .otherReport }
        return .notGPSDJSON
    }

    private func currentTPV() -> TPVReport {
        let fix = data.pointee.fix
        let seconds = Double(fix.time.tv_sec) + Double(fix.time.tv_nsec) / 1e9
        return TPVReport(
            mode: fix.mode,
            latitudeDegrees: fix.latitude,
            longitudeDegrees: fix.longitude,
            altitudeHAEMetres: fix.altHAE,
            epxMetres: fix.epx,
            epyMetres: fix.epy,
            ephMetres: fix.eph,
            timeUnixSeconds: (fix.time.tv_sec == 0 && fix.time.tv_nsec == 0) ? nil : seconds)
    }

    /// `gps_close`. Safe to call twice.
    func close() {
        guard isOpen else { return }
        isOpen = false
        _ = gps_close(data)
    }

    /// Moves a freshly opened session from the connecting thread to the loop thread. The session
    /// is not touched by the sender after it is wrapped, so the unchecked conformance is sound.
    struct Transfer: @unchecked Sendable {
        let result: Result<LibGPSSession, LibGPSError>
    }

    /// Runs ``open(host:port:)`` on a short-lived detached thread (``QiblaPlatform/PlatformThread``),
    /// then calls `completion` on that thread (the caller posts it to its loop). Returns false if
    /// the thread could not be created.
    static func openInBackground(host: String, port: Int,
                                 completion: @escaping @Sendable (Transfer) -> Void) -> Bool {
        do {
            try PlatformThread.start { _ in completion(Transfer(result: LibGPSSession.open(host: host, port: port))) }
            return true
        } catch {
            return false
        }
    }
}
