// SPDX-License-Identifier: Apache-2.0
/// Latitude and longitude from command-line words, the same in `qiblad`, `qiblactl` and
/// `qibla-sim`: decimal degrees, north and east positive, negative values written as they are
/// (`-33.9`), so a number is never taken for an option.
public enum CoordinateWords {
    /// Why the words are not a coordinate. `isUsage`: the command line is malformed (an unknown
    /// option, a wrong count), as opposed to a value that is not a number or out of range.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var message: String
        public var isUsage: Bool
        public var description: String { message }
    }

    /// Whether a word is a finite decimal number (so `-33.9` is a value, not an option).
    public static func isNumber(_ word: some StringProtocol) -> Bool { parseFiniteDouble(word) != nil }

    /// Whether a word looks like an option: a leading `-` and not a number.
    public static func isOption(_ word: String) -> Bool { word.count > 1 && word.hasPrefix("-") && !isNumber(word) }

    /// Positional words after a subcommand: `--` ends the options; before it, a word that starts
    /// with `-` and is not a number is an unknown option. Exactly two values must remain.
    public static func position(_ words: [String]) -> Result<GeodeticPosition, Problem> {
        var values: [String] = []
        var afterTerminator = false
        for word in words {
            if !afterTerminator && word == "--" { afterTerminator = true; continue }
            if !afterTerminator && isOption(word) {
                return .failure(Problem(message: "unknown option '\(word)'", isUsage: true))
            }
            values.append(word)
        }
        guard values.count == 2 else {
            let got = values.isEmpty ? "none" : "\(values.count): \(values.joined(separator: " "))"
            return .failure(Problem(message: "expected LATITUDE LONGITUDE in degrees, got \(got)", isUsage: true))
        }
        return position(latitude: values[0], longitude: values[1])
    }

    /// "LAT,LON" (qiblad's `--location`).
    public static func position(commaSeparated text: String) -> Result<GeodeticPosition, Problem> {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            return .failure(Problem(message: "expected LAT,LON in degrees, got '\(text)'", isUsage: false))
        }
        return position(latitude: String(parts[0]), longitude: String(parts[1]))
    }

    /// Two numbers, validated by `GeodeticPosition` (latitude in [-90, 90], longitude in [-180, 360)).
    public static func position(latitude: String, longitude: String) -> Result<GeodeticPosition, Problem> {
        guard let lat = parseFiniteDouble(latitude), let lon = parseFiniteDouble(longitude) else {
            return .failure(Problem(message: "latitude and longitude must be numbers in degrees (got '\(latitude)', '\(longitude)')", isUsage: false))
        }
        do {
            return .success(try GeodeticPosition(latitudeDegrees: lat, longitudeDegrees: lon))
        } catch {
            return .failure(Problem(message: error.description, isUsage: false))
        }
    }

    /// One signed number (a `qibla-sim` option such as `--lat`).
    public static func degrees(_ word: String, name: String) -> Result<Double, Problem> {
        guard let value = parseFiniteDouble(word) else {
            return .failure(Problem(message: "\(name) must be a number in degrees (got '\(word)')", isUsage: false))
        }
        return .success(value)
    }
}
