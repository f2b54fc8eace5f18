// SPDX-License-Identifier: Apache-2.0
// IIO buffer driver: enables scan elements, a trigger and the buffer, then reads scans from
// /dev/iio:deviceN on the event loop (cf. iio-sensor-proxy's drv-iio-buffer-accel.c and
// iio-buffer-utils.c; kernel Documentation/iio/iio_devbuf.rst). Reads may end in the middle of a scan,
// so the tail is kept for the next read; every complete scan is published.
import Logging
import QiblaCore
import QiblaEventLoop
import QiblaIIOFormat
import QiblaPlatform
import SystemPackage

final class BufferedDriver: SensorDriver {
    let device: IIODevice
    let calibration: AxisCalibration
    private let configuration: SensorConfiguration
    private let loop: EventLoop
    private let logger: Logger
    private let sink: SensorDriverSink

    private var restorer = AttributeRestorer()
    private var bufferEnablePath: String?
    private var descriptor: FileDescriptor?
    private var watchToken: EventLoop.Token?
    private var watchdogToken: EventLoop.Token?
    private var parser: ScanLayout?
    private var axisChannels: [Int] = []
    private var timestampChannel: Int?
    private var remainder: [UInt8] = []
    private(set) var bytesReceived = 0
    private var active = false

    init(device: IIODevice, calibration: AxisCalibration, configuration: SensorConfiguration, loop: EventLoop,
         logger: Logger, sink: SensorDriverSink) {
        self.device = device; self.calibration = calibration; self.configuration = configuration
        self.loop = loop; self.logger = logger; self.sink = sink
    }

    func start() throws(SensorSetupError) {
        do {
            try setUp()
        } catch {
            teardown()
            throw error
        }
    }

    private func setUp() throws(SensorSetupError) {
        let scanDirectory = device.sysfsPath + "/scan_elements"
        let bufferDirectory = device.sysfsPath + "/buffer"
        let prefix = "in_\(calibration.kind.channelPrefix)_"
        let wanted = ["x", "y", "z"].map { prefix + $0 } + ["in_timestamp"]
        guard Sysfs.exists(bufferDirectory + "/enable"), Sysfs.exists(scanDirectory) else {
            throw SensorSetupError("\(device) has no IIO buffer")
        }
        // Channels: enable ours, disable the rest (the scan layout must be what we parse).
        let elements = Sysfs.list(scanDirectory).filter { $0.hasSuffix("_en") }.map { String($0.dropLast(3)) }.sorted()
        for axis in wanted.prefix(3) where !elements.contains(axis) {
            throw SensorSetupError("\(device) has no scan element \(axis)")
        }
        do {
            for element in elements {
                try restorer.set("\(scanDirectory)/\(element)_en", to: wanted.contains(element) ? "1" : "0")
            }
        } catch {
            throw SensorSetupError("\(device): cannot configure scan elements: \(error)")
        }
        // Build the layout from what the kernel now reports enabled.
        var channels: [ScanChannel] = []
        for element in elements where SysfsAttribute.readTrimmed("\(scanDirectory)/\(element)_en") == "1" {
            guard let typeText = SysfsAttribute.readTrimmed("\(scanDirectory)/\(element)_type"),
                  let type = IIOScanElementType(parsing: typeText) else {
                throw SensorSetupError("\(device): unparseable \(element)_type")
            }
            guard let indexText = SysfsAttribute.readTrimmed("\(scanDirectory)/\(element)_index"),
                  let index = parseDecimalInteger(indexText), index >= 0 else {
                throw SensorSetupError("\(device): unparseable \(element)_index")
            }
            channels.append(ScanChannel(name: element, index: index, type: type))
        }
        let parser = ScanLayout(channels: channels)
        axisChannels = []
        for axis in wanted.prefix(3) {
            guard let index = parser.channelIndex(named: axis) else {
                throw SensorSetupError("\(device): \(axis) did not stay enabled")
            }
            axisChannels.append(index)
        }
        timestampChannel = parser.channelIndex(named: "in_timestamp")
        self.parser = parser

        do {
            // Timestamps on the clock polling uses, when the kernel lets us choose.
            let clockPath = device.sysfsPath + "/current_timestamp_clock"
            if Sysfs.exists(clockPath) { try restorer.set(clockPath, to: "monotonic") }
            if let trigger = chooseTrigger() { try restorer.set(device.sysfsPath + "/trigger/current_trigger", to: trigger) }
            try restorer.set(bufferDirectory + "/length", to: "128")
            // Wake the loop once per hand-off interval (as polling does), not once per scan: the
            // kernel makes the buffer readable when `watermark` scans are waiting.
            if Sysfs.exists(bufferDirectory + "/watermark") {
                try restorer.set(bufferDirectory + "/watermark", to: String(Self.watermark(configuration)))
            }
        } catch {
            throw SensorSetupError("\(device): cannot configure the trigger/buffer: \(error)")
        }
        let rateNote = configureSamplingFrequency(device: device, kind: calibration.kind,
                                                  requestedHertz: configuration.effectiveSampleRateHertz, restorer: &restorer)

        let nodePath = configuration.devRoot + "/" + device.deviceNodeName
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(nodePath, .readOnly, options: [.nonBlocking, .closeOnExec])
        } catch {
            throw SensorSetupError("\(device): cannot open \(nodePath): \(error)")
        }
        self.descriptor = descriptor
        do {
            try SysfsAttribute.write("1", to: bufferDirectory + "/enable")
            bufferEnablePath = bufferDirectory + "/enable"
        } catch {
            throw SensorSetupError("\(device): cannot enable the buffer: \(error)")
        }
        active = true
        remainder = []
        bytesReceived = 0
        watchToken = loop.watch(descriptor, for: .readable) { [weak self] readiness in self?.readAvailable(readiness) }
        watchdogToken = loop.schedule(after: configuration.bufferWatchdog) { [weak self] in
            guard let self, self.active else { return }
            self.watchdogToken = nil
            if self.bytesReceived == 0 { self.sink.stalled() }
        }
        logger.info("\(device) buffered: \(parser.scanSizeBytes)-byte scans \(channels.map { "\($0.name)=\($0.type)" }.joined(separator: " ")); \(rateNote)")
    }

    /// Scans per wakeup: the scans of one hand-off interval (1 / `max-signal-rate`), at least 1
    /// and at most half the 128-scan buffer.
    static func watermark(_ configuration: SensorConfiguration) -> Int {
        let interval = configuration.handOffInterval.components
        let seconds = Double(interval.seconds) + Double(interval.attoseconds) / 1e18
        return min(64, max(1, Int((configuration.effectiveSampleRateHertz * seconds).rounded(.down))))
    }

    /// A trigger for this device: the one already set, else `<name>-dev<N>`, else one named after the device.
    private func chooseTrigger() -> String? {
        let currentPath = device.sysfsPath + "/trigger/current_trigger"
        guard Sysfs.exists(currentPath) else { return nil }
        if let current = SysfsAttribute.readTrimmed(currentPath), !current.isEmpty { return nil }
        let directory = device.sysfsPath.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let names = Sysfs.list(directory).filter { $0.hasPrefix("trigger") }.sorted()
            .compactMap { SysfsAttribute.readTrimmed(directory + "/" + $0 + "/name") }
        return names.first { $0 == "\(device.name)-dev\(device.number)" }
            ?? names.first { $0.hasPrefix(device.name + "-") && !device.name.isEmpty }
    }

    func stop() {
        guard active || descriptor != nil else { return }
        teardown()
    }

    private func teardown() {
        active = false
        if let watchToken { loop.cancel(watchToken) }
        if let watchdogToken { loop.cancel(watchdogToken) }
        watchToken = nil; watchdogToken = nil
        if let bufferEnablePath {
            do { try SysfsAttribute.write("0", to: bufferEnablePath) } catch {
                logger.warning("could not disable \(bufferEnablePath): \(error)")
            }
        }
        bufferEnablePath = nil
        if let descriptor { try? descriptor.close() }
        descriptor = nil
        restorer.restoreAll(logger: logger)
    }

    /// Reads everything available, then decodes every complete scan.
    private func readAvailable(_ readiness: EventLoop.Readiness) {
        guard active, let descriptor, let parser, parser.scanSizeBytes > 0 else { return }
        var chunk = [UInt8](repeating: 0, count: 4096)
        var failure: String?
        while true {
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0, retryOnInterrupt: true) }
            } catch let error as Errno where error == .wouldBlock || error == .resourceTemporarilyUnavailable {
                // Nothing to read although poll reported an error condition: the device is gone
                // (otherwise a level-triggered watch would spin).
                if readiness.contains(.error) || readiness.contains(.invalid) || readiness.contains(.hangup),
                   !readiness.contains(.readable) {
                    failure = "\(configuration.devRoot)/\(device.deviceNodeName): poll reported \(readiness.rawValue)"
                }
                break
            } catch {
                failure = "\(configuration.devRoot)/\(device.deviceNodeName): read failed: \(error)"
                break
            }
            if count == 0 {
                failure = "\(configuration.devRoot)/\(device.deviceNodeName): end of file"
                break
            }
            remainder.append(contentsOf: chunk[..<count])
            bytesReceived += count
        }
        var samples: [SensorSample] = []
        let size = parser.scanSizeBytes
        let complete = remainder.count / size * size
        if complete > 0 {
            remainder.withUnsafeBytes { all in
                var offset = 0
                while offset < complete {
                    let values = parser.decode(UnsafeRawBufferPointer(rebasing: all[offset..<offset + size]))
                    offset += size
                    let raw = Vector3(Double(values[axisChannels[0]][0]), Double(values[axisChannels[1]][0]),
                                      Double(values[axisChannels[2]][0]))
                    guard let vector = calibration.apply(raw: raw) else { continue }
                    let timestamp = timestampChannel.map { values[$0][0] } ?? MonotonicClock.nowNanoseconds()
                    samples.append(SensorSample(kind: calibration.kind, vector: vector, timestampNanoseconds: timestamp))
                }
            }
            remainder.removeFirst(complete)
        }
        if !samples.isEmpty { sink.deliver(samples) }
        if let failure, active {
            teardown()
            sink.failed(failure)
        }
    }
}
