// SPDX-License-Identifier: Apache-2.0
import SystemPackage

/// A child process started with `posix_spawnp(3)`.
///
/// The child starts with an empty signal mask and default dispositions for SIGHUP, SIGINT, SIGTERM,
/// SIGPIPE and SIGCHLD: a parent that blocks signals to read them through a ``SignalFD`` (as qiblad and
/// `qibla-sim demo` do) must not hand that mask down, or the child would ignore SIGTERM.
public struct SpawnedProcess: Sendable, Hashable {
    /// The child's process id.
    public let pid: Int32

    /// How a child ended (`waitpid(2)` status).
    public enum Termination: Sendable, Hashable, CustomStringConvertible {
        /// `exit(status)`.
        case exited(Int32)
        /// Killed by a signal.
        case signalled(Signal)

        init(rawStatus: Int32) {
            // WIFEXITED / WEXITSTATUS / WTERMSIG (Linux encoding; the C macros are not importable).
            let low = rawStatus & 0x7f
            self = low == 0 ? .exited((rawStatus >> 8) & 0xff) : .signalled(Signal(rawValue: low))
        }

        /// A shell-style status: the exit status, or 128 + the signal number.
        public var shellStatus: Int32 {
            switch self {
            case .exited(let status): status
            case .signalled(let signal): 128 + signal.rawValue
            }
        }

        public var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .signalled(let signal): "killed by \(signal)"
            }
        }
    }

    /// Starts `arguments[0]` (searched in `PATH` when it has no slash) with `arguments`.
    /// - Parameters:
    ///   - environment: the child's whole environment (default: this process's).
    ///   - standardOutput, standardError: files to redirect to (created or truncated, mode 0600); nil inherits.
    public static func spawn(_ arguments: [String], environment: [String: String] = Environment.current,
                             standardOutput: String? = nil, standardError: String? = nil) throws(Errno) -> SpawnedProcess {
        let defaults: [Signal] = [.hangup, .interrupt, .terminate, .pipe, .child]
        let pid = try Syscalls.spawn(arguments, environment: environment, standardOutput: standardOutput,
                                     standardError: standardError, defaultSignals: defaults.map(\.rawValue))
        return SpawnedProcess(pid: pid)
    }

    /// Sends `signal` (`kill(2)`); a child that has already been reaped gives `ESRCH`.
    public func send(_ signal: Signal) throws(Errno) { try signal.send(to: pid) }

    /// Waits for the child to end and reaps it (`waitpid(2)`, `EINTR` retried).
    public func wait() throws(Errno) -> Termination {
        guard let status = try Syscalls.waitForProcess(pid, blocking: true) else { throw .interrupted }
        return Termination(rawStatus: status)
    }

    /// Reaps the child if it has ended (`waitpid(2)` with `WNOHANG`); nil while it runs.
    public func poll() throws(Errno) -> Termination? {
        try Syscalls.waitForProcess(pid, blocking: false).map(Termination.init(rawStatus:))
    }

    /// This process's id (`getpid(2)`).
    public static var currentID: Int32 { Syscalls.processID() }

    /// The running executable's path (`readlink(2)` of `/proc/self/exe`).
    public static func currentExecutablePath() throws(Errno) -> String {
        try FileSystem.destinationOfSymbolicLink("/proc/self/exe")
    }
}

/// Unbuffered writes of whole lines to standard output and standard error (`write(2)` on fd 1 and 2,
/// `EINTR` retried), so output reaches a pipe at once and lines from different threads do not mix.
/// Errors are dropped: there is nowhere left to report them.
public enum Console {
    /// Writes `text` and a newline to standard output.
    public static func printLine(_ text: String) { write(text + "\n", to: .standardOutput) }

    /// Writes `text` and a newline to standard error.
    public static func printError(_ text: String) { write(text + "\n", to: .standardError) }

    /// Writes `text` as it is to `descriptor`.
    public static func write(_ text: String, to descriptor: FileDescriptor) {
        _ = try? descriptor.writeAll(text.utf8)
    }

    /// Whether `descriptor` is a terminal (`isatty(3)`), e.g. to draw a progress bar in place.
    public static func isTerminal(_ descriptor: FileDescriptor) -> Bool { Syscalls.isTerminal(descriptor.rawValue) }
}
