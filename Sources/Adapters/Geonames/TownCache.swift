// SPDX-License-Identifier: Apache-2.0
// The towns and their search index kept on disk (issue 38: the first keystroke's answer within
// 20 ms, BENCHMARKS.md): reading libgeonames' list and folding it costs a process 60–95 ms of
// processor time, loading this file a few. The bytes are QiblaPlaces' PlaceIndexArchive; this
// file only finds, reads and writes them.
import QiblaPlaces
import QiblaPlatform
import SystemPackage

/// Where the towns' index is kept between processes: one file per language of the names,
/// `DIRECTORY/towns-LANGUAGE.cache` (LANGUAGE: the user's LANGUAGE list, or the messages locale;
/// "C" untranslated). Each file names what it was made from — libgeonames' file (path, device,
/// inode, size, modification time), LD_LIBRARY_PATH, the language and the catalogue's header —
/// and is used only while all of these are still the same; a package upgrade replaces the library
/// file, so the next process rebuilds the cache in place (no old files pile up). The identity is
/// the library's file rather than its soname (libgeonames.so.0 names every 0.x version) or a
/// version number the library does not export. A missing, cut, corrupt, foreign, other-version or
/// stale file is rebuilt; a directory that cannot be created or written means no cache, never a
/// failure: the answer is the same either way.
public struct TownCache: Sendable {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    /// `$XDG_CACHE_HOME/qiblad` (when absolute, as the XDG Base Directory Specification asks),
    /// else `$HOME/.cache/qiblad`; nil when neither is set.
    public static var user: TownCache? {
        if let base = Environment.value("XDG_CACHE_HOME"), base.hasPrefix("/") { return TownCache(directory: base + "/qiblad") }
        guard let home = Environment.value("HOME"), home.hasPrefix("/") else { return nil }
        return TownCache(directory: home + "/.cache/qiblad")
    }

    /// The file for the language catalogues answer in now.
    public var path: String { directory + "/towns-\(Self.languageTag).cache" }

    /// The user's language as gettext chooses it: LANGUAGE unless the messages locale is C
    /// (gettext then ignores it), else the messages locale; characters other than letters, digits
    /// and `._@-` written as `_` (`:` as `+`), so it names a file.
    static var languageTag: String {
        let locale = Gettext.messagesLocale ?? "C"
        let language = Environment.value("LANGUAGE") ?? ""
        let tag = locale == "C" || locale == "POSIX" ? "C" : language.isEmpty ? locale : language
        return String(tag.prefix(64).map { c -> Character in
            if c == ":" { return "+" }
            return c.isASCII && (c.isLetter || c.isNumber || "._@-".contains(c)) ? c : "_"
        })
    }

    /// What the index at `path` is made from, when libgeonames' file is `libraryPath`; nil when
    /// that file is not there.
    static func identity(libraryPath: String) -> String? {
        guard let file = try? FileSystem.identity(of: libraryPath) else { return nil }
        return """
            library=\(libraryPath)
            file=\(file)
            LD_LIBRARY_PATH=\(Environment.value("LD_LIBRARY_PATH") ?? "")
            language=\(languageTag)
            catalogue=\(Gettext.translation("", domain: Geonames.textDomain) ?? "none")
            """
    }

    /// The library file an archive's identity names (its first line).
    static func libraryPath(inIdentity identity: String) -> String? {
        guard let line = identity.split(separator: "\n", maxSplits: 1).first, line.hasPrefix("library=") else { return nil }
        return String(line.dropFirst("library=".count))
    }

    /// The largest file taken (the list of 24,361 towns makes about 4 MB).
    static let maximumBytes = 64 << 20

    /// The index in the cache file, if it is there, whole and made from what would be read now;
    /// else why not.
    func read() -> Result<PlaceIndex, Problem> {
        let path = self.path
        let bytes: [UInt8]
        switch Self.readFile(path) {
        case .success(let b): bytes = b
        case .failure(let problem): return .failure(problem)
        }
        do {
            let stored = try PlaceIndexArchive.identity(of: bytes)
            guard let library = Self.libraryPath(inIdentity: stored) else { return .failure(Problem("\(path) names no library file")) }
            guard let expected = Self.identity(libraryPath: library) else {
                return .failure(Problem("\(path) is stale: \(library) is gone"))
            }
            return .success(try PlaceIndexArchive.decode(bytes, identity: expected))
        } catch {
            return .failure(Problem("\(path) ignored: \(error.description)"))
        }
    }

    /// The whole file, read with `pread(2)` (swift-system), at most ``maximumBytes``.
    static func readFile(_ path: String) -> Result<[UInt8], Problem> {
        let fd: FileDescriptor
        do {
            // Non-blocking: a FIFO put in the file's place must not hang the search (pread then fails).
            fd = try FileSystem.open(path, .readOnly, options: [.nonBlocking])
        } catch {
            return .failure(Problem(error == .noSuchFileOrDirectory ? "\(path) does not exist yet" : "cannot open \(path): \(error)"))
        }
        defer { try? fd.close() }
        let size: Int64
        do { size = try FileSystem.identity(of: path).sizeBytes } catch { return .failure(Problem("cannot stat \(path): \(error)")) }
        guard size <= Int64(maximumBytes) else { return .failure(Problem("\(path) ignored: \(size) bytes, more than a town list makes")) }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        var filled = 0
        while filled < bytes.count {
            let n: Int
            do {
                n = try FileSystem.errno {
                    try bytes.withUnsafeMutableBytes { all in
                        try fd.read(fromAbsoluteOffset: Int64(filled), into: UnsafeMutableRawBufferPointer(rebasing: all[filled...]),
                                    retryOnInterrupt: true)
                    }
                }
            } catch {
                return .failure(Problem("cannot read \(path): \(error)"))
            }
            if n == 0 { break }
            filled += n
        }
        if filled < bytes.count { bytes.removeSubrange(filled...) }
        return .success(bytes)
    }

    /// Writes `index`, read from the library at `libraryPath`, atomically (a temporary file of this
    /// process, then rename(2); no fsync(2): a torn file fails its checksum and is rebuilt).
    func write(_ index: PlaceIndex, libraryPath: String?) -> Result<Void, Problem> {
        let path = self.path
        guard let libraryPath, let identity = Self.identity(libraryPath: libraryPath) else {
            return .failure(Problem("not written: libgeonames' file could not be told"))
        }
        do {
            try FileSystem.createDirectories(directory)
            try FileSystem.writeFileAtomically(path, PlaceIndexArchive.encode(index, identity: identity),
                                               temporarySuffix: ".tmp-\(SpawnedProcess.currentID)", durable: false)
            return .success(())
        } catch {
            return .failure(Problem("\(path) not written: \(error)"))
        }
    }

    /// Why the cache was not read or not written (for a debug log: the towns are read anyway).
    public struct Problem: Error, CustomStringConvertible, Sendable {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}

/// The towns' index, and what the cache did for it.
public struct LoadedTowns: Sendable {
    public let index: PlaceIndex
    /// Whether the index came from the cache file (no libgeonames loaded).
    public let fromCache: Bool
    /// What happened with the cache, in words, for a debug log: "read /home/…/towns-ar.cache",
    /// "/home/…/towns-ar.cache is stale: …; written anew", "… not written: Permission denied".
    public let cacheReport: String
}

extension Geonames {
    /// The towns' search index: from `cache` when it holds one made from what would be read now,
    /// else read from libgeonames (``towns()``), indexed and written to `cache` for the next
    /// process. The same index either way; a cache that cannot be read or written only costs the
    /// time. Without `cache`, always from libgeonames.
    public static func townIndex(cache: TownCache?) throws(ReadError) -> LoadedTowns {
        guard let cache else {
            return LoadedTowns(index: PlaceIndex(places: try towns()), fromCache: false, cacheReport: "no cache directory")
        }
        let why: String
        switch cache.read() {
        case .success(let index): return LoadedTowns(index: index, fromCache: true, cacheReport: "read \(cache.path)")
        case .failure(let problem): why = problem.description
        }
        let list = try readList()
        let index = PlaceIndex(places: list.towns)
        switch cache.write(index, libraryPath: list.libraryPath) {
        case .success: return LoadedTowns(index: index, fromCache: false, cacheReport: "\(why); written anew")
        case .failure(let problem): return LoadedTowns(index: index, fromCache: false, cacheReport: "\(why); \(problem.description)")
        }
    }
}
