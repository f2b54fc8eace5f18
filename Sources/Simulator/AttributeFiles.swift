// SPDX-License-Identifier: Apache-2.0
// Low-level file helpers for the fake sysfs tree: directories, atomic attribute rewrites, FIFOs.
// Only the stdlib, swift-system and QiblaPlatform (no Foundation).
import QiblaPlatform
import SystemPackage
import Synchronization

/// Why the simulator could not do what it was asked. The description is a sentence fit for stderr.
public enum SimulatorError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `mkdir(2)` failed for `path` with `errno`.
    case cannotCreateDirectory(path: String, errno: Int32)
    /// Creating, writing or renaming the file at `path` failed with `errno`.
    case cannotWrite(path: String, errno: Int32)
    /// `mkfifo(3)` or opening the FIFO at `path` failed with `errno`.
    case cannotCreateFIFO(path: String, errno: Int32)
    /// A mount matrix that cannot be inverted (singular or not finite); the simulator must apply M⁻¹.
    case singularMountMatrix(String)
    /// A parameter outside its domain (non-finite value, rate ≤ 0, unknown phone...).
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .cannotCreateDirectory(let p, let e): "cannot create directory \(p): \(Errno(rawValue: e))"
        case .cannotWrite(let p, let e): "cannot write \(p): \(Errno(rawValue: e))"
        case .cannotCreateFIFO(let p, let e): "cannot create FIFO \(p): \(Errno(rawValue: e))"
        case .singularMountMatrix(let m): "mount matrix \(m) is not invertible"
        case .invalidArgument(let s): s
        }
    }
}

/// How an attribute file is replaced when a new value is written.
public enum AttributeWriteMode: Sendable, Equatable {
    /// Write a temporary file in the same directory, then `rename(2)` it over the attribute.
    /// A reader that `open`s the attribute for each read sees either the whole old or the whole new
    /// value, never an empty or partial one. A reader that keeps a descriptor open and `pread`s
    /// offset 0 keeps seeing the *old* inode: readers of the fake tree must re-open per read.
    case rename
    /// `pwrite` at offset 0 then `ftruncate` to the new length, on the same inode. Readers that keep a
    /// descriptor open see new values, but may transiently observe a mix of old and new bytes.
    case inPlace
    /// Like the kernel: the attribute keeps its inode and a constant length. Values are right-aligned
    /// in a fixed-width field (`"  -123\n"`, 7 bytes for any 16-bit count) and written with one
    /// `pwrite` at offset 0 and no truncation, so a reader that keeps the descriptor open and
    /// `pread`s offset 0 — as qiblad does with real sysfs — never sees an empty or shortened value.
    /// A `pread` racing the `pwrite` on tmpfs can still, rarely, see old and new bytes mixed (no
    /// lock orders them; `SimulatorTreeTests` measures it: under 1 % of reads). The default.
    case fixedWidthInPlace
}

/// Serial number for temporary file names (unique within the process; the pid separates processes).
private let temporaryFileCounter = Atomic<UInt64>(0)

enum AttributeFiles {
    /// `mkdir -p` (mode 0755).
    static func makeDirectories(_ path: String) throws(SimulatorError) {
        do {
            try FileSystem.createDirectories(path, permissions: [.ownerReadWriteExecute, .groupReadExecute, .otherReadExecute])
        } catch {
            throw .cannotCreateDirectory(path: path, errno: error.rawValue)
        }
    }

    /// Replaces the content of `path` by `text` (see ``AttributeWriteMode``).
    static func writeAttribute(_ path: String, _ text: String, mode: AttributeWriteMode = .rename) throws(SimulatorError) {
        switch mode {
        case .rename:
            let slash = path.lastIndex(of: "/")
            let directory = slash.map { String(path[..<$0]) } ?? "."
            let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
            let serial = temporaryFileCounter.add(1, ordering: .relaxed).newValue
            let temporary = "\(directory)/.\(base).tmp-\(SpawnedProcess.currentID)-\(serial)"
            do {
                let fd = try openFile(temporary, .writeOnly, options: [.create, .truncate])
                try fd.closeAfter { _ = try fd.writeAll(text.utf8) }
            } catch {
                try? FileSystem.unlink(temporary)
                throw .cannotWrite(path: temporary, errno: (error as? Errno)?.rawValue ?? Errno.ioError.rawValue)
            }
            do { try FileSystem.rename(temporary, path) } catch {
                try? FileSystem.unlink(temporary)
                throw .cannotWrite(path: path, errno: error.rawValue)
            }
        case .fixedWidthInPlace:
            do {
                let fd = try openFile(path, .writeOnly, options: [.create])
                try fd.closeAfter {
                    _ = try fd.writeAll(toAbsoluteOffset: 0, Array(text.utf8))
                }
            } catch {
                throw .cannotWrite(path: path, errno: (error as? Errno)?.rawValue ?? Errno.ioError.rawValue)
            }
        case .inPlace:
            do {
                let fd = try openFile(path, .writeOnly, options: [.create])
                try fd.closeAfter {
                    let bytes = Array(text.utf8)
                    _ = try fd.writeAll(toAbsoluteOffset: 0, bytes)
                    try fd.resize(to: Int64(bytes.count))
                }
            } catch {
                throw .cannotWrite(path: path, errno: (error as? Errno)?.rawValue ?? Errno.ioError.rawValue)
            }
        }
    }

    /// The content of a small file (≤ 4 KiB), or nil when it cannot be read.
    static func readSmallFile(_ path: String) -> String? {
        guard let fd = try? openFile(path, .readOnly, options: []) else { return nil }
        defer { try? fd.close() }
        var buffer = [UInt8](repeating: 0, count: 4096)
        guard let n = try? buffer.withUnsafeMutableBytes({ try fd.read(into: $0) }) else { return nil }
        return String(decoding: buffer[..<n], as: UTF8.self)
    }

    /// Opens `path` (close-on-exec, created with mode 0644).
    static func openFile(_ path: String, _ mode: FileDescriptor.AccessMode,
                         options: FileDescriptor.OpenOptions) throws(Errno) -> FileDescriptor {
        try FileSystem.open(path, mode, options: options, permissions: [.ownerReadWrite, .groupRead, .otherRead])
    }

    /// Creates (or re-creates) a FIFO at `path`, mode 0644.
    static func makeFIFO(_ path: String) throws(SimulatorError) {
        do { try FileSystem.createFIFO(path) } catch { throw .cannotCreateFIFO(path: path, errno: error.rawValue) }
    }
}
