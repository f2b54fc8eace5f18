// SPDX-License-Identifier: Apache-2.0
// Giving back clean file pages (issue 12, memory): pagemap decoding, the runs, the maps lines,
// and against the kernel that a written page of a private mapping survives while its clean
// neighbours are unmapped.
import Foundation
@testable import QiblaPlatform
import SystemPackage
import Testing
import TestSupport

@Suite struct MappedFilePagesTests {
    typealias Entry = MappedFilePages.PageMapEntry
    static let present: UInt64 = 1 << 63
    static let swapped: UInt64 = 1 << 62
    static let file: UInt64 = 1 << 61
    static let clean = Entry(rawValue: present | file | 0x1234)  // PFN bits do not matter
    static let copied = Entry(rawValue: present | 0x1234)        // a private copy (anonymous)
    static let absent = Entry(rawValue: 0)

    @Test func pagemapBitsAreDecoded() {
        #expect(Self.clean.isPresent && Self.clean.isFilePage && Self.clean.isCleanAndMapped)
        #expect(Self.copied.isPresent && !Self.copied.isFilePage && !Self.copied.isCleanAndMapped)
        #expect(!Self.absent.isPresent && !Self.absent.isCleanAndMapped)
        let swappedOut = Entry(rawValue: Self.swapped)
        #expect(swappedOut.isSwapped && !swappedOut.isCleanAndMapped)
        // A page-cache page that is not mapped in is not advised either.
        #expect(!Entry(rawValue: Self.file).isCleanAndMapped)
    }

    @Test func runsCoverOnlyMappedPageCachePages() {
        let c = Self.clean, w = Self.copied, a = Self.absent
        #expect(MappedFilePages.cleanRuns([Entry]()) == [])
        #expect(MappedFilePages.cleanRuns([c, c, w, c, a, a, c, c, c]) == [0..<2, 3..<9], "unmapped pages join a run")
        #expect(MappedFilePages.cleanRuns([a, c, a, a]) == [1..<2], "and neither start nor end one")
        #expect(MappedFilePages.cleanRuns([c, Entry(rawValue: Self.swapped), c]) == [0..<1, 2..<3], "a swapped page breaks one")
        #expect(MappedFilePages.cleanRuns([w, a, w]) == [])
        #expect(MappedFilePages.cleanRuns([c, c, c]) == [0..<3])
    }

    @Test func mapsLinesOfPrivateReadableFilesAreCandidates() throws {
        let code = try #require(MappedFilePages.Mapping(mapsLine:
            "7f1c2a000000-7f1c2a1c0000 r-xp 00028000 fe:00 1234  /usr/lib/x86_64-linux-gnu/libc.so.6"))
        #expect(code.start == 0x7f1c_2a00_0000 && code.end == 0x7f1c_2a1c_0000 && !code.writable)
        #expect(code.path == "/usr/lib/x86_64-linux-gnu/libc.so.6")
        let data = try #require(MappedFilePages.Mapping(mapsLine: "1000-3000 rw-p 00000000 fe:00 9 /opt/a b"))
        #expect(data.writable && data.path == "/opt/a b")
        for line in ["1000-2000 rw-p 00000000 00:00 0 ",                       // anonymous
                     "1000-2000 r-xp 00000000 00:00 0      [vdso]",             // special
                     "1000-2000 r--s 00000000 fe:00 9      /dev/shm/x",         // shared
                     "1000-2000 ---p 00000000 fe:00 9      /usr/lib/libx.so",   // no access
                     "1000-2000 r--p 00000000 fe:00 9      /tmp/x (deleted)"] { // gone
            #expect(MappedFilePages.Mapping(mapsLine: Substring(line)) == nil, "\(line)")
        }
    }

    /// Resident kB of the mapping that holds `address` (`/proc/self/smaps` `Rss:`); -1 if not found.
    static func residentKilobytes(at address: UInt) -> Int {
        guard let smaps = FileSystem.readText("/proc/self/smaps", limit: 1 << 24) else { return -1 }
        var inside = false
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            let range = fields.first?.split(separator: "-") ?? []
            if range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16) {
                inside = start <= address && address < end
            } else if inside, fields.first == "Rss:", fields.count >= 2 {
                return Int(fields[1]) ?? -1
            }
        }
        return -1
    }

    @Test func aWrittenPageOfAPrivateMappingSurvivesAndItsCleanNeighboursAreUnmapped() throws {
        let pages = 8, page = MappedFilePages.pageSize
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/pages"
        try FileSystem.writeFileAtomically(path, [UInt8](repeating: 0xAB, count: pages * page))
        let fd = try FileSystem.open(path, .readOnly)
        defer { try? fd.close() }
        let mapped = try #require(mmap(nil, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd.rawValue, 0))
        #expect(mapped != UnsafeMutableRawPointer(bitPattern: -1), "mmap failed")
        defer { munmap(mapped, pages * page) }
        let bytes = mapped.assumingMemoryBound(to: UInt8.self)
        var sum = 0
        for index in 0..<pages { sum += Int(bytes[index * page]) }   // every page mapped from the page cache
        #expect(sum == 0xAB * pages)
        bytes[2 * page + 5] = 0x11                                     // page 2 becomes a private copy

        let start = UInt(bitPattern: mapped)
        let pagemap = try FileSystem.open("/proc/self/pagemap", .readOnly)
        defer { try? pagemap.close() }
        var runs: [(start: UInt, end: UInt)] = []
        MappedFilePages.appendCleanRuns(start: start, end: start + UInt(pages * page), pagemap: pagemap, to: &runs)
        let expected = [(start, start + UInt(2 * page)), (start + UInt(3 * page), start + UInt(pages * page))]
        #expect(runs.map(\.start) == expected.map(\.0) && runs.map(\.end) == expected.map(\.1),
                "runs \(runs.map { "\($0.start - start)..<\($0.end - start)" })")
        #expect(Self.residentKilobytes(at: start) == pages * page / 1024)
        for run in runs { #expect(Syscalls.adviseNotNeeded(start: run.start, end: run.end)) }

        #expect(Self.residentKilobytes(at: start) == page / 1024, "only the written page stays mapped")
        #expect(bytes[2 * page + 5] == 0x11, "the written byte is kept")
        #expect(bytes[2 * page + 6] == 0xAB && bytes[0] == 0xAB && bytes[7 * page] == 0xAB, "clean pages read back from the file")
    }

    @Test func releasingUnmapsTheTestBinarysCodeAndTheCodeKeepsRunning() throws {
        let code = try #require(Self.executableCodeAddress())
        let before = Self.residentKilobytes(at: code)
        let release = MappedFilePages.releaseClean(.executable)
        let after = Self.residentKilobytes(at: code)
        #expect(release.bytes > 0, "the test binary's code pages were found")
        #expect(!release.includedWritable, "swift-testing runs more than one thread")
        #expect(before > 0 && after >= 0 && after < before, "resident code \(before) kB → \(after) kB")
        // The code runs on: everything after the call maps its pages back from the file.
        var sum = 0
        for value in 1...1000 { sum &+= value }
        #expect(sum == 500_500)
    }

    @Test func threadsAreCounted() {
        #expect(MappedFilePages.threadCount() >= 1)
    }

    /// The start of the test binary's `r-xp` mapping.
    static func executableCodeAddress() -> UInt? {
        guard let executable = try? FileSystem.destinationOfSymbolicLink("/proc/self/exe"),
              let maps = FileSystem.readText("/proc/self/maps") else { return nil }
        for line in maps.split(separator: "\n") {
            if let mapping = MappedFilePages.Mapping(mapsLine: line), mapping.path == executable,
               line.split(separator: " ")[1] == "r-xp" {
                return mapping.start
            }
        }
        return nil
    }
}
