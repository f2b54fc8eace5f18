// SPDX-License-Identifier: Apache-2.0
import SystemPackage

/// Readiness bits of `poll(2)`: the C constants `POLLIN`, `POLLOUT`, `POLLERR`, `POLLHUP`, `POLLNVAL`.
public struct PollEvents: OptionSet, Sendable, Hashable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }
    /// `POLLIN`: data to read (or end of file).
    public static let readable = PollEvents(rawValue: Syscalls.pollIn)
    /// `POLLOUT`: writing will not block.
    public static let writable = PollEvents(rawValue: Syscalls.pollOut)
    /// `POLLERR`: an error condition (reported even when not asked for).
    public static let error = PollEvents(rawValue: Syscalls.pollError)
    /// `POLLHUP`: the peer hung up (reported even when not asked for).
    public static let hangup = PollEvents(rawValue: Syscalls.pollHangup)
    /// `POLLNVAL`: the descriptor is not open.
    public static let invalid = PollEvents(rawValue: Syscalls.pollInvalid)
}

/// The `struct pollfd` array of `poll(2)`, kept between calls so a steady event loop allocates
/// nothing: fill it with ``append(_:events:)`` when the watched set changes, then call ``poll(timeout:)``.
public struct PollSet {
    private var entries: [Syscalls.PollEntry] = []

    public init() {}

    public var count: Int { entries.count }

    /// Adds `descriptor`, waiting for `events`; its position is the index for ``returnedEvents(at:)``.
    public mutating func append(_ descriptor: FileDescriptor, events: PollEvents) {
        entries.append(Syscalls.pollEntry(descriptor.rawValue, events: events.rawValue))
    }

    public mutating func removeAll(keepingCapacity: Bool = true) { entries.removeAll(keepingCapacity: keepingCapacity) }

    public mutating func reserveCapacity(_ count: Int) { entries.reserveCapacity(count) }

    /// What the last ``poll(timeout:)`` reported for the entry at `index`.
    public func returnedEvents(at index: Int) -> PollEvents {
        PollEvents(rawValue: Syscalls.returnedEvents(entries[index]))
    }

    /// `poll(2)` on all entries: waits until one is ready or `timeout` passes (`nil`: no limit).
    /// The timeout is rounded up to whole milliseconds, so a timer due in 0.3 ms does not spin.
    /// `EINTR` is retried. Returns how many entries are ready.
    @discardableResult
    public mutating func poll(timeout: Duration?) throws(Errno) -> Int {
        Syscalls.clearReturnedEvents(&entries)
        return try Syscalls.pollRetrying(&entries, milliseconds: Self.milliseconds(timeout))
    }

    static func milliseconds(_ timeout: Duration?) -> Int32 {
        guard let timeout else { return -1 }
        let (seconds, attoseconds) = timeout.components
        let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: max(0, ms))
    }
}

extension FileDescriptor {
    /// Waits up to `timeout` for this descriptor to report one of `events` (`poll(2)` on one entry).
    public func poll(for events: PollEvents, timeout: Duration?) throws(Errno) -> PollEvents {
        PollEvents(rawValue: try Syscalls.pollOne(rawValue, events: events.rawValue,
                                                  milliseconds: PollSet.milliseconds(timeout)))
    }

    /// Sets `O_NONBLOCK` on an already open descriptor (`fcntl(2)` `F_GETFL`/`F_SETFL`).
    public func setNonBlocking() throws(Errno) { try Syscalls.setNonBlocking(rawValue) }

    /// Flushes the file's data and metadata to storage (`fsync(2)`).
    public func sync() throws(Errno) { try Syscalls.syncFile(rawValue) }
}
