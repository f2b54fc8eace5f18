// SPDX-License-Identifier: Apache-2.0
// Buffered mode: scan packing and the FIFO stand-in for /dev/iio:deviceN.
import Foundation
import QiblaCore
import QiblaIIOFormat
import QiblaSimulator
import Testing

@Suite("Simulator buffered scans")
struct SimulatorBufferTests {
    @Test("scan types parse and encode with sign, shift and endianness")
    func scanTypes() throws {
        let le = try #require(IIOScanElementType(parsing: "le:s16/16>>0\n"))
        #expect(le.description == "le:s16/16>>0" && le.storageBytes == 2 && le.signedness == .signed && !le.bigEndian)
        #expect(le.encodeWord(-2) == [0xFE, 0xFF])
        #expect(le.encodeWord(40000) == [0xFF, 0x7F])  // saturates
        let be = try #require(IIOScanElementType(parsing: "be:s16/16>>0"))
        #expect(be.encodeWord(0x1234) == [0x12, 0x34])
        let shifted = try #require(IIOScanElementType(parsing: "le:s12/16>>4"))
        #expect(shifted.encodeWord(-1) == [0xF0, 0xFF])
        #expect(shifted.encodeWord(0x7FF) == [0xF0, 0x7F])
        let ts = try #require(IIOScanElementType(parsing: "le:s64/64>>0"))
        #expect(ts.encodeWord(0x0102030405060708) == [8, 7, 6, 5, 4, 3, 2, 1])
        for bad in ["", "le:s16", "xe:s16/16>>0", "le:q16/16>>0", "le:s17/16>>0", "le:s16/24>>0", "le:s12/16>>8"] {
            #expect(IIOScanElementType(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test("layout: index order, natural alignment, padding to the largest element")
    func layouts() throws {
        let s16 = try #require(IIOScanElementType(parsing: "le:s16/16>>0"))
        let s64 = try #require(IIOScanElementType(parsing: "le:s64/64>>0"))
        let u8 = try #require(IIOScanElementType(parsing: "le:u8/8>>0"))
        let s32 = try #require(IIOScanElementType(parsing: "be:s32/32>>0"))
        let xyzt = ScanLayout(channels: [ScanChannel(name: "t", index: 3, type: s64), ScanChannel(name: "x", index: 0, type: s16),
                                         ScanChannel(name: "y", index: 1, type: s16), ScanChannel(name: "z", index: 2, type: s16)])
        #expect(xyzt.channels.map(\.name) == ["x", "y", "z", "t"])
        #expect(xyzt.offsets == [0, 2, 4, 8] && xyzt.scanSizeBytes == 16)
        let mixed = ScanLayout(channels: [ScanChannel(name: "a", index: 0, type: u8), ScanChannel(name: "b", index: 1, type: s32),
                                          ScanChannel(name: "c", index: 2, type: s16)])
        #expect(mixed.offsets == [0, 4, 8] && mixed.scanSizeBytes == 12)
        #expect(mixed.pack(["a": 255, "b": -2, "c": 3]) == [255, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFE, 3, 0, 0, 0])
        let xz = ScanLayout(channels: [ScanChannel(name: "x", index: 0, type: s16), ScanChannel(name: "z", index: 2, type: s16)])
        #expect(xz.offsets == [0, 2] && xz.scanSizeBytes == 4)
    }

    @Test("scans in the FIFO decode by hand to the raw values", arguments: [PhoneModel.pinephone, .librem5])
    func fifoScans(phone: PhoneModel) throws {
        let scratch = ScratchDirectory()
        let scene = Scene(earthFieldNEDMicrotesla: Vector3(27.5, 1.2, 24.0),
                          trajectory: .constant(DeviceOrientation(headingDegrees: 200, pitchDegrees: 15, rollDegrees: 5)))
        let origin: Int64 = 1_700_000_000_000_000_000
        let simulator = try Simulator(phone: phone, scene: scene, sysfsRoot: scratch.sysfs, devRoot: scratch.dev,
                                      buffered: true, timestampOriginNanoseconds: origin)
        let configuration = phone.accelerometer(buffered: true)
        let device = "\(scratch.sysfs)/bus/iio/devices/iio:device\(configuration.deviceIndex)"
        let fifoPath = "\(scratch.dev)/iio:device\(configuration.deviceIndex)"
        let fd = open(fifoPath, O_RDONLY | O_NONBLOCK)
        #expect(fd >= 0)
        defer { Glibc.close(fd) }
        var buffer = [UInt8](repeating: 0, count: 256)

        // Buffer disabled (the kernel default): nothing is written.
        try simulator.step(to: 0)
        #expect(read(fd, &buffer, buffer.count) == -1 && errno == EAGAIN)

        // What a consumer does: enable x, y, z and the timestamp, then the buffer.
        for name in ["in_accel_x_en", "in_accel_y_en", "in_accel_z_en", "in_timestamp_en"] {
            try "1\n".write(toFile: "\(device)/scan_elements/\(name)", atomically: false, encoding: .utf8)
        }
        try "1\n".write(toFile: "\(device)/buffer/enable", atomically: false, encoding: .utf8)
        let sample = try simulator.step(to: 1.25)
        let raw = try #require(sample.accelerometerRaw)
        #expect(read(fd, &buffer, buffer.count) == 16)
        let bigEndian = configuration.style.axisScanTypeText.hasPrefix("be")
        #expect(bigEndian == (phone == .pinephone))  // MPU-6050 scans are big-endian
        func s16(_ i: Int) -> Int {
            let (hi, lo) = bigEndian ? (buffer[i], buffer[i + 1]) : (buffer[i + 1], buffer[i])
            return Int(Int16(bitPattern: UInt16(hi) << 8 | UInt16(lo)))
        }
        #expect([s16(0), s16(2), s16(4)] == raw)
        #expect(buffer[6] == 0 && buffer[7] == 0)  // padding before the 8-byte-aligned timestamp
        let timestamp = (0..<8).reduce(UInt64(0)) { $0 | UInt64(buffer[8 + $1]) << (8 * UInt64($1)) }
        #expect(Int64(bitPattern: timestamp) == origin + 1_250_000_000)
        // The raw files agree with the scan.
        for (axis, value) in zip(["x", "y", "z"], raw) {
            #expect(try readNumber("\(device)/in_accel_\(axis)_raw") == Double(value))
        }

        // Disable y: x and z are packed back to back, the timestamp stays at offset 8.
        try "0\n".write(toFile: "\(device)/scan_elements/in_accel_y_en", atomically: false, encoding: .utf8)
        let next = try simulator.step(to: 1.5)
        #expect(read(fd, &buffer, buffer.count) == 16)
        let nextRaw = try #require(next.accelerometerRaw)
        let packed: [Int] = [s16(0), s16(2)]
        #expect(packed == [nextRaw[0], nextRaw[2]])
        #expect(buffer[4...7].allSatisfy { $0 == 0 })

        // Disable the timestamp too: a 4-byte scan.
        try "0\n".write(toFile: "\(device)/scan_elements/in_timestamp_en", atomically: false, encoding: .utf8)
        try simulator.step(to: 1.75)
        #expect(read(fd, &buffer, buffer.count) == 4)

        // A watermark of 3: nothing is readable until three scans wait, then all three at once.
        try "3\n".write(toFile: "\(device)/buffer/watermark", atomically: false, encoding: .utf8)
        try simulator.step(to: 2.0)
        try simulator.step(to: 2.25)
        #expect(read(fd, &buffer, buffer.count) == -1 && errno == EAGAIN)
        try simulator.step(to: 2.5)
        #expect(read(fd, &buffer, buffer.count) == 12)
    }

    /// A run whose thread is held up (a loaded machine) skips the steps it missed while the
    /// device is polled (its `_raw` files hold the latest reading), and writes them at once while
    /// its buffer is enabled: a sensor's FIFO keeps every sample, each with its timestamp.
    @Test("a late run writes the missed scans of an enabled buffer, and skips them when polled", arguments: [true, false])
    func lateRun(bufferEnabled: Bool) throws {
        let scratch = ScratchDirectory()
        let scene = Scene(earthFieldNEDMicrotesla: Vector3(27.5, 1.2, 24.0), trajectory: .constant(DeviceOrientation(headingDegrees: 10)))
        let configuration = SimulatedDevice.Configuration(style: .lis3mdl, deviceIndex: 0, buffered: true)
        let simulator = try Simulator(scene: scene, magnetometer: configuration, accelerometer: nil,
                                      sysfsRoot: scratch.sysfs, devRoot: scratch.dev)
        let device = "\(scratch.sysfs)/bus/iio/devices/iio:device0"
        let fd = open("\(scratch.dev)/iio:device0", O_RDONLY | O_NONBLOCK)
        #expect(fd >= 0)
        defer { Glibc.close(fd) }
        if bufferEnabled {
            for name in ["in_magn_x_en", "in_magn_y_en", "in_magn_z_en", "in_timestamp_en"] {
                try "1\n".write(toFile: "\(device)/scan_elements/\(name)", atomically: false, encoding: .utf8)
            }
            try "1\n".write(toFile: "\(device)/buffer/enable", atomically: false, encoding: .utf8)
        }
        // 1 s at the style's 20 Hz (steps 0…20), the thread held up for 0.3 s (six periods) early on.
        let thread = Thread { try? simulator.run(rateHertz: 20, durationSeconds: 1) }
        thread.start()
        usleep(120_000)
        simulator.updateScene { _ in usleep(300_000) }
        var scans: [Int64] = []
        var buffer = [UInt8](repeating: 0, count: 16)
        let deadline = Date().addingTimeInterval(10)
        while !thread.isFinished, Date() < deadline { usleep(20_000) }
        while read(fd, &buffer, 16) == 16 {
            var timestamp: UInt64 = 0
            for byte in 0..<8 { timestamp |= UInt64(buffer[8 + byte]) << UInt64(8 * byte) }
            scans.append(Int64(bitPattern: timestamp))
        }
        if bufferEnabled {
            #expect(simulator.stepCount == 21)
            #expect(scans == (0...20).map { Int64($0) * 50_000_000 }, "every scan, each with its time: \(scans)")
        } else {
            #expect(simulator.stepCount < 21, "the missed steps are skipped")
            #expect(scans.isEmpty)
        }
    }

    @Test("a full FIFO drops scans instead of blocking")
    func overrun() throws {
        let scratch = ScratchDirectory()
        let device = try SimulatedDevice(configuration: .init(style: .lis3mdl, deviceIndex: 0, buffered: true),
                                         sysfsRoot: scratch.sysfs, devRoot: scratch.dev)
        try device.enableAllScanElements()
        // Nobody reads: a 64 KiB pipe holds 4096 scans of 16 bytes (one per 50 ms: the style's 20 Hz).
        for i in 0..<5000 { try device.writeSample(Vector3(Double(i % 50), 0, 0), timestampNanoseconds: Int64(i) * 50_000_000) }
        #expect(device.writtenScans + device.droppedScans == 5000)
        #expect(device.droppedScans > 0)
        print("FIFO overrun: \(device.writtenScans) written, \(device.droppedScans) dropped")
    }
}
