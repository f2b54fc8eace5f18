// SPDX-License-Identifier: Apache-2.0
import Logging
import QiblaPlatform

/// A swift-log handler that writes one line per message to stderr. When stderr is the journal's
/// stream (`$JOURNAL_STREAM`, sd-daemon(3)) each line starts with the syslog priority (`<3>` error …
/// `<7>` debug) so journald keeps the levels; elsewhere (a terminal, a pipe, a file) the line is
/// plain, with the level spelled out when it is not info.
struct SyslogLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level
    let label: String
    /// Whether to write `<N>` prefixes: decided once, when the logging system is bootstrapped.
    let journalPrefixes: Bool

    init(label: String, level: Logger.Level, journalPrefixes: Bool) {
        self.label = label
        self.logLevel = level
        self.journalPrefixes = journalPrefixes
    }

    /// Whether stderr is the journal right now.
    static func standardErrorIsJournal(environment: [String: String]) -> Bool {
        ServiceManager.isJournalStream(.standardError, environment: environment)
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var line = Self.prefix(event.level, journal: journalPrefixes) + "\(event.message)"
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        if !merged.isEmpty {
            line += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        Console.write(line + "\n", to: .standardError)
    }

    /// `<2>` … `<7>` for the journal; "error: " and the like for a person.
    static func prefix(_ level: Logger.Level, journal: Bool) -> String {
        if journal {
            let priority = switch level {
            case .critical: 2
            case .error: 3
            case .warning: 4
            case .notice: 5
            case .info: 6
            case .debug, .trace: 7
            }
            return "<\(priority)>"
        }
        return switch level {
        case .info: ""
        default: "\(level.rawValue): "
        }
    }
}
