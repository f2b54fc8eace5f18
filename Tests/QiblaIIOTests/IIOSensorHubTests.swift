// SPDX-License-Identifier: Apache-2.0
// SensorHub end to end on fixture sysfs trees: polling, buffered (FIFO stand-in for /dev/iio:deviceN),
// fallback, garbage, slow reads, hot-unplug. umockdev is not used: a plain FIFO at <devRoot>/iio:deviceN
// stands in for the character device (it gives the same non-blocking read/poll behaviour, including
// reads that end in the middle of a scan).
import Foundation
import Logging
import QiblaCore
import QiblaEventLoop
import Testing
import TestSupport
@testable import QiblaIIO

/// Runs a hub on a private event loop on the test's thread and records its events.
final class HubHarness {
    let loop: EventLoop
    private(set) var hub: SensorHub!
    var events: [SensorEvent] = []

    init(_ configuration: SensorConfiguration) throws {
        loop = try EventLoop()
        var logger = Logger(label: "qiblad.iio.test")
        logger.logLevel = ProcessInfo.processInfo.environment["IIO_TEST_LOG"] == nil ? .critical : .debug
        hub = SensorHub(configuration: configuration, loop: loop, logger: logger) { [unowned self] event in
            self.events.append(event)
        }
    }

    /// Runs the loop until `condition` holds or `timeout` seconds pass.
    @discardableResult
    func pump(timeout: Double = 5, until condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while !condition(), Date() < end { try? loop.runOnce(maximumWait: .milliseconds(20)) }
        return condition()
    }

    func samples(_ kind: SensorKind) -> [SensorSample] {
        events.flatMap { event -> [SensorSample] in
            if case .samples(let batch) = event { return batch.filter { $0.kind == kind } }
            return []
        }
    }

    var available: [(String, String?)] {
        events.compactMap { if case .available(let m, let a, _) = $0 { (m, a) } else { nil } }
    }
    /// The gyroscope of each `.available`.
    var availableGyroscopes: [String?] {
        var result: [String?] = []
        for event in events { if case .available(_, _, let gyroscope) = event { result.append(gyroscope) } }
        return result
    }
    /// The `.resting` events' values.
    var restingChanges: [Bool] {
        events.compactMap { if case .resting(let r) = $0 { r } else { nil } }
    }
    var unavailable: [String] {
        events.compactMap { if case .unavailable(let reason) = $0 { reason } else { nil } }
    }
    var dropped: [Int] {
        events.compactMap { if case .droppedValue(let count) = $0 { count } else { nil } }
    }

    /// Stops the hub, waits for its threads to exit, and checks the loop then sleeps undisturbed.
    func stopAndExpectQuiet(sourceLocation: SourceLocation = #_sourceLocation) {
        hub.stop()
        #expect(!hub.isRunning, sourceLocation: sourceLocation)
        let threads = hub.stoppedThreads
        #expect(waitUntil(timeout: 5) { threads.allSatisfy(\.hasExited) }, sourceLocation: sourceLocation)
        try? loop.runOnce(maximumWait: .zero)  // drain anything posted before the threads exited
        let before = events.count
        let clock = ContinuousClock()
        let start = clock.now
        try? loop.runOnce(maximumWait: .milliseconds(400))
        // Nothing (no timer, no post) woke the loop early, and nothing was reported.
        #expect(start.duration(to: clock.now) >= .milliseconds(350), sourceLocation: sourceLocation)
        #expect(events.count == before, sourceLocation: sourceLocation)
    }
}

extension IIOSysfsFixture {
    /// Rewrites an attribute in place (same inode), as the kernel's values change under an open file.
    func overwrite(_ text: String, device number: Int, _ attribute: String) throws {
        try text.write(toFile: devicePath(number) + "/" + attribute, atomically: false, encoding: .utf8)
    }

    func trimmed(device number: Int, _ attribute: String) -> String? {
        read(device: number, attribute)?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A FIFO at `<devRoot>/iio:deviceN`, held open for writing so readers never see end of file.
    func makeBufferFIFO(_ number: Int) throws -> Int32 {
        let path = devRoot + "/iio:device\(number)"
        guard mkfifo(path, 0o600) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        let fd = open(path, O_RDWR | O_NONBLOCK)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return fd
    }

    func configuration(_ mode: SensorReadingMode = .polling, rate: Double = 20) -> SensorConfiguration {
        var configuration = SensorConfiguration(sysfsRoot: sysfsRoot, devRoot: devRoot, mode: mode, sampleRateHertz: rate)
        configuration.udevDataDirectory = udevDataDirectory
        configuration.initialRetryDelay = .milliseconds(100)
        return configuration
    }
}

/// One LIS3MDL-style scan: x, y, z le:s16, padding, le:s64 timestamp (16 bytes).
func lis3mdlScan(_ x: Int16, _ y: Int16, _ z: Int16, timestamp: Int64) -> [UInt8] {
    var bytes: [UInt8] = []
    for value in [x, y, z] { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
    bytes += [0xEE, 0xEE]  // padding: must be ignored
    withUnsafeBytes(of: timestamp.littleEndian) { bytes += $0 }
    return bytes
}

@Suite struct IIOSensorHubPollingTests {
    @Test func pollsLIS3MDLAndRestoresSamplingFrequency() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addLIS3MDL(0)
        let harness = try HubHarness(fixture.configuration())
        harness.hub.start()
        #expect(harness.hub.isRunning)
        #expect(harness.available.first?.0 == "lis3mdl" && harness.available.first?.1 == nil)
        #expect(harness.pump { harness.samples(.magnetometer).count >= 3 })
        #expect(harness.hub.activeModes[.magnetometer] == .polling)
        // Polling asks the chip for 4× the read rate (PollingDriver.chipRateOversampling): the
        // nearest available rate ≥ 80 Hz is 80.
        #expect(fixture.trimmed(device: 0, "sampling_frequency") == "80")
        let samples = harness.samples(.magnetometer)
        // (1000, −2000, 3000) × 0.000146 G × 100 µT/G = (14.6, −29.2, 43.8), then M = [0 1 0; 1 0 0; 0 0 −1].
        for sample in samples { expectClose(sample.vector, Vector3(-29.2, 14.6, -43.8)) }
        let now = Int64(ProcessInfo.processInfo.systemUptime * 1e9)
        #expect(zip(samples, samples.dropFirst()).allSatisfy { $0.timestampNanoseconds < $1.timestampNanoseconds })
        #expect(abs((samples.last?.timestampNanoseconds ?? 0) - now) < 10_000_000_000)

        // Values change under the open files: the next samples follow.
        try fixture.overwrite("0\n", device: 0, "in_magn_x_raw")
        #expect(harness.pump { harness.samples(.magnetometer).last.map { abs($0.vector.y) < 1e-9 } == true })

        harness.stopAndExpectQuiet()
        #expect(fixture.trimmed(device: 0, "sampling_frequency") == "10")
    }

    @Test func samplingFrequencyChoice() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addLIS3MDL(0)
        try fixture.addAF8133J(1)
        let devices = listIIODevices(sysfsRoot: fixture.sysfsRoot)
        for (requested, expected) in [(30.0, "40"), (100, "80"), (0.1, "0.625"), (5, "5"), (20.5, "40")] {
            var restorer = AttributeRestorer()
            let note = configureSamplingFrequency(device: devices[0], kind: .magnetometer, requestedHertz: requested, restorer: &restorer)
            #expect(fixture.trimmed(device: 0, "sampling_frequency") == expected, "\(requested) Hz: \(note)")
            restorer.restoreAll(logger: Logger(label: "test"))
            #expect(fixture.trimmed(device: 0, "sampling_frequency") == "10")
        }
        var restorer = AttributeRestorer()
        let note = configureSamplingFrequency(device: devices[1], kind: .magnetometer, requestedHertz: 20, restorer: &restorer)
        #expect(note.contains("no sampling_frequency"))
    }

    @Test func librem5BothSensorsImproperAccelAndOverride() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addLibrem5()
        var configuration = fixture.configuration()
        configuration.magnetometerMountMatrixOverride = Matrix3(0, -1, 0, 1, 0, 0, 0, 0, 1)
        let harness = try HubHarness(configuration)
        harness.hub.start()
        #expect(harness.available.first?.0 == "lsm9ds1_magn" && harness.available.first?.1 == "lsm9ds1_accel")
        #expect(harness.pump { harness.samples(.magnetometer).count >= 2 && harness.samples(.accelerometer).count >= 2 })
        // Magnetometer: (500, 600, −700) × 0.0146 µT = (7.3, 8.76, −10.22); override rotates +90° about z.
        expectClose(try #require(harness.samples(.magnetometer).last).vector, Vector3(-8.76, 7.3, -10.22))
        // Accelerometer: improper matrix mirrors x.
        expectClose(try #require(harness.samples(.accelerometer).last).vector, Vector3(-0.0598, -0.1196, 9.797632))
        harness.stopAndExpectQuiet()
    }

    @Test func aPeriodsMagnetometerAndAccelerometerSamplesAreHandedOverTogether() throws {
        // A hand-off due every period (a slow sample-rate: 700 ms > the 100 ms hand-off interval).
        // Handing the magnetometer over alone and the accelerometer a moment later would change
        // the heading twice within the rate limit: a retry timer, two loop wakeups per sample.
        let fixture = try IIOSysfsFixture()
        try fixture.addLibrem5()
        var configuration = fixture.configuration()
        configuration.handOffInterval = .zero
        let harness = try HubHarness(configuration)
        harness.hub.start()
        #expect(harness.pump { harness.samples(.magnetometer).count >= 6 })
        let batches = harness.events.compactMap { event -> SensorSampleBatch? in
            if case .samples(let batch) = event { return batch }
            return nil
        }
        #expect(batches.count >= 6)
        for (index, batch) in batches.enumerated() {
            let kinds = batch.map(\.kind)
            // The hub adds the magnetometer and then the accelerometer; the reading thread starts
            // with the first, so on a loaded machine its very first period may hold only that one.
            // Within a period the accelerometer is read first (`PollingSampler.readingRank`): the
            // field is tilt-compensated with the acceleration of its own period.
            if index == 0, kinds == [.magnetometer] { continue }
            #expect(kinds == [.accelerometer, .magnetometer], "batch \(index) held \(kinds), not one period's pair in order")
        }
        harness.stopAndExpectQuiet()
    }

    @Test func garbageValuesAreDroppedAndCounted() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addAF8133J(0)
        try fixture.overwrite("0,5\n", device: 0, "in_magn_y_raw")
        try fixture.overwrite("abc\n", device: 0, "in_magn_z_raw")
        let harness = try HubHarness(fixture.configuration(rate: 50))
        harness.hub.start()
        #expect(harness.pump { (harness.dropped.last ?? 0) >= 6 })
        #expect(harness.samples(.magnetometer).isEmpty)
        #expect(harness.dropped == harness.dropped.sorted())  // a running total
        /// Writes y and z, then expects more values dropped and still no sample.
        func expectDropped(y: String, z: String) throws {
            try fixture.overwrite(y + "\n", device: 0, "in_magn_y_raw")
            try fixture.overwrite(z + "\n", device: 0, "in_magn_z_raw")
            let before = harness.dropped.last ?? 0
            #expect(harness.pump { (harness.dropped.last ?? 0) > before + 2 }, "y \(y), z \(z)")
            #expect(harness.samples(.magnetometer).isEmpty, "y \(y), z \(z)")
        }
        try expectDropped(y: "nan", z: "-300")
        // Issue 26: numbers no IIO channel can hold, and fractions, are garbage too.
        try expectDropped(y: "99999999999999999999", z: "-300")
        try expectDropped(y: "2147483648", z: "1.5")
        try fixture.overwrite("-300\n", device: 0, "in_magn_z_raw")
        try fixture.overwrite("200\n", device: 0, "in_magn_y_raw")
        #expect(harness.pump { !harness.samples(.magnetometer).isEmpty })
        for sample in harness.samples(.magnetometer) {
            #expect(sample.vector.isFinite)
            expectClose(sample.vector, Vector3(3.33, 6.66, -9.99))
        }
        harness.stopAndExpectQuiet()
    }

    @Test func slowDeviceDoesNotBlockTheLoop() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addLIS3MDL(0)
        var configuration = fixture.configuration()
        // An LIS3MDL read can take about 2 s; here every x read takes 1.5 s.
        configuration.beforeAttributeRead = { path in
            if path.hasSuffix("in_magn_x_raw") { usleep(1_500_000) }
        }
        let harness = try HubHarness(configuration)
        var ticks = 0
        harness.loop.schedule(after: .milliseconds(50), repeating: .milliseconds(50)) { ticks += 1 }
        harness.hub.start()
        #expect(harness.pump(timeout: 10) { !harness.samples(.magnetometer).isEmpty })
        // The loop kept running its timer while the sensor thread was stuck in the read.
        #expect(ticks >= 10)
        let ticksBeforeStop = ticks
        harness.hub.stop()  // returns without waiting for the read in progress
        #expect(!harness.hub.isRunning)
        harness.pump(timeout: 0.3) { false }
        #expect(ticks > ticksBeforeStop)
        let threads = harness.hub.stoppedThreads
        #expect(!threads.isEmpty)
        #expect(waitUntil(timeout: 5) { threads.allSatisfy(\.hasExited) })
    }

    @Test func hotUnplugAndReplug() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addLIS3MDL(0)
        let harness = try HubHarness(fixture.configuration())
        harness.hub.start()
        #expect(harness.pump { !harness.samples(.magnetometer).isEmpty })
        let away = fixture.devicesDirectory + "/unplugged"
        try FileManager.default.moveItem(atPath: fixture.devicePath(0), toPath: away)
        #expect(harness.pump(timeout: 5) { !harness.unavailable.isEmpty })
        #expect(harness.unavailable.first?.contains("disappeared") == true)
        #expect(harness.hub.isRunning)
        let countWhileAway = harness.samples(.magnetometer).count
        harness.pump(timeout: 0.3) { false }
        #expect(harness.samples(.magnetometer).count == countWhileAway)
        try FileManager.default.moveItem(atPath: away, toPath: fixture.devicePath(0))
        #expect(harness.pump(timeout: 10) { harness.available.count == 2 })
        #expect(harness.pump { harness.samples(.magnetometer).count > countWhileAway })
        harness.stopAndExpectQuiet()
    }

    @Test func readErrorIsUnavailableThenRecovers() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addAF8133J(0)
        // A directory opens fine but every read fails (EISDIR), like a device answering ENODEV.
        let raw = fixture.devicePath(0) + "/in_magn_y_raw"
        try FileManager.default.removeItem(atPath: raw)
        try FileManager.default.createDirectory(atPath: raw, withIntermediateDirectories: false)
        let harness = try HubHarness(fixture.configuration())
        harness.hub.start()
        #expect(harness.available.count == 1)
        #expect(harness.pump { !harness.unavailable.isEmpty })
        #expect(harness.unavailable.first?.contains("read failed") == true)
        #expect(harness.samples(.magnetometer).isEmpty)
        try FileManager.default.removeItem(atPath: raw)
        try "200\n".write(toFile: raw, atomically: false, encoding: .utf8)
        #expect(harness.pump(timeout: 10) { !harness.samples(.magnetometer).isEmpty })
        #expect(harness.available.count == 2)
        expectClose(try #require(harness.samples(.magnetometer).last).vector, Vector3(3.33, 6.66, -9.99))
        harness.stopAndExpectQuiet()
    }

    @Test func accelerometerUnplugKeepsMagnetometer() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addLibrem5()
        let harness = try HubHarness(fixture.configuration())
        harness.hub.start()
        #expect(harness.pump { !harness.samples(.accelerometer).isEmpty })
        try FileManager.default.moveItem(atPath: fixture.devicePath(1), toPath: fixture.devicesDirectory + "/gone")
        #expect(harness.pump { harness.available.count == 2 })
        #expect(harness.available.last?.0 == "lsm9ds1_magn" && harness.available.last?.1 == nil)
        #expect(harness.unavailable.isEmpty)
        #expect(harness.hub.activeModes[.accelerometer] == nil)
        // The field keeps changing (the phone moves), so that a still phone's rest (1 s without a
        // gyroscope, issue 37: only samples that drift are handed over) does not hide the reads.
        let magnetometerCount = harness.samples(.magnetometer).count
        let xRaw = fixture.devicePath(0) + "/in_magn_x_raw"
        var step = 0
        #expect(harness.pump {
            step += 1
            try? "\(500 + 400 * (step % 2))\n".write(toFile: xRaw, atomically: false, encoding: .utf8)
            return harness.samples(.magnetometer).count > magnetometerCount + 2
        })
        harness.stopAndExpectQuiet()
    }

    @Test func noMagnetometerThenOneAppears() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addMPU6050(0)
        let harness = try HubHarness(fixture.configuration())
        harness.hub.start()
        #expect(harness.unavailable.count == 1)
        #expect(harness.unavailable.first?.contains("Qualcomm") == true)
        #expect(harness.available.isEmpty)
        try fixture.addAF8133J(1)
        #expect(harness.pump(timeout: 10) { !harness.available.isEmpty })
        #expect(harness.available.first?.0 == "af8133j" && harness.available.first?.1 == "mpu6050")
        #expect(harness.unavailable.count == 1)  // repeated failures are not re-announced
        #expect(harness.pump { !harness.samples(.accelerometer).isEmpty && !harness.samples(.magnetometer).isEmpty })
        harness.stopAndExpectQuiet()
    }
}

@Suite struct IIOSensorHubBufferedTests {
    @Test func theWatermarkIsOneHandOffIntervalOfScans() {
        var configuration = SensorConfiguration(sampleRateHertz: 20)
        #expect(BufferedDriver.watermark(configuration) == 2, "20 Hz, 100 ms")
        #expect(BufferedDriver.followerWatermark(configuration) == 4, "a backstop: two intervals")
        configuration.sampleRateHertz = 100
        #expect(BufferedDriver.watermark(configuration) == 10)
        #expect(BufferedDriver.followerWatermark(configuration) == 20)
        configuration.handOffInterval = .milliseconds(10)
        #expect(BufferedDriver.watermark(configuration) == 1)
        configuration.sampleRateHertz = 1000
        configuration.handOffInterval = .seconds(1)
        #expect(BufferedDriver.watermark(configuration) == 64, "at most half the 128-scan buffer")
        #expect(BufferedDriver.followerWatermark(configuration) == 96, "at most three quarters")
        configuration.sampleRateHertz = 1
        #expect(BufferedDriver.watermark(configuration) == 1)
    }

    @Test func buffersScansSplitAcrossOddReads() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addLIS3MDL(0)
        let writer = try fixture.makeBufferFIFO(0)
        defer { close(writer) }
        let harness = try HubHarness(fixture.configuration(.buffered))
        harness.hub.start()
        #expect(harness.available.first?.0 == "lis3mdl")
        #expect(harness.hub.activeModes[.magnetometer] == .buffered)
        #expect(fixture.trimmed(device: 0, "buffer/enable") == "1")
        #expect(fixture.trimmed(device: 0, "buffer/length") == "128")
        #expect(fixture.trimmed(device: 0, "trigger/current_trigger") == "lis3mdl-dev0")
        #expect(fixture.trimmed(device: 0, "current_timestamp_clock") == "monotonic")
        #expect(fixture.trimmed(device: 0, "sampling_frequency") == "20")
        for element in ["in_magn_x", "in_magn_y", "in_magn_z", "in_timestamp"] {
            #expect(fixture.trimmed(device: 0, "scan_elements/\(element)_en") == "1")
        }

        let raws: [(Int16, Int16, Int16)] = [(1000, -2000, 3000), (-1, 0, 1), (32767, -32768, 0), (10, 20, 30), (7, 7, 7)]
        var stream: [UInt8] = []
        for (index, raw) in raws.enumerated() {
            stream += lis3mdlScan(raw.0, raw.1, raw.2, timestamp: Int64(index + 1) * 50_000_000)
        }
        var position = 0
        for piece in [3, 7, 13, 1, 29, 27] where position < stream.count {
            let end = min(stream.count, position + piece)
            let written = stream[position..<end].withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
            #expect(written == end - position)
            position = end
            try harness.loop.runOnce(maximumWait: .milliseconds(50))
        }
        #expect(position == stream.count)
        #expect(harness.pump { harness.samples(.magnetometer).count >= raws.count })
        let samples = harness.samples(.magnetometer)
        #expect(samples.count == raws.count)
        let mount = Matrix3(0, 1, 0, 1, 0, 0, 0, 0, -1)
        for (index, (sample, raw)) in zip(samples, raws).enumerated() {
            let expected = mount * (Vector3(Double(raw.0), Double(raw.1), Double(raw.2)) * 0.0146)
            expectClose(sample.vector, expected, tolerance: 1e-9)
            #expect(sample.timestampNanoseconds == Int64(index + 1) * 50_000_000)
        }

        harness.stopAndExpectQuiet()
        #expect(fixture.trimmed(device: 0, "buffer/enable") == "0")
        #expect(fixture.trimmed(device: 0, "buffer/length") == "2")
        #expect(fixture.trimmed(device: 0, "trigger/current_trigger") == "")
        #expect(fixture.trimmed(device: 0, "current_timestamp_clock") == "realtime")
        #expect(fixture.trimmed(device: 0, "sampling_frequency") == "10")
        for element in ["in_magn_x", "in_magn_y", "in_magn_z", "in_timestamp"] {
            #expect(fixture.trimmed(device: 0, "scan_elements/\(element)_en") == "0")
        }
    }

    @Test func deadBufferFallsBackToPolling() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addLIS3MDL(0)
        let writer = try fixture.makeBufferFIFO(0)
        defer { close(writer) }
        var configuration = fixture.configuration(.buffered)
        configuration.bufferWatchdog = .milliseconds(300)
        let harness = try HubHarness(configuration)
        harness.hub.start()
        #expect(harness.hub.activeModes[.magnetometer] == .buffered)
        #expect(harness.pump { !harness.samples(.magnetometer).isEmpty })
        #expect(harness.hub.activeModes[.magnetometer] == .polling)
        #expect(fixture.trimmed(device: 0, "buffer/enable") == "0")
        #expect(fixture.trimmed(device: 0, "scan_elements/in_magn_x_en") == "0")
        expectClose(try #require(harness.samples(.magnetometer).first).vector, Vector3(-29.2, 14.6, -43.8))
        harness.stopAndExpectQuiet()
        #expect(fixture.trimmed(device: 0, "sampling_frequency") == "10")
    }

    @Test func deviceWithoutBufferUsesPolling() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addAF8133J(0)
        let harness = try HubHarness(fixture.configuration(.buffered))
        harness.hub.start()
        #expect(harness.hub.activeModes[.magnetometer] == .polling)
        #expect(harness.pump { !harness.samples(.magnetometer).isEmpty })
        harness.stopAndExpectQuiet()
    }

    @Test func bufferEndOfFileIsUnavailable() throws {
        let fixture = try IIOSysfsFixture()
        try fixture.addLIS3MDL(0)
        let writer = try fixture.makeBufferFIFO(0)
        let harness = try HubHarness(fixture.configuration(.buffered))
        harness.hub.start()
        let scan = lis3mdlScan(1, 2, 3, timestamp: 5)
        _ = scan.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
        close(writer)  // the writer going away: the reader sees hang-up and end of file
        #expect(harness.pump { !harness.unavailable.isEmpty })
        #expect(harness.samples(.magnetometer).count == 1)
        #expect(harness.unavailable.first?.contains("end of file") == true)
        #expect(fixture.trimmed(device: 0, "buffer/enable") == "0")
        harness.hub.stop()
    }
}
