// SPDX-License-Identifier: Apache-2.0
import SystemPackage

/// A Linux `eventfd(2)` counter (`EFD_NONBLOCK | EFD_CLOEXEC`): another thread ``signal()``s it and
/// the descriptor becomes readable, which wakes a thread sleeping in `poll(2)`.
public struct EventFD: Sendable {
    public let fileDescriptor: FileDescriptor

    public init() throws(Errno) {
        fileDescriptor = FileDescriptor(rawValue: try Syscalls.makeEventFD())
    }

    /// The raw descriptor number.
    public var rawValue: Int32 { fileDescriptor.rawValue }

    /// Adds one to the counter; the descriptor becomes readable. Safe from any thread.
    public func signal() { Syscalls.writeCounter(rawValue, 1) }

    /// Resets the counter to zero; returns how many signals were pending (0 when none).
    @discardableResult
    public func drain() -> UInt64 { Syscalls.readCounter(rawValue) ?? 0 }

    public func close() { try? fileDescriptor.close() }
}

/// A Linux `timerfd_create(2)` timer (`TFD_NONBLOCK | TFD_CLOEXEC`): readable when it expires.
public struct TimerFD: Sendable {
    public let fileDescriptor: FileDescriptor

    /// A timer on `CLOCK_MONOTONIC` (or `CLOCK_REALTIME` when `monotonic` is false), disarmed.
    public init(monotonic: Bool = true) throws(Errno) {
        fileDescriptor = FileDescriptor(rawValue: try Syscalls.makeTimerFD(monotonic: monotonic))
    }

    /// Arms the timer (`timerfd_settime(2)`): first expiry after `delay`, then every `interval` if given.
    /// A zero `delay` disarms it.
    public func arm(after delay: Duration, repeating interval: Duration? = nil) throws(Errno) {
        try Syscalls.timerfdSet(fileDescriptor.rawValue, firstNanoseconds: Self.nanoseconds(delay),
                                intervalNanoseconds: interval.map(Self.nanoseconds) ?? 0)
    }

    /// Disarms the timer.
    public func disarm() throws(Errno) {
        try Syscalls.timerfdSet(fileDescriptor.rawValue, firstNanoseconds: 0, intervalNanoseconds: 0)
    }

    /// Expirations since the last read (0 when none).
    @discardableResult
    public func drain() -> UInt64 { Syscalls.readCounter(fileDescriptor.rawValue) ?? 0 }

    public func close() { try? fileDescriptor.close() }

    private static func nanoseconds(_ d: Duration) -> Int64 {
        let (seconds, attoseconds) = d.components
        return max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
