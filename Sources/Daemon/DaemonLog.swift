// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaInterface

/// One line for the journal at a level; the wiring hands it to its logger unchanged.
public struct LogLine: Sendable, Equatable, CustomStringConvertible {
    public enum Level: Sendable, Equatable {
        case debug, info, warning, error
    }

    public var level: Level
    public var text: String

    public init(_ level: Level, _ text: String) {
        self.level = level
        self.text = text
    }

    public var description: String { "\(level): \(text)" }
}

/// Which transition writes which journal line: the daemon's log policy, as systemd's own services
/// do it — one line per change of state, never one per retry, sample or claim.
///
/// - **Facts** (the sensors found, gpsd or GeoClue2 unreachable, the heading source in use) are
///   written at their level the first time in a run and whenever they change, at debug when they
///   repeat: every claim restarts the live sources, and a client claiming at each screen-on must
///   not fill the journal.
/// - **Compass transitions** (calibration accepted, refined, lost; interference; calibration
///   needed) one line each, from the state before and after a batch of samples.
/// - **Rate limits**: rejected sensor values after 30 s without, the calibration's progress at most
///   once a minute.
///
/// Pure: the monotonic time comes in with the inputs that need it (seconds, any origin).
public struct DaemonLog: Sendable {
    /// What a fact is about; one remembered line each.
    public enum Topic: String, Sendable, Hashable, CaseIterable {
        /// Which magnetometer and accelerometer, or why there is no compass.
        case compass
        /// gpsd cannot be reached (forgotten once it answers, so the next failure is a change).
        case gpsd
        /// GeoClue2 is absent or refused.
        case geoclue
        /// GeoClue2 has not answered yet.
        case geoclueWait
        /// GeoClue2 refused this user (its hint: once a run, see ``once(_:_:level:)``).
        case geoclueRefusal
        /// Which device the published heading comes from.
        case headingSource
        /// iio-sensor-proxy's compass absent, unreachable or refused.
        case sensorProxy
    }

    /// Rejected sensor values are reported again only after this long without any (seconds).
    public static let droppedValueQuietSeconds = 30.0
    /// The calibration's "not yet, because …" line at most this often (seconds).
    public static let calibrationReasonIntervalSeconds = 60.0

    private var facts: [Topic: String] = [:]
    private var lastDroppedValueSeconds = -Double.infinity
    private var lastCalibrationReasonSeconds = -Double.infinity
    private var loggedRefinements = 0
    /// The last reason ``gpsdUnreachable(reason:)`` was given and its debug line.
    private var lastGPSDUnreachable: (reason: String, line: LogLine)?

    public init() {}

    // MARK: Facts

    /// `text` at `level` the first time and when it changed since the topic's last line; at debug
    /// when it repeats.
    public mutating func fact(_ topic: Topic, _ text: String, level: LogLine.Level = .info) -> LogLine {
        if facts[topic] == text { return LogLine(.debug, text) }
        facts[topic] = text
        return LogLine(level, text)
    }

    /// `text` at `level` the first time the topic comes up in a run, whatever it says; at debug
    /// after that.
    public mutating func once(_ topic: Topic, _ text: String, level: LogLine.Level = .info) -> LogLine {
        if facts[topic] != nil { return LogLine(.debug, text) }
        facts[topic] = text
        return LogLine(level, text)
    }

    /// Forgets a topic's line: the next fact about it is a change (gpsd answered, so its next
    /// failure is news).
    public mutating func forget(_ topic: Topic) {
        facts[topic] = nil
    }

    /// The sensors the hub opened (named as the adapter describes them).
    public mutating func sensorsFound(magnetometer: String, accelerometer: String?, gyroscope: String? = nil) -> LogLine {
        if let accelerometer {
            let gyro = gyroscope.map { ", gyroscope \($0)" } ?? ""
            return fact(.compass, "compass: magnetometer \(magnetometer), accelerometer \(accelerometer)\(gyro)")
        }
        return fact(.compass, "magnetometer \(magnetometer) found but no accelerometer: a heading needs both (tilt compensation)",
                    level: .warning)
    }

    /// No usable magnetometer.
    public mutating func noCompass(_ reason: String) -> LogLine {
        fact(.compass, "no compass: \(reason)")
    }

    /// One failed attempt to reach gpsd: a warning once per run and on change (issue 33), the
    /// attempts after it at debug.
    public mutating func gpsdUnreachable(reason: String) -> LogLine {
        // Issue 37: the same reason every attempt while gpsd is absent gets the same line without
        // formatting it again (a Double's text and the interpolation are code pages that would
        // otherwise stay mapped beside the resting path).
        if let last = lastGPSDUnreachable, last.reason == reason, facts[.gpsd] != nil { return last.line }
        let line = fact(.gpsd, "cannot connect to gpsd: \(reason); asking again when its socket appears or after a while",
                        level: .warning)
        let debugLine = LogLine(.debug, "gpsd connect attempt failed: \(reason)")
        lastGPSDUnreachable = (reason, debugLine)
        return line.level == .debug ? debugLine : line
    }

    /// gpsd answered: its next failure is logged again.
    public mutating func gpsdConnected() {
        forget(.gpsd)
    }

    // MARK: Rate-limited lines

    /// Sensor values rejected (`count` so far this run) at monotonic time `nowSeconds`.
    public mutating func droppedValues(count: Int, nowSeconds: Double) -> LogLine {
        defer { lastDroppedValueSeconds = nowSeconds }
        if nowSeconds - lastDroppedValueSeconds > Self.droppedValueQuietSeconds {
            return LogLine(.warning, "rejecting sensor values that are not a raw count an IIO channel can hold (or unreadable); \(count) so far")
        }
        return LogLine(.debug, "rejected sensor values; \(count) so far")
    }

    // MARK: The compass

    /// The lines for what a batch of samples changed: `before` is the compass state before it,
    /// `compass` the model after it; `nowSeconds` monotonic.
    public mutating func compassChanges(from before: CompassState, to compass: CompassModel, nowSeconds: Double) -> [LogLine] {
        let after = compass.state
        let calibrator = compass.calibrator
        var lines: [LogLine] = []
        if after.calibrationState != before.calibrationState {
            switch after.calibrationState {
            case .calibrated where before.calibrationState == .unvalidated:
                lines.append(LogLine(.info, "the stored calibration matches live data"))
            case .calibrated:
                lines.append(LogLine(.info, "calibration accepted (\(after.calibrationStage.rawValue)): |b| \(Self.rounded(after.hardIronOffsetMagnitudeMicrotesla)) µT, "
                    + "residual \(Self.rounded(after.calibrationResidualMicrotesla)) µT, "
                    + "heading sigma \(Self.rounded(calibrator.lastWorstHeadingSigmaDegrees))° at 30° of tilt"))
                loggedRefinements = calibrator.refinementCount
            case .collecting:
                lines.append(LogLine(.warning, "the calibration no longer matches live data (another sensor, or a magnet nearby); learning it again"))
            case .unvalidated:
                break
            }
        }
        if after.magneticInterference != before.magneticInterference {
            lines.append(LogLine(.info, after.magneticInterference ? "magnetic interference: the field does not match the Earth's field here"
                                                                     : "magnetic interference over"))
        }
        if after.calibrationNeeded != before.calibrationNeeded, after.calibrationNeeded {
            lines.append(LogLine(.info, "the magnetometer needs calibrating: move the phone slowly in a figure eight"))
        }
        if after.calibrationState == .calibrated, calibrator.refinementCount > loggedRefinements {
            loggedRefinements = calibrator.refinementCount
            lines.append(LogLine(.info, "calibration refined (\(after.calibrationStage.rawValue)): |b| \(Self.rounded(after.hardIronOffsetMagnitudeMicrotesla)) µT, "
                + "heading sigma \(Self.rounded(calibrator.lastWorstHeadingSigmaDegrees))° at 30° of tilt"))
        }
        if after.calibrationState == .collecting, after.hasCompass, let reason = calibrator.lastRejection,
           nowSeconds - lastCalibrationReasonSeconds >= Self.calibrationReasonIntervalSeconds {
            lastCalibrationReasonSeconds = nowSeconds
            let provisional = calibrator.isProvisional ? "; a provisional calibration steers the needle" : ""
            lines.append(LogLine(.info, "calibrating (\(Int((after.calibrationProgress * 100).rounded())) %): \(reason)\(provisional); hint: \(after.calibrationHint.rawValue)"))
        }
        return lines
    }

    // MARK: Heading sources

    /// The line when the serving heading source changed: iio-sensor-proxy taking over is a fact
    /// (once a run and on change); its loss while the live sources run is a line of its own. The
    /// raw magnetometer's own lines (``sensorsFound(magnetometer:accelerometer:)``) say the rest.
    public mutating func headingSourceChange(from before: HeadingSource, to after: HeadingSource, running: Bool) -> LogLine? {
        guard after != before else { return nil }
        if after == .iioSensorProxy {
            return fact(.headingSource, "heading from iio-sensor-proxy's compass (net.hadess.SensorProxy): error stated as "
                        + "\(Int(HeadingSourceModel.sensorProxyHeadingErrorDegrees))°, calibrated by its sensor hub, not by qiblad")
        }
        guard before == .iioSensorProxy, running else { return nil }
        forget(.headingSource)
        return LogLine(.info, after == .magnetometer ? "heading from the raw magnetometer again (was iio-sensor-proxy)"
                                                     : "iio-sensor-proxy's compass stopped serving; no heading")
    }

    // MARK: Positions and claims

    /// The line when the published live position source changed (nil when it did not).
    public static func liveSourceChange(from before: LocationModel.LiveSource?, to location: LocationModel) -> LogLine? {
        let after = location.liveSource
        guard after != before else { return nil }
        if let after, let fix = location.liveFix {
            let accuracy = fix.horizontalAccuracyMetres.map { ", ±\(Int($0.rounded())) m" } ?? ""
            return LogLine(.info, "live fix from \(after.rawValue)\(accuracy)\(before.map { " (was \($0.rawValue))" } ?? ""): \(fix.position)")
        }
        guard before != nil else { return nil }
        return LogLine(.info, "live fix lost; falling back to \(location.manual != nil ? "the manual" : "the last known") location")
    }

    /// The first claim (`alreadyRunning`: always-on had started the live sources).
    public static func firstClaim(by client: String, alreadyRunning: Bool) -> LogLine {
        LogLine(.info, "first compass claim (\(client)); \(alreadyRunning ? "sensors and position source already running (always-on)" : "starting sensors and position source")")
    }

    /// The last release (`keepRunning`: always-on keeps the live sources).
    public static func lastRelease(by client: String, keepRunning: Bool) -> LogLine {
        LogLine(.info, "last compass claim released (\(client)); \(keepRunning ? "sensors and position source keep running (always-on)" : "stopping sensors and position source")")
    }

    /// One decimal, for log lines; "-" for a value that is not finite.
    static func rounded(_ x: Double) -> String {
        x.isFinite ? String(Double(Int((x * 10).rounded())) / 10) : "-"
    }
}
