// SPDX-License-Identifier: Apache-2.0

/// The process's own machine code, mapped from its executable (issue 12, memory).
///
/// Start-up (argument parsing, FoundationEssentials, configuration, discovery, logging) touches
/// much of a statically linked Swift binary's 10 MB of code, and the kernel's fault-around maps
/// 64 KB around every page touched, so about 7 MB of code stay resident while the steady state
/// runs in a fraction of it. ``releaseResidentPages()`` unmaps the executable's code pages
/// (`madvise(MADV_DONTNEED)` on its `r-xp` mappings, which are never written, so nothing is lost):
/// what runs afterwards maps its pages back from the page cache (minor faults), and the rest stays
/// behind as unmapped page cache, the first the kernel reclaims under pressure.
public enum ExecutableCode {
    /// Unmaps the code pages of this process's executable (not its libraries, which other processes
    /// share). Returns the bytes of address space advised; 0 when `/proc/self` is not readable.
    @discardableResult
    public static func releaseResidentPages() -> Int {
        guard let executable = try? FileSystem.destinationOfSymbolicLink("/proc/self/exe"),
              let maps = FileSystem.readText("/proc/self/maps") else { return 0 }
        var released = 0
        for line in maps.split(separator: "\n") {
            // start-end perms offset dev inode path
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, fields[1] == "r-xp",
                  fields[5].drop(while: { $0 == " " }) == executable[...] else { continue }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16),
                  Syscalls.adviseNotNeeded(start: start, end: end) else { continue }
            released += Int(end - start)
        }
        return released
    }
}
