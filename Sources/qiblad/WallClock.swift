#if canImport(Glibc)
import Glibc
#endif

/// The wall clock, for location timestamps and the magnetic model's date. QiblaCore never reads
/// a clock; the daemon passes time in.
enum WallClock {
    static func nowUnixSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
