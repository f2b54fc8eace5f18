import QiblaCore

/// Which Qibla model feeds the `QiblaBearing` property.
public enum BearingModel: String, Sendable, CaseIterable {
    /// Initial great-circle bearing on a sphere (what published tables, apps and mosque surveys use).
    case greatCircle = "great-circle"
    /// Initial azimuth of the WGS84 geodesic (Karney 2013).
    case geodesic
}

/// The daemon's settings, from `qiblad.conf` (`key = value` lines; see `systemd/qiblad.conf`).
/// Every key has a default, so an empty or missing file is a valid configuration.
public struct DaemonConfiguration: Sendable, Equatable {
    /// `bearing-model`: which model `QiblaBearing` publishes.
    public var bearingModel: BearingModel = .greatCircle
    /// `kaaba`: the target, "LAT, LON" in degrees (default 21.4225241, 39.8261818).
    public var kaaba: GeodeticPosition = Qibla.defaultKaaba
    /// `max-signal-rate`: most heading-group PropertiesChanged signals per second (1–100).
    public var maxSignalRateHertz: Double = 10
    /// `smoothing-window`: circular moving-average window, seconds (0–5).
    public var smoothingWindowSeconds: Double = 0.5
    /// `gpsd`: "HOST:PORT" (default localhost:2947) or "none" to disable.
    public var gpsdHost: String = "localhost"
    public var gpsdPort: Int = 2947
    public var gpsdEnabled: Bool = true
    /// `fix-timeout`: seconds without a new fix before the live fix counts as lost.
    public var fixTimeoutSeconds: Double = 10
    /// `sensor-mode`: "polling" (sysfs, default) or "buffered" (/dev/iio:deviceN, needs the udev rule).
    public var sensorModeBuffered: Bool = false
    /// `sample-rate`: sensor sampling rate, hertz (1–200).
    public var sampleRateHertz: Double = 20
    /// `magnetometer` / `accelerometer`: preferred IIO device `name` when several match.
    public var preferredMagnetometer: String?
    public var preferredAccelerometer: String?
    /// `magnetometer-mount-matrix` / `accelerometer-mount-matrix`: override of the sysfs mount
    /// matrix, "a, b, c; d, e, f; g, h, i" (rows; like systemd hwdb's ACCEL_MOUNT_MATRIX).
    public var magnetometerMountMatrix: Matrix3?
    public var accelerometerMountMatrix: Matrix3?

    public init() {}

    /// Keys this version understands (others are reported as warnings, not errors, so a newer
    /// config file does not stop an older daemon).
    public static let knownKeys: Set<String> = [
        "bearing-model", "kaaba", "max-signal-rate", "smoothing-window", "gpsd", "fix-timeout",
        "sensor-mode", "sample-rate", "magnetometer", "accelerometer",
        "magnetometer-mount-matrix", "accelerometer-mount-matrix",
    ]

    /// Parses a configuration file's text. Returns the configuration and warnings (unknown keys);
    /// a bad value is an error naming the line, the key and what is expected.
    public static func parse(_ text: String) throws(ConfigurationError) -> (DaemonConfiguration, [String]) {
        let document: KeyValueDocument
        do { document = try KeyValueDocument.parse(text) } catch {
            throw ConfigurationError(line: error.line, key: nil, message: error.message)
        }
        var config = DaemonConfiguration()
        var warnings: [String] = []
        for entry in document.entries {
            let value = entry.value
            func bad(_ expected: String) -> ConfigurationError {
                ConfigurationError(line: entry.line, key: entry.key, message: "'\(value)' is not \(expected)")
            }
            func number(_ range: ClosedRange<Double>) throws(ConfigurationError) -> Double {
                guard let v = parseFiniteDouble(value), range.contains(v) else {
                    throw bad("a number in \(range.lowerBound)...\(range.upperBound)")
                }
                return v
            }
            switch entry.key {
            case "bearing-model":
                guard let model = BearingModel(rawValue: value) else { throw bad("great-circle or geodesic") }
                config.bearingModel = model
            case "kaaba":
                let parts = value.split(separator: ",")
                guard parts.count == 2, let lat = parseFiniteDouble(parts[0]), let lon = parseFiniteDouble(parts[1]),
                      let position = try? GeodeticPosition(latitudeDegrees: lat, longitudeDegrees: lon) else {
                    throw bad("'LATITUDE, LONGITUDE' in degrees")
                }
                config.kaaba = position
            case "max-signal-rate": config.maxSignalRateHertz = try number(1...100)
            case "smoothing-window": config.smoothingWindowSeconds = try number(0...5)
            case "fix-timeout": config.fixTimeoutSeconds = try number(1...3600)
            case "sample-rate": config.sampleRateHertz = try number(1...200)
            case "gpsd":
                if value == "none" || value == "off" {
                    config.gpsdEnabled = false
                } else {
                    guard let endpoint = parseHostPort(value) else { throw bad("HOST:PORT or none") }
                    config.gpsdEnabled = true
                    (config.gpsdHost, config.gpsdPort) = endpoint
                }
            case "sensor-mode":
                switch value {
                case "polling": config.sensorModeBuffered = false
                case "buffered": config.sensorModeBuffered = true
                default: throw bad("polling or buffered")
                }
            case "magnetometer": config.preferredMagnetometer = value.isEmpty ? nil : value
            case "accelerometer": config.preferredAccelerometer = value.isEmpty ? nil : value
            case "magnetometer-mount-matrix":
                guard let m = parseMatrix(value) else { throw bad("a mount matrix 'a, b, c; d, e, f; g, h, i' without an all-zero row") }
                config.magnetometerMountMatrix = m
            case "accelerometer-mount-matrix":
                guard let m = parseMatrix(value) else { throw bad("a mount matrix 'a, b, c; d, e, f; g, h, i' without an all-zero row") }
                config.accelerometerMountMatrix = m
            default:
                warnings.append("line \(entry.line): unknown key '\(entry.key)' ignored")
            }
        }
        return (config, warnings)
    }
}

public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var key: String?
    public var message: String
    public var description: String {
        if let key { "line \(line): \(key): \(message)" } else { "line \(line): \(message)" }
    }
}

/// "host:port", "[v6addr]:port" or "host" (port 2947, gpsd's IANA port).
public func parseHostPort(_ text: String) -> (String, Int)? {
    let t = String(text.trimmingWhitespace())
    guard !t.isEmpty else { return nil }
    if t.hasPrefix("["), let close = t.firstIndex(of: "]") {
        let host = String(t[t.index(after: t.startIndex)..<close])
        let rest = t[t.index(after: close)...]
        if rest.isEmpty { return (host, 2947) }
        guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port) else { return nil }
        return (host, port)
    }
    let parts = t.split(separator: ":", omittingEmptySubsequences: false)
    switch parts.count {
    case 1: return (t, 2947)
    case 2:
        guard !parts[0].isEmpty, let port = Int(parts[1]), (1...65535).contains(port) else { return nil }
        return (String(parts[0]), port)
    default: return nil
    }
}

/// Parses "a, b, c; d, e, f; g, h, i" (rows), the kernel IIO `mount_matrix` format
/// (Documentation/ABI/testing/sysfs-bus-iio). Rejects a matrix with an all-zero row.
public func parseMatrix(_ text: String) -> Matrix3? {
    parseMountMatrix(text)
}

/// Reads a UTF-8 text file (at most 1 MiB): nil when it does not exist, a message on any other problem.
public func readTextFile(_ path: String) -> Result<String?, TextFileError> {
    do {
        guard let bytes = try FileSystem.readFile(path) else { return .success(nil) }
        guard let text = String(validating: bytes, as: UTF8.self) else { return .failure(TextFileError(message: "not UTF-8 text")) }
        return .success(text)
    } catch {
        return .failure(TextFileError(message: "\(error)"))
    }
}

/// Why a text file could not be read.
public struct TextFileError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
