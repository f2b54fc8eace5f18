// The few file-system calls swift-system does not wrap (fsync, rename, mkdir, stat of a path).
// Nothing else in QiblaState calls libc directly.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemPackage

enum FileSystem {
    /// Reads a whole file, or nil when it does not exist. Other errors are thrown.
    static func readFile(_ path: String, limit: Int = 1 << 20) throws(Errno) -> [UInt8]? {
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        } catch let error as Errno {
            if error == .noSuchFileOrDirectory { return nil }
            throw error
        } catch { throw .ioError }
        defer { try? fd.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n: Int
            do {
                n = try chunk.withUnsafeMutableBytes { try fd.read(into: $0) }
            } catch let error as Errno { throw error } catch { throw .ioError }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > limit { throw .fileTooLarge }
        }
        return bytes
    }

    /// Writes `bytes` to `path` atomically: a temporary file in the same directory, fsync, rename,
    /// then fsync of the directory so the rename itself survives a power cut.
    static func writeFileAtomically(_ path: String, _ bytes: [UInt8], permissions: FilePermissions = [.ownerReadWrite]) throws(Errno) {
        let temporary = path + ".tmp"
        do {
            let fd = try FileDescriptor.open(FilePath(temporary), .writeOnly,
                                             options: [.create, .truncate, .closeOnExec], permissions: permissions)
            do {
                _ = try fd.closeAfter {
                    _ = try fd.writeAll(bytes)
                    if fsync(fd.rawValue) != 0 { throw Errno(rawValue: errno) }
                }
            }
        } catch let error as Errno { throw error } catch { throw .ioError }
        guard Glibc.rename(temporary, path) == 0 else {
            let error = Errno(rawValue: errno)
            _ = unlink(temporary)
            throw error
        }
        syncDirectory(containing: path)
    }

    static func syncDirectory(containing path: String) {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        guard let fd = try? FileDescriptor.open(FilePath(directory.isEmpty ? "." : directory), .readOnly,
                                                options: [.directory, .closeOnExec]) else { return }
        _ = fsync(fd.rawValue)
        try? fd.close()
    }

    static func rename(_ from: String, _ to: String) throws(Errno) {
        guard Glibc.rename(from, to) == 0 else { throw Errno(rawValue: errno) }
    }

    /// `mkdir -p` with the given mode for the directories it creates.
    static func createDirectories(_ path: String, mode: mode_t = 0o700) throws(Errno) {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, mode) != 0 {
                let error = Errno(rawValue: errno)
                if error != .fileExists { throw error }
            }
        }
    }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// Seconds since the epoch, wall clock (for naming set-aside files and stamping state).
    static func wallClockSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

func unlinkFile(_ path: String) -> Int32 { unlink(path) }

extension Errno {
    static var current: Errno { Errno(rawValue: errno) }
}
