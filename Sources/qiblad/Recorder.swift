// SPDX-License-Identifier: Apache-2.0
// `qiblad --record FILE`: the phone's sensors, read with the daemon's own IIO adapters (mount
// matrices, scales and offsets applied), written as a sensor log (issue 36) for a bug report or
// `qibla-sim replay`.
import Logging
import QiblaCore
import QiblaEventLoop
import QiblaIIO
import QiblaPlatform
import QiblaSensorLog
import SystemPackage

/// Reads every sample of the magnetometer, accelerometer and gyroscope by polling (so it can run
/// beside a running qiblad, which may hold a buffered device) at the configured moving rate — no
/// rest policy: a recording keeps every sample — and appends them to the log as they arrive.
final class SensorRecorder {
    private let loop: EventLoop
    private let logger: Logger
    private let file: FileDescriptor
    private var hub: SensorHub?
    private var text = ""
    private var firstNanoseconds: Int64?
    private(set) var sampleCount = 0
    private(set) var failure: String?

    init(path: String, loop: EventLoop, logger: Logger) throws {
        self.loop = loop
        self.logger = logger
        file = try FileDescriptor.open(FilePath(path), .writeOnly, options: [.create, .truncate],
                                       permissions: [.ownerReadWrite, .groupRead, .otherRead])
    }

    /// Writes the header and starts the sensors.
    func start(configuration: SensorConfiguration, position: GeodeticPosition?, qiblaVersion: String) {
        var header = [SensorLog.headerLine(key: "time", value: Self.iso8601(unixSeconds: WallClock.nowUnixSeconds())),
                      SensorLog.headerLine(key: "recorder", value: "qiblad \(qiblaVersion) --record")]
        if let position {
            header.append(SensorLog.headerLine(key: "latitude", value: "\(position.latitudeDegrees)"))
            header.append(SensorLog.headerLine(key: "longitude", value: "\(position.longitudeDegrees)"))
        }
        text = header.joined(separator: "\n") + "\n"
        var configuration = configuration
        configuration.mode = .polling
        configuration.restSampleRateHertz = nil
        let hub = SensorHub(configuration: configuration, loop: loop, logger: logger) { [unowned self] event in
            handle(event)
        }
        self.hub = hub
        hub.start()
    }

    func stop() {
        hub?.stop()
        hub = nil
        flush()
        try? file.close()
    }

    private func handle(_ event: SensorEvent) {
        switch event {
        case .samples(let batch):
            for sample in batch {
                let origin = firstNanoseconds ?? sample.timestampNanoseconds
                firstNanoseconds = origin
                let kind: SensorLog.Kind = switch sample.kind {
                case .accelerometer: .accel
                case .gyroscope: .gyro
                case .magnetometer: .magn
                }
                text += SensorLog.sampleLine(timeSeconds: Double(sample.timestampNanoseconds - origin) * 1e-9, kind: kind, sample.vector)
                text += "\n"
                sampleCount += 1
            }
            if text.utf8.count > 16_384 { flush() }
        case .available(let magnetometer, let accelerometer, let gyroscope):
            // Before the first sample these are header lines; after a rediscovery, comments.
            var entries = [("magnetometer", magnetometer), ("accelerometer", accelerometer ?? "none"), ("gyroscope", gyroscope ?? "none")]
            // The chip's own output rate: a polled gyroscope set faster than it is read gives
            // samples that each stand for one of its periods, not one read period (replay reads it).
            if let hertz = hub?.gyroscopeOutputHertz {
                entries.append(("gyroscope_rate", "\(SensorLog.decimal(hertz, places: 4)) Hz"))
            }
            for (key, value) in entries {
                text += SensorLog.headerLine(key: key, value: value) + "\n"
            }
            logger.info("recording: magnetometer \(magnetometer), accelerometer \(accelerometer ?? "none"), gyroscope \(gyroscope ?? "none")")
        case .unavailable(let reason):
            failure = reason
            logger.error("recording: no sensors: \(reason)")
            loop.stop()
        case .droppedValue(let count):
            logger.warning("recording: \(count) unreadable values dropped so far")
        case .resting:
            break
        }
    }

    private func flush() {
        guard !text.isEmpty else { return }
        do {
            _ = try file.writeAll(text.utf8)
        } catch {
            if failure == nil { failure = "cannot write the log: \(error)" }
            logger.error("recording: cannot write the log: \(error)")
            loop.stop()
        }
        text.removeAll(keepingCapacity: true)
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` (UTC).
    static func iso8601(unixSeconds: Double) -> String {
        let seconds = Int(unixSeconds.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = DecimalYear.civilDate(daysSinceEpoch: days)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(year)-\(two(month))-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))Z"
    }
}
