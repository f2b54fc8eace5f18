// QiblaState's file access is QiblaPlatform's `FileSystem` (atomic writes with fsync + rename +
// directory fsync, mkdir -p, rename, unlink). The two helpers below keep StateStore's call sites.
import QiblaPlatform
import SystemPackage

typealias FileSystem = QiblaPlatform.FileSystem

extension QiblaPlatform.FileSystem {
    /// Seconds since the epoch, wall clock (for naming set-aside files).
    static func wallClockSeconds() -> Double { WallClock.nowUnixSeconds() }
}

/// `unlink(2)`: 0 on success, -1 with ``SystemPackage/Errno/current`` set.
func unlinkFile(_ path: String) -> Int32 {
    do { try FileSystem.unlink(path); return 0 } catch { Errno.current = error; return -1 }
}
