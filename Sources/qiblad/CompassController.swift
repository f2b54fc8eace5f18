import Logging
import QiblaCore
import QiblaEventLoop
import QiblaIIO
import QiblaState

/// Feeds IIO samples through QiblaCore's heading pipeline and turns its estimates into the
/// compass properties. Runs only while the compass is claimed.
final class CompassController {
    private unowned let daemon: Daemon
    private var hub: SensorHub?
    private var pipeline: HeadingPipeline
    private var latestAcceleration: Vector3?
    private var hasAccelerometer = false
    private var expectedField: MagneticField?
    private var lastEstimateTime: Double?
    private var rejectionStreakStart: Double?
    private var lastRejection: HeadingRejection?
    private var droppedValues = 0

    /// How long rejected samples (free fall, field parallel to gravity) may last before the
    /// heading is withdrawn, seconds.
    static let rejectionGraceSeconds = 1.0

    init(daemon: Daemon) {
        self.daemon = daemon
        pipeline = HeadingPipeline(configuration: Self.pipelineConfiguration(daemon.configuration))
    }

    private static func pipelineConfiguration(_ configuration: DaemonConfiguration) -> HeadingPipeline.Configuration {
        var c = HeadingPipeline.Configuration()
        c.smoothingWindowSeconds = configuration.smoothingWindowSeconds
        return c
    }

    func configurationChanged() {
        let calibration = pipeline.calibration
        pipeline = HeadingPipeline(configuration: Self.pipelineConfiguration(daemon.configuration))
        pipeline.setCalibration(calibration)
    }

    // MARK: Claim lifecycle

    func start() {
        guard hub == nil else { return }
        pipeline.reset()
        latestAcceleration = nil
        let hub = SensorHub(configuration: daemon.options.sensorConfiguration, loop: daemon.loop, logger: daemon.logger) {
            [unowned self] event in handle(event)
        }
        self.hub = hub
        hub.start()
    }

    func stop() {
        hub?.stop()
        hub = nil
        pipeline.reset()
        latestAcceleration = nil
        daemon.updateCompass { p in
            p.heading = .nan; p.magneticHeading = .nan; p.qiblaRelativeBearing = .nan; p.headingError = .nan
            p.headingAxis = HeadingAxis.none.rawValue
            p.compassAccuracy = CompassAccuracy.unknown.rawValue
            p.magneticInterference = false
        }
    }

    func resetCalibration() -> Result<Void, ServiceError> {
        .failure(ServiceError(name: "NotSupported",
                              message: "online magnetometer calibration is not implemented in this version"))
    }

    /// The location moved: the expected Earth field (for interference detection) follows it.
    func locationChanged() {
        expectedField = daemon.currentPosition.map {
            MagneticModel.wmm2025.field(at: $0, decimalYear: DecimalYear.from(unixSeconds: WallClock.nowUnixSeconds()))
        }
        // Re-derive the true heading and the turn with the new declination and Qibla.
        daemon.updateCompass { p in self.deriveTrueValues(&p) }
    }

    // MARK: Sensor events

    private func handle(_ event: SensorEvent) {
        switch event {
        case .available(let magnetometer, let accelerometer):
            hasAccelerometer = accelerometer != nil
            if accelerometer == nil {
                daemon.logger.warning("magnetometer \(magnetometer) found but no accelerometer: a heading needs both (tilt compensation)")
            } else {
                daemon.logger.info("compass: magnetometer \(magnetometer), accelerometer \(accelerometer ?? "-")")
            }
            daemon.updateCompass { $0.hasCompass = self.hasAccelerometer }
        case .unavailable(let reason):
            daemon.logger.info("no compass: \(reason)")
            pipeline.reset()
            latestAcceleration = nil
            daemon.updateCompass { p in
                p.hasCompass = false
                p.heading = .nan; p.magneticHeading = .nan; p.qiblaRelativeBearing = .nan; p.headingError = .nan
                p.headingAxis = HeadingAxis.none.rawValue
                p.compassAccuracy = CompassAccuracy.unknown.rawValue
            }
        case .droppedValue(let count):
            droppedValues += count
            daemon.logger.debug("dropped \(count) unparseable sensor value(s); \(droppedValues) so far")
        case .samples(let samples):
            var newest: Result<HeadingEstimate, HeadingRejection>?
            for sample in samples {
                switch sample.kind {
                case .accelerometer:
                    latestAcceleration = sample.vector
                case .magnetometer:
                    guard let acceleration = latestAcceleration else { continue }
                    newest = pipeline.update(magnetic: sample.vector, acceleration: acceleration,
                                             time: Double(sample.timestampNanoseconds) / 1e9)
                    if case .failure(let reason) = newest {
                        noteRejection(reason, time: Double(sample.timestampNanoseconds) / 1e9)
                    } else {
                        rejectionStreakStart = nil
                    }
                }
            }
            if case .success(let estimate)? = newest { publish(estimate) }
        }
    }

    private func noteRejection(_ reason: HeadingRejection, time: Double) {
        if rejectionStreakStart == nil { rejectionStreakStart = time }
        if lastRejection != reason {
            daemon.logger.debug("sample rejected: \(reason)")
            lastRejection = reason
        }
        if let start = rejectionStreakStart, time - start >= Self.rejectionGraceSeconds {
            daemon.updateCompass { p in
                p.heading = .nan; p.magneticHeading = .nan; p.qiblaRelativeBearing = .nan; p.headingError = .nan
                p.compassAccuracy = CompassAccuracy.unreliable.rawValue
            }
        }
    }

    private func publish(_ estimate: HeadingEstimate) {
        daemon.refreshDeclinationIfDayChanged()
        let field = expectedField
        var (accuracy, error, interference) = estimateAccuracy(
            spreadDegrees: estimate.spreadDegrees,
            measuredFieldMicrotesla: estimate.fieldStrengthMicrotesla,
            expectedFieldMicrotesla: field.map { $0.totalNanotesla / 1000 },
            measuredInclinationDegrees: estimate.inclinationDegrees,
            expectedInclinationDegrees: field?.inclinationDegrees,
            calibrated: pipeline.calibration != .identity)
        // WMM blackout/caution zones (H < 2000 / 6000 nT): a magnetic compass is unreliable there.
        switch field?.zone {
        case .blackout?: accuracy = .unreliable
        case .caution?: if accuracy == .high || accuracy == .medium { accuracy = .low }
        case nil:
            // No location: no declination, so the true heading is unknown; say so in the accuracy.
            if accuracy == .high || accuracy == .medium { accuracy = .low }
        case .normal?: break
        }
        daemon.updateCompass { p in
            p.hasCompass = true
            p.magneticHeading = estimate.magneticHeadingDegrees
            p.headingAxis = estimate.axis.rawValue
            p.headingError = error
            p.compassAccuracy = accuracy.rawValue
            p.magneticInterference = interference
            self.deriveTrueValues(&p)
        }
    }

    /// Heading = magnetic + declination; the turn = Qibla − heading, in (−180, 180].
    private func deriveTrueValues(_ p: inout PublishedProperties) {
        p.heading = trueHeading(magnetic: p.magneticHeading, declination: p.declination) ?? .nan
        p.qiblaRelativeBearing = relativeBearing(qibla: p.qiblaBearing, heading: p.heading) ?? .nan
    }
}
