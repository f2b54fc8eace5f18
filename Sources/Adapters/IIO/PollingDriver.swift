// sysfs polling driver: re-reads in_<type>_{x,y,z}_raw on its own thread (cf. iio-sensor-proxy's
// drv-iio-poll-accel.c). The three axes are read back-to-back to keep skew small, but each `_raw`
// read triggers its own conversion on most chips, so x, y and z come from different conversions.
import Logging
import QiblaCore
import QiblaEventLoop
import QiblaPlatform
import SystemPackage

final class PollingDriver: SensorDriver, @unchecked Sendable {
    let device: IIODevice
    let calibration: AxisCalibration
    private let configuration: SensorConfiguration
    private let loop: EventLoop
    private let logger: Logger
    private let sink: SensorDriverSink
    // Loop-thread state.
    private var thread: PlatformThread?
    private var active = false
    private var restorer = AttributeRestorer()

    init(device: IIODevice, calibration: AxisCalibration, configuration: SensorConfiguration, loop: EventLoop,
         logger: Logger, sink: SensorDriverSink) {
        self.device = device; self.calibration = calibration; self.configuration = configuration
        self.loop = loop; self.logger = logger; self.sink = sink
    }

    /// The reading thread, for tests that check it exits after ``stop()``.
    var readingThread: PlatformThread? { thread }

    func start() throws(SensorSetupError) {
        let prefix = "\(device.sysfsPath)/in_\(calibration.kind.channelPrefix)"
        var opened: [SysfsAttribute] = []
        for axis in ["x", "y", "z"] {
            do { opened.append(try SysfsAttribute(path: "\(prefix)_\(axis)_raw")) } catch {
                throw SensorSetupError("\(device): cannot open \(prefix)_\(axis)_raw: \(error)")
            }
        }
        let axes = opened
        let rate = configuration.effectiveSampleRateHertz
        // Computed outside the log call: swift-log evaluates messages only when the level is enabled.
        let rateNote = configureSamplingFrequency(device: device, kind: calibration.kind, requestedHertz: rate,
                                                  restorer: &restorer)
        logger.info("\(device) polling: \(rateNote)")

        let calibration = self.calibration
        let hook = configuration.beforeAttributeRead
        let interval = Duration.nanoseconds(Int64(1e9 / rate))
        let loop = self.loop
        active = true
        do {
            let forward: @Sendable (Report) -> Void = { [weak self] report in
                let driver = self
                loop.post { driver?.handle(report) }
            }
            thread = try PlatformThread.start { thread in
                Self.readLoop(thread: thread, axes: axes, calibration: calibration, interval: interval, hook: hook,
                              report: forward)
            }
        } catch {
            active = false
            restorer.restoreAll(logger: logger)
            throw SensorSetupError("\(device): cannot start the reading thread: \(error)")
        }
    }

    func stop() {
        guard active else { return }
        active = false
        thread?.requestStop()
        restorer.restoreAll(logger: logger)
    }

    fileprivate enum Report: Sendable {
        case sample(SensorSample)
        case dropped(Int)
        case failed(String)
    }

    private func handle(_ report: Report) {
        guard active else { return }
        switch report {
        case .sample(let sample): sink.deliver([sample])
        case .dropped(let count): sink.dropped(count)
        case .failed(let reason):
            active = false
            restorer.restoreAll(logger: logger)
            sink.failed(reason)
        }
    }

    /// The thread body: read x, y, z; publish or count a drop; sleep (stop-aware) until the next period.
    private static func readLoop(thread: PlatformThread, axes: [SysfsAttribute], calibration: AxisCalibration,
                                 interval: Duration, hook: (@Sendable (String) -> Void)?,
                                 report: (Report) -> Void) {
        let clock = ContinuousClock()
        var next = clock.now
        while !thread.isStopRequested {
            var raw: [Double] = []
            var dropped = 0
            var timestamp: Int64 = 0
            for (index, axis) in axes.enumerated() {
                hook?(axis.path)
                if index == 0 { timestamp = MonotonicClock.nowNanoseconds() }
                let text: String
                do { text = try axis.read() } catch {
                    if !thread.isStopRequested {
                        report(.failed("\(axis.path): read failed: \(error)"))
                    }
                    return
                }
                if let value = parseFiniteDouble(text) { raw.append(value) } else { dropped += 1 }
            }
            if thread.isStopRequested { return }
            if dropped > 0 {
                report(.dropped(dropped))
            } else if let vector = calibration.apply(raw: Vector3(raw[0], raw[1], raw[2])) {
                report(.sample(SensorSample(kind: calibration.kind, vector: vector, timestampNanoseconds: timestamp)))
            } else {
                report(.dropped(1))
            }
            next = next.advanced(by: interval)
            let now = clock.now
            if next < now { next = now }  // a slow read does not cause a burst afterwards
            guard thread.sleep(for: now.duration(to: next)) else { return }
        }
    }
}
