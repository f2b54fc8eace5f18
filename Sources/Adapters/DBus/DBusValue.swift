// SPDX-License-Identifier: Apache-2.0
// The D-Bus type system as a Swift enum (D-Bus Specification 0.41, "Type System").
// Unix file descriptors (`h`) are not supported: qiblad never passes descriptors.

/// One value of the D-Bus type system, with its type carried along so that empty arrays and
/// dictionaries still have a signature.
///
/// Equality is structural; two `.double(.nan)` values compare equal (so a value equals itself
/// after a round trip through the bus), otherwise doubles compare with IEEE `==`.
public indirect enum DBusValue: Sendable, Equatable {
    /// `y`, unsigned 8-bit integer.
    case byte(UInt8)
    /// `b`, boolean (marshalled as a 32-bit 0 or 1).
    case bool(Bool)
    /// `n`, signed 16-bit integer.
    case int16(Int16)
    /// `q`, unsigned 16-bit integer.
    case uint16(UInt16)
    /// `i`, signed 32-bit integer.
    case int32(Int32)
    /// `u`, unsigned 32-bit integer.
    case uint32(UInt32)
    /// `x`, signed 64-bit integer.
    case int64(Int64)
    /// `t`, unsigned 64-bit integer.
    case uint64(UInt64)
    /// `d`, IEEE 754 double.
    case double(Double)
    /// `s`, UTF-8 string without NUL characters.
    case string(String)
    /// `o`, object path (see ``DBusNames/isValidObjectPath(_:)``).
    case objectPath(String)
    /// `g`, type signature (see ``DBusNames/isValidSignature(_:)``).
    case signature(String)
    /// `a…`, array whose elements all have the single complete type `elementSignature`.
    case array(elementSignature: String, [DBusValue])
    /// `a{kv}`, dictionary: an array of dict entries with a basic key type, in wire order.
    case dictionary(keySignature: String, valueSignature: String, [(DBusValue, DBusValue)])
    /// `(…)`, structure of one or more fields.
    case structure([DBusValue])
    /// `v`, a value carrying its own signature.
    case variant(DBusValue)

    /// The value's type signature, e.g. `a{sv}` (D-Bus Specification, "Type System").
    public var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .array(let element, _): "a" + element
        case .dictionary(let key, let value, _): "a{" + key + value + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    public static func == (lhs: DBusValue, rhs: DBusValue) -> Bool {
        switch (lhs, rhs) {
        case let (.byte(a), .byte(b)): a == b
        case let (.bool(a), .bool(b)): a == b
        case let (.int16(a), .int16(b)): a == b
        case let (.uint16(a), .uint16(b)): a == b
        case let (.int32(a), .int32(b)): a == b
        case let (.uint32(a), .uint32(b)): a == b
        case let (.int64(a), .int64(b)): a == b
        case let (.uint64(a), .uint64(b)): a == b
        case let (.double(a), .double(b)): a == b || (a.isNaN && b.isNaN)
        case let (.string(a), .string(b)): a == b
        case let (.objectPath(a), .objectPath(b)): a == b
        case let (.signature(a), .signature(b)): a == b
        case let (.array(ea, a), .array(eb, b)): ea == eb && a == b
        case let (.dictionary(ka, va, a), .dictionary(kb, vb, b)):
            ka == kb && va == vb && a.count == b.count
                && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case let (.structure(a), .structure(b)): a == b
        case let (.variant(a), .variant(b)): a == b
        default: false
        }
    }
}

// MARK: - Constructors from Swift values

extension DBusValue {
    /// `y`.
    public init(_ value: UInt8) { self = .byte(value) }
    /// `b`.
    public init(_ value: Bool) { self = .bool(value) }
    /// `n`.
    public init(_ value: Int16) { self = .int16(value) }
    /// `q`.
    public init(_ value: UInt16) { self = .uint16(value) }
    /// `i`.
    public init(_ value: Int32) { self = .int32(value) }
    /// `u`.
    public init(_ value: UInt32) { self = .uint32(value) }
    /// `x`.
    public init(_ value: Int64) { self = .int64(value) }
    /// `t`.
    public init(_ value: UInt64) { self = .uint64(value) }
    /// `d`.
    public init(_ value: Double) { self = .double(value) }
    /// `s`.
    public init(_ value: String) { self = .string(value) }

    /// `as`: an array of strings.
    public static func strings(_ values: [String]) -> DBusValue {
        .array(elementSignature: "s", values.map(DBusValue.string))
    }

    /// `ad`: an array of doubles.
    public static func doubles(_ values: [Double]) -> DBusValue {
        .array(elementSignature: "d", values.map(DBusValue.double))
    }

    /// `a{sv}`, the property-map shape of `org.freedesktop.DBus.Properties.GetAll` and
    /// `PropertiesChanged`; each value is wrapped in a variant, keys sorted for a stable wire order.
    public static func properties(_ values: [String: DBusValue]) -> DBusValue {
        .dictionary(
            keySignature: "s", valueSignature: "v",
            values.sorted { $0.key < $1.key }.map { (.string($0.key), .variant($0.value)) })
    }
}

// MARK: - Accessors (nil when the value has another type; no conversions)

extension DBusValue {
    /// The payload of a `.byte` (`y`); nil for every other case.
    public var byte: UInt8? { if case .byte(let v) = self { v } else { nil } }
    /// The payload of a `.bool` (`b`); nil for every other case.
    public var bool: Bool? { if case .bool(let v) = self { v } else { nil } }
    /// The payload of a `.int16` (`n`); nil for every other case.
    public var int16: Int16? { if case .int16(let v) = self { v } else { nil } }
    /// The payload of a `.uint16` (`q`); nil for every other case.
    public var uint16: UInt16? { if case .uint16(let v) = self { v } else { nil } }
    /// The payload of a `.int32` (`i`); nil for every other case.
    public var int32: Int32? { if case .int32(let v) = self { v } else { nil } }
    /// The payload of a `.uint32` (`u`); nil for every other case.
    public var uint32: UInt32? { if case .uint32(let v) = self { v } else { nil } }
    /// The payload of a `.int64` (`x`); nil for every other case.
    public var int64: Int64? { if case .int64(let v) = self { v } else { nil } }
    /// The payload of a `.uint64` (`t`); nil for every other case.
    public var uint64: UInt64? { if case .uint64(let v) = self { v } else { nil } }
    /// The payload of a `.double` (`d`); nil for every other case.
    public var double: Double? { if case .double(let v) = self { v } else { nil } }
    /// The text of a `.string` (not of object paths or signatures).
    public var string: String? { if case .string(let v) = self { v } else { nil } }
    /// The path of an `.objectPath`.
    public var objectPath: String? { if case .objectPath(let v) = self { v } else { nil } }
    /// The text of a `.signature` value (not to be confused with ``signature``, the value's own type).
    public var signatureValue: String? { if case .signature(let v) = self { v } else { nil } }
    /// The elements of an `.array`.
    public var array: [DBusValue]? { if case .array(_, let v) = self { v } else { nil } }
    /// The entries of a `.dictionary`, in wire order.
    public var dictionary: [(DBusValue, DBusValue)]? {
        if case .dictionary(_, _, let v) = self { v } else { nil }
    }
    /// The fields of a `.structure`.
    public var structure: [DBusValue]? { if case .structure(let v) = self { v } else { nil } }
    /// The content of a `.variant`.
    public var variant: DBusValue? { if case .variant(let v) = self { v } else { nil } }

    /// The value with any number of variant wrappers removed.
    public var unwrappingVariants: DBusValue {
        var value = self
        while case .variant(let inner) = value { value = inner }
        return value
    }

    /// A dictionary with string keys (`a{s…}`) as a Swift dictionary; nil for any other type.
    /// Variant values stay wrapped (use ``unwrappingVariants``). A repeated key keeps the last entry.
    public var stringKeyedDictionary: [String: DBusValue]? {
        guard case .dictionary("s", _, let entries) = self else { return nil }
        var result: [String: DBusValue] = [:]
        for (key, value) in entries {
            guard let key = key.string else { return nil }
            result[key] = value
        }
        return result
    }

    /// The elements of an `as` array.
    public var strings: [String]? {
        guard case .array("s", let values) = self else { return nil }
        return values.compactMap(\.string)
    }
}

/// A basic D-Bus value that a variant can carry, for bodies written without a ``DBusValue`` tree
/// (``DBusMessage/appendPropertiesChanged(interface:changed:)``). Not `indirect`: building one
/// allocates nothing.
public enum DBusBasicValue: Sendable, Equatable {
    case bool(Bool)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    /// `s`, UTF-8 without NUL characters.
    case string(String)

    /// The value's type signature as a static string (lent to libdbus without a copy).
    var staticSignature: StaticString {
        switch self {
        case .bool: "b"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        }
    }

    /// The same value as a ``DBusValue``.
    public var value: DBusValue {
        switch self {
        case .bool(let v): .bool(v)
        case .int32(let v): .int32(v)
        case .uint32(let v): .uint32(v)
        case .int64(let v): .int64(v)
        case .uint64(let v): .uint64(v)
        case .double(let v): .double(v)
        case .string(let v): .string(v)
        }
    }
}

// MARK: - Validation before marshalling

extension DBusValue {
    /// Container nesting limit for one message (D-Bus Specification, "Valid Signatures":
    /// 32 arrays + 32 structures; variants count against the same 64-level total in libdbus).
    static let maximumDepth = 64

    /// Checks everything libdbus would otherwise treat as a programming error (and abort on):
    /// NUL in strings, bad object paths and signatures, element types that differ from the
    /// declared array type, non-basic dictionary keys, empty structures, excessive nesting.
    func validate(depth: Int = 0) throws(DBusError) {
        guard depth <= DBusValue.maximumDepth else {
            throw .invalidArgs("value nested deeper than \(DBusValue.maximumDepth) containers")
        }
        switch self {
        case .byte, .bool, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double:
            return
        case .string(let text):
            guard !text.utf8.contains(0) else { throw .invalidArgs("D-Bus strings cannot contain NUL") }
        case .objectPath(let path):
            guard DBusNames.isValidObjectPath(path) else { throw .invalidArgs("invalid object path \"\(path)\"") }
        case .signature(let text):
            guard DBusNames.isValidSignature(text) else { throw .invalidArgs("invalid signature \"\(text)\"") }
        case .array(let element, let values):
            guard DBusNames.isValidSingleTypeSignature(element), !element.hasPrefix("{") else {
                throw .invalidArgs("invalid array element signature \"\(element)\"")
            }
            for value in values {
                guard value.signature == element else {
                    throw .invalidArgs("array of \"\(element)\" holds a \"\(value.signature)\"")
                }
                try value.validate(depth: depth + 1)
            }
        case .dictionary(let key, let valueSignature, let entries):
            guard key.utf8.count == 1, "ybnqiuxtdsog".utf8.contains(key.utf8.first!) else {
                throw .invalidArgs("dictionary key signature \"\(key)\" is not a basic type")
            }
            guard DBusNames.isValidSingleTypeSignature(valueSignature) else {
                throw .invalidArgs("invalid dictionary value signature \"\(valueSignature)\"")
            }
            for (k, v) in entries {
                guard k.signature == key, v.signature == valueSignature else {
                    throw .invalidArgs(
                        "dictionary a{\(key)\(valueSignature)} holds a {\(k.signature)\(v.signature)} entry")
                }
                try k.validate(depth: depth + 2)
                try v.validate(depth: depth + 2)
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw .invalidArgs("structures need at least one field") }
            for field in fields { try field.validate(depth: depth + 1) }
        case .variant(let inner):
            try inner.validate(depth: depth + 1)
            guard DBusNames.isValidSingleTypeSignature(inner.signature) else {
                throw .invalidArgs("invalid variant content signature \"\(inner.signature)\"")
            }
        }
        if depth == 0 {
            guard DBusNames.isValidSingleTypeSignature(signature) else {
                throw .invalidArgs("invalid type signature \"\(signature)\"")
            }
        }
    }
}
