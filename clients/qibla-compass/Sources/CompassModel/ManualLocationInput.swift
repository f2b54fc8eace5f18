// SPDX-License-Identifier: Apache-2.0
import QiblaCore

/// What a person types as a position: two decimal numbers, latitude first, south and west
/// negative, as people write them: `-33.9 18.4`, `-33.9, 18.4`, `−33.9 18.4` (a typographic minus,
/// as pasted from a web page), `33.9 S 18.4 E` or `33.9S, 18.4E`, in Arabic-Indic, Persian or
/// Bengali digits too (`٣٣٫٩ ١٨٫٤`). Decimal commas are not taken
/// (a comma separates the two numbers).
public enum ManualLocationInput {
    /// Why the text is not a position, in words for the person who typed it.
    public struct Problem: Error, Sendable, Equatable {
        public var message: String
    }

    /// The latitude and longitude in degrees (north and east positive), or what is wrong.
    public static func parse(_ text: String) -> Result<(latitude: Double, longitude: Double), Problem> {
        let normalised = LocaleNumbers.asciiDigits(text).map { c -> Character in
            switch c {
            case "\u{2212}", "\u{2013}", "\u{2012}": "-"   // minus sign, en dash, figure dash
            case ",", ";", "\t", "\u{00A0}": " "
            case "°": " "
            default: c
            }
        }
        // The hemisphere letters in English and in the user's language (French writes O for west).
        let letters = hemisphereLetters()
        // Split into numbers, letting a hemisphere letter stand alone or stick to its number.
        var words: [String] = []
        for raw in String(normalised).split(separator: " ") {
            var word = String(raw)
            if let last = word.last, word.count > 1, letters[Character(last.uppercased())] != nil {
                word.removeLast()
                words.append(word)
                words.append(String(last))
            } else {
                words.append(word)
            }
        }
        guard !words.isEmpty else {
            return .failure(Problem(message: tr("Type your latitude and longitude, for example -33.9 18.4")))
        }
        var numbers: [Double] = []
        var hemispheres: [Character?] = []
        for word in words {
            if word.count == 1, let typed = word.uppercased().first, let letter = letters[typed] {
                guard !numbers.isEmpty, hemispheres.count == numbers.count, hemispheres[numbers.count - 1] == nil else {
                    return .failure(Problem(message: fill(tr("“{word}” must follow a number"), ["word": word])))
                }
                hemispheres[numbers.count - 1] = letter
                continue
            }
            guard let value = parseFiniteDouble(word) else {
                return .failure(Problem(message: fill(tr("“{word}” is not a number in degrees"), ["word": word])))
            }
            numbers.append(value)
            hemispheres.append(nil)
        }
        guard numbers.count == 2 else {
            return .failure(Problem(message: tr("Type two numbers: the latitude, then the longitude, for example -33.9 18.4")))
        }
        var latitude = numbers[0], longitude = numbers[1]
        switch hemispheres[0] {
        case "S"?: latitude = -abs(latitude)
        case "N"?: latitude = abs(latitude)
        case nil: break
        default: return .failure(Problem(message: tr("The latitude comes first: N or S")))
        }
        switch hemispheres[1] {
        case "W"?: longitude = -abs(longitude)
        case "E"?: longitude = abs(longitude)
        case nil: break
        default: return .failure(Problem(message: tr("The longitude comes second: E or W")))
        }
        guard (-90...90).contains(latitude) else {
            return .failure(Problem(message: tr("The latitude must be between -90 and 90 degrees")))
        }
        guard (-180...180).contains(longitude) else {
            return .failure(Problem(message: tr("The longitude must be between -180 and 180 degrees")))
        }
        return .success((latitude, longitude))
    }

    /// Typed letter (upper case) → the English hemisphere letter: N S E W, and the translated ones.
    static func hemisphereLetters() -> [Character: Character] {
        var letters: [Character: Character] = ["N": "N", "S": "S", "E": "E", "W": "W"]
        for english in ["N", "S", "E", "W"] {
            let local = tr(english).uppercased()
            // A translation that is one letter and no other point's English letter.
            if local.count == 1, let c = local.first, letters[c] == nil || letters[c] == Character(english) {
                letters[c] = Character(english)
            }
        }
        return letters
    }
}
