// SPDX-License-Identifier: Apache-2.0
@testable import QiblaGeonames
import QiblaPlaces
import QiblaPlatform
import Testing

/// The towns' cache with the real libgeonames, in a directory of the test's own.
@Suite(.serialized) struct TownCacheTests {
    /// Typed in Arabic, Urdu, Bengali and Turkish as well as Latin letters (the well-known names
    /// are searched in every language), namesakes and a region.
    static let queries = ["mecca", "مكة", "مکہ", "মক্কা", "Kudüs", "İstanbul", "istanbul", "lahore", "birmingham",
                          "birmingham england", "sao paulo", "london", "al quds", "jidd", "xqzwv"]

    /// The index as read from libgeonames without a cache.
    static let direct: PlaceIndex = PlaceIndex(places: (try? Geonames.towns()) ?? [])

    /// Writes, then reads: the same towns and the same ranked answers as without the cache.
    @Test func theSameAnswersWithAndWithoutTheCache() throws {
        try withCacheDirectory { cache in
            let first = try Geonames.townIndex(cache: cache)
            #expect(!first.fromCache && first.cacheReport.contains("written anew"), "\(first.cacheReport)")
            #expect(FileSystem.exists(cache.path))
            let second = try Geonames.townIndex(cache: cache)
            #expect(second.fromCache, "\(second.cacheReport)")
            #expect(Self.direct.places.count > 24_000)
            #expect(second.index.places == Self.direct.places && first.index.places == Self.direct.places)
            for query in Self.queries {
                let expected = Self.direct.matches(query, limit: 20)
                #expect(second.index.matches(query, limit: 20) == expected, "\(query)")
                #expect(second.index.matches(query, limit: 20, near: (33.4, -86.9)) == Self.direct.matches(query, limit: 20, near: (33.4, -86.9)))
            }
            #expect(second.index.search("مكة").first?.id == "104515" && second.index.search("Kudüs").first?.id == "281184")
        }
    }

    /// A cache made from another library file (its identity differs) is not used but rebuilt.
    @Test func aStaleCacheIsRebuilt() throws {
        try withCacheDirectory { cache in
            _ = try Geonames.townIndex(cache: cache)
            let bytes = try #require(try FileSystem.readFile(cache.path, limit: 64 << 20))
            let identity = try PlaceIndexArchive.identity(of: bytes)
            #expect(identity.hasPrefix("library=/") && identity.contains("\nfile="), "\(identity)")
            // The same library path, another inode and time: as after a package upgrade.
            let older = identity.split(separator: "\n").map { $0.hasPrefix("file=") ? "file=0:1 2 bytes modified 3 ns" : String($0) }
                .joined(separator: "\n")
            // A smaller index, so a cache read by mistake would show.
            let wrong = PlaceIndex(places: Array(Self.direct.places.prefix(3)))
            try FileSystem.writeFileAtomically(cache.path, PlaceIndexArchive.encode(wrong, identity: older))
            let rebuilt = try Geonames.townIndex(cache: cache)
            #expect(!rebuilt.fromCache && rebuilt.cacheReport.contains("stale"), "\(rebuilt.cacheReport)")
            #expect(rebuilt.index.places == Self.direct.places)
            let again = try Geonames.townIndex(cache: cache)
            #expect(again.fromCache && again.index.places.count == Self.direct.places.count, "\(again.cacheReport)")
            // A library file that is gone: stale too.
            try FileSystem.writeFileAtomically(cache.path, PlaceIndexArchive.encode(wrong, identity: "library=/nonexistent/libgeonames.so.0"))
            let gone = try Geonames.townIndex(cache: cache)
            #expect(!gone.fromCache && gone.cacheReport.contains("is gone"), "\(gone.cacheReport)")
        }
    }

    /// Cut, garbage and empty files are ignored, said why, and replaced.
    @Test func brokenFilesAreRebuilt() throws {
        try withCacheDirectory { cache in
            _ = try Geonames.townIndex(cache: cache)
            let whole = try #require(try FileSystem.readFile(cache.path, limit: 64 << 20))
            for (broken, words) in [(Array(whole.prefix(whole.count / 2)), "cut short"), (Array(repeating: 0x51, count: 100), "not a town archive"),
                                    ([], "not a town archive"), (whole.map { $0 == 0x41 ? 0x42 : $0 }, "ignored")] {
                try FileSystem.writeFileAtomically(cache.path, broken)
                let loaded = try Geonames.townIndex(cache: cache)
                #expect(!loaded.fromCache && loaded.cacheReport.contains(words), "\(loaded.cacheReport)")
                #expect(loaded.index.places == Self.direct.places)
                #expect(try FileSystem.readFile(cache.path, limit: 64 << 20) == whole, "written anew, as before")
            }
        }
    }

    /// A FIFO or a directory where the file should be: no hang, no crash, the same answer.
    @Test func somethingElseInTheFilesPlaceIsIgnored() throws {
        try withCacheDirectory { cache in
            try FileSystem.createDirectories(cache.directory)
            try FileSystem.createFIFO(cache.path)
            let fifo = try Geonames.townIndex(cache: cache)
            #expect(!fifo.fromCache && fifo.index.places == Self.direct.places, "\(fifo.cacheReport)")
            try FileSystem.unlink(cache.path)
            try FileSystem.createDirectories(cache.path)
            let directory = try Geonames.townIndex(cache: cache)
            #expect(!directory.fromCache && directory.cacheReport.contains("not written"), "\(directory.cacheReport)")
            #expect(directory.index.places == Self.direct.places)
        }
    }

    /// A cache directory that cannot be made (under a regular file: refused even to root) means
    /// no cache, and the same answer.
    @Test func anUnwritableDirectoryStillAnswers() throws {
        try withCacheDirectory { cache in
            let file = cache.directory + "/file"
            try FileSystem.writeFileAtomically(file, [1])
            let blocked = TownCache(directory: file + "/qiblad")
            let loaded = try Geonames.townIndex(cache: blocked)
            #expect(!loaded.fromCache && loaded.cacheReport.contains("not written"), "\(loaded.cacheReport)")
            #expect(loaded.index.matches("mecca", limit: 20) == Self.direct.matches("mecca", limit: 20))
            #expect(!FileSystem.exists(blocked.path))
        }
    }

    @Test func theFileIsNamedByLanguage() {
        #expect(TownCache(directory: "/c").path.hasPrefix("/c/towns-") && TownCache(directory: "/c").path.hasSuffix(".cache"))
        #expect(!TownCache.languageTag.contains("/") && !TownCache.languageTag.isEmpty)
        #expect(TownCache.libraryPath(inIdentity: "library=/a/b.so\nfile=x") == "/a/b.so")
        #expect(TownCache.libraryPath(inIdentity: "file=x") == nil)
    }
}

/// `body` with a cache in a new temporary directory, removed afterwards.
private func withCacheDirectory(_ body: (TownCache) throws -> Void) throws {
    let directory = try FileSystem.createTemporaryDirectory(in: "/tmp", prefix: "qiblad-town-cache-")
    defer { try? FileSystem.removeRecursively(directory) }
    try body(TownCache(directory: directory))
}
