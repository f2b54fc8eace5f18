// SPDX-License-Identifier: Apache-2.0
import QiblaPlatform
import SystemPackage

/// Delivers POSIX signals (SIGTERM, SIGINT, SIGHUP) to the event loop through a ``QiblaPlatform/SignalFD``,
/// so handlers run as ordinary loop callbacks — no async-signal-safety traps.
/// The signals are blocked for the whole process; create it before starting any thread.
public final class SignalWatcher {
    private let signalFD: SignalFD
    private var token: EventLoop.Token?

    public init(_ signals: [Signal]) throws(Errno) {
        signalFD = try SignalFD(blocking: signals)
    }

    /// The same with raw signal numbers (`SIGTERM`, …).
    public convenience init(signals: [Int32]) throws(Errno) {
        try self.init(signals.map(Signal.init(rawValue:)))
    }

    /// Calls `handler` with the signal number for each delivered signal.
    public func attach(to loop: EventLoop, _ handler: @escaping (Int32) -> Void) {
        token = loop.watch(signalFD.fileDescriptor) { [signalFD] _ in
            while let signal = signalFD.next() { handler(signal.rawValue) }
        }
    }

    deinit { signalFD.close() }
}
