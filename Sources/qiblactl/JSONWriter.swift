// SPDX-License-Identifier: Apache-2.0
/// A minimal JSON object writer (RFC 8259) for `--json` output: keys keep their insertion order,
/// non-finite numbers become `null`, strings are escaped.
struct JSONObject {
    private var members: [(String, String)] = []

    mutating func set(_ key: String, _ value: Double?) {
        guard let value, value.isFinite else { members.append((key, "null")); return }
        members.append((key, "\(value)"))
    }
    mutating func set(_ key: String, _ value: Int) { members.append((key, "\(value)")) }
    mutating func set(_ key: String, _ value: UInt64) { members.append((key, "\(value)")) }
    mutating func set(_ key: String, _ value: Bool) { members.append((key, value ? "true" : "false")) }
    mutating func set(_ key: String, _ value: String?) {
        guard let value else { members.append((key, "null")); return }
        members.append((key, Self.quoted(value)))
    }

    /// An array of strings.
    mutating func set(_ key: String, _ strings: [String]) {
        members.append((key, "[" + strings.map(Self.quoted).joined(separator: ", ") + "]"))
    }
    /// An array of objects.
    mutating func set(_ key: String, _ objects: [JSONObject]) {
        members.append((key, "[" + objects.map(\.text).joined(separator: ", ") + "]"))
    }
    /// A nested object (nil: null).
    mutating func set(_ key: String, _ object: JSONObject?) { members.append((key, object?.text ?? "null")) }

    var text: String {
        "{" + members.map { "\(Self.quoted($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
    }

    static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
