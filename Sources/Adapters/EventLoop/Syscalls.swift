// The raw C calls swift-system does not wrap (poll, eventfd). Nothing else in this module calls libc.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinux
import SystemPackage

@_exported import struct SystemPackage.Errno
@_exported import struct SystemPackage.FileDescriptor

enum Syscalls {
    /// `poll(2)`, retrying on `EINTR`. A `nil` timeout waits forever.
    static func poll(_ fds: inout [pollfd], timeout: Duration?) throws(Errno) -> Int {
        let milliseconds: Int32
        if let timeout {
            let (seconds, attoseconds) = timeout.components
            // Round up so a timer due in 0.3 ms does not spin with a zero timeout.
            let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
            milliseconds = Int32(clamping: max(0, ms))
        } else {
            milliseconds = -1
        }
        while true {
            let result = fds.withUnsafeMutableBufferPointer { buffer in
                Glibc.poll(buffer.baseAddress, nfds_t(buffer.count), milliseconds)
            }
            if result >= 0 { return Int(result) }
            let error = Errno(rawValue: errno)
            if error == .interrupted { continue }
            throw error
        }
    }
}

/// A Linux `eventfd(2)` counter used to wake a sleeping loop from another thread.
public struct EventFD: Sendable {
    public let rawValue: Int32

    public init() throws(Errno) {
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        rawValue = fd
    }

    /// The descriptor, for watching it in another loop.
    public var fileDescriptor: FileDescriptor { FileDescriptor(rawValue: rawValue) }

    /// Adds one to the counter; the fd becomes readable.
    public func signal() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { Glibc.write(rawValue, $0.baseAddress, 8) }
    }

    /// Resets the counter to zero; returns how many signals were pending.
    @discardableResult
    public func drain() -> UInt64 {
        var value: UInt64 = 0
        let n = withUnsafeMutableBytes(of: &value) { Glibc.read(rawValue, $0.baseAddress, 8) }
        return n == 8 ? value : 0
    }

    public func close() { _ = Glibc.close(rawValue) }
}
