import Logging
import QiblaPlatform

/// A swift-log handler that writes one line per message to stderr with the syslog priority
/// prefix (`<3>` error … `<7>` debug, sd-daemon(3)), so journald keeps the levels when qiblad
/// runs as a systemd service.
struct SyslogLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level
    let label: String

    init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let priority = switch event.level {
        case .critical: 2
        case .error: 3
        case .warning: 4
        case .notice: 5
        case .info: 6
        case .debug, .trace: 7
        }
        var line = "<\(priority)>\(event.message)"
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        if !merged.isEmpty {
            line += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        Console.write(line + "\n", to: .standardError)
    }
}
