// SPDX-License-Identifier: Apache-2.0
import CIntl
import QiblaInterface

/// qiblad's properties as the app last received them (GetAll, then PropertiesChanged), keyed by
/// the generated ``QiblaProperty`` table, so there is no second list of names. Doubles that are NaN
/// ("unknown" in the interface) read as nil.
public struct DaemonProperties: Sendable, Equatable {
    public var values: [QiblaProperty: PropertyValue]

    public init(_ values: [QiblaProperty: PropertyValue] = [:]) { self.values = values }

    /// Stores a value received under its D-Bus name; names this version does not know are ignored
    /// (the interface only grows). Returns whether the name was known.
    @discardableResult
    public mutating func set(_ name: String, _ value: PropertyValue?) -> Bool {
        guard let property = QiblaProperty(rawValue: name) else { return false }
        values[property] = value
        return true
    }

    /// A finite double, or nil (absent, another type, NaN or infinite).
    public func double(_ property: QiblaProperty) -> Double? {
        guard case .double(let d)? = values[property], d.isFinite else { return nil }
        return d
    }

    public func string(_ property: QiblaProperty) -> String? {
        guard case .string(let s)? = values[property] else { return nil }
        return s
    }

    public func bool(_ property: QiblaProperty) -> Bool {
        guard case .bool(let b)? = values[property] else { return false }
        return b
    }

    /// A timestamp; 0 ("none" in the interface) reads as nil.
    public func uint64(_ property: QiblaProperty) -> UInt64? {
        guard case .uint64(let t)? = values[property], t > 0 else { return nil }
        return t
    }

    /// Whether any property has arrived (qiblad answered GetAll).
    public var isEmpty: Bool { values.isEmpty }
}

/// The app's strings in its gettext domain (`qibla-compass`); `{name}` placeholders are filled by
/// ``fill(_:_:)`` after the lookup, so translators see and may move them.
public func tr(_ message: String) -> String {
    // Without a translation dgettext returns its argument: the temporary C string, valid only here.
    message.withCString { original in
        guard let translated = dgettext(textDomain, original), translated != UnsafeMutablePointer(mutating: original) else {
            return message
        }
        return String(cString: translated)
    }
}

/// The gettext domain of the app's catalogues (`po/`, installed as `qibla-compass.mo`).
public let textDomain = "qibla-compass"

/// Replaces each `{key}` in `template` by its value, the value's numbers written as the user's
/// language writes them (``LocaleNumbers``).
public func fill(_ template: String, _ values: [String: String]) -> String {
    var text = template
    for (key, value) in values { text = text.replacingOccurrences(of: "{\(key)}", with: LocaleNumbers.current.localized(value)) }
    return text
}

extension String {
    /// FoundationEssentials-free replacement of every occurrence of `target`.
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = self[...]
        while let range = rest.range(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}

extension Substring {
    /// The first occurrence of `target` (plain character comparison).
    func range(of target: String) -> Range<Substring.Index>? {
        var start = startIndex
        while start < endIndex {
            if self[start...].hasPrefix(target) {
                return start..<index(start, offsetBy: target.count)
            }
            start = index(after: start)
        }
        return nil
    }
}
