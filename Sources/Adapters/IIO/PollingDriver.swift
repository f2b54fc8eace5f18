// SPDX-License-Identifier: Apache-2.0
// sysfs polling driver: re-reads in_<type>_{x,y,z}_raw (cf. iio-sensor-proxy's
// drv-iio-poll-accel.c). The reading itself happens on the hub's one `PollingSampler` thread,
// shared by the magnetometer and the accelerometer; this driver opens the attributes, sets the
// sampling frequency and puts them back. The three axes are read back-to-back to keep skew small,
// but each `_raw` read triggers its own conversion on most chips, so x, y and z come from
// different conversions.
import Logging
import QiblaCore
import QiblaPlatform
import SystemPackage

final class PollingDriver: SensorDriver {
    /// The chip's own rate asked for while polling, as a multiple of the read rate (4; the nearest
    /// rate the device lists at or above it, else its fastest). A polled register holds what the
    /// chip measured at its own rate, and the drivers make a read wait on that rate:
    /// - inv_mpu6050 (`inv_mpu6050_read_channel_data`, drivers/iio/imu/inv_mpu6050/inv_mpu_core.c)
    ///   keeps the engine on and returns the register's latest sample, up to one chip period old,
    ///   behind the low-pass filter the driver sets from that rate (`inv_mpu6050_set_lpf`): at 50 Hz
    ///   a 20 Hz filter, 8.3 ms of the gyroscope's delay; at 200 Hz 98 Hz, 2.8 ms (MPU-6000/6050
    ///   register map rev. 4.2, register 26);
    /// - st_sensors (`st_sensors_read_info_raw`, drivers/iio/common/st_sensors/st_sensors_core.c:
    ///   the LIS3MDL, the LSM9DS1's magnetometer, ST accelerometers) powers the chip on for each
    ///   axis read and sleeps `bootime` chip periods before it (2 for the LIS3MDL: 100 ms an axis
    ///   at 20 Hz);
    /// - st_lsm6dsx (`st_lsm6dsx_read_oneshot`: the LSM6DSx, the LSM9DS1's accelerometer and
    ///   gyroscope) the same with 3–4 periods since Linux 5.17 (50–67 ms an axis at 59.5 Hz).
    /// So at 4× a polled value is at most a quarter of a read period old, and a read blocks the
    /// sampling thread a quarter as long. Where the driver powers the chip for each read that is
    /// a shorter on-time; where the engine runs anyway it costs nothing measurable (an MPU-6050's
    /// gyroscope draws 3.6 mA at any rate); a magnetometer that measures continuously draws a
    /// little more while a client holds a claim. Buffered mode asks for the read rate itself:
    /// its scans carry the time the chip took them.
    static let chipRateOversampling = 4.0

    let device: IIODevice
    let calibration: AxisCalibration
    private let configuration: SensorConfiguration
    private let sampler: PollingSampler
    private let logger: Logger
    private let facts: FactLog
    // Loop-thread state.
    private var active = false
    private var restorer = AttributeRestorer()

    init(device: IIODevice, calibration: AxisCalibration, configuration: SensorConfiguration, sampler: PollingSampler,
         logger: Logger, facts: FactLog = FactLog()) {
        self.device = device; self.calibration = calibration; self.configuration = configuration
        self.sampler = sampler; self.logger = logger; self.facts = facts
    }

    func start() throws(SensorSetupError) {
        let prefix = "\(device.sysfsPath)/in_\(calibration.kind.channelPrefix)"
        var axes: [SysfsAttribute] = []
        for axis in ["x", "y", "z"] {
            do { axes.append(try SysfsAttribute(path: "\(prefix)_\(axis)_raw")) } catch {
                throw SensorSetupError("\(device): cannot open \(prefix)_\(axis)_raw: \(error)")
            }
        }
        // Computed outside the log call: swift-log evaluates messages only when the level is enabled.
        let rateNote = configureSamplingFrequency(device: device, kind: calibration.kind,
                                                  requestedHertz: configuration.effectiveSampleRateHertz * Self.chipRateOversampling,
                                                  restorer: &restorer)
        facts.note("\(calibration.kind.rawValue) driver",
                   "\(device) polling at \(configuration.effectiveSampleRateHertz) Hz, the chip asked for \(Int(Self.chipRateOversampling))× that: \(rateNote)",
                   to: logger)
        let motionEvent = restsOnMotionEvent ? findMotionEvent() : nil
        do {
            let path = device.sysfsPath, slash = path.lastIndex(of: "/")
            let presence = FileSystem.PresenceCheck(directory: slash.map { String(path[..<$0]) } ?? ".",
                                                    relativePath: (slash.map { String(path[$0...].dropFirst()) } ?? path) + "/name")
            try sampler.add(PolledChannel(kind: calibration.kind, axes: axes, calibration: calibration,
                                          presence: presence, deviceDescription: device.description,
                                          motionEvent: motionEvent))
        } catch {
            restorer.restoreAll(logger: logger)
            throw SensorSetupError("\(device): \(error)")
        }
        active = true
    }

    /// An accelerometer read with a rest rate: its rests may wait on its motion event instead.
    private var restsOnMotionEvent: Bool {
        calibration.kind == .accelerometer && configuration.restSampleRateHertz != nil
    }

    /// The device's motion event (issue 37), logged once a run as a fact either way.
    private func findMotionEvent() -> MotionEvent? {
        let rate = configuration.restSampleRateHertz.map { "\($0) Hz" } ?? "off"
        do throws(SensorSetupError) {
            if let event = try MotionEvent.find(device: device, devRoot: configuration.devRoot,
                                                thresholdMetresPerSecondSquared: configuration.rest.accelerationThresholdMetresPerSecondSquared) {
                facts.note("\(device.deviceNodeName) motion event", "\(device) at rest: waiting for its motion event, no reads "
                           + "(\(event.description))", to: logger)
                return event
            }
            facts.note("\(device.deviceNodeName) motion event", "\(device) at rest: no motion event this daemon knows; reading at the rest rate (\(rate))", to: logger)
        } catch {
            facts.note("\(device.deviceNodeName) motion event", "\(error.description); reading at the rest rate (\(rate)) instead", to: logger)
        }
        return nil
    }

    func stop() {
        guard active else { return }
        active = false
        sampler.remove(calibration.kind)
        restorer.restoreAll(logger: logger)
    }

    /// The sampling thread gave up on this device (a read error); it no longer reads it.
    func readerFailed() {
        guard active else { return }
        active = false
        restorer.restoreAll(logger: logger)
    }
}
