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

    /// Gives the free pages inside the heap back to the kernel (glibc `malloc_trim(0)`, which
    /// advises them `MADV_DONTNEED` in every arena, also below chunks still in use). Returns whether
    /// anything was given back; false on a C library without it (musl, which returns free memory
    /// on its own).
    @discardableResult
    public static func trim() -> Bool { Syscalls.trimHeap() }

    /// Makes a large block go back to the kernel when it is freed (issue 33: memory comes back
    /// after a message up to the bus's limit). glibc serves blocks of at least `M_MMAP_THRESHOLD`
    /// bytes with their own `mmap` and unmaps them on `free`, but by default it *raises* that
    /// threshold to the size of each such block freed (up to 32 MiB on 64-bit, glibc `malloc.c`,
    /// "dynamic mmap threshold"), so after one 60 MiB message the next blocks of up to 32 MiB come
    /// from the heap, whose free pages stay resident until a trim. Setting the threshold fixes it
    /// (mallopt(3): setting `M_MMAP_THRESHOLD` or `M_TRIM_THRESHOLD` disables the adjustment);
    /// `trimBytes` is how much free memory the top of the heap may keep. Both default to 128 KiB,
    /// glibc's own starting values (qiblad passes 512 KiB: see its `run()`). Returns false on a C library without `mallopt` (musl, which
    /// unmaps large blocks on its own).
    @discardableResult
    public static func returnLargeBlocksWhenFreed(mmapThresholdBytes: Int32 = 128 << 10, trimBytes: Int32 = 128 << 10) -> Bool {
        Syscalls.setHeapThresholds(mmapBytes: mmapThresholdBytes, trimBytes: trimBytes)
    }
}

/// Local civil time in the C library's time zone (`TZ` or /etc/localtime), for command lines that
/// print times a person reads.
public enum LocalTime {
    public struct Components: Sendable, Equatable {
        public var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int
        /// Offset of local time from UTC, seconds (east positive).
        public var utcOffsetSeconds: Int
    }

    /// The local date and time of an instant (`localtime_r(3)`).
    public static func components(unixSeconds: Double) -> Components {
        let c = Syscalls.localTime(Int(unixSeconds.rounded(.down)))
        return Components(year: c.year, month: c.month, day: c.day, hour: c.hour, minute: c.minute, second: c.second,
                          utcOffsetSeconds: c.utcOffsetSeconds)
    }

    /// The instant of a local date and time (`mktime(3)`, daylight saving decided by the zone);
    /// nil when it cannot be represented.
    public static func unixSeconds(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) -> Double? {
        Syscalls.makeLocalTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second).map(Double.init)
    }
}
