// SPDX-License-Identifier: Apache-2.0
import Logging
import QiblaCore
import QiblaDaemon
import QiblaGeoClue
import QiblaGPSD
import QiblaIIO
import QiblaState

/// The daemon's settings, from `qiblad.conf` (`key = value` lines; see `systemd/qiblad.conf`).
/// Each section is the configuration struct of the part it configures — the model
/// (`DaemonModel.Configuration`), the publisher, the position sources (GeoClue2 adapter), the gpsd
/// adapter, the IIO adapter — and this file
/// only composes and parses them. A reload compares the sections to decide what to restart.
/// Every key has a default, so an empty or missing file is a valid configuration.
public struct DaemonConfiguration: Sendable, Equatable {
    /// `bearing-model`, `kaaba`, `smoothing-window`, the interference tolerances:
    /// `interference-field-tolerance` (fraction of the expected field strength, 0.02–1, default
    /// 0.15), `interference-dip-tolerance` (degrees, 1–45, default 8), `interference-enter` and
    /// `interference-recover` (seconds of evidence before the flag rises or clears, defaults 0.5 and 1),
    /// and the run policy (`model.run`): `always-on` (boolean, default false) and `idle-exit`
    /// (seconds, 0 or `off` for never, the default), and `heading-source` (auto, magnetometer or
    /// iio-sensor-proxy; `HeadingSourceModel`).
    public var model = DaemonModel.Configuration()
    /// `max-signal-rate`.
    public var publishing = PropertyPublisher.Configuration()
    /// `gpsd` ("HOST:PORT", default localhost:2947, or "none": nil) and `fix-timeout` (seconds
    /// without a new fix before the live fix counts as lost).
    public var gpsd: GPSDPositionSource.Configuration? = GPSDPositionSource.Configuration()
    /// `location-source` (auto, gpsd, geoclue or none) and the GeoClue2 client's settings.
    public var positionSource = PositionSourceSelection()
    /// `sensor-mode` (polling or buffered), `sample-rate` (hertz, 1–200), `rest-sample-rate`
    /// (hertz while the phone rests, 0.5–200, or off; default 2), `magnetometer` /
    /// `accelerometer` (preferred IIO device `name`), `magnetometer-mount-matrix` /
    /// `accelerometer-mount-matrix` ("a, b, c; d, e, f; g, h, i", rows, like systemd hwdb's
    /// ACCEL_MOUNT_MATRIX; wins over sysfs), `gyroscope` (`auto`, the default: read one where the
    /// kernel has one, only while the phone moves; `off`; or the preferred device's `name`) and
    /// `gyroscope-mount-matrix`.
    /// The IIO layer's defaults, and the daemon's sample rate where a gyroscope is read: 50 Hz
    /// (the fused heading's; issue 30).
    public var sensors: SensorConfiguration = {
        var sensors = SensorConfiguration()
        sensors.gyroscopeSampleRateHertz = 50
        return sensors
    }()

    public init() {}

    /// Keys this version understands (others are reported as warnings, not errors, so a newer
    /// config file does not stop an older daemon).
    public static let knownKeys: Set<String> = [
        "bearing-model", "kaaba", "max-signal-rate", "smoothing-window", "location-source", "gpsd", "fix-timeout",
        "gpsd-socket-directory",
        "sensor-mode", "sample-rate", "rest-sample-rate", "magnetometer", "accelerometer",
        "magnetometer-mount-matrix", "accelerometer-mount-matrix", "gyroscope", "gyroscope-mount-matrix",
        "interference-field-tolerance", "interference-dip-tolerance", "interference-enter", "interference-recover",
        "always-on", "idle-exit", "heading-source",
    ]

    /// Parses a configuration file's text. Returns the configuration and warnings (unknown keys);
    /// a bad value is an error naming the line, the key and what is expected.
    public static func parse(_ text: String) throws(ConfigurationError) -> (DaemonConfiguration, [String]) {
        try parse(layers: [(file: nil, text: text)])
    }

    /// Parses several configuration files as one, lowest layer first (`/etc/qiblad/qiblad.conf`,
    /// then the user's file): a key given in a later file wins over the same key in an earlier
    /// one, and a key given nowhere keeps its default. Warnings and errors name the file.
    public static func parse(layers: [(file: String?, text: String)]) throws(ConfigurationError) -> (DaemonConfiguration, [String]) {
        var entries: [(file: String?, entry: KeyValueDocument.Entry)] = []
        for layer in layers {
            do {
                entries += try KeyValueDocument.parse(layer.text).entries.map { (layer.file, $0) }
            } catch {
                throw ConfigurationError(file: layer.file, line: error.line, key: nil, message: error.message)
            }
        }
        var config = DaemonConfiguration()
        var warnings: [String] = []
        // `fix-timeout` may come before or after `gpsd = none`; it is kept for when gpsd is on.
        var fixTimeoutSeconds: Double?
        // The same for `gpsd-socket-directory` (nil: not given; .some(nil): `none`).
        var gpsdSocketDirectory: String??
        for (file, entry) in entries {
            let value = entry.value
            func bad(_ expected: String) -> ConfigurationError {
                ConfigurationError(file: file, line: entry.line, key: entry.key, message: "'\(value)' is not \(expected)")
            }
            func boolean() throws(ConfigurationError) -> Bool {
                switch value.lowercased() {
                case "true", "yes", "on", "1": return true
                case "false", "no", "off", "0": return false
                default: throw bad("true or false")
                }
            }
            func number(_ range: ClosedRange<Double>) throws(ConfigurationError) -> Double {
                guard let v = parseFiniteDouble(value), range.contains(v) else {
                    throw bad("a number in \(range.lowerBound)...\(range.upperBound)")
                }
                return v
            }
            func matrix() throws(ConfigurationError) -> Matrix3 {
                guard let m = parseMountMatrix(value) else {
                    throw bad("a mount matrix 'a, b, c; d, e, f; g, h, i' without an all-zero row")
                }
                return m
            }
            switch entry.key {
            case "bearing-model":
                guard let model = BearingModel(rawValue: value) else { throw bad("great-circle or geodesic") }
                config.model.qibla.bearingModel = model
            case "kaaba":
                let parts = value.split(separator: ",")
                guard parts.count == 2, let lat = parseFiniteDouble(parts[0]), let lon = parseFiniteDouble(parts[1]),
                      let position = try? GeodeticPosition(latitudeDegrees: lat, longitudeDegrees: lon) else {
                    throw bad("'LATITUDE, LONGITUDE' in degrees")
                }
                config.model.qibla.kaaba = position
            case "max-signal-rate":
                // One rate for every heading, fused or not (the defaults differ: 10 and 50).
                config.publishing.maxSignalRateHertz = try number(1...100)
                config.publishing.fusedMaxSignalRateHertz = config.publishing.maxSignalRateHertz
            case "smoothing-window": config.model.compass.smoothingWindowSeconds = try number(0...5)
            case "interference-field-tolerance":
                config.model.compass.calibrator.interference.fieldToleranceFraction = try number(0.02...1)
            case "interference-dip-tolerance":
                config.model.compass.calibrator.interference.inclinationToleranceDegrees = try number(1...45)
            case "interference-enter": config.model.compass.calibrator.interference.enterSeconds = try number(0.05...10)
            case "interference-recover": config.model.compass.calibrator.interference.recoverSeconds = try number(0.05...30)
            case "fix-timeout": fixTimeoutSeconds = try number(1...3600)
            case "gpsd-socket-directory":
                if ["none", "off"].contains(value.lowercased()) {
                    gpsdSocketDirectory = .some(nil)
                } else {
                    guard value.hasPrefix("/") else { throw bad("an absolute directory or none") }
                    gpsdSocketDirectory = .some(value)
                }
            case "sample-rate":
                // One rate with or without a gyroscope (the defaults differ: 20 and 50).
                config.sensors.sampleRateHertz = try number(1...200)
                config.sensors.gyroscopeSampleRateHertz = config.sensors.sampleRateHertz
            case "rest-sample-rate":
                if ["off", "no", "none"].contains(value.lowercased()) {
                    config.sensors.restSampleRateHertz = nil
                } else {
                    config.sensors.restSampleRateHertz = try number(0.5...200)
                }
                // How long a phone can move unseen before it wakes: the filter's kept attitude is
                // that much less certain (`AttitudeFilter.Configuration.restReadIntervalSeconds`).
                config.model.compass.attitudeFilter.restReadIntervalSeconds = config.sensors.restSampleRateHertz.map { 1 / $0 }
                    ?? AttitudeFilter.Configuration().restReadIntervalSeconds
            case "location-source":
                guard let mode = LocationSourceMode(rawValue: value) else { throw bad("auto, gpsd, geoclue or none") }
                config.positionSource.mode = mode
            case "gpsd":
                if value == "none" || value == "off" {
                    config.gpsd = nil
                } else {
                    guard let endpoint = parseHostPort(value) else { throw bad("HOST:PORT or none") }
                    var gpsd = config.gpsd ?? GPSDPositionSource.Configuration()
                    (gpsd.host, gpsd.port) = endpoint
                    config.gpsd = gpsd
                }
            case "sensor-mode":
                guard let mode = SensorReadingMode(rawValue: value) else { throw bad("polling or buffered") }
                config.sensors.mode = mode
            case "magnetometer": config.sensors.preferredMagnetometerName = value.isEmpty ? nil : value
            case "accelerometer": config.sensors.preferredAccelerometerName = value.isEmpty ? nil : value
            case "magnetometer-mount-matrix": config.sensors.magnetometerMountMatrixOverride = try matrix()
            case "accelerometer-mount-matrix": config.sensors.accelerometerMountMatrixOverride = try matrix()
            case "heading-source":
                guard let selection = HeadingSourceModel.Selection(rawValue: value) else {
                    throw bad("auto, magnetometer or iio-sensor-proxy")
                }
                config.model.headingSource = selection
            case "gyroscope":
                switch value.lowercased() {
                case "auto", "":
                    config.sensors.gyroscopeEnabled = true
                    config.sensors.preferredGyroscopeName = nil
                case "off", "no", "none", "false", "0":
                    config.sensors.gyroscopeEnabled = false
                    config.sensors.preferredGyroscopeName = nil
                default:
                    // An IIO `name` attribute: printable ASCII without spaces, as the kernel's names are.
                    guard value.unicodeScalars.allSatisfy({ $0.value > 32 && $0.value < 127 }) else {
                        throw bad("auto, off or an IIO device name")
                    }
                    config.sensors.gyroscopeEnabled = true
                    config.sensors.preferredGyroscopeName = value
                }
            case "gyroscope-mount-matrix": config.sensors.gyroscopeMountMatrixOverride = try matrix()
            case "always-on": config.model.run.alwaysOn = try boolean()
            case "idle-exit":
                if ["off", "no", "none", "never"].contains(value.lowercased()) {
                    config.model.run.idleExitSeconds = nil
                } else {
                    let seconds = try number(0...604_800)
                    config.model.run.idleExitSeconds = seconds > 0 ? seconds : nil
                }
            default:
                let place = file.map { "\($0): " } ?? ""
                warnings.append("\(place)line \(entry.line): unknown key '\(entry.key)' ignored")
            }
        }
        if let fixTimeoutSeconds { config.gpsd?.fixTimeoutSeconds = fixTimeoutSeconds }
        if let gpsdSocketDirectory { config.gpsd?.controlSocketDirectory = gpsdSocketDirectory }
        return (config, warnings)
    }
}

/// Settings given on the command line (`--gpsd`, `--no-gpsd`, `--sensor-mode`, `--sysfs-root`,
/// `--dev-root`, `--udev-data-dir`). They win over the configuration file, also after a reload.
public struct ConfigurationOverrides: Sendable {
    /// `--gpsd HOST:PORT`: watch that gpsd (also sets `location-source = gpsd`).
    public var gpsd: (host: String, port: Int)?
    /// `--no-gpsd`.
    public var noGpsd = false
    public var sensorMode: SensorReadingMode?
    public var sysfsRoot: String?
    public var devRoot: String?
    /// `--udev-data-dir`: udev's device database (tests point it at a fake one).
    public var udevDataDirectory: String?

    public init() {}

    public func apply(to configuration: inout DaemonConfiguration) {
        if let gpsd {
            var section = configuration.gpsd ?? GPSDPositionSource.Configuration()
            section.host = gpsd.host
            section.port = gpsd.port
            configuration.gpsd = section
            configuration.positionSource.mode = .gpsd
        }
        if noGpsd { configuration.gpsd = nil }
        if let sensorMode { configuration.sensors.mode = sensorMode }
        if let sysfsRoot { configuration.sensors.sysfsRoot = sysfsRoot }
        if let devRoot { configuration.sensors.devRoot = devRoot }
        if let udevDataDirectory { configuration.sensors.udevDataDirectory = udevDataDirectory }
    }
}

/// Where the configuration comes from and how the files combine.
///
/// Two layers, read in this order, each key of the second winning over the same key of the first
/// (per key, not per file: a user file that sets only `gpsd` keeps the distribution's other keys):
/// 1. the system-wide file a distribution ships, `/etc/qiblad/qiblad.conf` (`<sysconfdir>/qiblad/qiblad.conf`);
/// 2. the user's file, `$XDG_CONFIG_HOME/qiblad/qiblad.conf` (else `~/.config/qiblad/qiblad.conf`),
///    or, when given, `--config PATH` instead of it.
/// Missing files are skipped; the same file named twice (the system unit's `--config
/// /etc/qiblad/qiblad.conf`) is read once. Command-line options win over both.
public struct ConfigurationFiles: Sendable, Equatable {
    /// The files, lowest layer first.
    public var paths: [String]

    public static let defaultSystemDirectory = "/etc"

    public init(paths: [String]) { self.paths = paths }

    /// The lookup for a run: `sysconfdir` (default `/etc`; `--sysconfdir` for tests and packagers),
    /// `explicit` (`--config`) or the user's file from `environment`.
    public init(environment: [String: String], explicit: String? = nil, systemDirectory: String? = nil) {
        let system = (systemDirectory ?? Self.defaultSystemDirectory) + "/qiblad/qiblad.conf"
        let user = explicit ?? Self.userFile(environment)
        paths = system == user ? [user] : [system, user]
    }

    /// `$XDG_CONFIG_HOME/qiblad/qiblad.conf`, else `$HOME/.config/qiblad/qiblad.conf` (the XDG base
    /// directory rule: a relative `$XDG_CONFIG_HOME` is ignored).
    public static func userFile(_ environment: [String: String]) -> String {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return config + "/qiblad/qiblad.conf" }
        return (environment["HOME"] ?? "/tmp") + "/.config/qiblad/qiblad.conf"
    }
}

/// Reads and parses the configuration files; missing files are skipped, and none at all is the
/// default configuration.
public enum ConfigurationLoader {
    /// Reads `files` (lowest layer first), logs which were read, and merges them per key.
    public static func load(_ files: ConfigurationFiles, logger: Logger) -> Result<DaemonConfiguration, TextFileError> {
        var layers: [(file: String?, text: String)] = []
        for path in files.paths {
            switch readTextFile(path) {
            case .success(let text?): layers.append((path, text))
            case .success(nil): continue
            case .failure(let problem): return .failure(TextFileError(message: "\(path): \(problem)"))
            }
        }
        if layers.isEmpty {
            logger.info("no configuration file (looked for \(files.paths.joined(separator: ", "))); using defaults")
        } else {
            logger.info("configuration from \(layers.compactMap(\.file).joined(separator: ", then "))")
        }
        do {
            let (configuration, warnings) = try DaemonConfiguration.parse(layers: layers)
            for warning in warnings { logger.warning("\(warning)") }
            if configuration.model.run.alwaysOn, configuration.model.run.idleExitSeconds != nil {
                logger.warning("idle-exit is ignored with always-on: the sensors run for clients that do not claim")
            }
            return .success(configuration)
        } catch {
            return .failure(TextFileError(message: "\(error)"))
        }
    }
}

public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file, when the text came from one.
    public var file: String?
    public var line: Int
    public var key: String?
    public var message: String

    public init(file: String? = nil, line: Int, key: String?, message: String) {
        self.file = file; self.line = line; self.key = key; self.message = message
    }

    public var description: String {
        let place = (file.map { "\($0): " } ?? "") + "line \(line)"
        return if let key { "\(place): \(key): \(message)" } else { "\(place): \(message)" }
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
