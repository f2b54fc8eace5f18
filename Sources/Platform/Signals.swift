// SPDX-License-Identifier: Apache-2.0
import SystemPackage

/// A POSIX signal number (signal(7)).
public struct Signal: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `SIGHUP`: qiblad reloads its configuration.
    public static let hangup = Signal(rawValue: Syscalls.signalNumbers.hangup)
    /// `SIGINT`: Ctrl-C.
    public static let interrupt = Signal(rawValue: Syscalls.signalNumbers.interrupt)
    /// `SIGTERM`: the polite stop (systemd, kill).
    public static let terminate = Signal(rawValue: Syscalls.signalNumbers.terminate)
    /// `SIGKILL`: cannot be caught.
    public static let kill = Signal(rawValue: Syscalls.signalNumbers.kill)
    /// `SIGPIPE`: a write to a closed socket or pipe.
    public static let pipe = Signal(rawValue: Syscalls.signalNumbers.pipe)
    /// `SIGCHLD`: a child process stopped or exited.
    public static let child = Signal(rawValue: Syscalls.signalNumbers.child)
    /// `SIGUSR1`.
    public static let user1 = Signal(rawValue: Syscalls.signalNumbers.user1)

    public var description: String {
        switch self {
        case .hangup: "SIGHUP"
        case .interrupt: "SIGINT"
        case .terminate: "SIGTERM"
        case .kill: "SIGKILL"
        case .pipe: "SIGPIPE"
        case .child: "SIGCHLD"
        case .user1: "SIGUSR1"
        default: "signal \(rawValue)"
        }
    }

    /// Blocks `signals` for the calling thread (`pthread_sigmask(SIG_BLOCK)`); threads started
    /// afterwards inherit the mask. Call on the main thread before starting any thread, then read
    /// the signals through a ``SignalFD``.
    public static func block(_ signals: [Signal]) throws(Errno) {
        try Syscalls.block(signals.map(\.rawValue))
    }

    /// Runs `body` with this signal blocked on the calling thread and discards one instance that
    /// `body` raised (for SIGPIPE around library calls that write to sockets, such as libgps).
    public func suppressed<T>(during body: () -> T) -> T {
        Syscalls.withSignalSuppressed(rawValue, body)
    }

    /// Sends this signal to process `pid` (`kill(2)`).
    public func send(to pid: Int32) throws(Errno) { try Syscalls.sendSignal(pid, rawValue) }
}

/// A Linux `signalfd(2)` (`SFD_NONBLOCK | SFD_CLOEXEC`): signals arrive as readable data, so they
/// are handled as ordinary event-loop callbacks instead of in async-signal context.
public struct SignalFD: Sendable {
    public let fileDescriptor: FileDescriptor

    /// Blocks `signals` for the calling thread (see ``Signal/block(_:)``) and opens a signalfd for them.
    public init(blocking signals: [Signal]) throws(Errno) {
        try Signal.block(signals)
        fileDescriptor = FileDescriptor(rawValue: try Syscalls.makeSignalFD(signals.map(\.rawValue)))
    }

    /// The next queued signal (reads one `signalfd_siginfo`), or nil when none is queued.
    public func next() -> Signal? { Syscalls.readSignal(fileDescriptor.rawValue).map(Signal.init(rawValue:)) }

    public func close() { try? fileDescriptor.close() }
}
