// SPDX-License-Identifier: Apache-2.0
// File access for sysfs attributes and device nodes: swift-system for open/pread/write/close,
// QiblaPlatform for what swift-system lacks (directory listing, access(2)).
import QiblaCore
import QiblaPlatform
import SystemPackage

/// An open sysfs attribute, re-read with `pread` at offset 0 (sysfs regenerates the text on every read
/// from offset 0, so the file stays open for the whole session).
final class SysfsAttribute: @unchecked Sendable {
    let path: String
    private let descriptor: FileDescriptor
    /// Scratch for ``readRawCount(range:)``: one reader at a time (the sampling thread), allocated once.
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)

    init(path: String) throws(Errno) {
        self.path = path
        descriptor = try FileSystem.open(path, .readOnly)
    }

    deinit {
        try? descriptor.close()
        scratch.deallocate()
    }

    /// The current value of a `_raw` attribute: a decimal integer within `range` (a channel's raw
    /// count, IIO ABI `in_<type>_<axis>_raw`), else `nil` — a fraction, garbage, or a number no
    /// channel of that width can hold (`99999999999999999999`). No allocation.
    /// Not thread-safe: one caller at a time.
    func readRawCount(range: ClosedRange<Int64> = Int64(Int32.min)...Int64(Int32.max)) throws(Errno) -> Double? {
        let count = try FileSystem.errno {
            try descriptor.read(fromAbsoluteOffset: 0, into: scratch, retryOnInterrupt: true)
        }
        guard let value = Self.parseInteger(UnsafeRawBufferPointer(rebasing: scratch[..<count])),
              range.contains(value) else { return nil }
        return Double(value)
    }

    /// `[ \t]*[+-]?[0-9]{1,18}[ \t\r\n]*`, or nil.
    static func parseInteger(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        var index = 0
        let end = bytes.count
        while index < end, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        var negative = false
        if index < end, bytes[index] == 0x2D || bytes[index] == 0x2B { negative = bytes[index] == 0x2D; index += 1 }
        var value: Int64 = 0
        var digits = 0
        while index < end, bytes[index] >= 0x30, bytes[index] <= 0x39 {
            guard digits < 18 else { return nil }
            value = value * 10 + Int64(bytes[index] - 0x30)
            digits += 1
            index += 1
        }
        guard digits > 0 else { return nil }
        while index < end, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D {
            index += 1
        }
        guard index == end else { return nil }
        return negative ? -value : value
    }

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
