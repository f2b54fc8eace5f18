// SPDX-License-Identifier: Apache-2.0

/// Numbers as the user's language writes them: its digits (Arabic ٠١٢٣٤٥٦٧٨٩, Persian and Urdu
/// ۰۱۲۳۴۵۶۷۸۹, Bengali ০১২৩৪৫৬৭৮৯) and its decimal and thousands separators (Turkish and
/// Indonesian "12,5" and "7.621", Arabic "١٢٫٥" and "٧٬٦٢١"), as CLDR's number symbols give
/// them. The catalogue says which, so the language shown and its numbers always go together.
/// The app formats its numbers in the C way ("7,621 km", "33.90° S"); ``localized(_:)`` rewrites them.
public struct LocaleNumbers: Sendable, Equatable {
    /// The ten digits 0 to 9.
    public var digits: [Character]
    public var decimalSeparator: Character
    public var groupSeparator: Character

    /// From the catalogue's text for the digits ("0123456789" translated) and for the two
    /// separators (".," translated); what is not ten digits or two separators is ignored.
    public init(digits: String, separators: String) {
        let d = Array(digits), s = Array(separators)
        self.digits = d.count == 10 ? d : Array("0123456789")
        decimalSeparator = s.count == 2 ? s[0] : "."
        groupSeparator = s.count == 2 ? s[1] : ","
    }

    /// The user's language's (the process's catalogue, looked up once).
    public static let current = LocaleNumbers(
        // TRANSLATORS: the ten digits 0 to 9 as your language writes numbers on the screen (Arabic ٠١٢٣٤٥٦٧٨٩, Persian and Urdu ۰۱۲۳۴۵۶۷۸۹, Bengali ০১২৩৪৫৬৭৮৯); keep 0123456789 where Latin digits are the custom.
        digits: tr("0123456789"),
        // TRANSLATORS: two characters: your language's decimal separator, then its thousands separator (English ".,", Turkish and Indonesian ",.", Arabic "٫٬").
        separators: tr(".,"))

    /// Whether numbers are written as in English (nothing to rewrite).
    public var isLatin: Bool { digits == Array("0123456789") && decimalSeparator == "." && groupSeparator == "," }

    /// `text` with its ASCII digits in the language's, and a "." or "," between two digits as its
    /// decimal or thousands separator ("7,621 km" → "٧٬٦٢١ km").
    public func localized(_ text: String) -> String {
        guard !isLatin else { return text }
        let characters = Array(text)
        var out = ""
        for (i, c) in characters.enumerated() {
            if let value = c.asciiDigit {
                out.append(digits[value])
            } else if (c == "." || c == ","), i > 0, i + 1 < characters.count,
                      characters[i - 1].asciiDigit != nil, characters[i + 1].asciiDigit != nil {
                out.append(c == "." ? decimalSeparator : groupSeparator)
            } else {
                out.append(c)
            }
        }
        return out
    }

    /// `text` with the digits of the scripts above as ASCII digits and "٫" as ".", for parsing
    /// what a person typed ("٣٣٫٩ ١٨٫٤" → "33.9 18.4").
    public static func asciiDigits(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { scalar -> Unicode.Scalar in
            switch scalar.value {
            case 0x0660...0x0669: Unicode.Scalar(0x30 + scalar.value - 0x0660)!
            case 0x06F0...0x06F9: Unicode.Scalar(0x30 + scalar.value - 0x06F0)!
            case 0x09E6...0x09EF: Unicode.Scalar(0x30 + scalar.value - 0x09E6)!
            case 0x066B: "."
            default: scalar
            }
        }))
    }
}

extension Character {
    /// 0…9 for an ASCII digit.
    var asciiDigit: Int? {
        guard let v = asciiValue, v >= 0x30, v <= 0x39 else { return nil }
        return Int(v - 0x30)
    }
}

/// Which way the user's language is written, as its catalogue says (GTK's own convention: the
/// message "default:LTR", translated "default:RTL" in Arabic, Urdu, Persian). The app sets GTK's
/// default direction from it, so the layout mirrors even where GTK has no catalogue of its own
/// for the language (Urdu); the dial is drawn the same in both directions.
public enum LanguageDirection {
    public static var isRightToLeft: Bool {
        // TRANSLATORS: write "default:RTL" if your language is written from right to left, else keep "default:LTR".
        tr("default:LTR") == "default:RTL"
    }
}
