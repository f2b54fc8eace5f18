// SPDX-License-Identifier: Apache-2.0

/// Text as the search compares it: lower case, accents and other combining marks taken off,
/// letters that are not decomposable written as their usual Latin spelling (ß → ss, ł → l,
/// ı → i), the spelling variants of the Arabic script folded (أ إ آ ٱ → ا, ة → ه, ى ی → ي,
/// ک → ك, ہ ھ → ه, ے → ي, ں → ن, the tatweel dropped) and ё → е, anything that is not a letter or a digit a
/// single space. "İstanbul" and "istanbul", "São Paulo" and "sao paulo", "مكة" and "مكه" fold alike.
public enum SearchText {
    public static func folded(_ text: String) -> String {
        var bytes: [UInt8] = []
        append(folded: text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the folded UTF-8 of `text` to `bytes` (the index keeps every name in one buffer).
    /// Names written in ASCII alone, most of the list, take a byte loop; others the Unicode path.
    static func append(folded text: String, to bytes: inout [UInt8]) {
        let start = bytes.count
        var lastWasSpace = true
        var ascii = true
        for byte in text.utf8 {
            if byte >= 0x80 { ascii = false; break }
            if byte >= 0x41 && byte <= 0x5A {
                bytes.append(byte | 0x20); lastWasSpace = false
            } else if (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) {
                bytes.append(byte); lastWasSpace = false
            } else if !lastWasSpace {
                bytes.append(0x20); lastWasSpace = true
            }
        }
        if !ascii {
            bytes.removeSubrange(start...)
            lastWasSpace = true
            func fold(_ scalar: Unicode.Scalar) {
                let value = scalar.value
                if value < 0x80 {
                    let byte = UInt8(value)
                    if (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) {
                        bytes.append(byte); lastWasSpace = false
                    } else if byte >= 0x41 && byte <= 0x5A {
                        bytes.append(byte | 0x20); lastWasSpace = false
                    } else if !lastWasSpace {
                        bytes.append(0x20); lastWasSpace = true
                    }
                    return
                }
                let properties = scalar.properties
                let category = properties.generalCategory
                if category == .nonspacingMark || category == .enclosingMark || value == 0x0640 { return }
                if let plain = foldedLetters[value] {
                    bytes.append(contentsOf: plain.utf8)
                    lastWasSpace = false
                } else if properties.isAlphabetic || properties.numericType != nil {
                    UTF8.encode(scalar) { bytes.append($0) }
                    lastWasSpace = false
                } else if !lastWasSpace {
                    bytes.append(0x20)
                    lastWasSpace = true
                }
            }
            for scalar in text.unicodeScalars {
                // Only letters with case need the lower-case mapping (a String); Arabic, Bengali
                // and the like have none.
                if scalar.value >= 0x80, scalar.properties.changesWhenLowercased {
                    for lower in scalar.properties.lowercaseMapping.unicodeScalars { fold(lower) }
                } else {
                    fold(scalar)
                }
            }
        }
        if bytes.count > start, bytes.last == 0x20 { bytes.removeLast() }
    }

    /// Lower-case letters of Latin-1, Latin Extended-A/B, Greek and Latin Extended Additional and
    /// what they fold to: their Unicode canonical decomposition (NFD) without combining marks,
    /// generated with Python's `unicodedata` (Unicode 14), plus the letters that have no
    /// decomposition but a usual plain spelling (ß, æ, œ, ø, ł, đ, ð, þ, ı, ħ, ŧ, ŀ, ĳ, ſ, ƒ, ŉ).
    static let foldedLetters: [UInt32: String] = [
        0x00DF: "ss", 0x00E0: "a", 0x00E1: "a", 0x00E2: "a", 0x00E3: "a", 0x00E4: "a", 0x00E5: "a", 0x00E6: "ae",
        0x00E7: "c", 0x00E8: "e", 0x00E9: "e", 0x00EA: "e", 0x00EB: "e", 0x00EC: "i", 0x00ED: "i", 0x00EE: "i",
        0x00EF: "i", 0x00F0: "d", 0x00F1: "n", 0x00F2: "o", 0x00F3: "o", 0x00F4: "o", 0x00F5: "o", 0x00F6: "o",
        0x00F8: "o", 0x00F9: "u", 0x00FA: "u", 0x00FB: "u", 0x00FC: "u", 0x00FD: "y", 0x00FE: "th", 0x00FF: "y",
        0x0101: "a", 0x0103: "a", 0x0105: "a", 0x0107: "c", 0x0109: "c", 0x010B: "c", 0x010D: "c", 0x010F: "d",
        0x0111: "d", 0x0113: "e", 0x0115: "e", 0x0117: "e", 0x0119: "e", 0x011B: "e", 0x011D: "g", 0x011F: "g",
        0x0121: "g", 0x0123: "g", 0x0125: "h", 0x0127: "h", 0x0129: "i", 0x012B: "i", 0x012D: "i", 0x012F: "i",
        0x0131: "i", 0x0133: "ij", 0x0135: "j", 0x0137: "k", 0x013A: "l", 0x013C: "l", 0x013E: "l", 0x0140: "l",
        0x0142: "l", 0x0144: "n", 0x0146: "n", 0x0148: "n", 0x0149: "n", 0x014D: "o", 0x014F: "o", 0x0151: "o",
        0x0153: "oe", 0x0155: "r", 0x0157: "r", 0x0159: "r", 0x015B: "s", 0x015D: "s", 0x015F: "s", 0x0161: "s",
        0x0163: "t", 0x0165: "t", 0x0167: "t", 0x0169: "u", 0x016B: "u", 0x016D: "u", 0x016F: "u", 0x0171: "u",
        0x0173: "u", 0x0175: "w", 0x0177: "y", 0x017A: "z", 0x017C: "z", 0x017E: "z", 0x017F: "s", 0x0192: "f",
        0x01A1: "o", 0x01B0: "u", 0x01CE: "a", 0x01D0: "i", 0x01D2: "o", 0x01D4: "u", 0x01D6: "u", 0x01D8: "u",
        0x01DA: "u", 0x01DC: "u", 0x01DF: "a", 0x01E1: "a", 0x01E3: "æ", 0x01E7: "g", 0x01E9: "k", 0x01EB: "o",
        0x01ED: "o", 0x01EF: "ʒ", 0x01F0: "j", 0x01F5: "g", 0x01F9: "n", 0x01FB: "a", 0x01FD: "æ", 0x01FF: "ø",
        0x0201: "a", 0x0203: "a", 0x0205: "e", 0x0207: "e", 0x0209: "i", 0x020B: "i", 0x020D: "o", 0x020F: "o",
        0x0211: "r", 0x0213: "r", 0x0215: "u", 0x0217: "u", 0x0219: "s", 0x021B: "t", 0x021F: "h", 0x0227: "a",
        0x0229: "e", 0x022B: "o", 0x022D: "o", 0x022F: "o", 0x0231: "o", 0x0233: "y", 0x0374: "ʹ", 0x037E: ";",
        0x0385: "¨", 0x0387: "·", 0x0390: "ι", 0x03AC: "α", 0x03AD: "ε", 0x03AE: "η", 0x03AF: "ι", 0x03B0: "υ",
        0x03CA: "ι", 0x03CB: "υ", 0x03CC: "ο", 0x03CD: "υ", 0x03CE: "ω", 0x03D3: "ϒ", 0x03D4: "ϒ", 0x1E01: "a",
        0x1E03: "b", 0x1E05: "b", 0x1E07: "b", 0x1E09: "c", 0x1E0B: "d", 0x1E0D: "d", 0x1E0F: "d", 0x1E11: "d",
        0x1E13: "d", 0x1E15: "e", 0x1E17: "e", 0x1E19: "e", 0x1E1B: "e", 0x1E1D: "e", 0x1E1F: "f", 0x1E21: "g",
        0x1E23: "h", 0x1E25: "h", 0x1E27: "h", 0x1E29: "h", 0x1E2B: "h", 0x1E2D: "i", 0x1E2F: "i", 0x1E31: "k",
        0x1E33: "k", 0x1E35: "k", 0x1E37: "l", 0x1E39: "l", 0x1E3B: "l", 0x1E3D: "l", 0x1E3F: "m", 0x1E41: "m",
        0x1E43: "m", 0x1E45: "n", 0x1E47: "n", 0x1E49: "n", 0x1E4B: "n", 0x1E4D: "o", 0x1E4F: "o", 0x1E51: "o",
        0x1E53: "o", 0x1E55: "p", 0x1E57: "p", 0x1E59: "r", 0x1E5B: "r", 0x1E5D: "r", 0x1E5F: "r", 0x1E61: "s",
        0x1E63: "s", 0x1E65: "s", 0x1E67: "s", 0x1E69: "s", 0x1E6B: "t", 0x1E6D: "t", 0x1E6F: "t", 0x1E71: "t",
        0x1E73: "u", 0x1E75: "u", 0x1E77: "u", 0x1E79: "u", 0x1E7B: "u", 0x1E7D: "v", 0x1E7F: "v", 0x1E81: "w",
        0x1E83: "w", 0x1E85: "w", 0x1E87: "w", 0x1E89: "w", 0x1E8B: "x", 0x1E8D: "x", 0x1E8F: "y", 0x1E91: "z",
        0x1E93: "z", 0x1E95: "z", 0x1E96: "h", 0x1E97: "t", 0x1E98: "w", 0x1E99: "y", 0x1E9B: "ſ", 0x1EA1: "a",
        0x1EA3: "a", 0x1EA5: "a", 0x1EA7: "a", 0x1EA9: "a", 0x1EAB: "a", 0x1EAD: "a", 0x1EAF: "a", 0x1EB1: "a",
        0x1EB3: "a", 0x1EB5: "a", 0x1EB7: "a", 0x1EB9: "e", 0x1EBB: "e", 0x1EBD: "e", 0x1EBF: "e", 0x1EC1: "e",
        0x1EC3: "e", 0x1EC5: "e", 0x1EC7: "e", 0x1EC9: "i", 0x1ECB: "i", 0x1ECD: "o", 0x1ECF: "o", 0x1ED1: "o",
        0x1ED3: "o", 0x1ED5: "o", 0x1ED7: "o", 0x1ED9: "o", 0x1EDB: "o", 0x1EDD: "o", 0x1EDF: "o", 0x1EE1: "o",
        0x1EE3: "o", 0x1EE5: "u", 0x1EE7: "u", 0x1EE9: "u", 0x1EEB: "u", 0x1EED: "u", 0x1EEF: "u", 0x1EF1: "u",
        0x1EF3: "y", 0x1EF5: "y", 0x1EF7: "y", 0x1EF9: "y",
        // Cyrillic ё; the Arabic script's variants (Unicode's Arabic block; Persian and Urdu
        // letters that stand for the Arabic ones in place names).
        0x0451: "е", 0x0622: "ا", 0x0623: "ا", 0x0625: "ا", 0x0671: "ا", 0x0629: "ه", 0x0649: "ي", 0x06CC: "ي",
        0x06A9: "ك", 0x06C1: "ه", 0x06D5: "ه",
        // Urdu's two hehs (ھ do-chashmi, ہ gol) are written for each other in place names (the Urdu
        // catalogue spells Lahore لاھور, people type لاہور); ۂ, ۃ, ے and ں likewise.
        0x06BE: "ه", 0x06C2: "ه", 0x06C3: "ه", 0x06D2: "ي", 0x06BA: "ن",
    ]
}
