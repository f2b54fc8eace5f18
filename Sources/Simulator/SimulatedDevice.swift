// SPDX-License-Identifier: Apache-2.0
// A fake IIO device under <sysfsRoot>/bus/iio/devices/iio:deviceN, plus its buffer character device
// stand-in <devRoot>/iio:deviceN. Kernel ABI: Documentation/ABI/testing/sysfs-bus-iio.
import QiblaCore
import QiblaIIOFormat
import QiblaPlatform
import SystemPackage

/// Writes and updates the sysfs files of one simulated IIO magnetometer, accelerometer or gyroscope.
///
/// Tree written by ``init(configuration:sysfsRoot:devRoot:)`` (for `iio:deviceN`):
/// - `name`; `in_<t>_{x,y,z}_raw` (t = `magn`, `accel` or `anglvel`);
/// - `in_<t>_{x,y,z}_scale` (per-axis styles) or `in_<t>_scale`; `in_<t>_offset` when
///   ``Configuration/rawOffset`` is set;
/// - the mount matrix attribute (`"a, b, c; d, e, f; g, h, i"`) when ``Configuration/mountMatrix`` is set;
/// - `sampling_frequency` and `sampling_frequency_available` when the style has them;
/// - when ``Configuration/buffered`` and the style supports it: `scan_elements/in_<t>_{x,y,z}_{en,index,type}`
///   (indices 0, 1, 2), `scan_elements/in_timestamp_{en,index,type}` (index 3, `le:s64/64>>0`),
///   `buffer/{enable,length,watermark}`, `trigger/current_trigger` (empty), a trigger device
///   `<sysfsRoot>/bus/iio/devices/triggerN/name` = `<name>-dev<N>`, and the FIFO `<devRoot>/iio:deviceN`.
///   All `_en` and `buffer/enable` start at `0`, as in the kernel; the consumer enables them.
/// - with ``Configuration/includesGyroscope`` on a style that ``DriverStyle/carriesGyroscope``
///   (inv_mpu6050): also `in_anglvel_{x,y,z}_raw`, `in_anglvel_scale`, `in_anglvel_scale_available`,
///   `in_anglvel_{x,y,z}_calibbias`, `in_accel_{x,y,z}_calibbias`, `in_accel_scale_available`,
///   `in_temp_{raw,scale,offset}`, the mount matrix in `in_mount_matrix` (shared by both types), and
///   the driver's scan layout: accel 0–2, temp 3, anglvel 4–6, timestamp 7.
///
/// Buffered stand-in: `<devRoot>/iio:deviceN` is a **FIFO** (named pipe). The simulator opens it
/// `O_RDWR | O_NONBLOCK` (Linux: never blocks, no reader needed), so a consumer may open it
/// `O_RDONLY | O_NONBLOCK` at any time and `poll` for `POLLIN`; it never sees end-of-file while the
/// simulator lives. A scan (≤ 4 KiB, so each `write` is atomic) is written only while
/// `buffer/enable` reads `1`, and it contains exactly the channels whose `_en` reads `1`, packed as
/// ``ScanLayout`` describes. When the pipe is full the scan is dropped (counted in ``droppedScans``),
/// like a kernel buffer overrun. `buffer/watermark` is honoured as the kernel does for `poll`:
/// scans are held back until that many are waiting, then written together (one wakeup of the
/// reader per watermark's worth of scans). `sampling_frequency` is honoured too: a scan is staged
/// only when 1 / `sampling_frequency` has passed since the last one (a device set slower than the
/// simulator's rate skips samples; faster, it takes every one). What a FIFO cannot model: the kernel's non-blocking
/// read also returns the scans waiting below the watermark; here they are not there to read
/// until the watermark is reached.
///
/// Motion events (issue 37), with ``Configuration/motionEvents`` on an inv_mpu6050-style
/// accelerometer: the wake-on-motion event the kernel gives chips from the MPU-6500 on, as its ABI
/// shows it (Documentation/ABI/testing/sysfs-bus-iio; include/uapi/linux/iio/events.h):
/// `events/in_accel_x|y|z_roc_rising_en` (starts `0`) and `events/in_accel_x|y|z_roc_rising_value`
/// (m/s², starts `0.000000`). While `_en` reads `1`, a sample whose raw counts differ from the
/// previous sample's by more than `_value` on any axis (the chip's own comparison) pushes one
/// `struct iio_event_data` (16 bytes, host order: the id
/// `IIO_MOD_EVENT_CODE(IIO_ACCEL, 0, IIO_MOD_X_OR_Y_OR_Z, IIO_EV_TYPE_ROC, IIO_EV_DIR_RISING)` and
/// the sample's timestamp) to the event descriptor. **Stand-in:** the kernel hands that descriptor
/// out through `ioctl(IIO_GET_EVENT_FD_IOCTL)` on `/dev/iio:deviceN`, which a tree of plain files
/// cannot do; here it is a FIFO at `<devRoot>/iio:deviceN-event-fd`, opened by the simulator
/// `O_RDWR | O_NONBLOCK` like the buffer's, which a consumer opens `O_RDONLY | O_NONBLOCK` where
/// it would have made the ioctl (qiblad does so only when `/dev/iio:deviceN` is not a character
/// device). What it cannot model: the kernel queues events only while a holder has the descriptor
/// and gives it to one holder at a time (`EBUSY`); a full FIFO drops the record, as the kernel's
/// 16-entry queue drops events.
///
/// Not thread-safe: use from one thread at a time (``Simulator`` serialises access).
public final class SimulatedDevice {
    /// What to create.
    public struct Configuration: Sendable, Equatable {
        public var style: DriverStyle
        /// N in `iio:deviceN`.
        public var deviceIndex: Int
        /// The `name` attribute.
        public var name: String
        /// The mount matrix M the kernel would report (device-frame vector = M · sensor-frame vector);
        /// nil writes no mount matrix attribute (identity).
        public var mountMatrix: Matrix3?
        /// Which attribute holds the mount matrix.
        public var mountMatrixAttribute: String
        /// `in_<t>_offset` in raw counts, or nil for no offset attribute (offset 0).
        public var rawOffset: Int?
        /// Create scan elements, buffer, trigger and the FIFO (ignored when the style has no buffer).
        public var buffered: Bool
        /// How `_raw` files are rewritten.
        public var writeMode: AttributeWriteMode
        /// A gyroscope on this device beside the accelerometer (only for a style that
        /// ``DriverStyle/carriesGyroscope``; ignored otherwise).
        public var includesGyroscope: Bool
        /// The wake-on-motion event and its descriptor stand-in (an inv_mpu6050-style accelerometer
        /// only; ignored otherwise). See the type's documentation.
        public var motionEvents = false

        /// True when motion events are requested and the style has them.
        public var hasMotionEvents: Bool { motionEvents && style == .mpu6050 }

        public init(style: DriverStyle, deviceIndex: Int, name: String? = nil, mountMatrix: Matrix3? = nil,
                    mountMatrixAttribute: String? = nil, rawOffset: Int? = nil, buffered: Bool = false,
                    writeMode: AttributeWriteMode = .fixedWidthInPlace, includesGyroscope: Bool = false) {
            self.style = style
            self.deviceIndex = deviceIndex
            self.name = name ?? style.defaultName
            self.mountMatrix = mountMatrix
            self.includesGyroscope = includesGyroscope && style.carriesGyroscope
            // inv_mpu6050 shares one `in_mount_matrix` between its accelerometer and gyroscope.
            self.mountMatrixAttribute = mountMatrixAttribute
                ?? (self.includesGyroscope ? "in_mount_matrix" : style.defaultMountMatrixAttribute)
            self.rawOffset = rawOffset
            self.buffered = buffered
            self.writeMode = writeMode
        }

        /// True when buffered mode is requested and the style supports it.
        public var isBuffered: Bool { buffered && style.supportsBufferedMode }
    }

    public let configuration: Configuration
    /// `<sysfsRoot>/bus/iio/devices/iio:deviceN`.
    public let directory: String
    /// `<devRoot>/iio:deviceN` (exists only in buffered mode).
    public let characterDevicePath: String
    /// The layout when all four channels (x, y, z, timestamp) are enabled.
    public let fullScanLayout: ScanLayout
    /// Scans not written because the FIFO was full.
    public private(set) var droppedScans = 0
    /// Scans written to the FIFO.
    public private(set) var writtenScans = 0
    /// Motion event records written to the event descriptor's stand-in.
    public private(set) var writtenMotionEvents = 0
    /// `<devRoot>/iio:deviceN-event-fd`: the event descriptor's stand-in (with motion events).
    public let eventDescriptorPath: String
    private var eventFIFO: FileDescriptor?
    /// The raw counts of the previous accelerometer sample (the wake-on-motion comparison).
    private var previousRaw: [Int]?

    private let inverseMountMatrix: Matrix3
    private var fifo: FileDescriptor?
    /// Scans held back until `buffer/watermark` of them are waiting.
    private var pendingBytes: [UInt8] = []
    private var pendingScans = 0
    /// The size of the staged scans, bytes (the enabled channels' layout).
    private var pendingScanSize = 0
    /// The layout of the staged scans.
    private var pendingLayout: ScanLayout?
    /// The watermark was reached when the last scan was staged: ``flushScans()`` writes them.
    private var flushDue = false
    /// `in_timestamp` of the last scan staged (nanoseconds).
    private var lastScanNanoseconds: Int64?

    /// Axis suffixes in index order.
    public static let axes = ["x", "y", "z"]

    /// Creates the device's directory and attribute files (replacing existing ones).
    /// - Throws: ``SimulatorError/singularMountMatrix(_:)`` for a non-invertible matrix,
    ///   ``SimulatorError/invalidArgument(_:)`` for a negative index, file errors otherwise.
    public init(configuration: Configuration, sysfsRoot: String, devRoot: String) throws(SimulatorError) {
        guard configuration.deviceIndex >= 0 else { throw .invalidArgument("device index must be ≥ 0") }
        if let m = configuration.mountMatrix {
            guard let inverse = m.inverse, m.isFinite else { throw .singularMountMatrix(m.description) }
            inverseMountMatrix = inverse
        } else {
            inverseMountMatrix = .identity
        }
        self.configuration = configuration
        let devices = "\(sysfsRoot)/bus/iio/devices"
        directory = "\(devices)/iio:device\(configuration.deviceIndex)"
        characterDevicePath = "\(devRoot)/iio:device\(configuration.deviceIndex)"
        eventDescriptorPath = "\(devRoot)/iio:device\(configuration.deviceIndex)-event-fd"
        let t = configuration.style.kind.channelType
        let axisType = IIOScanElementType(parsing: configuration.style.axisScanTypeText)!
        let timestampType = IIOScanElementType(bigEndian: false, signedness: .signed, bits: 64, storageBits: 64)
        if configuration.includesGyroscope {
            // inv_mpu6050's `enum inv_mpu6050_scan`: accel 0–2, temp 3, gyro 4–6, timestamp 7.
            fullScanLayout = ScanLayout(channels: Self.axes.enumerated().map {
                ScanChannel(name: "in_\(t)_\($0.element)", index: $0.offset, type: axisType)
            } + [ScanChannel(name: "in_temp", index: 3, type: axisType)] + Self.axes.enumerated().map {
                ScanChannel(name: "in_anglvel_\($0.element)", index: 4 + $0.offset, type: axisType)
            } + [ScanChannel(name: "in_timestamp", index: 7, type: timestampType)])
        } else {
            fullScanLayout = ScanLayout(channels: Self.axes.enumerated().map {
                ScanChannel(name: "in_\(t)_\($0.element)", index: $0.offset, type: axisType)
            } + [ScanChannel(name: "in_timestamp", index: 3, type: timestampType)])
        }

        let style = configuration.style
        try AttributeFiles.makeDirectories(directory)
        try write("name", configuration.name)
        let zero = configuration.writeMode == .fixedWidthInPlace ? "     0" : "0"
        for axis in Self.axes { try write("in_\(t)_\(axis)_raw", zero) }
        if style.hasPerAxisScale {
            for axis in Self.axes { try write("in_\(t)_\(axis)_scale", style.scaleText) }
        } else {
            try write("in_\(t)_scale", style.scaleText)
        }
        if let offset = configuration.rawOffset { try write("in_\(t)_offset", String(offset)) }
        if configuration.includesGyroscope {
            for axis in Self.axes {
                try write("in_anglvel_\(axis)_raw", zero)
                try write("in_anglvel_\(axis)_calibbias", "0")
                try write("in_\(t)_\(axis)_calibbias", "0")
            }
            try write("in_anglvel_scale", DriverStyle.mpu6050GyroscopeScaleText)
            try write("in_anglvel_scale_available", DriverStyle.mpu6050GyroscopeScaleAvailableText)
            try write("in_\(t)_scale_available", DriverStyle.mpu6050AccelerometerScaleAvailableText)
            // MPU-6050 temperature: (raw + 12420) × 2.941176 m°C (inv_mpu6050 INV_MPU6050_TEMP_OFFSET
            // and _SCALE): about 30 °C.
            try write("in_temp_raw", String(Self.temperatureRaw))
            try write("in_temp_offset", "12420")
            try write("in_temp_scale", "2.941176")
        }
        if let m = configuration.mountMatrix {
            try write(configuration.mountMatrixAttribute, m.mountMatrixText)
        }
        if let f = style.samplingFrequencyText { try write("sampling_frequency", f) }
        if let a = style.samplingFrequencyAvailableText { try write("sampling_frequency_available", a) }
        if configuration.isBuffered {
            try AttributeFiles.makeDirectories("\(directory)/scan_elements")
            try AttributeFiles.makeDirectories("\(directory)/buffer")
            try AttributeFiles.makeDirectories("\(directory)/trigger")
            for channel in fullScanLayout.channels {
                try write("scan_elements/\(channel.name)_en", "0")
                try write("scan_elements/\(channel.name)_index", String(channel.index))
                try write("scan_elements/\(channel.name)_type", channel.type.description)
            }
            try write("buffer/enable", "0")
            try write("buffer/length", "128")
            try write("buffer/watermark", "1")
            try write("trigger/current_trigger", "")
            let trigger = "\(devices)/trigger\(configuration.deviceIndex)"
            try AttributeFiles.makeDirectories(trigger)
            try AttributeFiles.writeAttribute("\(trigger)/name", "\(configuration.name)-dev\(configuration.deviceIndex)\n")
            try AttributeFiles.makeDirectories(devRoot)
            try AttributeFiles.makeFIFO(characterDevicePath)
            do {
                fifo = try FileSystem.open(characterDevicePath, .readWrite, options: [.nonBlocking])
            } catch {
                throw .cannotCreateFIFO(path: characterDevicePath, errno: error.rawValue)
            }
        }
        if configuration.hasMotionEvents { try createMotionEvents(devRoot: devRoot) }
    }

    deinit {
        try? fifo?.close()
        try? eventFIFO?.close()
    }

    /// Closes the FIFOs (consumers then see end-of-file). Attribute files stay.
    public func close() {
        try? fifo?.close()
        fifo = nil
        try? eventFIFO?.close()
        eventFIFO = nil
    }

    /// Writes the motion event attributes and opens the descriptor's stand-in.
    private func createMotionEvents(devRoot: String) throws(SimulatorError) {
        try AttributeFiles.makeDirectories("\(directory)/events")
        try write("events/in_accel_x|y|z_roc_rising_en", "0")
        try write("events/in_accel_x|y|z_roc_rising_value", "0.000000")
        try AttributeFiles.makeDirectories(devRoot)
        try AttributeFiles.makeFIFO(eventDescriptorPath)
        do {
            eventFIFO = try FileSystem.open(eventDescriptorPath, .readWrite, options: [.nonBlocking])
        } catch {
            throw .cannotCreateFIFO(path: eventDescriptorPath, errno: error.rawValue)
        }
    }

    /// `IIO_MOD_EVENT_CODE(IIO_ACCEL, 0, IIO_MOD_X_OR_Y_OR_Z, IIO_EV_TYPE_ROC, IIO_EV_DIR_RISING)`
    /// (include/linux/iio/events.h: type << 56 | direction << 48 | modifier << 40 | channel type << 32).
    public static let wakeOnMotionEventID: UInt64 = 2 << 56 | 1 << 48 | 11 << 40 | 3 << 32

    /// With motion events enabled (`_en` reads 1): one record when `raw` moved beyond `_value`.
    private func pushMotionEventIfMoved(_ raw: [Int], timestampNanoseconds: Int64) {
        defer { previousRaw = raw }
        guard let eventFIFO, let previous = previousRaw else { return }
        let events = "\(directory)/events/in_accel_x|y|z_roc_rising_"
        guard AttributeFiles.readSmallFile(events + "en").map(Self.trimmed) == "1" else { return }
        let threshold = AttributeFiles.readSmallFile(events + "value").map(Self.trimmed).flatMap { Double($0) } ?? 0
        let scale = configuration.style.scale / configuration.style.kind.kernelUnitsPerSimulatorUnit
        guard zip(raw, previous).contains(where: { Double(abs($0 - $1)) * scale > threshold }) else { return }
        var record = [UInt8]()
        withUnsafeBytes(of: Self.wakeOnMotionEventID) { record += $0 }
        withUnsafeBytes(of: timestampNanoseconds) { record += $0 }
        if (try? record.withUnsafeBytes { try eventFIFO.write($0) }) == record.count { writtenMotionEvents += 1 }
    }

    /// The temperature channel's raw count on a device with ``Configuration/includesGyroscope``.
    static let temperatureRaw = -2220

    /// Whether the device carries a gyroscope beside its own kind (``Configuration/includesGyroscope``).
    public var carriesGyroscope: Bool { configuration.includesGyroscope }

    /// The raw counts for a value in the device frame, in microtesla (magnetometer), m/s²
    /// (accelerometer) or rad/s (gyroscope): sensor-frame value s = M⁻¹·v (so that the consumer,
    /// applying M, recovers v), converted to the kernel unit, then raw = round(s / scale) − offset,
    /// saturated to the chip range. (Inverse of the ABI's value = (raw + offset) × scale.)
    /// - Throws: ``SimulatorError/invalidArgument(_:)`` when a component is not finite.
    public func rawCounts(forDeviceFrameValue value: Vector3) throws(SimulatorError) -> [Int] {
        try rawCounts(forDeviceFrameValue: value, scale: configuration.style.scale,
                      unit: configuration.style.kind.kernelUnitsPerSimulatorUnit, offset: configuration.rawOffset ?? 0)
    }

    /// ``rawCounts(forDeviceFrameValue:)`` of the gyroscope on this device (rad/s; inv_mpu6050's
    /// ±2000 °/s scale, no offset).
    public func gyroscopeRawCounts(forDeviceFrameValue value: Vector3) throws(SimulatorError) -> [Int] {
        try rawCounts(forDeviceFrameValue: value, scale: Double(DriverStyle.mpu6050GyroscopeScaleText)!, unit: 1, offset: 0)
    }

    private func rawCounts(forDeviceFrameValue value: Vector3, scale: Double, unit: Double,
                           offset: Int) throws(SimulatorError) -> [Int] {
        guard value.isFinite else { throw .invalidArgument("sample \(value) is not finite") }
        let sensor = configuration.mountMatrix == nil ? value : inverseMountMatrix * value
        let style = configuration.style
        let low = Double(style.rawRange.lowerBound) - 1e6, high = Double(style.rawRange.upperBound) + 1e6
        return [sensor.x, sensor.y, sensor.z].map { component in
            let counts = min(max((component * unit / scale).rounded(), low), high)
            return min(max(Int(counts) - offset, style.rawRange.lowerBound), style.rawRange.upperBound)
        }
    }

    /// Writes one sample: the three `_raw` attributes and, in buffered mode with `buffer/enable` = 1,
    /// one scan of the enabled channels with `timestampNanoseconds` in `in_timestamp`.
    /// - Parameter value: device-frame vector, microtesla (magnetometer) or m/s² (accelerometer).
    /// - Returns: the raw counts written (x, y, z).
    /// - Throws: ``SimulatorError/invalidArgument(_:)`` for a non-finite value (nothing is written).
    @discardableResult
    public func writeSample(_ value: Vector3, timestampNanoseconds: Int64) throws(SimulatorError) -> [Int] {
        let raw = try stageSample(value, timestampNanoseconds: timestampNanoseconds)
        try flushScans()
        return raw
    }

    /// ``writeSample(_:timestampNanoseconds:)`` without writing the FIFO: the scan waits for
    /// ``flushScans()``. ``Simulator`` stages every device's sample of an instant, then flushes them
    /// back to back, as sensors sampled together (one trigger) fill their buffers at one instant.
    /// - Parameter gyroscope: the gyroscope's device-frame value, rad/s, on a device that
    ///   ``carriesGyroscope`` (ignored otherwise); its raw counts are in ``lastGyroscopeRaw``.
    @discardableResult
    func stageSample(_ value: Vector3, gyroscope: Vector3? = nil, timestampNanoseconds: Int64) throws(SimulatorError) -> [Int] {
        let raw = try rawCounts(forDeviceFrameValue: value)
        var gyroscopeRaw: [Int]?
        if configuration.includesGyroscope, let gyroscope {
            gyroscopeRaw = try gyroscopeRawCounts(forDeviceFrameValue: gyroscope)
        }
        let t = configuration.style.kind.channelType
        for (axis, count) in zip(Self.axes, raw) {
            try write("in_\(t)_\(axis)_raw", rawText(count), mode: configuration.writeMode)
        }
        if let gyroscopeRaw {
            for (axis, count) in zip(Self.axes, gyroscopeRaw) {
                try write("in_anglvel_\(axis)_raw", rawText(count), mode: configuration.writeMode)
            }
        }
        lastGyroscopeRaw = gyroscopeRaw
        if configuration.hasMotionEvents { pushMotionEventIfMoved(raw, timestampNanoseconds: timestampNanoseconds) }
        if fifo != nil, isBufferEnabled {
            if let last = lastScanNanoseconds, let hertz = samplingFrequencyHertz,
               Double(timestampNanoseconds - last) + 1e6 < 1e9 / hertz {
                return raw  // the device samples slower than the simulator: no scan this time
            }
            lastScanNanoseconds = timestampNanoseconds
            let layout = ScanLayout(channels: fullScanLayout.channels.filter { isEnabled($0.name) })
            if layout.scanSizeBytes > 0 {
                var values: [String: Int64] = ["in_timestamp": timestampNanoseconds, "in_temp": Int64(Self.temperatureRaw)]
                for (axis, count) in zip(Self.axes, raw) { values["in_\(t)_\(axis)"] = Int64(count) }
                if let gyroscopeRaw {
                    for (axis, count) in zip(Self.axes, gyroscopeRaw) { values["in_anglvel_\(axis)"] = Int64(count) }
                }
                // A new set of enabled channels: the kernel reallocates (empties) its buffer.
                if pendingScans > 0, pendingLayout != layout { pendingBytes.removeAll(keepingCapacity: true); pendingScans = 0 }
                pendingLayout = layout
                pendingBytes += layout.pack(values)
                pendingScans += 1
                pendingScanSize = layout.scanSizeBytes
                flushDue = pendingScans >= watermark
            }
        } else if pendingScans > 0 {
            pendingBytes.removeAll(keepingCapacity: true)  // disabling the buffer empties it
            pendingScans = 0
        }
        return raw
    }

    /// The gyroscope's raw counts of the last staged sample (a device that ``carriesGyroscope``).
    public private(set) var lastGyroscopeRaw: [Int]?

    /// A raw count as the attribute holds it (right-aligned in 6 characters when written in place).
    private func rawText(_ count: Int) -> String {
        let text = String(count)
        guard configuration.writeMode == .fixedWidthInPlace else { return text }
        return String(repeating: " ", count: max(0, 6 - text.count)) + text
    }

    /// Writes the staged scans to the FIFO when `buffer/watermark` of them are waiting (at most
    /// 4 KiB, whole scans, per `write`: atomic on a pipe); a full pipe drops them (``droppedScans``).
    /// Scans whose channels are no longer the enabled ones (the consumer changed them between the
    /// staging and the flush) are dropped, as the kernel empties its buffer on such a change.
    func flushScans() throws(SimulatorError) {
        guard let fifo, flushDue, pendingScanSize > 0 else { return }
        flushDue = false
        guard isBufferEnabled, pendingLayout == ScanLayout(channels: fullScanLayout.channels.filter({ isEnabled($0.name) })) else {
            pendingBytes.removeAll(keepingCapacity: true)
            pendingScans = 0
            return
        }
        let scansPerWrite = max(1, 4096 / pendingScanSize)
        var start = 0
        while start < pendingBytes.count {
            let end = min(pendingBytes.count, start + scansPerWrite * pendingScanSize)
            let chunk = pendingBytes[start..<end]
            let scans = chunk.count / pendingScanSize
            do {
                let n = try chunk.withUnsafeBytes { try fifo.write($0) }
                guard n == chunk.count else { throw Errno.ioError }
                writtenScans += scans
            } catch let error as Errno where error == .resourceTemporarilyUnavailable {
                droppedScans += scans
            } catch {
                throw .cannotWrite(path: characterDevicePath, errno: (error as? Errno)?.rawValue ?? Errno.ioError.rawValue)
            }
            start = end
        }
        pendingBytes.removeAll(keepingCapacity: true)
        pendingScans = 0
    }

    /// `buffer/watermark` (at least 1): how many scans make the buffer readable.
    var watermark: Int {
        AttributeFiles.readSmallFile("\(directory)/buffer/watermark").map(Self.trimmed).flatMap { Int($0) }.map { max(1, $0) } ?? 1
    }

    /// `sampling_frequency` (hertz) when the style has one and it reads a positive number.
    var samplingFrequencyHertz: Double? {
        AttributeFiles.readSmallFile("\(directory)/sampling_frequency").map(Self.trimmed).flatMap { Double($0) }.flatMap { $0 > 0 ? $0 : nil }
    }

    /// True when `buffer/enable` currently reads `1`.
    public var isBufferEnabled: Bool {
        AttributeFiles.readSmallFile("\(directory)/buffer/enable").map(Self.trimmed) == "1"
    }

    /// Sets every `_en` and `buffer/enable` to 1 — what a consumer does before reading scans
    /// (for tests that read the FIFO themselves).
    public func enableAllScanElements() throws(SimulatorError) {
        guard configuration.isBuffered else { return }
        for channel in fullScanLayout.channels { try write("scan_elements/\(channel.name)_en", "1") }
        try write("buffer/enable", "1")
    }

    private func isEnabled(_ channel: String) -> Bool {
        AttributeFiles.readSmallFile("\(directory)/scan_elements/\(channel)_en").map(Self.trimmed) == "1"
    }

    private static func trimmed(_ s: String) -> String {
        String(s.filter { !$0.isWhitespace })
    }

    /// Writes `<directory>/<relative>` with the kernel's trailing newline.
    private func write(_ relative: String, _ text: String, mode: AttributeWriteMode = .rename) throws(SimulatorError) {
        try AttributeFiles.writeAttribute("\(directory)/\(relative)", text + "\n", mode: mode)
    }
}
