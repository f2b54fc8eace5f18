// SPDX-License-Identifier: Apache-2.0
// Issue 30: gyroscopes from IIO — the simulated trees have the kernel drivers' layout, the hub reads
// a gyroscope on the accelerometer's device (inv_mpu6050) and on a device of its own (st_lsm6dsx's
// lsm9ds1_gyro), polled and buffered, and stops reading it while the phone rests.
import Foundation
import Logging
import QiblaCore
import QiblaSimulator
import Testing
import TestSupport
@testable import QiblaIIO

/// A simulated phone in a scratch directory, stepped by the test's own thread while the hub's loop
/// runs (no second clock: each `pump` steps the scene by 50 ms per loop turn).
private final class GyroscopePhone {
    let scratch = ScratchDirectory()
    let simulator: Simulator
    let harness: HubHarness
    private(set) var sceneTime = 0.0

    init(_ phone: PhoneModel, scene: Scene, buffered: Bool = false, gyroscope: Bool = true,
         configure: (inout SensorConfiguration) -> Void = { _ in }) throws {
        simulator = try Simulator(phone: phone, scene: scene, sysfsRoot: scratch.sysfs, devRoot: scratch.dev,
                                  buffered: buffered, gyroscope: gyroscope,
                                  timestampOriginNanoseconds: Int64(ProcessInfo.processInfo.systemUptime * 1e9))
        try simulator.step(to: 0)
        var configuration = SensorConfiguration(sysfsRoot: scratch.sysfs, devRoot: scratch.dev, mode: buffered ? .buffered : .polling,
                                                sampleRateHertz: 20)
        configuration.udevDataDirectory = scratch.path + "/udev"
        configuration.initialRetryDelay = .milliseconds(100)
        configuration.restSampleRateHertz = nil
        configure(&configuration)
        harness = try HubHarness(configuration)
    }

    /// Runs the loop, stepping the scene 50 ms per turn, until `condition` holds.
    @discardableResult
    func pump(timeout: Double = 8, until condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while !condition(), Date() < end {
            sceneTime += 0.05
            _ = try? simulator.step(to: sceneTime)
            try? harness.loop.runOnce(maximumWait: .milliseconds(20))
        }
        return condition()
    }

    func attribute(_ device: String, _ name: String) -> String? {
        (try? readText("\(device)/\(name)"))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A phone turning at `degreesPerSecond` about the vertical, tilted: its true ω in the device frame
/// is C·(0, 0, rate) (NED down axis, clockwise from above), constant while pitch and roll are.
private func turningScene(degreesPerSecond: Double = 40, errors: GyroscopeErrors = .none) -> Scene {
    var scene = Scene(earthFieldNEDMicrotesla: Vector3(19.3, -0.4, 45.1),
                      trajectory: .rotating(startHeadingDegrees: 10, degreesPerSecond: degreesPerSecond,
                                            pitchDegrees: 20, rollDegrees: -10))
    scene.gyroscope = errors
    return scene
}

private func stillScene() -> Scene {
    var scene = Scene(earthFieldNEDMicrotesla: Vector3(19.3, -0.4, 45.1),
                      trajectory: .constant(DeviceOrientation(headingDegrees: 120, pitchDegrees: 10, rollDegrees: -5)))
    scene.gyroscope = .none
    return scene
}

@Suite struct SimulatedGyroscopeTreeTests {
    @Test("PinePhone: inv_mpu6050's attributes and scan layout on the accelerometer's device")
    func pinephoneLayout() throws {
        let scratch = ScratchDirectory()
        let simulator = try Simulator(phone: .pinephone, scene: stillScene(), sysfsRoot: scratch.sysfs, devRoot: scratch.dev,
                                      buffered: true)
        let d = "\(scratch.sysfs)/bus/iio/devices/iio:device2"
        #expect(simulator.gyroscopeDirectory == d && simulator.hasGyroscope)
        #expect(try readText("\(d)/name") == "mpu6050\n")
        #expect(try readText("\(d)/in_anglvel_scale") == "0.001064724\n")
        #expect(try readText("\(d)/in_anglvel_scale_available") == "0.000133090 0.000266181 0.000532362 0.001064724\n")
        #expect(try readText("\(d)/in_accel_scale") == "0.000598\n")
        for axis in ["x", "y", "z"] {
            #expect(fileExists("\(d)/in_anglvel_\(axis)_raw"))
            #expect(try readText("\(d)/in_anglvel_\(axis)_calibbias") == "0\n")
            #expect(try readText("\(d)/in_accel_\(axis)_calibbias") == "0\n")
        }
        // One mount matrix for both channel types, as the driver's IIO_SHARED_BY_DIR gives it.
        #expect(try readText("\(d)/in_mount_matrix") == "0, -1, 0; -1, 0, 0; 0, 0, -1\n")
        #expect(!fileExists("\(d)/in_accel_mount_matrix"))
        let indices = try ["in_accel_x", "in_accel_z", "in_temp", "in_anglvel_x", "in_anglvel_y", "in_anglvel_z", "in_timestamp"]
            .map { try readNumber("\(d)/scan_elements/\($0)_index") }
        #expect(indices == [0, 2, 3, 4, 5, 6, 7])
        #expect(try readText("\(d)/scan_elements/in_anglvel_y_type") == "be:s16/16>>0\n")
        #expect(try readText("\(d)/scan_elements/in_temp_type") == "be:s16/16>>0\n")
        #expect(try readText("\(d)/scan_elements/in_anglvel_x_en") == "0\n")
    }

    @Test("PinePhone Pro (MPU-6500, same driver), Librem 5 (lsm9ds1_gyro of its own), none on Qualcomm")
    func otherPresets() throws {
        let pro = ScratchDirectory()
        _ = try Simulator(phone: .pinephonePro, scene: stillScene(), sysfsRoot: pro.sysfs, devRoot: pro.dev, buffered: true)
        let p = "\(pro.sysfs)/bus/iio/devices/iio:device1"
        #expect(try readText("\(p)/name") == "mpu6500\n")
        #expect(try readText("\(p)/in_anglvel_scale") == "0.001064724\n")
        #expect(try readNumber("\(p)/scan_elements/in_anglvel_x_index") == 4)

        let librem = ScratchDirectory()
        let l5 = try Simulator(phone: .librem5, scene: stillScene(), sysfsRoot: librem.sysfs, devRoot: librem.dev, buffered: true)
        let g = "\(librem.sysfs)/bus/iio/devices/iio:device2"
        #expect(l5.gyroscopeDirectory == g)
        #expect(try readText("\(g)/name") == "lsm9ds1_gyro\n")
        #expect(try readText("\(g)/in_anglvel_scale") == "0.000153\n")
        #expect(try readText("\(g)/mount_matrix") == "-1, 0, 0; 0, 1, 0; 0, 0, 1\n")
        #expect(try readNumber("\(g)/scan_elements/in_anglvel_z_index") == 2)
        #expect(try readNumber("\(g)/scan_elements/in_timestamp_index") == 3)
        #expect(!fileExists("\(librem.sysfs)/bus/iio/devices/iio:device1/in_anglvel_x_raw"))

        let qualcomm = ScratchDirectory()
        let q = try Simulator(phone: .qualcomm, scene: stillScene(), sysfsRoot: qualcomm.sysfs, devRoot: qualcomm.dev)
        #expect(!q.hasGyroscope)
        let devices = try FileManager.default.contentsOfDirectory(atPath: "\(qualcomm.sysfs)/bus/iio/devices")
        for device in devices {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: "\(qualcomm.sysfs)/bus/iio/devices/\(device)")) ?? []
            #expect(!files.contains { $0.hasPrefix("in_anglvel") })
        }

        let without = ScratchDirectory()
        let w = try Simulator(phone: .pinephone, scene: stillScene(), sysfsRoot: without.sysfs, devRoot: without.dev, gyroscope: false)
        #expect(!w.hasGyroscope)
        #expect(!fileExists("\(without.sysfs)/bus/iio/devices/iio:device2/in_anglvel_x_raw"))
    }

    @Test("raw files read back to the true angular velocity (no errors) and to truth + bias (with)", arguments: [PhoneModel.pinephone, .librem5])
    func readBackTruth(phone: PhoneModel) throws {
        let scratch = ScratchDirectory()
        let simulator = try Simulator(phone: phone, scene: turningScene(), sysfsRoot: scratch.sysfs, devRoot: scratch.dev)
        let directory = try #require(simulator.gyroscopeDirectory)
        for t in [0.0, 1.3, 7.9] {
            let sample = try simulator.step(to: t)
            let truth = try #require(sample.trueAngularVelocityRadiansPerSecond)
            let (value, quantisation) = try readBack(directory: directory, kind: .gyroscope)
            #expect(maxComponentDifference(value, truth) <= quantisation, "\(phone) t \(t): \(value) vs \(truth)")
            // A pure turn about the vertical: ω = C·(0, 0, rate).
            let expected = simulator.scene.worldToDevice(at: t) * Vector3(0, 0, Angle.radians(40))
            #expect(maxComponentDifference(truth, expected) < 1e-6)
        }
        // With the default errors: the bias (a few tenths of °/s) shows through, within noise and quantisation.
        simulator.updateScene { $0.gyroscope = GyroscopeErrors(noiseDegreesPerSecond: 0) }
        let sample = try simulator.step(to: 2)
        let (value, quantisation) = try readBack(directory: directory, kind: .gyroscope)
        let bias = simulator.scene.gyroscope.biasRadiansPerSecond(at: 2)
        #expect(maxComponentDifference(value, try #require(sample.trueAngularVelocityRadiansPerSecond) + bias) <= quantisation)
        #expect(bias.length > Angle.radians(0.3))
    }
}

@Suite struct GyroscopeHubTests {
    @Test("polled on the accelerometer's device (PinePhone) and on its own (Librem 5): rad/s, mount matrix applied",
          arguments: [PhoneModel.pinephone, .librem5])
    func polling(phone: PhoneModel) throws {
        let rig = try GyroscopePhone(phone, scene: turningScene())
        rig.harness.hub.start()
        let expectedName = phone == .pinephone ? "mpu6050" : "lsm9ds1_gyro"
        #expect(rig.harness.availableGyroscopes.first == .some(expectedName))
        #expect(rig.harness.hub.activeModes[.gyroscope] == .polling)
        // The chip is asked for 4× the 20 Hz reads (PollingDriver.chipRateOversampling): the
        // nearest rate each lists at or above 80 Hz; the driver's own is back at release.
        let device = rig.scratch.sysfs + "/bus/iio/devices/iio:device2"
        #expect(rig.attribute(device, "sampling_frequency") == (phone == .pinephone ? "100" : "119.000"))
        #expect(rig.pump { rig.harness.samples(.gyroscope).count >= 5 })
        // The scene turns at a constant 40 °/s with fixed tilt: ω is constant in the device frame.
        let expected = rig.simulator.scene.worldToDevice(at: 0) * Vector3(0, 0, Angle.radians(40))
        let scale = phone == .pinephone ? 0.001064724 : 0.000153
        for sample in rig.harness.samples(.gyroscope) {
            #expect(maxComponentDifference(sample.vector, expected) <= scale, "\(sample.vector) vs \(expected)")
        }
        rig.harness.stopAndExpectQuiet()
        #expect(rig.attribute(device, "sampling_frequency") == (phone == .pinephone ? "50" : "59.500"))
    }

    @Test("buffered, one device: one scan carries accelerometer and gyroscope; channels restored at release")
    func bufferedOneScan() throws {
        let rig = try GyroscopePhone(.pinephone, scene: turningScene(), buffered: true)
        let device = rig.scratch.sysfs + "/bus/iio/devices/iio:device2"
        rig.harness.hub.start()
        #expect(rig.harness.availableGyroscopes.first == .some("mpu6050"))
        #expect(rig.harness.hub.activeModes[.gyroscope] == .buffered)
        #expect(rig.harness.hub.activeModes[.accelerometer] == .buffered)
        for element in ["in_accel_x", "in_anglvel_x", "in_anglvel_z", "in_timestamp"] {
            #expect(rig.attribute(device, "scan_elements/\(element)_en") == "1", "\(element)")
        }
        #expect(rig.attribute(device, "scan_elements/in_temp_en") == "0")
        #expect(rig.pump { rig.harness.samples(.gyroscope).count >= 10 })
        let accelerometerTimes = Set(rig.harness.samples(.accelerometer).map(\.timestampNanoseconds))
        let gyroscope = rig.harness.samples(.gyroscope)
        #expect(gyroscope.allSatisfy { accelerometerTimes.contains($0.timestampNanoseconds) })
        // In the batches, each gyroscope sample follows the accelerometer sample of its scan.
        for event in rig.harness.events {
            guard case .samples(let batch) = event else { continue }
            for index in batch.indices where batch[index].kind == .gyroscope {
                #expect(index > 0 && batch[index - 1].kind == .accelerometer
                        && batch[index - 1].timestampNanoseconds == batch[index].timestampNanoseconds)
            }
        }
        let expected = rig.simulator.scene.worldToDevice(at: 0) * Vector3(0, 0, Angle.radians(40))
        for sample in gyroscope { #expect(maxComponentDifference(sample.vector, expected) <= 0.001064724) }
        rig.harness.stopAndExpectQuiet()
        for element in ["in_accel_x", "in_anglvel_x", "in_anglvel_y", "in_anglvel_z", "in_timestamp"] {
            #expect(rig.attribute(device, "scan_elements/\(element)_en") == "0", "\(element) restored")
        }
        #expect(rig.attribute(device, "buffer/enable") == "0")
    }

    @Test("buffered, a gyroscope device of its own (Librem 5's lsm9ds1_gyro)")
    func bufferedOwnDevice() throws {
        let rig = try GyroscopePhone(.librem5, scene: turningScene(), buffered: true)
        rig.harness.hub.start()
        #expect(rig.harness.availableGyroscopes.first == .some("lsm9ds1_gyro"))
        #expect(rig.harness.hub.activeModes[.gyroscope] == .buffered)
        #expect(rig.pump { rig.harness.samples(.gyroscope).count >= 10 })
        let expected = rig.simulator.scene.worldToDevice(at: 0) * Vector3(0, 0, Angle.radians(40))
        for sample in rig.harness.samples(.gyroscope) { #expect(maxComponentDifference(sample.vector, expected) <= 0.000153) }
        rig.harness.stopAndExpectQuiet()
    }

    /// The gyroscope chip's own output rate, as its `sampling_frequency` reads once the drivers
    /// run (what the daemon hands the attitude filter: a sample stands for one of the chip's
    /// periods): polled at the rig's 20 Hz the chip is asked for 4× that, the nearest available
    /// rate at or above 80 Hz; buffered, the nearest at or above the read rate itself.
    @Test("the gyroscope's output rate is what its sampling_frequency reads",
          arguments: [(PhoneModel.pinephone, false, 100.0), (.pinephone, true, 20), (.librem5, false, 119), (.librem5, true, 59.5)])
    func gyroscopeOutputRate(phone: PhoneModel, buffered: Bool, hertz: Double) throws {
        let rig = try GyroscopePhone(phone, scene: stillScene(), buffered: buffered)
        rig.harness.hub.start()
        #expect(rig.pump { rig.harness.samples(.gyroscope).count >= 3 })
        #expect(rig.harness.hub.gyroscopeOutputHertz == hertz)
        rig.harness.stopAndExpectQuiet()
        let none = try GyroscopePhone(phone, scene: stillScene(), buffered: buffered, gyroscope: false)
        none.harness.hub.start()
        #expect(none.pump { none.harness.samples(.magnetometer).count >= 3 })
        #expect(none.harness.hub.gyroscopeOutputHertz == nil, "no gyroscope, no rate")
        none.harness.stopAndExpectQuiet()
    }

    /// Rest, then motion: polled, the gyroscope is not read at all while the phone rests.
    @Test("polling: not read at rest, read again at the first motion", arguments: [PhoneModel.pinephone, .librem5])
    func pollingRest(phone: PhoneModel) throws {
        let rig = try GyroscopePhone(phone, scene: stillScene()) { configuration in
            configuration.restSampleRateHertz = 2
            configuration.rest.restAfterSeconds = 0.5
        }
        rig.harness.hub.start()
        #expect(rig.pump { rig.harness.restingChanges.last == true })
        // Reads already in progress when the rest began finish; from then on none.
        rig.pump(timeout: 0.3) { false }
        let atRest = rig.harness.hub.polledGyroscopeReads
        let magnetometerBefore = rig.harness.hub.polledPeriods
        rig.pump(timeout: 1.5) { false }
        #expect(rig.harness.hub.polledGyroscopeReads == atRest, "gyroscope read at rest")
        #expect((rig.harness.hub.polledPeriods) > magnetometerBefore, "the others still read")
        // Motion: the phone turns; the rest ends and the gyroscope is read again.
        rig.simulator.updateScene { $0.trajectory = .rotating(startHeadingDegrees: 120, degreesPerSecond: 90, pitchDegrees: 10) }
        #expect(rig.pump { rig.harness.restingChanges.last == false })
        #expect(rig.pump { rig.harness.hub.polledGyroscopeReads > atRest + 3 })
        rig.harness.stopAndExpectQuiet()
    }

    /// A rest read that comes near both motion thresholds at once, crossing neither, is read again
    /// one full period later, not a rest period later; the phone still rests. Noiseless sensors:
    /// before the change no read is near motion. Then the field moves by 0.8 of its threshold
    /// (hard iron) and the acceleration by 0.8 of its own (gravity), √(0.8² + 0.8²) = 1.13.
    @Test("polling: a rest read near motion is read again at once", arguments: [PhoneModel.pinephone])
    func pollingRestRereadNearMotion(phone: PhoneModel) throws {
        var scene = stillScene()
        scene.magnetometerNoiseMicrotesla = 0
        scene.accelerometerNoiseMetresPerSecondSquared = 0
        let rest = RestDetector.Configuration()
        let rig = try GyroscopePhone(phone, scene: scene) { configuration in
            configuration.restSampleRateHertz = 2
            configuration.rest.restAfterSeconds = 0.5
        }
        rig.harness.hub.start()
        #expect(rig.pump { rig.harness.restingChanges.last == true })
        rig.pump(timeout: 1.5) { false }
        #expect(rig.harness.hub.polledNearMotionRereads == 0, "a still, noiseless phone came near motion")
        rig.simulator.updateScene {
            $0.hardIronOffsetMicrotesla = $0.hardIronOffsetMicrotesla + Vector3(0.8 * rest.fieldThresholdMicrotesla, 0, 0)
            $0.gravityMetresPerSecondSquared += 0.8 * rest.accelerationThresholdMetresPerSecondSquared
        }
        #expect(rig.pump { rig.harness.hub.polledNearMotionRereads >= 1 })
        #expect(rig.harness.restingChanges.last == true, "near motion is not motion")
        rig.harness.stopAndExpectQuiet()
    }

    /// Buffered: the gyroscope's scan elements go off at a rest (buffer off, `_en` 0, buffer on) and
    /// come back at the first motion; everything is restored at release.
    @Test("buffered: channels disabled at rest, enabled on motion, restored at release", arguments: [PhoneModel.pinephone, .librem5])
    func bufferedRest(phone: PhoneModel) throws {
        let rig = try GyroscopePhone(phone, scene: stillScene(), buffered: true) { configuration in
            configuration.restSampleRateHertz = 2
            configuration.rest.restAfterSeconds = 0.5
        }
        let device = rig.scratch.sysfs + "/bus/iio/devices/iio:device2"  // both presets' gyroscope
        rig.harness.hub.start()
        #expect(rig.attribute(device, "scan_elements/in_anglvel_x_en") == "1")
        #expect(rig.pump { rig.harness.restingChanges.last == true })
        #expect(rig.harness.hub.bufferedGyroscopeOn == false)
        #expect(rig.attribute(device, "scan_elements/in_anglvel_x_en") == "0")
        #expect(rig.attribute(device, "scan_elements/in_anglvel_z_en") == "0")
        // On the shared device the accelerometer goes on (buffer on); a gyroscope alone keeps it off.
        #expect(rig.attribute(device, "buffer/enable") == (phone == .pinephone ? "1" : "0"))
        let gyroscopeSamples = rig.harness.samples(.gyroscope).count
        rig.pump(timeout: 1.5) { false }
        #expect(rig.harness.samples(.gyroscope).count == gyroscopeSamples, "no gyroscope samples at rest")
        rig.simulator.updateScene { $0.trajectory = .rotating(startHeadingDegrees: 120, degreesPerSecond: 90, pitchDegrees: 10) }
        #expect(rig.pump { rig.harness.restingChanges.last == false })
        #expect(rig.harness.hub.bufferedGyroscopeOn == true)
        #expect(rig.attribute(device, "scan_elements/in_anglvel_x_en") == "1")
        #expect(rig.attribute(device, "buffer/enable") == "1")
        #expect(rig.pump { rig.harness.samples(.gyroscope).count > gyroscopeSamples + 3 })
        // Decoded in the right layout after the switch: the turn's rate about the vertical.
        let last = try #require(rig.harness.samples(.gyroscope).last)
        #expect(abs(last.vector.length - Angle.radians(90)) < 0.01, "\(last.vector)")
        rig.harness.stopAndExpectQuiet()
        #expect(rig.attribute(device, "scan_elements/in_anglvel_x_en") == "0")
        #expect(rig.attribute(device, "buffer/enable") == "0")
    }

    @Test("gyroscope = off: not opened, not read, not announced", arguments: [SensorReadingMode.polling, .buffered])
    func switchedOff(mode: SensorReadingMode) throws {
        let rig = try GyroscopePhone(.pinephone, scene: turningScene(), buffered: mode == .buffered) { $0.gyroscopeEnabled = false }
        rig.harness.hub.start()
        #expect(rig.harness.availableGyroscopes == [nil])
        #expect(rig.harness.available.first?.1 == "mpu6050")
        #expect(rig.pump { rig.harness.samples(.accelerometer).count >= 5 && rig.harness.samples(.magnetometer).count >= 5 })
        #expect(rig.harness.samples(.gyroscope).isEmpty)
        #expect(rig.harness.hub.polledGyroscopeReads == 0)
        #expect(rig.harness.hub.activeModes[.gyroscope] == nil)
        if mode == .buffered {
            #expect(rig.attribute(rig.scratch.sysfs + "/bus/iio/devices/iio:device2", "scan_elements/in_anglvel_x_en") == "0")
        }
        rig.harness.stopAndExpectQuiet()
    }

    @Test("a unit without a gyroscope behaves as before", arguments: [PhoneModel.pinephone, .qualcomm])
    func withoutGyroscope(phone: PhoneModel) throws {
        let rig = try GyroscopePhone(phone, scene: turningScene(), gyroscope: false)
        rig.harness.hub.start()
        if phone == .qualcomm {
            #expect(!rig.harness.unavailable.isEmpty)  // no magnetometer: no compass, as before
        } else {
            #expect(rig.harness.availableGyroscopes == [nil])
            #expect(rig.pump { rig.harness.samples(.magnetometer).count >= 5 })
            #expect(rig.harness.samples(.gyroscope).isEmpty)
        }
        rig.harness.stopAndExpectQuiet()
    }

    @Test("garbage anglvel values are dropped and counted; the compass goes on")
    func garbage() throws {
        let rig = try GyroscopePhone(.pinephone, scene: turningScene())
        let device = rig.scratch.sysfs + "/bus/iio/devices/iio:device2"
        rig.harness.hub.start()
        #expect(rig.pump { rig.harness.samples(.gyroscope).count >= 2 })
        let before = rig.harness.samples(.gyroscope).count
        // The test stops stepping the scene: the files keep what it writes now.
        for (value, axis) in [("abc", "y"), ("nan", "x"), ("2147483648", "z")] {
            try "\(value)\n".write(toFile: "\(device)/in_anglvel_\(axis)_raw", atomically: false, encoding: .utf8)
        }
        let end = Date().addingTimeInterval(8)
        while (rig.harness.dropped.last ?? 0) < 9, Date() < end { try? rig.harness.loop.runOnce(maximumWait: .milliseconds(20)) }
        #expect((rig.harness.dropped.last ?? 0) >= 9)
        let magnetometer = rig.harness.samples(.magnetometer).count
        let settle = Date().addingTimeInterval(0.5)
        while Date() < settle { try? rig.harness.loop.runOnce(maximumWait: .milliseconds(20)) }
        #expect(rig.harness.samples(.gyroscope).count <= before + 2)  // at most what was read before the writes
        #expect(rig.harness.samples(.magnetometer).count > magnetometer)
        #expect(rig.harness.samples(.gyroscope).allSatisfy { $0.vector.isFinite })
        rig.harness.stopAndExpectQuiet()
    }

    @Test("an unusable gyroscope scale leaves the gyroscope out, not the compass")
    func badScale() throws {
        let rig = try GyroscopePhone(.pinephone, scene: turningScene())
        try "-1\n".write(toFile: rig.scratch.sysfs + "/bus/iio/devices/iio:device2/in_anglvel_scale", atomically: false, encoding: .utf8)
        rig.harness.hub.start()
        #expect(rig.harness.availableGyroscopes == [nil])
        #expect(rig.harness.available.first?.1 == "mpu6050")
        #expect(rig.pump { rig.harness.samples(.accelerometer).count >= 3 })
        rig.harness.stopAndExpectQuiet()
    }

    @Test("discovery prefers the accelerometer's device, then a configured name")
    func discovery() throws {
        let scratch = ScratchDirectory()
        let simulator = try Simulator(phone: .pinephone, scene: stillScene(), sysfsRoot: scratch.sysfs, devRoot: scratch.dev)
        // A second gyroscope at a lower device number than the MPU-6050's.
        _ = try SimulatedDevice(configuration: .init(style: .lsm9ds1Gyro, deviceIndex: 0, name: "gyro_3d"),
                                sysfsRoot: scratch.sysfs, devRoot: scratch.dev)
        _ = simulator
        let auto = discoverSensors(sysfsRoot: scratch.sysfs)
        #expect(auto.gyroscope.device?.name == "mpu6050")
        #expect(auto.gyroscope.candidates.count == 2)
        #expect(auto.gyroscope.reason.contains("accelerometer's device"))
        let named = discoverSensors(sysfsRoot: scratch.sysfs, preferredGyroscopeName: "gyro_3d")
        #expect(named.gyroscope.device?.name == "gyro_3d")
    }
}

/// One scan of a chip that carries both sensors gives the accelerometer's and the gyroscope's
/// samples one timestamp; the gyroscope's goes first within it (issue 36), nothing else moves.
@Suite struct GyroscopeFirstOrderTests {
    @Test func theGyroscopeGoesFirstWithinItsInstantOnly() {
        func s(_ kind: QiblaIIO.SensorKind, _ t: Int64, _ x: Double = 0) -> SensorSample {
            SensorSample(kind: kind, vector: Vector3(x, 0, 0), timestampNanoseconds: t)
        }
        var batch = SensorSampleBatch([s(.magnetometer, 5), s(.accelerometer, 10), s(.magnetometer, 10, 1), s(.gyroscope, 10),
                                       s(.accelerometer, 20), s(.gyroscope, 25), s(.gyroscope, 30, 1), s(.accelerometer, 30, 2),
                                       s(.gyroscope, 30, 3)])
        batch.orderGyroscopeFirstWithinInstants()
        let order = batch.map { "\($0.kind.rawValue.prefix(1))\($0.timestampNanoseconds)/\(Int($0.vector.x))" }
        #expect(order == ["m5/0", "g10/0", "a10/0", "m10/1", "a20/0", "g25/0", "g30/1", "g30/3", "a30/2"])
        var empty = SensorSampleBatch()
        empty.orderGyroscopeFirstWithinInstants()
        #expect(empty.isEmpty)
    }
}
