// SPDX-License-Identifier: Apache-2.0
import Synchronization
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

    /// What one call released: bytes advised (the mapped page-cache pages, and the unmapped pages
    /// between them that joined their runs), and whether writable mappings were included (only
    /// while the process had one thread).
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
            var copy = line
            guard let mapping = copy.withUTF8({ Mapping(mapsLine: $0) }) else { return nil }
            self = mapping
        }

        /// The same from the line's bytes. Issue 37: byte by byte, as `String.split` segments
        /// graphemes: over the 95 lines of a claimed daemon's maps that was 72 % of a trim's
        /// CPU (`perf record` of `scripts/bench-vs-iio-sensor-proxy.sh`, BENCHMARKS.md issue 37).
        init?(mapsLine line: UnsafeBufferPointer<UInt8>) {
            var index = 0
            /// The next field (bytes up to a space), skipping the spaces before it.
            func field() -> Range<Int> {
                while index < line.count, line[index] == UInt8(ascii: " ") { index += 1 }
                let start = index
                while index < line.count, line[index] != UInt8(ascii: " ") { index += 1 }
                return start..<index
            }
            func hex(_ range: Range<Int>) -> UInt? {
                guard !range.isEmpty, range.count <= 16 else { return nil }
                var value: UInt = 0
                for byte in line[range] {
                    let digit: UInt8
                    switch byte {
                    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                    default: return nil
                    }
                    value = value << 4 | UInt(digit)
                }
                return value
            }
            let range = field(), perms = field()
            guard perms.count == 4, line[perms.lowerBound] == UInt8(ascii: "r"), line[perms.lowerBound + 3] == UInt8(ascii: "p"),
                  let dash = line[range].firstIndex(of: UInt8(ascii: "-")),
                  let start = hex(range.lowerBound..<dash), let end = hex((dash + 1)..<range.upperBound), end > start else { return nil }
            for _ in 0..<3 { _ = field() }  // offset, device, inode
            while index < line.count, line[index] == UInt8(ascii: " ") { index += 1 }
            let path = UnsafeBufferPointer(rebasing: line[index...])
            let deleted = " (deleted)".utf8
            guard path.first == UInt8(ascii: "/"), !path.suffix(deleted.count).elementsEqual(deleted) else { return nil }
            self.start = start
            self.end = end
            writable = line[perms.lowerBound + 1] == UInt8(ascii: "w")
            self.path = String(decoding: path, as: UTF8.self)
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

    /// The ranges to advise, built page by page: runs of mapped page-cache pages, joined across
    /// pages that are not mapped at all (nothing to unmap there, and one `madvise` instead of
    /// several: issue 37), broken by a private copy or a swapped-out page (their bytes exist
    /// nowhere else) and wherever the caller says the next page does not follow (another
    /// mapping not examined lies between).
    struct RunBuilder {
        var runs: [(start: UInt, end: UInt)] = []
        /// The last run may grow over the pages seen since its end: all of them were unmapped.
        private var joinable = false

        init(capacity: Int = 0) { runs.reserveCapacity(capacity) }

        mutating func add(_ entry: PageMapEntry, at address: UInt, size: UInt) {
            if entry.isCleanAndMapped {
                if joinable, !runs.isEmpty { runs[runs.count - 1].end = address + size } else { runs.append((address, address + size)) }
                joinable = true
            } else if entry.isPresent || entry.isSwapped {
                joinable = false
            }
        }

        /// The next page added does not follow the last one.
        mutating func breakRun() { joinable = false }
    }

    /// Page-index ranges `[lower, upper)` of entries that ``PageMapEntry/isCleanAndMapped``, joined
    /// across unmapped ones (``RunBuilder``).
    static func cleanRuns(_ entries: some Sequence<PageMapEntry>) -> [Range<Int>] {
        var builder = RunBuilder()
        for (index, entry) in entries.enumerated() { builder.add(entry, at: UInt(index), size: 1) }
        return builder.runs.map { Int($0.start)..<Int($0.end) }
    }

    /// The page size, bytes (`sysconf(_SC_PAGESIZE)`).
    static let pageSize = Syscalls.pageSize()

    /// Pagemap entries read at once (× 8 bytes: 16 KB, 8 MB of 4 KB pages).
    static let entriesPerRead = 2048

    /// Unmaps the clean pages of the mappings in `scope` (see the type's doc). Writable mappings
    /// are included only while this process has one thread. Returns what was released; zero when
    /// `/proc/self` cannot be read.
    ///
    /// All runs are found first and advised last, in one tight loop: code that runs after a page
    /// was dropped maps it back (64 KB around it), so the parsing must not come after it.
    /// Adjacent mappings (a library's `r--p`, `r-xp`, `r--p`) are read from the page map at once.
    @discardableResult
    public static func releaseClean(_ scope: Scope = .all) -> Release {
        let singleThreaded = threadCount() == 1
        guard let maps = try? FileSystem.readFile("/proc/self/maps", chunkBytes: 32 << 10) else {
            return Release(bytes: 0, includedWritable: singleThreaded)
        }
        let executable = try? FileSystem.destinationOfSymbolicLink("/proc/self/exe")
        if let executable, executableSpansCache.withLock({ $0 == nil }) { rememberExecutableSpans(maps: maps, executable: executable) }
        let spans = candidateSpans(maps: maps, executable: executable, scope: scope, includingWritable: singleThreaded)
        return Release(bytes: advise(spans), includedWritable: singleThreaded)
    }

    /// Unmaps the clean pages of the executable's read-only mappings (its code and constants):
    /// what one wakeup of an otherwise idle loop maps again (issue 37: a retry every 30 s of a
    /// position source that is absent). Their addresses are read from `/proc/self/maps` once per
    /// process — the loader mapped them before `main` and they never move — so a call costs the
    /// page map and the advice, not the maps, the threads and the executable's name again (0.2 ms
    /// of a 0.3–0.5 ms trim of the executable under umockdev's preload, which wraps every call
    /// that takes a path).
    @discardableResult
    public static func releaseCleanExecutableCode() -> Release {
        Release(bytes: advise(executableReadOnlySpans), includedWritable: false)
    }

    /// The executable's read-only mappings (joined where adjacent): from the first
    /// ``releaseClean(_:)`` (start-up's trim), or read here the first time.
    private static var executableReadOnlySpans: [(start: UInt, end: UInt)] {
        if let spans = executableSpansCache.withLock({ $0 }) { return spans }
        guard let maps = try? FileSystem.readFile("/proc/self/maps", chunkBytes: 32 << 10),
              let executable = try? FileSystem.destinationOfSymbolicLink("/proc/self/exe") else { return [] }
        return rememberExecutableSpans(maps: maps, executable: executable)
    }

    private static let executableSpansCache = Mutex<[(start: UInt, end: UInt)]?>(nil)

    @discardableResult
    private static func rememberExecutableSpans(maps: [UInt8], executable: String) -> [(start: UInt, end: UInt)] {
        let spans = candidateSpans(maps: maps, executable: executable, scope: .executable, includingWritable: false)
        executableSpansCache.withLock { $0 = spans }
        return spans
    }

    /// The address ranges of the mappings `/proc/self/maps` lists that may be released (see
    /// ``Mapping``), in `scope`, writable ones only when `includingWritable`; adjacent ones joined.
    private static func candidateSpans(maps: [UInt8], executable: String?, scope: Scope,
                                       includingWritable: Bool) -> [(start: UInt, end: UInt)] {
        var spans: [(start: UInt, end: UInt)] = []
        maps.withUnsafeBufferPointer { maps in
            var lineStart = 0
            while lineStart < maps.count {
                let lineEnd = maps[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? maps.count
                defer { lineStart = lineEnd + 1 }
                guard let mapping = Mapping(mapsLine: UnsafeBufferPointer(rebasing: maps[lineStart..<lineEnd])),
                      !mapping.writable || includingWritable else { continue }
                guard scope.contains(mapping.path == executable ? .executable : .libraries) else { continue }
                if let last = spans.last, last.end == mapping.start {
                    spans[spans.count - 1].end = mapping.end
                } else {
                    spans.append((mapping.start, mapping.end))
                }
            }
        }
        return spans
    }

    /// Finds the clean pages of `spans` in the page map, then advises them in one tight loop (code
    /// that runs after a page was dropped maps it back). Returns the bytes unmapped.
    private static func advise(_ spans: [(start: UInt, end: UInt)]) -> Int {
        guard !spans.isEmpty, let pagemap = try? FileSystem.open("/proc/self/pagemap", .readOnly) else { return 0 }
        var builder = RunBuilder(capacity: 256)
        var buffer = [UInt64](repeating: 0, count: entriesPerRead)
        for span in spans {
            builder.breakRun()
            appendCleanRuns(start: span.start, end: span.end, pagemap: pagemap, buffer: &buffer, to: &builder)
        }
        try? pagemap.close()
        var bytes = 0
        for run in builder.runs where Syscalls.adviseNotNeeded(start: run.start, end: run.end) {
            bytes += Int(run.end - run.start)
        }
        return bytes
    }

    /// Appends the address ranges of the present page-cache pages of `[start, end)` (page-aligned
    /// addresses of one private file mapping) to `runs`. The caller makes sure no other thread
    /// writes the range before they are advised (read-only, or one thread).
    static func appendCleanRuns(start: UInt, end: UInt, pagemap: FileDescriptor, to runs: inout [(start: UInt, end: UInt)]) {
        var builder = RunBuilder()
        var buffer = [UInt64](repeating: 0, count: entriesPerRead)
        appendCleanRuns(start: start, end: end, pagemap: pagemap, buffer: &buffer, to: &builder)
        runs += builder.runs
    }

    /// The same into `builder`, reading the page map through `buffer`.
    static func appendCleanRuns(start: UInt, end: UInt, pagemap: FileDescriptor, buffer: inout [UInt64], to builder: inout RunBuilder) {
        let page = UInt(pageSize)
        var chunkStart = start
        while chunkStart < end {
            let count = min(buffer.count, Int((end - chunkStart) / page))
            let read = (try? buffer.withUnsafeMutableBytes { bytes in
                try pagemap.read(fromAbsoluteOffset: Int64(chunkStart / page) * 8,
                                 into: UnsafeMutableRawBufferPointer(rebasing: bytes[0..<(count * 8)]))
            }) ?? 0
            for index in 0..<(read / 8) {
                builder.add(PageMapEntry(rawValue: buffer[index]), at: chunkStart + UInt(index) * page, size: page)
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
