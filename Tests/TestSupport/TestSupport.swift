// SPDX-License-Identifier: Apache-2.0
// Shared helpers for the test suites: temporary directories, child processes, a private bus.
// Tests start the real components (dbus-daemon, gpsd via gpsfake, qiblad); nothing here mocks them.
import Foundation

/// The repository root, found from this file's location.
public let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Where SwiftPM put the built executables (qiblad, qiblactl, qibla-sim): beside the test bundle,
/// which on Linux is the running executable. (Not `Bundle.allBundles`: Foundation 6.0, Debian 13's,
/// crashes in it when parallel tests reach it first.)
public let productsDirectory: URL = {
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: executable).deletingLastPathComponent()
}()

/// The locale under which the tests run a translated program, `LANGUAGE` naming the language.
/// gettext honours `LANGUAGE` only under a locale other than C, and Debian 13's glibc (2.41)
/// counts C.UTF-8 as C there (Debian 12's 2.36 did not): so en_US.UTF-8 where it is installed
/// (Debian's locales-all), else C.UTF-8 — under which a newer glibc leaves the program in
/// English and the translated tests fail on the English text.
public let translatedLocale: String = {
    let installed = (try? run("/usr/bin/locale", ["-a"]))?.stdout.split(separator: "\n") ?? []
    return installed.contains { $0 == "en_US.utf8" || $0 == "en_US.UTF-8" } ? "en_US.UTF-8" : "C.UTF-8"
}()

/// A product built by this package, e.g. `product("qiblad")`.
public func product(_ name: String) -> URL { productsDirectory.appendingPathComponent(name) }

/// A fresh directory under `$TMPDIR`, removed by ``remove()``.
public final class TemporaryDirectory: @unchecked Sendable {
    public let url: URL
    public var path: String { url.path }

    public init(prefix: String = "qiblad-test") throws {
        let base = URL(fileURLWithPath: NSTemporaryDirectory())
        url = base.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func remove() { try? FileManager.default.removeItem(at: url) }

    /// Writes `text` to `relative` (creating folders).
    public func write(_ text: String, to relative: String) throws {
        let file = url.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: file, atomically: true, encoding: .utf8)
    }
}

/// Polls `condition` every 20 ms until it holds or `timeout` seconds pass.
@discardableResult
public func waitUntil(timeout: Double = 5, _ condition: () throws -> Bool) rethrows -> Bool {
    let end = Date().addingTimeInterval(timeout)
    while Date() < end {
        if try condition() { return true }
        usleep(20_000)
    }
    return try condition()
}

/// A child process with captured output. Killed (SIGTERM, then SIGKILL) by ``terminate()``.
public final class ChildProcess: @unchecked Sendable {
    public let process = Process()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()
    private let lock = NSLock()
    private var stdoutData = Data()
    private var stderrData = Data()
    private var readersDone: [DispatchSemaphore] = []

    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                currentDirectory: String? = nil) throws {
        // Threads of the test process block SIGTERM and Foundation's Process hands that mask to
        // the child, which would then ignore SIGTERM. A one-line exec wrapper clears the mask and
        // restores default dispositions; the child keeps the wrapper's pid.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", Self.execWrapper, executable] + arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment ?? [:] { env[k] = v }
        process.environment = env
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        process.standardInput = FileHandle.nullDevice
        // One reader thread per pipe, reading until end of file: output arrives in order and
        // nothing written just before exit is lost.
        for (pipe, isStandardOutput) in [(stdoutPipe, true), (stderrPipe, false)] {
            let handle = pipe.fileHandleForReading
            let done = DispatchSemaphore(value: 0)
            readersDone.append(done)
            Thread { [weak self] in
                defer { done.signal() }
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { return }
                    guard let self else { continue }
                    self.lock.lock()
                    if isStandardOutput { self.stdoutData.append(chunk) } else { self.stderrData.append(chunk) }
                    self.lock.unlock()
                }
            }.start()
        }
        try process.run()
    }

    static let execWrapper = "import os, signal, sys; "
        + "[signal.signal(s, signal.SIG_DFL) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE)]; "
        + "signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execvp(sys.argv[1], sys.argv[1:])"

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }
    public var standardOutput: String { lock.lock(); defer { lock.unlock() }; return String(decoding: stdoutData, as: UTF8.self) }
    public var standardError: String { lock.lock(); defer { lock.unlock() }; return String(decoding: stderrData, as: UTF8.self) }

    /// Sends `signal` to the process.
    public func send(_ signal: Int32) { if process.isRunning { kill(pid, signal) } }

    /// Waits up to `timeout` seconds for exit; returns the exit status or nil if still running.
    @discardableResult
    public func wait(timeout: Double = 10) -> Int32? {
        guard waitUntil(timeout: timeout, { !process.isRunning }) else { return nil }
        process.waitUntilExit()
        // Collect the last output; a grandchild still holding the pipe (gpsd) only delays this.
        for done in readersDone { if done.wait(timeout: .now() + 1) == .success { done.signal() } }
        return process.terminationStatus
    }

    /// SIGTERM, then SIGKILL after `grace` seconds.
    public func terminate(grace: Double = 3) {
        guard process.isRunning else { return }
        send(SIGTERM)
        if wait(timeout: grace) == nil { send(SIGKILL); _ = wait(timeout: 3) }
    }

    deinit { terminate(grace: 1) }
}

/// Runs a command to completion and returns (status, stdout, stderr).
@discardableResult
public func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                timeout: Double = 30) throws -> (status: Int32, stdout: String, stderr: String) {
    let child = try ChildProcess(executable, arguments, environment: environment)
    guard let status = child.wait(timeout: timeout) else {
        child.terminate()
        throw TestSupportError.timedOut("\(executable) \(arguments.joined(separator: " "))")
    }
    return (status, child.standardOutput, child.standardError)
}

public enum TestSupportError: Error, CustomStringConvertible {
    case timedOut(String)
    case startFailed(String)
    public var description: String {
        switch self {
        case .timedOut(let s): "timed out: \(s)"
        case .startFailed(let s): "could not start: \(s)"
        }
    }
}

/// A private `dbus-daemon --session` for one test, on a socket in its own temporary directory.
public final class PrivateBus: @unchecked Sendable {
    public let address: String
    public let daemon: ChildProcess
    public let directory: TemporaryDirectory

    /// The policy of a test session bus: anyone may own, send, receive and eavesdrop.
    public static let openPolicy = """
        <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        """

    /// system.conf's default context: nothing may be owned or called unless a policy file allows it.
    public static let systemDefaultPolicy = """
        <policy context="default">
            <allow user="*"/>
            <deny own="*"/>
            <deny send_type="method_call"/>
            <allow send_type="signal"/>
            <allow send_requested_reply="true" send_type="method_return"/>
            <allow send_requested_reply="true" send_type="error"/>
            \(["method_call", "method_return", "error", "signal"].map { "<allow receive_type=\"\($0)\"/>" }.joined(separator: "\n    "))
            \(["org.freedesktop.DBus", "org.freedesktop.DBus.Introspectable"].map { "<allow send_destination=\"org.freedesktop.DBus\" send_interface=\"\($0)\"/>" }.joined(separator: "\n    "))
          </policy>
        """

    /// - Parameters:
    ///   - type: the bus's `<type>`, session or system (a system bus activates through the setuid helper).
    ///   - policy: the default context's policy.
    ///   - extra: more configuration (a `<servicedir>`, an `<include>`), placed after the policy.
    ///   - environment: for dbus-daemon and what it activates.
    ///   - configure: may write files into the bus's directory; returns more `busconfig` elements.
    public init(type: String = "session", policy: String = PrivateBus.openPolicy, extra: String = "",
                environment: [String: String]? = nil,
                configure: (TemporaryDirectory) throws -> String = { _ in "" }) throws {
        directory = try TemporaryDirectory(prefix: "qiblad-bus")
        let extraConfiguration = try configure(directory)
        let config = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>\(type)</type>
          <listen>unix:path=\(directory.path)/bus</listen>
          <auth>EXTERNAL</auth>
          \(policy)
          \(extra)
          \(extraConfiguration)
        </busconfig>
        """
        try directory.write(config, to: "bus.conf")
        daemon = try ChildProcess("dbus-daemon", ["--config-file=\(directory.path)/bus.conf", "--nofork", "--print-address=1"],
                                  environment: environment)
        address = "unix:path=\(directory.path)/bus"
        // dbus-daemon prints its address once it accepts connections (the socket file appears a
        // little earlier, and a connect in between is refused).
        guard waitUntil(timeout: 10, { daemon.standardOutput.contains("unix:") }) else {
            throw TestSupportError.startFailed("dbus-daemon: \(daemon.standardError)")
        }
    }

    /// Environment that points clients (busctl, gdbus, qiblad --session) at this bus.
    public var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": address] }

    /// Runs `busctl --user …` against this bus.
    public func busctl(_ arguments: [String], timeout: Double = 15) throws -> (status: Int32, stdout: String, stderr: String) {
        try run("busctl", ["--address=\(address)"] + arguments, timeout: timeout)
    }

    /// Kills the bus (for the "bus went away" tests).
    public func kill() { daemon.send(SIGKILL); _ = daemon.wait(timeout: 5) }

    deinit { daemon.terminate(grace: 1); directory.remove() }
}

/// A TCP port nobody listens on right now (bound to 0 and released).
public func freePort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    precondition(fd >= 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// `gpsfake -q -c CYCLE -P PORT LOG`: a real gpsd fed from a log file, looping over it, with the
/// fake device in gpsd's list by the time the initializer returns.
/// (ChildProcess clears the inherited signal mask, so gpsd and gpsfake obey SIGTERM.)
///
/// gpsfake takes its gpsd as ready once the control socket's file exists, then adds the pty with a
/// single connect to that socket, and ignores a refused connect: gpsd then never has a device and
/// no client ever gets a fix. That connect is refused when gpsd has bound the socket but not yet
/// called `listen` (a window that a loaded machine widens), and when `$TMPDIR/gpsfake-PID.sock` is
/// a stale file left by an earlier gpsd with the same pid (gpsd drops root before exiting and
/// cannot remove it from the sticky `/tmp`; hundreds accumulate). Hence a fresh `TMPDIR` for each
/// gpsfake, and the initializer asks gpsd (`?DEVICES;`, which opens no device) until it lists the
/// pty, launching gpsfake again when it does not within `readyTimeout` seconds (at most 3 launches).
public final class GPSFake: @unchecked Sendable {
    public let child: ChildProcess
    public let port: Int
    /// When the gpsfake that became ready was launched.
    public let launched: ContinuousClock.Instant
    /// When its gpsd first listed the fake device.
    public let ready: ContinuousClock.Instant
    /// Launches that never became ready before this one (0 normally).
    public let relaunches: Int
    /// gpsfake's `TMPDIR`, which holds only its control socket.
    private let directory: TemporaryDirectory
    /// Seconds gpsfake needs at least to feed the whole log once (sentences × cycle; more under load).
    public let logCycleSeconds: Double

    /// `launcher` is the command that runs gpsfake (a test may put a wrapper in front of it).
    /// `socketDirectory`: gpsfake's `TMPDIR`, where its gpsd binds its control socket
    /// (`gpsfake-PID.sock`; a test's fresh directory that a daemon watches), for every launch;
    /// else a fresh one per launch.
    public init(logPath: String, port: Int, cycleSeconds: Double = 0.1, readyTimeout: Double = 15,
                launcher: [String] = ["gpsfake"], socketDirectory: TemporaryDirectory? = nil) throws {
        self.port = port
        // Lines as bytes: a log may hold any byte, and Foundation 6.0 (Debian 13) decodes no Latin-1.
        let sentences = try Data(contentsOf: URL(fileURLWithPath: logPath))
            .split(separator: UInt8(ascii: "\n")).filter { $0.first != UInt8(ascii: "#") }.count
        logCycleSeconds = Double(sentences) * cycleSeconds
        var failures: [String] = []
        while true {
            let directory = try socketDirectory ?? TemporaryDirectory(prefix: "gpsfake")
            let launched = ContinuousClock.now
            let child = try ChildProcess(launcher[0], Array(launcher.dropFirst()) + ["-q", "-c", String(cycleSeconds), "-P", String(port), logPath],
                                         environment: ["TMPDIR": directory.path])
            if Self.waitForDevice(port: port, child: child, timeout: readyTimeout) {
                self.child = child
                self.launched = launched
                self.ready = .now
                self.relaunches = failures.count
                self.directory = directory
                return
            }
            child.terminate(grace: 5)
            if socketDirectory == nil { directory.remove() }
            print("gpsfake on port \(port): gpsd did not list the device within \(readyTimeout) s; launching it again")
            failures.append("exit status \(child.isRunning ? "running" : String(child.process.terminationStatus)): \(child.standardError.suffix(300))")
            if failures.count == 3 {
                throw TestSupportError.timedOut("gpsfake on port \(port): gpsd never listed the device in 3 launches: \(failures)")
            }
        }
    }

    /// Whether gpsd on `port` lists a device within `timeout` seconds while `child` (gpsfake) runs.
    private static func waitForDevice(port: Int, child: ChildProcess, timeout: Double) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end, child.isRunning {
            if let count = gpsdDeviceCount(port: port), count > 0 { return true }
            usleep(100_000)
        }
        return false
    }

    /// SIGTERM to gpsfake, which stops its gpsd.
    public func kill() {
        child.terminate(grace: 5)
        directory.remove()
    }

    deinit {
        child.terminate(grace: 2)
        directory.remove()
    }
}

/// A TCP socket connected to 127.0.0.1:`port` (blocking; the caller closes it), or nil.
public func connectedLoopbackSocket(port: Int) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { close(fd); return nil }
    return fd
}

/// How many devices gpsd on 127.0.0.1:`port` has in its list, from its answer to `?DEVICES;`
/// (which opens none of them); nil when nothing answers there.
public func gpsdDeviceCount(port: Int, timeout: Double = 2) -> Int? {
    guard let fd = connectedLoopbackSocket(port: port) else { return nil }
    defer { close(fd) }
    var limit = timeval(tv_sec: Int(timeout), tv_usec: Int(timeout.truncatingRemainder(dividingBy: 1) * 1e6))
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    let request = Array("?DEVICES;\n".utf8)
    guard write(fd, request, request.count) == request.count else { return nil }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    let end = Date().addingTimeInterval(timeout)
    while Date() < end {
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        received += buffer[0..<count]
        // Complete lines only (split as bytes: gpsd ends lines with CR LF, one Character in Swift).
        guard let lastNewline = received.lastIndex(of: 10) else { continue }
        let lines = received[..<lastNewline].split(separator: 10).map { String(decoding: $0, as: UTF8.self) }
        if let devices = lines.first(where: { $0.contains("\"class\":\"DEVICES\"") }) {
            return devices.components(separatedBy: "\"class\":\"DEVICE\"").count - 1
        }
    }
    return nil
}
