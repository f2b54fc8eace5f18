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
                                                  requestedHertz: configuration.effectiveSampleRateHertz,
                                                  restorer: &restorer)
        facts.note("\(calibration.kind.rawValue) driver", "\(device) polling: \(rateNote)", to: logger)
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
