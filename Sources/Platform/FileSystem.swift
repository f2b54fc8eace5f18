// SPDX-License-Identifier: Apache-2.0
import SystemPackage
import Synchronization

/// Whole-file and directory operations that swift-system does not offer, on paths as `String`s.
/// Open, read, write and close go through swift-system's `FileDescriptor` (which retries `EINTR`);
/// the rest are single system calls named in each doc, also retried on `EINTR`.
public enum FileSystem {
    /// Reads a whole file (`open(2)` + `read(2)`), or nil when it does not exist (`ENOENT`).
    /// - Throws: `Errno.fileTooLarge` beyond `limit` bytes, any other `Errno` of open or read.
    /// `chunkBytes`: bytes asked of each `read(2)` (a larger one reads a generated `/proc` file in
    /// fewer calls).
    public static func readFile(_ path: String, limit: Int = 1 << 20, chunkBytes: Int = 4096) throws(Errno) -> [UInt8]? {
        let fd: FileDescriptor
        do {
            fd = try open(path, .readOnly)
        } catch {
            if error == .noSuchFileOrDirectory { return nil }
            throw error
        }
        defer { try? fd.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: max(1, chunkBytes))
        while true {
            let n = try errno { try chunk.withUnsafeMutableBytes { try fd.read(into: $0) } }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > limit { throw .fileTooLarge }
        }
        return bytes
    }

    /// Reads a whole file as UTF-8 text (invalid bytes replaced), or nil when it cannot be read.
    public static func readText(_ path: String, limit: Int = 1 << 20) -> String? {
        guard let bytes = try? readFile(path, limit: limit) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `bytes` to `path` atomically: a temporary file in the same directory, `fsync(2)`,
    /// `rename(2)`, then `fsync(2)` of the directory so the rename itself survives a power cut.
    /// `durable: false` leaves out both `fsync(2)`s (a cache that checks what it reads and is
    /// rebuilt when torn); `temporarySuffix` names the temporary file (one per process where
    /// several processes may write the same file).
    public static func writeFileAtomically(_ path: String, _ bytes: some Sequence<UInt8>,
                                           permissions: FilePermissions = [.ownerReadWrite],
                                           temporarySuffix: String = ".tmp", durable: Bool = true) throws(Errno) {
        let temporary = path + temporarySuffix
        do {
            let fd = try open(temporary, .writeOnly, options: [.create, .truncate], permissions: permissions)
            try errno {
                try fd.closeAfter {
                    _ = try fd.writeAll(bytes)
                    if durable { try fd.sync() }
                }
            }
            try Syscalls.renameItem(temporary, path)
        } catch {
            try? Syscalls.unlinkFile(temporary)
            throw error
        }
        if durable { syncDirectory(containing: path) }
    }

    /// What tells one version of a file from another without reading it: `stat(2)`'s device,
    /// inode, size and modification time (links followed). A package upgrade that replaces a file
    /// changes at least the inode and the time.
    public struct Identity: Sendable, Hashable, CustomStringConvertible {
        public let device: UInt64
        public let inode: UInt64
        public let sizeBytes: Int64
        public let modifiedNanoseconds: Int64
        public var description: String { "\(device):\(inode) \(sizeBytes) bytes modified \(modifiedNanoseconds) ns" }
    }

    /// `stat(2)` of `path`.
    public static func identity(of path: String) throws(Errno) -> Identity {
        let s = try Syscalls.fileStatus(path)
        return Identity(device: s.device, inode: s.inode, sizeBytes: s.size, modifiedNanoseconds: s.modifiedNanoseconds)
    }

    /// `fsync(2)` of the directory holding `path` (best effort: some file systems refuse it).
    public static func syncDirectory(containing path: String) {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        guard let fd = try? open(directory.isEmpty ? "." : directory, .readOnly, options: [.directory]) else { return }
        try? fd.sync()
        try? fd.close()
    }

    /// `rename(2)`: atomically replaces `to` by `from`.
    public static func rename(_ from: String, _ to: String) throws(Errno) { try Syscalls.renameItem(from, to) }

    /// `unlink(2)`: removes a file or link.
    public static func unlink(_ path: String) throws(Errno) { try Syscalls.unlinkFile(path) }

    /// `mkdir -p`: creates `path` and missing parents with `permissions` (existing ones are kept).
    public static func createDirectories(_ path: String,
                                         permissions: FilePermissions = [.ownerReadWriteExecute]) throws(Errno) {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            do { try Syscalls.makeDirectory(current, mode: UInt32(permissions.rawValue)) } catch {
                if error != .fileExists { throw error }
            }
        }
    }

    /// `mkdtemp(3)`: a new directory `<parent>/<prefix>XXXXXX`, mode 0700; returns its path.
    public static func createTemporaryDirectory(in parent: String, prefix: String) throws(Errno) -> String {
        try Syscalls.makeTemporaryDirectory("\(parent)/\(prefix)XXXXXX")
    }

    /// `rm -rf` without a process: removes `path` and everything below it (`lstat(2)`, `opendir(3)`,
    /// `unlink(2)`, `rmdir(2)`). Symbolic links are removed, never followed. A missing `path` is not an error.
    public static func removeRecursively(_ path: String) throws(Errno) {
        let isDirectory: Bool
        do { isDirectory = try Syscalls.isDirectoryNotFollowingLinks(path) } catch {
            if error == .noSuchFileOrDirectory { return }
            throw error
        }
        if isDirectory {
            for name in try Syscalls.listDirectory(path) { try removeRecursively(path + "/" + name) }
            try Syscalls.removeDirectory(path)
        } else {
            try Syscalls.unlinkFile(path)
        }
    }

    /// Names in `directory` without "." and ".." (`opendir(3)`/`readdir(3)`), or `[]` if it cannot be listed.
    public static func contentsOfDirectory(_ directory: String) -> [String] {
        (try? Syscalls.listDirectory(directory)) ?? []
    }

    /// Whether `path` exists, following symbolic links (`access(2)` `F_OK`).
    public static func exists(_ path: String) -> Bool { Syscalls.isAccessible(path, writable: false) }

    /// A path whose existence is checked often (a polled sensor's, once a second): its first part,
    /// a directory, opened once (`O_PATH`), the rest looked up relative to it (`faccessat(2)`), a
    /// walk of a component or two instead of the whole path each time (issue 37: under umockdev's
    /// preload an `access(2)` of a `/sys` path was a third of a resting claim's CPU). A directory
    /// that cannot be opened leaves the whole path checked each time (`access(2)`).
    ///
    /// Issue 37: where the file system sends `inotify(7)` events (a tmpfs or ext4 tree: the
    /// simulator's, umockdev's, a test fixture's) the path is looked up only after an event that
    /// may have removed it: the directory losing a name (`IN_DELETE`, `IN_MOVED_FROM`), the file
    /// or a directory above its real path removed or moved (`IN_DELETE_SELF`, `IN_MOVE_SELF`, the
    /// file's `IN_ATTRIB` as its link count drops); otherwise a check is one `poll(2)` that finds nothing
    /// (the path walk was a quarter of a resting claim's CPU). sysfs sends no events, and needs
    /// no check: the kernel answers reads of an unbound device's open attributes with `ENODEV`.
    /// Once a watch has ended (its file replaced), every check walks the path again.
    public final class PresenceCheck: Sendable {
        /// The whole path, for messages.
        public let path: String
        private let relativePath: String
        private let directory: Int32
        /// The `inotify(7)` descriptor, -1 when none could be made.
        private let events: Int32
        /// True once a watch ended: the path is walked at every check from then on.
        private let watchEnded = Atomic<Bool>(false)

        /// `directory`/`relativePath` (`relativePath` without a leading `/`).
        public init(directory: String, relativePath: String) {
            path = directory + "/" + relativePath
            self.relativePath = relativePath
            self.directory = Syscalls.openDirectoryForLookups(directory)
            events = Syscalls.watchForRemoval(directory: directory, file: path)
        }

        deinit {
            if directory >= 0 { Syscalls.closeIgnoringErrors(directory) }
            if events >= 0 { Syscalls.closeIgnoringErrors(events) }
        }

        /// Whether the path exists now (following symbolic links).
        public var exists: Bool {
            if events >= 0, !watchEnded.load(ordering: .relaxed) {
                // `poll(2)` first: umockdev's preload wraps `read(2)` (a lock with the signals
                // blocked around it), not `poll`; the events are read only when some came.
                guard Syscalls.hasInput(events) else { return true }
                let (came, ended) = Syscalls.drainInotifyEvents(events)
                if ended { watchEnded.store(true, ordering: .relaxed) }
                guard came else { return true }
            }
            return directory >= 0 ? Syscalls.exists(relativePath, relativeTo: directory) : FileSystem.exists(path)
        }

        /// Whether checks are answered by the watch (tests).
        public var isWatched: Bool { events >= 0 && !watchEnded.load(ordering: .relaxed) }
    }

    /// Whether `path` exists as a name, even as a dangling symbolic link (`lstat(2)`).
    public static func existsWithoutFollowingLinks(_ path: String) -> Bool { Syscalls.existsNotFollowingLinks(path) }

    /// Whether this process may write `path` (`access(2)` `W_OK`).
    public static func isWritable(_ path: String) -> Bool { Syscalls.isAccessible(path, writable: true) }

    /// `mkfifo(3)`: creates a named pipe (replacing whatever was at `path`).
    public static func createFIFO(_ path: String, permissions: FilePermissions = [.ownerReadWrite, .groupRead, .otherRead]) throws(Errno) {
        try? Syscalls.unlinkFile(path)
        try Syscalls.makeFIFO(path, mode: UInt32(permissions.rawValue))
    }

    /// The target of a symbolic link (`readlink(2)`), e.g. `/proc/self/exe`.
    public static func destinationOfSymbolicLink(_ path: String) throws(Errno) -> String {
        try Syscalls.readSymbolicLink(path)
    }

    /// `FileDescriptor.open` (always `O_CLOEXEC`) through a C string: building a `FilePath` per call
    /// costs far more than the system call in debug builds, and sysfs attributes are opened often.
    public static func open(_ path: String, _ mode: FileDescriptor.AccessMode, options: FileDescriptor.OpenOptions = [],
                            permissions: FilePermissions? = nil) throws(Errno) -> FileDescriptor {
        try errno {
            try path.withCString { p in
                try FileDescriptor.open(p, mode, options: options.union(.closeOnExec), permissions: permissions,
                                        retryOnInterrupt: true)
            }
        }
    }

    /// `read(2)` from `descriptor` into `buffer`, retrying `EINTR`: the bytes read (0 at end of
    /// file) or the error. Nothing is thrown, so a failed read allocates nothing: on a non-blocking
    /// descriptor `EAGAIN` (nothing to read) ends every read loop, and swift-system's untyped
    /// `read` boxes each error it throws on the heap (a typed throw does not, but a `swift_willThrow`
    /// hook, such as a test library's, still runs for it).
    public static func read(_ descriptor: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> {
        Syscalls.readBytes(descriptor.rawValue, into: buffer)
    }

    /// Runs a swift-system call (untyped `throws`) and rethrows its `Errno` typed.
    public static func errno<T>(_ body: () throws -> T) throws(Errno) -> T {
        do { return try body() } catch let error as Errno { throw error } catch { throw Errno.ioError }
    }
}

extension Errno {
    /// The calling thread's `errno`, for C libraries (libgps) that report failure through it.
    public static var current: Errno {
        get { Syscalls.lastError }
        set { Syscalls.lastError = newValue }
    }
}
