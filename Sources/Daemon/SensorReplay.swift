// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaInterface

/// Runs recorded samples through the daemon's own model, as fast as the caller feeds them
/// (`qibla-sim replay --offline`, the BROAD tests and benchmark; issue 36): the ``DaemonModel``
/// with the log's place as a manual location (declination, expected field), every sensor
/// available, and the polling sampler's rest policy in front of it — `RestDetector` sees every
/// accelerometer and magnetometer sample read; while the phone rests the gyroscope is not read,
/// the other two are read only at ``restSampleRateHertz`` (and once more at the next instant
/// after a read near motion, `RestDetector.isNearMotion`) and reach the model only when
/// `RestDetector.shouldHandOver()` says they carry something new (`PollingSampler`'s rule).
///
/// What differs from the running daemon: samples come at the log's instants rather than the
/// sampler's clock (a log recorded at another rate is replayed at that rate), and the publisher's
/// rate limit is not applied — ``Output`` is what a `Get` would answer after each instant.
///
/// Pure: no clock, no I/O.
public struct SensorReplay: Sendable {
    /// What a client would read after one instant.
    public struct Output: Sendable, Equatable {
        /// `MagneticHeading`, degrees; NaN when unknown.
        public var magneticHeadingDegrees: Double
        /// `Heading` (true), degrees; NaN when unknown (no place, or no heading).
        public var trueHeadingDegrees: Double
        /// `HeadingError`, degrees; NaN when unknown.
        public var headingErrorDegrees: Double
        /// `HeadingFused`.
        public var fused: Bool
        /// `HeadingAxis`: the device axis the heading is of.
        public var axis: HeadingAxis
        public var accuracy: CompassAccuracy
        /// The attitude, device → East-North-Up with north = magnetic north (`CompassModel.attitudeENU`).
        public var attitudeENU: Quaternion?
    }

    public private(set) var model: DaemonModel
    /// Rest-period reads per second (the daemon's `rest-sample-rate`); nil reads every instant.
    public let restSampleRateHertz: Double?
    private var detector: RestDetector
    private var lastRestReadSeconds: Double?
    /// A rest read came near motion (`RestDetector.isNearMotion`): the next instant is read
    /// too, as the sampler reads it again one full period later, and the rest's reads keep their times.
    private var rereadDue = false
    /// Rest reads read again at once because they came near motion, for reports.
    public private(set) var nearMotionRereads = 0
    private let unixSecondsAtStart: Double
    private var firstInstantSeconds: Double?
    /// Instants whose samples the rest policy kept from the model, for reports.
    public private(set) var instantsHeldAtRest = 0

    /// - Parameters:
    ///   - position: the log's place (nil: no location, so no true heading and no expected field).
    ///   - unixSecondsAtStart: the wall-clock time of the log's first instant (the magnetic model's date).
    ///   - hasGyroscope: the log carries gyroscope samples.
    ///   - gyroscopeOutputHertz: the gyroscope chip's own output rate when known (a log's
    ///     `gyroscope_rate`: its samples are every n-th of a faster stream), nil when not.
    public init(configuration: DaemonModel.Configuration = DaemonModel.Configuration(), position: GeodeticPosition?,
                unixSecondsAtStart: Double, hasGyroscope: Bool, gyroscopeOutputHertz: Double? = nil,
                rest: RestDetector.Configuration = RestDetector.Configuration(), restSampleRateHertz: Double? = 2) {
        var configuration = configuration
        if let hertz = restSampleRateHertz, hertz.isFinite, hertz > 0 {
            configuration.compass.attitudeFilter.restReadIntervalSeconds = 1 / hertz
        }
        model = DaemonModel(configuration: configuration)
        detector = RestDetector(configuration: rest.forPhone(hasGyroscope: hasGyroscope))
        self.restSampleRateHertz = restSampleRateHertz.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
        self.unixSecondsAtStart = unixSecondsAtStart
        if let position {
            let location = Location(position: position, horizontalAccuracyMetres: nil, timestampUnixSeconds: unixSecondsAtStart)
            model.apply(.manualSet(location), nowUnixSeconds: unixSecondsAtStart)
        }
        _ = model.claim(by: "replay")
        model.apply(.sensorsAvailable(hasAccelerometer: true, hasGyroscope: hasGyroscope,
                                      gyroscopeOutputHertz: hasGyroscope ? gyroscopeOutputHertz : nil),
                    nowUnixSeconds: unixSecondsAtStart)
    }

    /// A stored calibration, restored before the first sample as qiblad restores its state
    /// directory's when the magnetometer appears: used at once, `unvalidated` until live samples
    /// confirm it, discarded when they contradict it (`MagnetometerCalibrator.restore`).
    public mutating func restoreCalibration(_ fit: CalibrationFit) {
        model.apply(.restoreCalibration(fit), nowUnixSeconds: unixSecondsAtStart)
    }

    /// The fit of `model.compass.fitToPersist` with this generation was written, as qiblad
    /// reports its state file's write.
    public mutating func calibrationPersisted(generation: Int) {
        model.apply(.calibrationPersisted(generation: generation), nowUnixSeconds: unixSecondsAtStart)
    }

    /// Feeds one instant's samples (device frame: m/s², rad/s, µT) taken at `timeSeconds` (the
    /// log's clock) and returns what a client would read after it.
    public mutating func apply(timeSeconds: Double, acceleration: Vector3?, angularVelocity: Vector3?,
                               magneticField: Vector3?) -> Output {
        var acceleration = acceleration, magneticField = magneticField
        let start = firstInstantSeconds ?? timeSeconds
        firstInstantSeconds = start
        let now = unixSecondsAtStart + (timeSeconds - start)
        var resting = false, meanOfFields = 1, meanOfAccelerations = 1
        if restSampleRateHertz != nil {
            resting = detector.isResting
            let rereading = rereadDue
            rereadDue = false
            if resting, !rereading, let last = lastRestReadSeconds, let hertz = restSampleRateHertz,
               timeSeconds - last < 1 / hertz - 1e-6 {
                // Not a rest-period read: the sampler sleeps through this instant.
                instantsHeldAtRest += 1
                return output()
            }
            if let a = acceleration { detector.addAcceleration(a, time: timeSeconds) }
            if let m = magneticField { detector.addField(m, time: timeSeconds) }
            let handOver = detector.shouldHandOver()
            if rereading { nearMotionRereads += 1 } else { lastRestReadSeconds = resting ? timeSeconds : nil }
            // A rest read near motion is read again at once (not a re-read's own: one extra
            // read at most per rest period).
            rereadDue = resting && !rereading && detector.isResting && detector.isNearMotion
            if resting, !handOver {
                instantsHeldAtRest += 1
                return output()
            }
            if resting {
                // The still stretch's means go on in place of the instant's own samples.
                if acceleration != nil, let mean = detector.restingAcceleration {
                    (acceleration, meanOfAccelerations) = (mean, max(1, detector.restingAccelerationSampleCount))
                }
                if magneticField != nil, let mean = detector.restingField {
                    (magneticField, meanOfFields) = (mean, max(1, detector.restingFieldSampleCount))
                }
            }
        }
        // The gyroscope's sample first: it closes the period that ends at this instant, so the
        // accelerometer's and the magnetometer's updates see the attitude it brings.
        if !resting, let w = angularVelocity { model.apply(.angularVelocity(w, timeSeconds: timeSeconds), nowUnixSeconds: now) }
        if let a = acceleration {
            model.apply(meanOfAccelerations > 1 ? .meanAcceleration(a, timeSeconds: timeSeconds, samples: meanOfAccelerations)
                                                : .acceleration(a, timeSeconds: timeSeconds), nowUnixSeconds: now)
        }
        if let m = magneticField {
            model.apply(meanOfFields > 1 ? .meanMagneticField(m, timeSeconds: timeSeconds, samples: meanOfFields)
                                         : .magneticField(m, timeSeconds: timeSeconds), nowUnixSeconds: now)
        }
        return output()
    }

    private func output() -> Output {
        let p = model.properties
        return Output(magneticHeadingDegrees: p.magneticHeading, trueHeadingDegrees: p.heading,
                      headingErrorDegrees: p.headingError, fused: p.headingFused, axis: p.headingAxis, accuracy: p.compassAccuracy,
                      attitudeENU: p.magneticHeading.isFinite ? model.compass.attitudeENU : nil)
    }
}
