// File access for sysfs attributes and device nodes: swift-system for open/pread/write/close,
// QiblaPlatform for what swift-system lacks (directory listing, access(2)).
import QiblaPlatform
import SystemPackage

/// An open sysfs attribute, re-read with `pread` at offset 0 (sysfs regenerates the text on every read
/// from offset 0, so the file stays open for the whole session).
final class SysfsAttribute: @unchecked Sendable {
    let path: String
    private let descriptor: FileDescriptor

    init(path: String) throws(Errno) {
        self.path = path
        descriptor = try FileSystem.open(path, .readOnly)
    }

    deinit { try? descriptor.close() }

    /// The current text (sysfs values are far below 4 KiB).
    func read() throws(Errno) -> String {
        try Self.pread(descriptor)
    }

    private static func pread(_ descriptor: FileDescriptor) throws(Errno) -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = try FileSystem.errno {
            try buffer.withUnsafeMutableBytes { raw in
                try descriptor.read(fromAbsoluteOffset: 0, into: raw, retryOnInterrupt: true)
            }
        }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    /// Reads a whole attribute once (open, pread, close).
    static func readText(_ path: String) throws(Errno) -> String {
        let descriptor = try FileSystem.open(path, .readOnly)
        defer { try? descriptor.close() }
        return try pread(descriptor)
    }

    /// Reads an attribute and trims the trailing newline; `nil` if it cannot be read.
    static func readTrimmed(_ path: String) -> String? {
        guard let text = try? readText(path) else { return nil }
        return trimmed(text)
    }

    /// Writes `value` to an attribute in a single `write` (sysfs stores only the first write).
    static func write(_ value: String, to path: String) throws(Errno) {
        let descriptor = try FileSystem.open(path, .writeOnly, options: [.truncate])
        defer { try? descriptor.close() }
        _ = try FileSystem.errno { try descriptor.writeAll(Array(value.utf8)) }
    }

    static func trimmed(_ text: String) -> String {
        var slice = Substring(text)
        while let last = slice.last, last == "\n" || last == " " || last == "\t" || last == "\r" { slice.removeLast() }
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        return String(slice)
    }
}

enum Sysfs {
    /// Names in `directory` (no "." or ".."), or `[]` if it cannot be listed.
    static func list(_ directory: String) -> [String] { FileSystem.contentsOfDirectory(directory) }

    /// Whether `path` exists (following symlinks, as sysfs device links are).
    static func exists(_ path: String) -> Bool { FileSystem.exists(path) }

    /// Whether `path` exists and is writable by this process.
    static func isWritable(_ path: String) -> Bool { FileSystem.isWritable(path) }
}
