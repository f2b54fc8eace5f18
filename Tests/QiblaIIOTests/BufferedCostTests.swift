// SPDX-License-Identifier: Apache-2.0
// Issue 12 (cost) in buffered mode, measured on a simulated PinePhone whose magnetometer and
// accelerometer both write scans to FIFOs that honour `buffer/watermark` (QiblaSimulator): the
// loop's work per wakeup allocates nothing, and the loop wakes about once per hand-off interval
// for both devices, not once per device.
import CAllocationCounter
import Foundation
import Logging
import QiblaCore
import QiblaEventLoop
import QiblaSimulator
import Synchronization
import Testing
@testable import QiblaIIO

/// A stand-in for `/dev/iio:deviceN` with the kernel buffer's semantics, which a FIFO cannot give:
/// `poll` reports it readable only once `buffer/watermark` scans wait, yet a non-blocking read
/// returns the scans waiting below it (Documentation/iio/iio_devbuf.rst). A pseudo-terminal in raw
/// mode does both: with `VTIME` 0, `n_tty` reports `POLLIN` once `VMIN` bytes are queued, and a
/// non-blocking read returns what is queued. Scans are written to the master side.
private final class KernelLikeBuffer: @unchecked Sendable {
    let master: Int32
    /// Held open so that the terminal settings stay and the driver's close does not hang it up.
    let slave: Int32

    /// Replaces the FIFO at `nodePath` with a symbolic link to a new pseudo-terminal.
    init(replacing nodePath: String) throws {
        // posix_openpt, unlockpt and ptsname as their ioctls (Swift's Glibc module hides the X/Open
        // calls): TIOCSPTLCK = _IOW('T', 0x31, int), TIOCGPTN = _IOR('T', 0x30, unsigned int).
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_NONBLOCK)
        var unlock: Int32 = 0, number: UInt32 = 0
        guard master >= 0, ioctl(master, 0x4004_5431, &unlock) == 0, ioctl(master, 0x8004_5430, &number) == 0 else {
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        let slavePath = "/dev/pts/\(number)"
        slave = open(slavePath, O_RDWR | O_NOCTTY | O_NONBLOCK)
        guard slave >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var settings = termios()
        tcgetattr(slave, &settings)
        cfmakeraw(&settings)
        tcsetattr(slave, TCSANOW, &settings)
        unlink(nodePath)
        guard symlink(slavePath, nodePath) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    deinit { close(slave); close(master) }

    /// `POLLIN` once `bytes` are queued (`VMIN`; at most 255).
    func setWatermark(bytes: Int) {
        var settings = termios()
        tcgetattr(slave, &settings)
        withUnsafeMutableBytes(of: &settings.c_cc) { $0[Int(VMIN)] = UInt8(min(255, bytes)); $0[Int(VTIME)] = 0 }
        tcsetattr(slave, TCSANOW, &settings)
    }

    func write(_ scan: [UInt8]) { _ = scan.withUnsafeBytes { Glibc.write(master, $0.baseAddress, $0.count) } }
}

/// A hub in buffered mode on a private loop (run on the test's thread), fed by a simulated PinePhone:
/// either one simulator writing both sensors' FIFOs (sampled together, as on one trigger), or
/// (`kernelLike`) scans written to ``KernelLikeBuffer``s half a sample period apart, as two chips
/// with their own clocks. Its event handler counts samples in place: appending events to an
/// array would allocate.
private final class BufferedPhone {
    final class Counts {
        var magnetometer = 0, accelerometer = 0, gyroscope = 0
        var batches = 0
        /// Samples whose timestamp is older than the previous sample of the same batch.
        var outOfOrder = 0
        /// `.resting` events: the last one's value, and how many.
        var resting = false, restChanges = 0
    }

    let scratch = ScratchDirectory()
    let simulator: Simulator?
    /// With `kernelLike`: the devices' sysfs trees, and their buffers.
    let devices: [SimulatedDevice]
    let buffers: [KernelLikeBuffer]
    let loop: EventLoop
    let hub: SensorHub
    let counts = Counts()

    /// `restSampleRateHertz`: nil (the full rate always) unless a test is about the rest.
    init(kernelLike: Bool = false, rateHertz: Double = 20, restSampleRateHertz: Double? = nil) throws {
        let (sysfs, dev) = (scratch.sysfs, scratch.dev)
        let magnetometer = PhoneModel.pinephone.magnetometer(buffered: true)!
        let accelerometer = PhoneModel.pinephone.accelerometer(buffered: true)
        if kernelLike {
            simulator = nil
            devices = try [magnetometer, accelerometer].map { try SimulatedDevice(configuration: $0, sysfsRoot: sysfs, devRoot: dev) }
            buffers = try devices.map { try KernelLikeBuffer(replacing: $0.characterDevicePath) }
        } else {
            let scene = Scene(earthFieldNEDMicrotesla: Vector3(19.3, -0.4, 45.1),
                              trajectory: .constant(DeviceOrientation(headingDegrees: 120, pitchDegrees: 10, rollDegrees: -5)))
            simulator = try Simulator(scene: scene, magnetometer: magnetometer, accelerometer: accelerometer,
                                      sysfsRoot: sysfs, devRoot: dev)
            devices = []
            buffers = []
        }
        var configuration = SensorConfiguration(sysfsRoot: sysfs, devRoot: dev, mode: .buffered, sampleRateHertz: rateHertz)
        configuration.udevDataDirectory = scratch.path + "/no-udev"
        configuration.bufferWatchdog = .seconds(3600)
        configuration.restSampleRateHertz = restSampleRateHertz
        loop = try EventLoop()
        var logger = Logger(label: "qiblad.iio.test")
        logger.logLevel = .critical
        let counts = self.counts
        hub = SensorHub(configuration: configuration, loop: loop, logger: logger) { event in
            if case .resting(let resting) = event {
                counts.resting = resting
                counts.restChanges += 1
            }
            guard case .samples(let batch) = event else { return }
            counts.batches += 1
            var previous = Int64.min
            var index = 0  // not `for … in`: the iterator allocates in an unoptimised build
            while index < batch.count {
                let sample = batch[index]
                index += 1
                switch sample.kind {
                case .magnetometer: counts.magnetometer += 1
                case .accelerometer: counts.accelerometer += 1
                case .gyroscope: counts.gyroscope += 1  // the MPU-6050's, in the accelerometer's scans
                }
                if sample.timestampNanoseconds < previous { counts.outOfOrder += 1 }
                previous = sample.timestampNanoseconds
            }
        }
    }

    var totalSamples: Int { counts.magnetometer + counts.accelerometer + counts.gyroscope }

    /// Starts writing scans in real time at `rateHertz` on another thread, lets the loop settle for
    /// 0.7 s, then runs it for `seconds`, sleeping in `poll` until a device node is readable or a
    /// timer is due, and counts what happened meanwhile.
    func measureWakeups(rateHertz: Double, seconds: Double) throws -> (wakeups: Int, samples: Int, batches: Int, elapsedSeconds: Double) {
        let running = Atomic<Bool>(true)
        defer { running.store(false, ordering: .relaxed); simulator?.stop() }
        if let simulator {
            Thread { try? simulator.run(rateHertz: rateHertz, durationSeconds: 10 * seconds + 12) }.start()
        } else {
            // What the kernel does with `buffer/watermark`, per device; then one scan per device
            // per period, the accelerometer's half a period after the magnetometer's.
            var scans: [[UInt8]] = []
            for (device, buffer) in zip(devices, buffers) {
                let watermark = Int(try readText(device.directory + "/buffer/watermark").trimmingCharacters(in: .whitespacesAndNewlines))!
                let scan = device.fullScanLayout.pack(["in_\(device.configuration.style.kind.channelType)_z": 1000])
                buffer.setWatermark(bytes: watermark * scan.count)
                scans.append(scan)
            }
            let buffers = self.buffers, period = 1 / rateHertz
            Thread { [scans] in
                let start = Date()
                var step = 0
                while running.load(ordering: .relaxed), Double(step) * period < 10 * seconds + 12 {
                    for (number, buffer) in buffers.enumerated() {
                        let due = start.addingTimeInterval(Double(step) * period + Double(number) * period / 2)
                        Thread.sleep(until: due)
                        var timestamp = timespec()
                        clock_gettime(CLOCK_MONOTONIC, &timestamp)
                        let nanoseconds = Int64(timestamp.tv_sec) * 1_000_000_000 + Int64(timestamp.tv_nsec)
                        var scan = scans[number]
                        withUnsafeBytes(of: nanoseconds.littleEndian) { scan.replaceSubrange(8..<16, with: $0) }
                        buffer.write(scan)
                    }
                    step += 1
                }
            }.start()
        }
        let clock = ContinuousClock()
        let settled = clock.now.advanced(by: .milliseconds(700))
        while clock.now < settled { try loop.runOnce(maximumWait: .milliseconds(100)) }
        let samples = totalSamples, batches = counts.batches, wakeups = loop.wakeupCount
        // Issue 33: the window is a number of samples, not a time, so a loaded machine (the writer
        // thread late, scans arriving in bursts) changes how long it lasts, not what is counted.
        // `seconds` of samples of the three sensors (the MPU-6050's scans carry the gyroscope's
        // too) at `rateHertz`; the wall clock only bounds a stall.
        let wanted = Int(3 * rateHertz * seconds)
        let start = clock.now, limit = clock.now.advanced(by: .seconds(10 * seconds + 10))
        while totalSamples - samples < wanted, clock.now < limit { try loop.runOnce(maximumWait: .milliseconds(200)) }
        let elapsed = start.duration(to: clock.now)
        return (Int(loop.wakeupCount - wakeups), totalSamples - samples, counts.batches - batches,
                Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}

@Suite(.serialized) struct BufferedCostTests {
    @Test func theAllocationCounterSeesThisThreadsAllocations() {
        qiblad_allocations_begin()
        let array = [Int](repeating: 7, count: 1000)
        let counted = qiblad_allocations_end()
        #expect(array.count == 1000)
        #expect(counted >= 1, "the test executable's malloc does not stand in front of glibc's: allocation counts would be vacuous")
    }

    /// Each round the simulator (on this thread, not counted) writes one hand-off interval of scans
    /// for both sensors; then the hub's work of one wakeup, counted, reads both FIFOs, decodes the
    /// scans and hands the samples over. It is called as the loop calls it (what a device node's
    /// watch runs), not through `EventLoop.runOnce`: in an unoptimised build the loop's own
    /// iteration over its watches allocates (an unspecialised array iterator's coroutine frame);
    /// in the release build it is specialised and does not. The hub and the driver are held to
    /// the stricter unoptimised standard here.
    @Test func bufferedWakeupsAllocateNothingOnceSettled() throws {
        let phone = try BufferedPhone()
        phone.hub.start()
        defer { phone.hub.stop() }
        // The PinePhone's MPU-6050 carries its gyroscope: its scans give two samples each.
        #expect(phone.hub.activeModes == [.magnetometer: .buffered, .accelerometer: .buffered, .gyroscope: .buffered])
        let watermark = BufferedDriver.watermark(SensorConfiguration(sampleRateHertz: 20))
        var time = 0.0
        /// Allocations over `rounds` rounds.
        func rounds(_ rounds: Int) throws -> Int {
            var allocations = 0
            for _ in 0..<rounds {
                for _ in 0..<watermark {
                    time += 0.05
                    try phone.simulator!.step(to: time)
                }
                qiblad_allocations_begin()
                phone.hub.buffersReadable(.magnetometer, .readable)
                allocations += qiblad_allocations_end()
            }
            return allocations
        }
        _ = try rounds(10)  // settle: first reads, lazily built state
        #expect(phone.totalSamples == 10 * 3 * watermark)
        let samplesBefore = phone.totalSamples
        let allocations = try rounds(200)
        print("buffered: \(allocations) heap allocations on the loop thread in 200 wakeups (\(200 * 3 * watermark) samples of 2 devices, 3 sensors)")
        #expect(phone.totalSamples - samplesBefore == 200 * 3 * watermark, "every round's scans were read in its one wakeup")
        #expect(allocations == 0)
        #expect(phone.counts.outOfOrder == 0)
    }

    /// Scans arrive at 20 Hz in real time from another thread; the loop, on this one, sleeps in
    /// `poll` until a device node is readable. The magnetometer's watermark (2 scans) wakes it every
    /// 100 ms and both devices are read then; the accelerometer's own watermark (4 scans) is a
    /// backstop that those reads keep it from reaching. Each device waking the loop itself would be
    /// two wakeups per hand-off interval; reading both on each wakeup with equal watermarks, 1.33
    /// when the devices sample out of phase (`kernelLike`; the simulator's FIFOs cannot model
    /// that: a FIFO that holds scans is readable).
    @Test(arguments: [false, true])
    func bothBufferedDevicesCostOneWakeupPerHandOffInterval(kernelLike: Bool) throws {
        let phone = try BufferedPhone(kernelLike: kernelLike)
        phone.hub.start()
        defer { phone.hub.stop() }
        #expect(phone.hub.activeModes == [.magnetometer: .buffered, .accelerometer: .buffered, .gyroscope: .buffered])
        let (wakeups, samples, batches, elapsed) = try phone.measureWakeups(rateHertz: 20, seconds: 3)
        // A hand-off interval (100 ms at 20 Hz) holds 2 scans of each device, the accelerometer's
        // carrying the gyroscope's sample too (6 samples): the intervals whose samples arrived,
        // counted, not the window's length.
        let intervals = Double(samples) / 6
        let setting = kernelLike ? "out of phase, kernel-like buffers" : "sampled together, simulator FIFOs"
        print("buffered, 2 devices at 20 Hz (\(setting)): \(wakeups) loop wakeups for \(samples) samples (\(intervals) hand-off intervals) in \(elapsed) s (the 1 s presence timer included), \(batches) batches")
        #expect(samples >= 180, "both devices' samples arrived (\(samples) of 180 in \(elapsed) s)")
        let timers = elapsed.rounded(.up) + 1
        #expect(batches <= wakeups, "one hand-over per wakeup at most")
        if kernelLike {
            // The test's own writer: each device's scans at their instants, the accelerometer's
            // below its watermark. One wakeup per interval and the presence timer's, once a second
            // of the window: 33 in 3 s. Two per interval would be 63, 1.33 would be 43.
            #expect(Double(wakeups) <= 1.15 * intervals + timers, "\(wakeups) wakeups for \(intervals) hand-off intervals")
            #expect(Double(batches) <= 1.15 * intervals, "one hand-over per wakeup, both devices' samples together")
        } else {
            // The simulator flushes the magnetometer's FIFO, then the accelerometer's: a writer
            // preempted between the two (a loaded machine: 38–42 wakeups for 30 intervals beside
            // two busy loops) makes two wakeups of one interval, which is the machine, not the
            // hub. Reading each device on its own wakeup would be twice per interval, 63 in 3 s.
            #expect(Double(wakeups) < 1.8 * intervals + timers, "\(wakeups) wakeups for \(intervals) hand-off intervals")
        }
        #expect(phone.counts.outOfOrder == 0)
    }
}

/// Issue 25 in buffered mode: at rest the devices sample at the slowest available rate at or above
/// `rest-sample-rate` and fill a rest period's batch per wakeup; motion brings the full rate back;
/// every attribute changed is restored at release.
@Suite(.serialized) struct BufferedRestTests {
    @Test func restWatermarkIsOneRestPeriodOfScans() {
        // An MPU-6050 cannot go below 10 Hz: 5 scans a wakeup at 2 Hz; a follower's backstop twice that.
        #expect(BufferedDriver.restWatermark(deviceHertz: 10, restHertz: 2, follower: false, hardwareFIFOMaximum: nil) == 5)
        #expect(BufferedDriver.restWatermark(deviceHertz: 10, restHertz: 2, follower: true, hardwareFIFOMaximum: nil) == 10)
        // An LIS3MDL at 2.5 Hz: one scan a wakeup.
        #expect(BufferedDriver.restWatermark(deviceHertz: 2.5, restHertz: 2, follower: false, hardwareFIFOMaximum: nil) == 1)
        // A hardware FIFO's maximum caps it; so does three quarters of the 128-scan buffer.
        #expect(BufferedDriver.restWatermark(deviceHertz: 104, restHertz: 2, follower: false, hardwareFIFOMaximum: 32) == 32)
        #expect(BufferedDriver.restWatermark(deviceHertz: 416, restHertz: 2, follower: false, hardwareFIFOMaximum: nil) == 96)
        #expect(BufferedDriver.restWatermark(deviceHertz: .nan, restHertz: 2, follower: false, hardwareFIFOMaximum: nil) == 1)
    }

    @Test func aStillBufferedPhoneIsReadSlowlyAndMotionBringsTheFullRateBack() throws {
        let phone = try BufferedPhone(restSampleRateHertz: 2)
        let simulator = try #require(phone.simulator)
        let sysfs = phone.scratch.sysfs + "/bus/iio/devices"
        let (magnetometer, accelerometer) = (sysfs + "/iio:device1", sysfs + "/iio:device2")  // PhoneModel.pinephone
        func attribute(_ path: String) throws -> String { try readText(path).trimmingCharacters(in: .whitespacesAndNewlines) }
        let before = try [magnetometer, accelerometer].flatMap { [try attribute($0 + "/sampling_frequency"), try attribute($0 + "/buffer/watermark")] }
        phone.hub.start()
        let running = Atomic<Bool>(true)
        defer { running.store(false, ordering: .relaxed); simulator.stop() }
        Thread { try? simulator.run(rateHertz: 20, durationSeconds: 30) }.start()
        let clock = ContinuousClock()
        func run(_ seconds: Double) throws -> Int {
            let wakeups = phone.loop.wakeupCount
            let end = clock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
            while clock.now < end { try phone.loop.runOnce(maximumWait: clock.now.duration(to: end)) }
            return Int(phone.loop.wakeupCount - wakeups)
        }
        let moving = try run(1.5)
        // The rest begins 2 s after the last motion.
        for _ in 0..<60 where !phone.counts.resting { _ = try run(0.1) }
        #expect(phone.counts.resting)
        _ = try run(0.5)
        let samples = phone.totalSamples
        let resting = try run(3)
        let restSamples = phone.totalSamples - samples
        let restAttributes = try [magnetometer, accelerometer].flatMap { [try attribute($0 + "/sampling_frequency"), try attribute($0 + "/buffer/watermark")] }
        // Motion: the phone is turned.
        simulator.updateScene { $0.trajectory = .constant(DeviceOrientation(headingDegrees: 200, pitchDegrees: 10, rollDegrees: -5)) }
        _ = try run(0.6)
        let fullAgain = try [magnetometer, accelerometer].flatMap { [try attribute($0 + "/sampling_frequency"), try attribute($0 + "/buffer/watermark")] }
        let movingAgain = try run(1.2)
        phone.hub.stop()
        let after = try [magnetometer, accelerometer].flatMap { [try attribute($0 + "/sampling_frequency"), try attribute($0 + "/buffer/watermark")] }
        print("buffered rest: \(phone.counts.restChanges) rest changes; \(moving) loop wakeups in 1.5 s moving, \(resting) in 3 s resting (\(restSamples) samples handed over), \(movingAgain) in 1.2 s after a turn; sampling_frequency/watermark magnetometer, accelerometer: before \(before), at rest \(restAttributes), moving again \(fullAgain), after release \(after)")
        // LIS3MDL: 2.5 Hz (the slowest at or above 2), one scan a wakeup; MPU-6050: 10 Hz, its
        // follower's backstop two rest periods of scans.
        #expect(restAttributes == ["2.5", "1", "10", "10"])
        #expect(Double(resting) / 3 < Double(moving) / 1.5 / 2, "resting \(resting) in 3 s, moving \(moving) in 1.5 s")
        #expect(restSamples <= 2, "a still phone's samples are not handed over")
        #expect(fullAgain == ["20", "2", "20", "4"], "the full rate's attributes are back after a turn")
        #expect(Double(movingAgain) / 1.2 > Double(resting) / 3 * 1.5, "moving again \(movingAgain) in 1.2 s")
        #expect(after == before, "every attribute is restored at release")
    }
}
