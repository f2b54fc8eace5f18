// SPDX-License-Identifier: Apache-2.0
// Shared helpers for the test suites: temporary directories, child processes, a private bus.
// Tests start the real components (dbus-daemon, gpsd via gpsfake, qiblad); nothing here mocks them.
import Foundation

/// The repository root, found from this file's location.
public let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Where SwiftPM put the built executables (qiblad, qiblactl, qibla-sim): beside the test bundle.
public let productsDirectory: URL = {
    let bundle = Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") }?.bundleURL
        ?? URL(fileURLWithPath: CommandLine.arguments[0])
    return bundle.deletingLastPathComponent()
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

/// `gpsfake -q -c CYCLE -P PORT LOG`: a real gpsd fed from a log file, looping over it.
/// (ChildProcess clears the inherited signal mask, so gpsd and gpsfake obey SIGTERM.)
public final class GPSFake: @unchecked Sendable {
    public let child: ChildProcess
    public let port: Int
    public let launched = ContinuousClock.now

    public init(logPath: String, port: Int, cycleSeconds: Double = 0.1) throws {
        self.port = port
        child = try ChildProcess("gpsfake", ["-q", "-c", String(cycleSeconds), "-P", String(port), logPath])
    }

    /// SIGTERM to gpsfake, which stops its gpsd.
    public func kill() { child.terminate(grace: 5) }

    deinit { child.terminate(grace: 2) }
}
