// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaPlatform

/// qiblactl's words for people, in the user's language where its catalogue (`po/`, gettext domain
/// "qiblactl") has them: the lines of `qibla`, `status`, `set-location`, `places`, `calibrate`'s
/// guidance and result, `remind`'s notifications, and the help (every command's abstract and
/// discussion, every option's help: the configurations are computed, so they are built after
/// ``setUp()``).
///
/// English and stable, because scripts read them: JSON, `monitor`'s and `waybar`'s output, the
/// exit-status table, the messages on stderr. swift-argument-parser's own words (OVERVIEW, USAGE,
/// "Show help information.") stay English too.
enum Words {
    static let domain = "qiblactl"

    /// Binds the catalogues: $QIBLACTL_LOCALEDIR, else <prefix>/share/locale beside the binary
    /// (<prefix>/bin/qiblactl), and lets them follow LANGUAGE, LC_ALL and LC_MESSAGES.
    static func setUp() {
        var directory = Environment.value("QIBLACTL_LOCALEDIR")
        if directory == nil, let executable = try? SpawnedProcess.currentExecutablePath() {
            directory = "/" + executable.split(separator: "/").dropLast(2).joined(separator: "/") + "/share/locale"
        }
        if let directory { Gettext.bind(domain, directory: directory) }
        Gettext.useUserLanguage(for: domain)
    }
}

/// `message` in the user's language, or as it is; `{name}` placeholders are filled after the
/// lookup (``fill(_:_:)``), so translators see and may move them.
func tr(_ message: String) -> String { Gettext.translation(message, domain: Words.domain) ?? message }

/// Replaces each `{key}` in `template` by its value.
func fill(_ template: String, _ values: [String: String]) -> String {
    var text = template
    for (key, value) in values {
        var result = "", rest = Substring(text)
        while let range = rest.firstRange(of: "{\(key)}") {
            result += rest[..<range.lowerBound] + value
            rest = rest[range.upperBound...]
        }
        text = result + rest
    }
    return text
}

/// QiblaCore's 16-point abbreviation ("WNW") in the user's language.
func pointName(forBearing degrees: Double) -> String {
    // TRANSLATORS: the 16 points of the compass, abbreviated (N, NNE, NE, … NNW).
    switch CompassPoint.name(forBearing: degrees) {
    case "N": tr("N")
    case "NNE": tr("NNE")
    case "NE": tr("NE")
    case "ENE": tr("ENE")
    case "E": tr("E")
    case "ESE": tr("ESE")
    case "SE": tr("SE")
    case "SSE": tr("SSE")
    case "S": tr("S")
    case "SSW": tr("SSW")
    case "SW": tr("SW")
    case "WSW": tr("WSW")
    case "W": tr("W")
    case "WNW": tr("WNW")
    case "NW": tr("NW")
    case "NNW": tr("NNW")
    case let other: other
    }
}

/// Paragraphs of a help text, each translated on its own, one blank line apart (as the English
/// discussion was written).
func paragraphs(_ texts: String...) -> String { texts.joined(separator: "\n\n") }
