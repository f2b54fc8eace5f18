// SPDX-License-Identifier: Apache-2.0
import SystemPackage

/// The clean pages of the files this process maps: its executable's code, its libraries' code and
/// read-only data (issue 12, memory).
///
/// Start-up (argument parsing, FoundationEssentials, configuration, discovery, logging, the
/// dynamic loader's symbol lookups) touches much of a statically linked Swift binary's 10 MB of
/// code and of its libraries, and the kernel's fault-around maps 64 KB around every page touched
/// (`madvise(MADV_RANDOM)` does not change that: measured on Linux 6.18), so about 7 MB of the
/// executable and 4 MB of libraries stay mapped while the steady state runs in a fraction of them.
/// ``releaseClean(_:)`` unmaps those pages with `madvise(MADV_DONTNEED)`; what runs afterwards maps
/// its pages back from the page cache (minor faults, 64 KB at a time), and the rest stays behind
/// as unmapped page cache, the first the kernel reclaims under pressure.
///
/// This is page accounting, not memory freed: the pages stay in the page cache. For the
/// executable (mapped by this process only) RSS and Pss drop alike; a library's pages are shared
/// with every process that maps it, so RSS drops by the whole page and Pss only by this process's
/// share of it.
///
/// Only pages that hold the file's own bytes are dropped: `/proc/self/pagemap` says per page
/// whether it is present and a page-cache page (bit 61) rather than a private copy (relocated
/// RELRO data, written `.data`), and only runs of present page-cache pages are advised, so no
/// written byte is lost. A read-only mapping cannot be written between that check and the advice;
/// a writable one (the executable's `rw-p`, which holds Swift's writable `.rodata`) could, by
/// another thread, so writable mappings are only released while this process has one thread.
public enum MappedFilePages {
    /// Which mappings to release.
    public struct Scope: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The executable's mappings (`/proc/self/exe`).
        public static let executable = Scope(rawValue: 1 << 0)
        /// Every other file: shared libraries, the dynamic loader, mapped data files.
        public static let libraries = Scope(rawValue: 1 << 1)
        public static let all: Scope = [.executable, .libraries]
    }

    /// What one call released: bytes of pages unmapped, and whether writable mappings were included
    /// (only while the process had one thread).
    public struct Release: Sendable, Equatable {
        public var bytes: Int
        public var includedWritable: Bool
    }

    /// One line of `/proc/PID/maps` that may be released: a private file mapping that can be read.
    struct Mapping: Equatable {
        var start: UInt
        var end: UInt
        var writable: Bool
        var path: String

        /// Parses `start-end perms offset dev inode path`; nil for anonymous, shared, unreadable
        /// and special (`[vdso]`, `[stack]`) mappings.
        init?(mapsLine line: Substring) {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6 else { return nil }
            let perms = Array(fields[1].utf8)
            let path = fields[5].drop(while: { $0 == " " })
            guard perms.count == 4, perms[0] == UInt8(ascii: "r"), perms[3] == UInt8(ascii: "p"),
                  path.hasPrefix("/"), !path.hasSuffix(" (deleted)") else { return nil }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16),
                  end > start else { return nil }
            self.start = start
            self.end = end
            writable = perms[1] == UInt8(ascii: "w")
            self.path = String(path)
        }
    }

    /// One 64-bit entry of `/proc/PID/pagemap` (Documentation/admin-guide/mm/pagemap.rst).
    struct PageMapEntry: Equatable {
        var rawValue: UInt64
        /// Bit 63: the page is mapped in.
        var isPresent: Bool { rawValue & (1 << 63) != 0 }
        /// Bit 62: the page is swapped out.
        var isSwapped: Bool { rawValue & (1 << 62) != 0 }
        /// Bit 61: a page-cache page (or shared anonymous), not a private copy.
        var isFilePage: Bool { rawValue & (1 << 61) != 0 }
        /// Mapped page-cache page: dropping it from this process's page table loses nothing.
        var isCleanAndMapped: Bool { isPresent && isFilePage }
    }

    /// Page-index ranges `[lower, upper)` of consecutive entries that ``PageMapEntry/isCleanAndMapped``.
    static func cleanRuns(_ entries: some Sequence<PageMapEntry>) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        var runStart: Int?
        var index = 0
        for entry in entries {
            if entry.isCleanAndMapped {
                if runStart == nil { runStart = index }
            } else if let start = runStart {
                runs.append(start..<index)
                runStart = nil
            }
            index += 1
        }
        if let start = runStart { runs.append(start..<index) }
        return runs
    }

    /// The page size, bytes (`sysconf(_SC_PAGESIZE)`).
    static let pageSize = Syscalls.pageSize()

    /// Pagemap entries read at once (× 8 bytes).
    static let entriesPerRead = 512

    /// Unmaps the clean pages of the mappings in `scope` (see the type's doc). Writable mappings
    /// are included only while this process has one thread. Returns what was released; zero when
    /// `/proc/self` cannot be read.
    ///
    /// All runs are found first and advised last, in one tight loop: code that runs after a page
    /// was dropped maps it back (64 KB around it), so the parsing must not come after it.
    @discardableResult
    public static func releaseClean(_ scope: Scope = .all) -> Release {
        let singleThreaded = threadCount() == 1
        var release = Release(bytes: 0, includedWritable: singleThreaded)
        guard let maps = FileSystem.readText("/proc/self/maps"),
              let pagemap = try? FileSystem.open("/proc/self/pagemap", .readOnly) else { return release }
        let executable = try? FileSystem.destinationOfSymbolicLink("/proc/self/exe")
        var runs: [(start: UInt, end: UInt)] = []
        runs.reserveCapacity(1024)
        for line in maps.split(separator: "\n") {
            guard let mapping = Mapping(mapsLine: line), !mapping.writable || singleThreaded else { continue }
            guard scope.contains(mapping.path == executable ? .executable : .libraries) else { continue }
            appendCleanRuns(start: mapping.start, end: mapping.end, pagemap: pagemap, to: &runs)
        }
        try? pagemap.close()
        for run in runs where Syscalls.adviseNotNeeded(start: run.start, end: run.end) {
            release.bytes += Int(run.end - run.start)
        }
        return release
    }

    /// Appends the address ranges of the present page-cache pages of `[start, end)` (page-aligned
    /// addresses of one private file mapping) to `runs`. The caller makes sure no other thread
    /// writes the range before they are advised (read-only, or one thread).
    static func appendCleanRuns(start: UInt, end: UInt, pagemap: FileDescriptor, to runs: inout [(start: UInt, end: UInt)]) {
        let page = UInt(pageSize)
        var buffer = [UInt64](repeating: 0, count: entriesPerRead)
        var chunkStart = start
        while chunkStart < end {
            let count = min(entriesPerRead, Int((end - chunkStart) / page))
            let read = (try? buffer.withUnsafeMutableBytes { bytes in
                try pagemap.read(fromAbsoluteOffset: Int64(chunkStart / page) * 8,
                                 into: UnsafeMutableRawBufferPointer(rebasing: bytes[0..<(count * 8)]))
            }) ?? 0
            for run in cleanRuns(buffer[0..<(read / 8)].lazy.map { PageMapEntry(rawValue: $0) }) {
                let runStart = chunkStart + UInt(run.lowerBound) * page
                let runEnd = chunkStart + UInt(run.upperBound) * page
                // A run that ends where the previous one (of the last chunk) began is one run.
                if let last = runs.last, last.end == runStart { runs[runs.count - 1].end = runEnd } else { runs.append((runStart, runEnd)) }
            }
            guard read == count * 8 else { break }
            chunkStart += UInt(count) * page
        }
    }

    /// Threads of this process (entries of `/proc/self/task`); 0 when it cannot be listed.
    static func threadCount() -> Int {
        FileSystem.contentsOfDirectory("/proc/self/task").count
    }
}
