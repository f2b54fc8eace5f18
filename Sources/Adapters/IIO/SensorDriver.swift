// SPDX-License-Identifier: Apache-2.0
// The one protocol every driver kind implements (cf. iio-sensor-proxy's drv-iio-poll-*.c and
// drv-iio-buffer-*.c behind one driver struct), and what drivers share.
import Logging
import QiblaCore
import QiblaEventLoop
import SystemPackage

/// Callbacks from a driver to its ``SensorHub``; always invoked on the event loop's thread.
struct SensorDriverSink {
    /// Buffered mode only: `poll` reported the device node (readable, or an error or hang-up). The
    /// hub reads it and every other buffered device (`BufferedDriver.readAvailable`), then hands
    /// their samples over and reports a driver that failed.
    var readable: (_ readiness: EventLoop.Readiness) -> Void
    /// `count` more values could not be parsed and were dropped.
    var dropped: (_ count: Int) -> Void
    /// Buffered mode only: no data arrived within the watchdog time.
    var stalled: () -> Void
}

/// Reads one three-axis sensor. `start` and `stop` are called on the event loop's thread.
protocol SensorDriver: AnyObject {
    var device: IIODevice { get }
    /// The leading channel set (the one the driver was made for).
    var calibration: AxisCalibration { get }
    /// Every kind the driver reads: its own, and a gyroscope that shares a buffered device with the
    /// accelerometer (one scan carries both).
    var kinds: [SensorKind] { get }
    /// Opens the device, changes attributes it needs (remembering the old values) and starts reading.
    func start() throws(SensorSetupError)
    /// Stops reading promptly (never waits for a slow read) and restores every attribute it changed.
    func stop()
}

extension SensorDriver {
    var kinds: [SensorKind] { [calibration.kind] }
}

/// Remembers attribute values a driver changed, to put them back on stop (in reverse order).
struct AttributeRestorer {
    private var saved: [(path: String, value: String)] = []

    /// Writes `value` to `path` after saving the current text (only the first time a path is
    /// set: a rate switched back and forth is restored to what it was before the first switch);
    /// skips the write when already equal.
    mutating func set(_ path: String, to value: String) throws(Errno) {
        let old = SysfsAttribute.readTrimmed(path)
        if old == value { return }
        try SysfsAttribute.write(value, to: path)
        if let old, !saved.contains(where: { $0.path == path }) { saved.append((path, old)) }
    }

    /// Writes back the saved values, newest first; returns failures for logging.
    mutating func restoreAll(logger: Logger) {
        for (path, value) in saved.reversed() {
            do { try SysfsAttribute.write(value, to: path) } catch {
                logger.warning("could not restore \(path) to \"\(value)\": \(error)")
            }
        }
        saved.removeAll()
    }
}

/// What `device`'s sampling frequency for `kind` reads now (`in_<type>_sampling_frequency`, else
/// `sampling_frequency`), hertz; nil when it has neither or neither reads a positive number.
func currentSamplingFrequencyHertz(device: IIODevice, kind: SensorKind) -> Double? {
    for base in ["in_\(kind.channelPrefix)_sampling_frequency", "sampling_frequency"] {
        if let value = SysfsAttribute.readTrimmed(device.sysfsPath + "/" + base).flatMap({ parseFiniteDouble($0) }), value > 0 {
            return value
        }
    }
    return nil
}

/// Chooses and writes the sampling frequency (`in_<type>_sampling_frequency` or `sampling_frequency`)
/// when the device lists `*_sampling_frequency_available` and the attribute is writable: the nearest
/// available rate at or above `requestedHertz`, else the fastest. Returns a line for the log.
func configureSamplingFrequency(device: IIODevice, kind: SensorKind, requestedHertz: Double,
                                restorer: inout AttributeRestorer) -> String {
    for base in ["in_\(kind.channelPrefix)_sampling_frequency", "sampling_frequency"] {
        let path = device.sysfsPath + "/" + base
        guard Sysfs.exists(path) else { continue }
        guard let availableText = SysfsAttribute.readTrimmed(path + "_available") else {
            return "\(base) has no list of available rates; reading what the device gives"
        }
        let tokens = availableText.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        let rates = tokens.compactMap { token in parseFiniteDouble(token).map { (token, $0) } }.filter { $0.1 > 0 }
        guard let fastest = rates.max(by: { $0.1 < $1.1 }) else {
            return "\(base)_available is unusable (\"\(availableText)\"); reading what the device gives"
        }
        let chosen = rates.filter { $0.1 >= requestedHertz }.min(by: { $0.1 < $1.1 }) ?? fastest
        guard Sysfs.isWritable(path) else { return "\(base) is read-only; reading what the device gives" }
        if let current = SysfsAttribute.readTrimmed(path).flatMap({ parseFiniteDouble($0) }), current == chosen.1 {
            return "\(base) already \(chosen.0) Hz"
        }
        do {
            try restorer.set(path, to: chosen.0)
            return "\(base) set to \(chosen.0) Hz for a requested \(requestedHertz) Hz"
        } catch {
            return "could not write \(base) (\(error)); reading what the device gives"
        }
    }
    return "no sampling_frequency attribute; reading what the device gives"
}
