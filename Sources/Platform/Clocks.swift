// SPDX-License-Identifier: Apache-2.0
// The two clocks of the project. QiblaCore never reads a clock; the adapters and executables pass
// time in from here.

/// Wall-clock time, `CLOCK_REALTIME` (clock_gettime(2)): for timestamps that leave the process
/// (location timestamps, state files, the magnetic model's date). It jumps when the time is set.
public enum WallClock {
    /// Seconds since the Unix epoch (UTC), with nanosecond resolution.
    public static func nowUnixSeconds() -> Double {
        let ns = Syscalls.clockNanoseconds(realtime: true)
        return Double(ns / 1_000_000_000) + Double(ns % 1_000_000_000) / 1e9
    }

    /// Nanoseconds since the Unix epoch.
    public static func nowUnixNanoseconds() -> Int64 { Syscalls.clockNanoseconds(realtime: true) }

    /// A calendar date and time in UTC (`gmtime_r(3)`).
    public struct UTCDateTime: Sendable, Equatable {
        public var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int
    }

    /// The UTC calendar date and time of `unixSeconds` (truncated to whole seconds).
    public static func utc(unixSeconds: Double) -> UTCDateTime {
        let (y, mo, d, h, mi, s) = Syscalls.utcComponents(unixSeconds: Int64(unixSeconds.rounded(.down)))
        return UTCDateTime(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
    }
}

/// Monotonic time, `CLOCK_MONOTONIC` (clock_gettime(2)): for intervals and for IIO sample
/// timestamps (the kernel stamps buffered scans on the same clock by default).
public enum MonotonicClock {
    /// Nanoseconds since an unspecified start (boot); never jumps.
    public static func nowNanoseconds() -> Int64 { Syscalls.clockNanoseconds(realtime: false) }

    /// Seconds since an unspecified start.
    public static func nowSeconds() -> Double { Double(nowNanoseconds()) * 1e-9 }

    /// Sleeps the calling thread for `duration` (`nanosleep(2)`, resumed after `EINTR`).
    /// A thread that must stop promptly sleeps with ``PlatformThread/sleep(for:)`` instead.
    public static func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        Syscalls.sleep(nanoseconds: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// What the process's heap holds, for benchmarks that count allocations per operation.
public enum Heap {
    /// Bytes allocated with `malloc` and not yet freed (glibc `mallinfo2().uordblks`); nil on a C
    /// library without `mallinfo2` (musl, glibc before 2.33).
    public static func bytesInUse() -> Int? { Syscalls.heapBytesInUse() }
}
