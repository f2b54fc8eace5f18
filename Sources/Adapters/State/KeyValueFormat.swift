// SPDX-License-Identifier: Apache-2.0
/// The text format of qiblad's state and configuration files: UTF-8 lines of `key = value`,
/// `#` starts a comment line, blank lines are ignored. Numbers are written with Swift's
/// shortest round-trip representation and parsed without the C locale, so a comma-decimal
/// locale can never change them.
public struct KeyValueDocument: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var key: String
        public var value: String
        /// 1-based line number in the file (0 for entries built in memory).
        public var line: Int
    }

    public var entries: [Entry]

    public init(entries: [Entry] = []) { self.entries = entries }

    /// The last value given for `key`.
    public subscript(key: String) -> String? {
        entries.last { $0.key == key }?.value
    }

    public mutating func set(_ key: String, _ value: String) {
        entries.removeAll { $0.key == key }
        entries.append(Entry(key: key, value: value, line: 0))
    }

    /// Parses text. A line that is neither blank, a comment nor `key = value` is an error.
    public static func parse(_ text: String) throws(KeyValueParseError) -> KeyValueDocument {
        var entries: [Entry] = []
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") { continue } // an optional [qiblad] section header
            guard let equals = line.firstIndex(of: "=") else {
                throw KeyValueParseError(line: lineNumber, message: "expected 'key = value', found '\(line)'")
            }
            let key = line[..<equals].trimmingWhitespace()
            let value = line[line.index(after: equals)...].trimmingWhitespace()
            guard !key.isEmpty else {
                throw KeyValueParseError(line: lineNumber, message: "missing key before '='")
            }
            entries.append(Entry(key: String(key), value: String(value), line: lineNumber))
        }
        return KeyValueDocument(entries: entries)
    }

    /// Serialises, with an optional header comment.
    public func serialized(header: String? = nil) -> String {
        var out = ""
        if let header { out += header.split(separator: "\n").map { "# \($0)\n" }.joined() }
        for entry in entries { out += "\(entry.key) = \(entry.value)\n" }
        return out
    }
}

public struct KeyValueParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var message: String
    public var description: String { "line \(line): \(message)" }
}

extension Substring {
    public func trimmingWhitespace() -> Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" || f == "\r" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s.removeLast() }
        return s
    }
}

extension String {
    public func trimmingWhitespace() -> Substring { self[...].trimmingWhitespace() }
}

// Numbers in these files are parsed with QiblaCore's `parseFiniteDouble` (one parser for the project).
