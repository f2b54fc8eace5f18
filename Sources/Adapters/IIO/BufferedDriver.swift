// SPDX-License-Identifier: Apache-2.0
// IIO buffer driver: enables scan elements, a trigger and the buffer, then reads scans from
// /dev/iio:deviceN on the event loop (cf. iio-sensor-proxy's drv-iio-buffer-accel.c and
// iio-buffer-utils.c; kernel Documentation/iio/iio_devbuf.rst). Reads may end in the middle of a scan,
// so the tail is kept for the next read; every complete scan becomes a pending sample that
// `SensorHub` hands over. Steady state allocates nothing: one read buffer and the pending samples'
// storage are allocated at start, and values are decoded in place from the bytes read.
// One device may carry two channel sets (inv_mpu6050, bmi160: `in_accel_*` and `in_anglvel_*`):
// both are enabled and one scan yields an accelerometer and a gyroscope sample of one instant.
// At a rest the gyroscope's scan elements are disabled (buffer off, `_en` 0, buffer on), and enabled
// again at the first motion.
import Logging
import QiblaCore
import QiblaEventLoop
import QiblaIIOFormat
import QiblaPlatform
import SystemPackage

final class BufferedDriver: SensorDriver {
    let device: IIODevice
    let calibration: AxisCalibration
    /// Every channel set the scans carry, `calibration` first; a gyroscope on the accelerometer's
    /// device second.
    let channelSets: [AxisCalibration]
    var kinds: [SensorKind] { channelSets.map(\.kind) }
    private let configuration: SensorConfiguration
    private let loop: EventLoop
    private let logger: Logger
    private let facts: FactLog
    private let sink: SensorDriverSink
    /// Read on another buffered device's wakeups (``SensorHub``): `buffer/watermark` is
    /// ``followerWatermark(_:)`` instead of ``watermark(_:)``.
    let follower: Bool

    private var restorer = AttributeRestorer()
    private var bufferEnablePath: String?
    private var descriptor: FileDescriptor?
    private var watchToken: EventLoop.Token?
    private var watchdogToken: EventLoop.Token?
    private var parser: ScanLayout?
    /// Positions of x, y and z in the parser's channels, per channel set (nil: disabled).
    private var axisChannels: [(x: Int, y: Int, z: Int)?] = []
    /// Whether the gyroscope's scan elements are enabled (false while the phone rests).
    private(set) var gyroscopeOn = true
    /// A gyroscope-only device whose buffer is off while the phone rests.
    private var suspended = false
    private var timestampChannel: Int?
    /// The read buffer, allocated once at start: bytes read, of which the first `heldBytes` are not
    /// yet decoded (less than one scan between calls).
    private var readBuffer: [UInt8] = []
    private var heldBytes = 0
    /// Decoded samples not yet taken by the hub, oldest first from `pendingTaken`; its capacity
    /// (one read buffer of scans) is reserved at start, so appending never allocates.
    private var pending: [SensorSample] = []
    private var pendingTaken = 0
    private(set) var bytesReceived = 0
    private var active = false
    /// Why the driver stopped by itself (end of file, a read error, a gone device), for the hub to report.
    private(set) var failure: String?

    /// `buffer/length`: the kernel buffer holds this many scans.
    static let bufferLengthScans = 128

    /// - Parameter companion: a second channel set on the same device (the gyroscope beside the
    ///   accelerometer), read from the same scans.
    init(device: IIODevice, calibration: AxisCalibration, companion: AxisCalibration? = nil,
         configuration: SensorConfiguration, loop: EventLoop,
         logger: Logger, facts: FactLog = FactLog(), sink: SensorDriverSink, follower: Bool = false) {
        self.device = device; self.calibration = calibration; self.configuration = configuration
        channelSets = [calibration] + (companion.map { [$0] } ?? [])
        self.loop = loop; self.logger = logger; self.facts = facts; self.sink = sink; self.follower = follower
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
        let bufferDirectory = device.sysfsPath + "/buffer"
        guard Sysfs.exists(bufferDirectory + "/enable"), Sysfs.exists(device.sysfsPath + "/scan_elements") else {
            throw SensorSetupError("\(device) has no IIO buffer")
        }
        gyroscopeOn = true
        suspended = false
        try configureScanElements()

        let watermark = follower ? Self.followerWatermark(configuration) : Self.watermark(configuration)
        do {
            // Timestamps on the clock polling uses, when the kernel lets us choose.
            let clockPath = device.sysfsPath + "/current_timestamp_clock"
            if Sysfs.exists(clockPath) { try restorer.set(clockPath, to: "monotonic") }
            if let trigger = chooseTrigger() { try restorer.set(device.sysfsPath + "/trigger/current_trigger", to: trigger) }
            try restorer.set(bufferDirectory + "/length", to: String(Self.bufferLengthScans))
            // Wake the loop once per hand-off interval (as polling does), not once per scan: the
            // kernel makes the buffer readable when `watermark` scans are waiting.
            if Sysfs.exists(bufferDirectory + "/watermark") {
                try restorer.set(bufferDirectory + "/watermark", to: String(watermark))
            }
        } catch {
            throw SensorSetupError("\(device): cannot configure the trigger/buffer: \(error)")
        }
        let rateNote = configureSamplingFrequency(device: device, kind: calibration.kind,
                                                  requestedHertz: configuration.effectiveSampleRateHertz, restorer: &restorer)

        let scanSize = parser?.scanSizeBytes ?? 0
        let scanChannels = (parser?.channels ?? []).map { "\($0.name)=\($0.type)" }.joined(separator: " ")
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
        failure = nil
        // The whole kernel buffer and a partial scan fit: one read takes all the device holds.
        // Sized for the largest layout (every channel set on), so that the gyroscope's return after a
        // rest needs no new allocation.
        readBuffer = [UInt8](repeating: 0, count: max(4096, (Self.bufferLengthScans + 1) * scanSize))
        heldBytes = 0
        pending = []
        pending.reserveCapacity(readBuffer.count / max(1, scanSize) * channelSets.count)
        pendingTaken = 0
        bytesReceived = 0
        let sink = self.sink
        watchToken = loop.watch(descriptor, for: .readable) { readiness in sink.readable(readiness) }
        watchdogToken = loop.schedule(after: configuration.bufferWatchdog) { [weak self] in
            guard let self, self.active else { return }
            self.watchdogToken = nil
            if self.bytesReceived == 0 { self.sink.stalled() }
        }
        facts.note("\(calibration.kind.rawValue) driver", "\(device) buffered: \(scanSize)-byte scans \(scanChannels), watermark \(watermark)\(follower ? " (read on the other buffered device's wakeups)" : ""); \(rateNote)", to: logger)
    }

    /// The scan elements of every channel set (x, y, z of each, and the timestamp) enabled, the
    /// gyroscope's only while ``gyroscopeOn``, every other element disabled (the scan layout must be
    /// what is parsed); then the layout built from what the kernel reports enabled. The buffer must
    /// be off (the kernel refuses `_en` writes while it runs: EBUSY).
    private func configureScanElements() throws(SensorSetupError) {
        let scanDirectory = device.sysfsPath + "/scan_elements"
        var wanted = ["in_timestamp"]
        var index = 0
        while index < channelSets.count {
            let set = channelSets[index]
            if set.kind != .gyroscope || gyroscopeOn {
                for axis in ["x", "y", "z"] { wanted.append("in_\(set.kind.channelPrefix)_\(axis)") }
            }
            index += 1
        }
        let elements = Sysfs.list(scanDirectory).filter { $0.hasSuffix("_en") }.map { String($0.dropLast(3)) }.sorted()
        for element in wanted.dropFirst() where !elements.contains(element) {
            throw SensorSetupError("\(device) has no scan element \(element)")
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
        var sets: [(x: Int, y: Int, z: Int)?] = []
        for set in channelSets {
            guard set.kind != .gyroscope || gyroscopeOn else {
                sets.append(nil)
                continue
            }
            var axes: [Int] = []
            for axis in ["x", "y", "z"] {
                let name = "in_\(set.kind.channelPrefix)_\(axis)"
                guard let position = parser.channelIndex(named: name) else {
                    throw SensorSetupError("\(device): \(name) did not stay enabled")
                }
                axes.append(position)
            }
            sets.append((axes[0], axes[1], axes[2]))
        }
        axisChannels = sets
        timestampChannel = parser.channelIndex(named: "in_timestamp")
        self.parser = parser
    }

    /// Scans per wakeup: the scans of one hand-off interval (1 / `max-signal-rate`), at least 1
    /// and at most half the 128-scan buffer.
    static func watermark(_ configuration: SensorConfiguration) -> Int {
        let interval = configuration.handOffInterval.components
        let seconds = Double(interval.seconds) + Double(interval.attoseconds) / 1e18
        return min(64, max(1, Int((configuration.effectiveSampleRateHertz * seconds).rounded(.down))))
    }

    /// A follower's watermark: two hand-off intervals of scans (at most three quarters of the
    /// buffer). The leader's wakeups read the follower's scans every interval, so this watermark
    /// is reached only when the leader is late or silent: a backstop, not a second wakeup per
    /// interval. With equal watermarks, two devices sampling out of phase would each reach theirs
    /// before the other's next wakeup (1.33 wakeups per interval at 2 scans).
    static func followerWatermark(_ configuration: SensorConfiguration) -> Int {
        min(bufferLengthScans * 3 / 4, 2 * watermark(configuration))
    }

    /// `buffer/watermark` while the phone rests: one rest period of scans at the device's rate
    /// (`deviceHertz`, what `sampling_frequency` reads after the nearest available rate at or above
    /// the rest rate was chosen), so the device wakes the loop once per rest period even when it
    /// cannot sample that slowly (an MPU-6050's slowest is 10 Hz: 5 scans a wakeup at 2 Hz). A
    /// follower gets two periods (a backstop, as at the full rate). At most three quarters of the
    /// buffer, and at most `buffer/hwfifo_watermark_max` where the driver has a hardware FIFO (the
    /// kernel ABI, Documentation/ABI/testing/sysfs-bus-iio: the hardware watermark follows
    /// `buffer/watermark`, capped there), so one hardware FIFO interrupt brings one batch.
    static func restWatermark(deviceHertz: Double, restHertz: Double, follower: Bool, hardwareFIFOMaximum: Int?) -> Int {
        let period = deviceHertz.isFinite && restHertz > 0 ? max(1, Int((deviceHertz / restHertz).rounded(.down))) : 1
        let cap = min(bufferLengthScans * 3 / 4, hardwareFIFOMaximum.map { max(1, $0) } ?? .max)
        return min(cap, follower ? 2 * period : period)
    }

    /// Switches between the full rate and the rest rate (nil: back to the full rate): the buffer is
    /// disabled (the kernel refuses a new `buffer/watermark` while it runs: EBUSY,
    /// drivers/iio/industrialio-buffer.c), `sampling_frequency` and
    /// `buffer/watermark` are set, and the buffer enabled again; scans already read stay pending.
    /// Every attribute changed is restored at ``stop()`` to what it was before the first change.
    /// Returns a line for the log; a failure to enable the buffer again stops the driver (``failure``).
    ///
    /// A gyroscope among the channel sets follows the rest (power: issue 30): at a rest its scan
    /// elements are disabled (the scans still read are decoded first, in the layout they were
    /// written in), and enabled again when the rest ends. A device that carries only a gyroscope
    /// keeps its buffer off for the whole rest.
    func changeRate(restingAtHertz restHertz: Double?) -> String {
        guard active, let bufferEnablePath else { return "\(device): not running" }
        if !suspended {
            do { try SysfsAttribute.write("0", to: bufferEnablePath) } catch {
                return "\(device): cannot disable the buffer to change its rate: \(error)"
            }
        }
        let wantGyroscope = restHertz == nil
        var gyroscopeNote = ""
        if kinds.contains(.gyroscope), wantGyroscope != gyroscopeOn {
            // Scans already in the kernel buffer are in the old layout: decode them now.
            readAvailable(nil)
            heldBytes = 0
            gyroscopeOn = wantGyroscope
            do {
                try configureScanElements()
                gyroscopeNote = wantGyroscope ? "; gyroscope channels enabled" : "; gyroscope channels disabled"
            } catch {
                failure = error.description
                teardown()
                return "\(device): \(error)"
            }
            if calibration.kind == .gyroscope, !wantGyroscope {
                suspended = true
                return "\(device) at rest: buffer off\(gyroscopeNote)"
            }
            suspended = false
        }
        let note = configureSamplingFrequency(device: device, kind: calibration.kind,
                                              requestedHertz: restHertz ?? configuration.effectiveSampleRateHertz,
                                              restorer: &restorer)
        let bufferDirectory = device.sysfsPath + "/buffer"
        var watermark = follower ? Self.followerWatermark(configuration) : Self.watermark(configuration)
        if let restHertz {
            watermark = Self.restWatermark(deviceHertz: currentSamplingFrequencyHertz(device: device, kind: calibration.kind)
                                               ?? configuration.effectiveSampleRateHertz,
                                           restHertz: restHertz, follower: follower,
                                           hardwareFIFOMaximum: SysfsAttribute.readTrimmed(bufferDirectory + "/hwfifo_watermark_max")
                                               .flatMap { parseDecimalInteger($0) })
        }
        var line = "\(device) \(restHertz == nil ? "full rate" : "at rest"): \(note)\(gyroscopeNote)"
        if Sysfs.exists(bufferDirectory + "/watermark") {
            do {
                try restorer.set(bufferDirectory + "/watermark", to: String(watermark))
                line += ", watermark \(watermark)"
            } catch {
                line += ", watermark unchanged (\(error))"
            }
        }
        if let hardware = SysfsAttribute.readTrimmed(bufferDirectory + "/hwfifo_watermark") {
            line += ", hardware FIFO watermark \(hardware)"
        }
        do { try SysfsAttribute.write("1", to: bufferEnablePath) } catch {
            failure = "\(device): cannot enable the buffer again: \(error)"
            teardown()
        }
        return line
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

    /// Reads what the device node holds now and decodes every complete scan into the pending
    /// samples (``pendingTimestamp``, ``takePending()``), without touching the heap: the bytes land
    /// in the read buffer allocated at start, and each value is decoded in place from them
    /// (`ScanLayout.value(ofChannel:repetition:inScanAt:of:)`). The read never blocks (`EAGAIN`:
    /// nothing there; the kernel's non-blocking read returns the scans waiting even below
    /// `buffer/watermark`, Documentation/iio/iio_devbuf.rst). A read that ends inside a scan keeps
    /// its bytes for the next call. At most one read buffer (more than the kernel buffer's
    /// ``bufferLengthScans`` scans) per call: more stays readable, and `poll` reports it again.
    /// End of file, a read error, or a `poll` error with nothing to read stop the driver, and
    /// ``failure`` says why (the samples read before it stay pending).
    /// - Parameter readiness: what `poll` reported when this device's node woke the loop; nil when
    ///   it is read because another buffered device's did (``SensorHub`` drains them together).
    func readAvailable(_ readiness: EventLoop.Readiness? = nil) {
        guard active, let descriptor, let parser, parser.scanSizeBytes > 0 else { return }
        let size = parser.scanSizeBytes
        var failure: String?
        readBuffer.withUnsafeMutableBytes { buffer in
            while heldBytes < buffer.count {
                let count: Int
                switch FileSystem.read(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[heldBytes...])) {
                case .success(let read):
                    count = read
                case .failure(let error) where error == .wouldBlock || error == .resourceTemporarilyUnavailable:
                    // Nothing to read although poll reported an error condition: the device is gone
                    // (otherwise a level-triggered watch would spin).
                    if let readiness, readiness.contains(.error) || readiness.contains(.invalid) || readiness.contains(.hangup),
                       !readiness.contains(.readable) {
                        failure = "\(configuration.devRoot)/\(device.deviceNodeName): poll reported \(readiness.rawValue)"
                    }
                    count = -1
                case .failure(let error):
                    failure = "\(configuration.devRoot)/\(device.deviceNodeName): read failed: \(error)"
                    count = -1
                }
                if count < 0 { break }
                if count == 0 {
                    failure = "\(configuration.devRoot)/\(device.deviceNodeName): end of file"
                    break
                }
                heldBytes += count
                bytesReceived += count
            }
            let complete = heldBytes / size * size
            guard complete > 0 else { return }
            let bytes = UnsafeRawBufferPointer(buffer)
            // A while loop, not `for … in stride`: unoptimised builds (where the allocation test runs)
            // would call the generic iterator through its witness table.
            var offset = 0
            while offset < complete {
                defer { offset += size }
                let timestamp = timestampChannel.map { parser.value(ofChannel: $0, inScanAt: offset, of: bytes) }
                    ?? MonotonicClock.nowNanoseconds()
                // Each channel set of the scan (the accelerometer, then a gyroscope on its device):
                // samples of one instant, in that order.
                var set = 0
                while set < channelSets.count {
                    defer { set += 1 }
                    guard let axes = axisChannels[set] else { continue }
                    let raw = Vector3(Double(parser.value(ofChannel: axes.x, inScanAt: offset, of: bytes)),
                                      Double(parser.value(ofChannel: axes.y, inScanAt: offset, of: bytes)),
                                      Double(parser.value(ofChannel: axes.z, inScanAt: offset, of: bytes)))
                    guard let vector = channelSets[set].apply(raw: raw) else { continue }
                    pending.append(SensorSample(kind: channelSets[set].kind, vector: vector, timestampNanoseconds: timestamp))
                }
            }
            // The tail (less than a scan) moves to the front; it cannot overlap what it moves to.
            heldBytes -= complete
            if heldBytes > 0 {
                UnsafeMutableRawBufferPointer(rebasing: buffer[..<heldBytes])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[complete..<complete + heldBytes]))
            }
        }
        if let failure, active {
            teardown()
            self.failure = failure
        }
    }

    /// The timestamp (ns, the scans' `in_timestamp` clock, else `CLOCK_MONOTONIC` at decoding) of the
    /// oldest sample read but not yet taken; nil when none is pending.
    var pendingTimestamp: Int64? {
        pendingTaken < pending.count ? pending[pendingTaken].timestampNanoseconds : nil
    }

    /// Removes and returns the oldest pending sample (check ``pendingTimestamp`` first).
    func takePending() -> SensorSample {
        let sample = pending[pendingTaken]
        pendingTaken += 1
        if pendingTaken == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingTaken = 0
        }
        return sample
    }
}
