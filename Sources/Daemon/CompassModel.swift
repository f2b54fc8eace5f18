// SPDX-License-Identifier: Apache-2.0
import QiblaCore

/// The compass as clients see it: everything in the compass group but the values derived from
/// the location (true heading, the turn to the Qibla), which ``DaemonModel`` adds.
public struct CompassState: Sendable, Equatable {
    /// A magnetometer and an accelerometer are open.
    public var hasCompass = false
    /// Smoothed magnetic heading of ``axis``, degrees in [0, 360); NaN when unknown.
    public var magneticHeadingDegrees = Double.nan
    public var axis = HeadingAxis.none
    /// Which device the heading comes from.
    public var source = HeadingSource.none
    /// The heading comes from the gyroscope-aided attitude filter.
    public var fused = false
    /// One-sigma heading error estimate, degrees; NaN when unknown.
    public var headingErrorDegrees = Double.nan
    public var accuracy = CompassAccuracy.unknown
    public var magneticInterference = false
    public var calibrationNeeded = false
    /// 0 to 1.
    public var calibrationProgress = 0.0
    public var calibrationState = MagnetometerCalibrator.State.collecting
    /// What motion the calibration still needs (`none` once a fit is in use).
    public var calibrationHint = CalibrationHint.none
    /// What the calibration in use determined (`none` without an estimate, e.g. a restored fit).
    public var calibrationStage = CalibrationStage.none
    /// RMS residual of the fit in use, microtesla; NaN without a fit.
    public var calibrationResidualMicrotesla = Double.nan
    /// |b| of the fit in use, microtesla; NaN without a fit.
    public var hardIronOffsetMagnitudeMicrotesla = Double.nan
    /// Circular spread of the heading over the smoothing window, degrees; NaN when unknown. A still
    /// phone shows well under a degree.
    public var headingSpreadDegrees = Double.nan
    /// The stored sun-check correction in force (subtracted from the heading), degrees; 0 for none.
    public var headingCorrectionDegrees = 0.0

    public init() {}

    /// Forgets the heading (sensors stopped, vanished, or samples rejected for too long).
    mutating func withdrawHeading(accuracy: CompassAccuracy, axis: HeadingAxis? = HeadingAxis.none) {
        magneticHeadingDegrees = .nan
        headingErrorDegrees = .nan
        headingSpreadDegrees = .nan
        self.accuracy = accuracy
        if let axis { self.axis = axis }
    }
}

/// Where a published heading comes from (`HeadingSource` on the bus).
public enum HeadingSource: String, Sendable, CaseIterable {
    /// qiblad's own reading of a raw IIO magnetometer: calibrated and tilt-compensated here.
    case magnetometer
    /// `net.hadess.SensorProxy.Compass`: a heading computed by a sensor hub or DSP.
    case iioSensorProxy = "iio-sensor-proxy"
    case none
}

/// Turns IIO samples into ``CompassState``: every raw magnetometer sample feeds QiblaCore's online
/// `MagnetometerCalibrator` (which learns `S · (raw − b)`, says whether calibration is needed and
/// whether the field is disturbed), then the `HeadingPipeline` (with the calibration in force),
/// then the `HeadingErrorModel` (the one-sigma `HeadingError` and the accuracy class, with the WMM
/// zone and missing-location caps). The daemon's own policy here: the heading is withdrawn after
/// ``Configuration/rejectionGraceSeconds`` of rejected samples. Before a fit exists the heading is
/// still published from the uncorrected field: calibration improves the needle, it never hides it.
///
/// With a gyroscope (issue 30): while gyroscope samples arrive, the heading comes from QiblaCore's
/// `AttitudeFilter` instead (``CompassState/fused``): every sample of the three sensors feeds it in
/// time order, the magnetometer's calibrated by the correction in force, with the calibrator's
/// interference flag (the filter itself holds off a field whose strength or dip changes); the
/// calibrator keeps learning from every raw sample, with the filter's vertical for its dip
/// constraint; `HeadingError` is `HeadingErrorModel.estimateFused` (the filter's sigma with the
/// calibration and declination terms). When the gyroscope's samples stop for longer than the
/// filter's gap limit (the phone rests and the gyroscope is not read) the path above takes over
/// again, its moving average kept warm all along.
///
/// Pure: samples carry their own time (seconds, the sensor's monotonic clock); the expected
/// Earth field at the current place comes in with each sample.
public struct CompassModel: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// `smoothing-window`: circular moving-average window, seconds (0–5).
        public var smoothingWindowSeconds: Double = 0.5
        /// How long rejected samples (free fall, field parallel to gravity) may last before the
        /// heading is withdrawn, seconds.
        public var rejectionGraceSeconds: Double = 1.0
        /// The online calibrator's settings; the interference tolerances are configuration keys
        /// (`interference-field-tolerance`, `interference-dip-tolerance`, `interference-enter`,
        /// `interference-recover`).
        public var calibrator = MagnetometerCalibrator.Configuration()
        /// The attitude filter's settings (used while gyroscope samples arrive).
        public var attitudeFilter = CompassModel.defaultAttitudeFilter
        /// The heading uncertainty given to the attitude filter for a magnetometer correction
        /// that has no estimate and is not trusted (a raw field not yet seen to match the Earth's;
        /// hard iron of tens of µT turns it by anything), degrees (default 30).
        public var untrustedCorrectionSigmaDegrees = 30.0
        /// The first of a rest's means (since the gyroscope was last read) of at least this many
        /// readings levels the attitude filter's kept attitude and turns its yaw
        /// (`AttitudeFilter.addRestMeanField`; default 8, so not a drift's own reference, about
        /// four rest reads of a pose that may be on its way — BROAD trial 09 at 71.40 s, a hand's
        /// first push before the motion counted, turned the yaw 2.4°; 0 turns it off). Only the
        /// first: after it the filter's yaw is known to a fraction of a degree and has no room for
        /// a nudge it did not see (a 5° nudge at rest was left 4.75° short, `RestNudgeTests`), so
        /// a nudge's drift and settled mean are published from the field as before.
        public var restMeanMinimumSamples = 8
        /// While a provisional fit's heading uncertainty is above this (degrees, one sigma), the
        /// attitude filter does not compare the field's strength and dip with its reference
        /// (default 3: such a fit's errors move both with the attitude by more than a magnet's
        /// threshold, and a hold would leave the heading on the gyroscope for nothing). A raw field
        /// without an estimate is compared: a phone that does not turn keeps it steady.
        public var fieldTestMaximumCorrectionSigmaDegrees = 3.0

        public init() {}

        var pipeline: HeadingPipeline.Configuration {
            var c = HeadingPipeline.Configuration()
            c.smoothingWindowSeconds = smoothingWindowSeconds
            return c
        }
    }

    public enum Input: Sendable, Equatable {
        /// Sensors were found; a heading needs the accelerometer too (tilt compensation). A
        /// gyroscope, when present, is read only while the phone moves. `gyroscopeOutputHertz`: the
        /// gyroscope chip's own output rate when the reader knows it (its `sampling_frequency`, a
        /// log's `gyroscope_rate`), nil when not (`AttitudeFilter.gyroscopeOutputPeriodSeconds`).
        case sensorsAvailable(hasAccelerometer: Bool, hasGyroscope: Bool = false, gyroscopeOutputHertz: Double? = nil)
        /// No usable magnetometer (absent, vanished, failing).
        case sensorsUnavailable
        /// The last claim went: the sensors were stopped.
        case stopped
        /// An accelerometer sample, m/s² in the device frame (mount matrix applied), at `timeSeconds`.
        case acceleration(Vector3, timeSeconds: Double)
        /// A gyroscope sample, rad/s in the device frame (mount matrix applied), at `timeSeconds`.
        case angularVelocity(Vector3, timeSeconds: Double)
        /// A magnetometer sample, microtesla in the device frame, at `timeSeconds`.
        case magneticField(Vector3, timeSeconds: Double)
        /// What a resting phone's magnetometer hands over in place of a reading: the mean of
        /// `samples` readings of the still stretch (`RestDetector.restingField`), microtesla, at
        /// `timeSeconds`. Taken like a reading, except that the heading's smoothing window holds
        /// it alone (`HeadingPipeline.update(magnetic:acceleration:time:meanOfSamples:)`).
        case meanMagneticField(Vector3, timeSeconds: Double, samples: Int)
        /// What a resting phone's accelerometer hands over in place of a reading: the mean of
        /// `samples` readings (`RestDetector.restingAcceleration`), m/s², at `timeSeconds`. Taken
        /// like a reading; while the attitude filter waits for the gyroscope (a rest), a heading
        /// is published from such means, not from one moving phone's sample (the period that ends
        /// a rest: BROAD trial 05 at 286 Hz, 76.68 s, 7.7° off at 2.9 `HeadingError`s).
        case meanAcceleration(Vector3, timeSeconds: Double, samples: Int)
        /// A calibration persisted for this magnetometer: used at once, trusted (accuracy above
        /// `medium`) only once live data confirms it, discarded when live data contradicts it.
        case restoreCalibration(CalibrationFit)
        /// `ResetCalibration`, or another magnetometer: forget the fit and start learning again.
        case resetCalibration
        /// The fit of ``fitToPersist`` with this generation was written to disk.
        case calibrationPersisted(generation: Int)
        /// A heading correction from a sun check (`CheckHeadingWithSun`), degrees (measured −
        /// truth), subtracted from every heading from now on; nil removes it.
        case headingCorrection(Double?)
    }

    /// The one-sigma uncertainty of a heading correction from a sun check, degrees: aligning a
    /// phone with the sun or a shadow by eye.
    public static let sunCheckUncertaintyDegrees = 1.0

    public private(set) var configuration: Configuration
    public private(set) var state = CompassState()
    private var pipeline: HeadingPipeline
    /// The online calibrator (read it for the fit to persist and for diagnostics).
    public private(set) var calibrator: MagnetometerCalibrator
    private var appliedCalibrationGeneration = 0
    private var persistedGeneration = 0
    private let errorModel = HeadingErrorModel()
    private var latestAcceleration: Vector3?
    /// `latestAcceleration` is a rest's mean (``Input/meanAcceleration(_:timeSeconds:samples:)``),
    /// and its time, seconds.
    private var latestAccelerationIsMean = false
    private var latestAccelerationTime = -Double.infinity
    /// A rest's mean has turned the attitude filter's kept yaw since the gyroscope was last read.
    private var restMeanTakenSinceGyroscope = false
    /// An accelerometer sample this close to a field sample was read in the same period (the
    /// sampler reads the accelerometer, then the magnetometer), seconds.
    private static let samePeriodSeconds = 0.1
    private var rejectionStreakStartSeconds: Double?
    /// The attitude filter (fed while gyroscope samples arrive; idle otherwise).
    public private(set) var attitudeFilter: AttitudeFilter
    /// The latest raw magnetometer sample, microtesla (for the calibration's sigma).
    private var latestRawField: Vector3?
    /// The calibration term of the latest magnetometer sample (its covariance at the attitude).
    private var latestCalibrationUncertaintyDegrees: Double?
    /// Why the last accuracy is lower than its error alone would give (zones, no location,
    /// calibration state, interference), for logs and tests.
    public private(set) var lastAccuracyLimits: AccuracyLimits = []
    /// The error sources of the last `HeadingError` (`HeadingErrorModel`), for diagnosis.
    public private(set) var lastHeadingErrorTerms: HeadingErrorTerms?
    /// The parts of the attitude filter's sigma in the last fused heading (nil when the last
    /// heading was not fused), for diagnosis.
    public private(set) var lastFusedSigmaParts: FusedHeadingSigmaParts?
    /// The reason of the most recent rejected sample (nil after an accepted one), for logs.
    public private(set) var lastRejection: HeadingRejection?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        pipeline = HeadingPipeline(configuration: configuration.pipeline)
        calibrator = MagnetometerCalibrator(configuration: configuration.calibrator)
        attitudeFilter = AttitudeFilter(configuration: configuration.attitudeFilter)
    }

    /// The attitude filter's settings in the daemon: the defaults; the calibration's and the
    /// declination's error come from `HeadingErrorModel.estimateFused`, not from the filter.
    public static var defaultAttitudeFilter: AttitudeFilter.Configuration { AttitudeFilter.Configuration() }

    /// The fused heading extrapolated to `timeSeconds` (sensor clock) with the gyroscope's last
    /// rate (`AttitudeFilter.heading(at:)`), magnetic, without the sun-check correction; nil when
    /// the heading is not fused.
    public func fusedHeading(atSeconds timeSeconds: Double) -> FusedHeading? {
        attitudeFilter.heading(at: timeSeconds)
    }

    /// The attitude, device frame → East-North-Up with north = magnetic north (the frame of a
    /// sensor log's replay, issue 36): the attitude filter's while the heading is fused, else the
    /// TRIAD of the latest accelerometer sample and calibrated field (`TiltCompensation`); nil
    /// when unknown. Without the sun-check correction.
    public var attitudeENU: Quaternion? {
        let rows: (north: Vector3, east: Vector3, up: Vector3)
        if state.fused, attitudeFilter.isSeeded {
            let r = attitudeFilter.attitude.rotationMatrix
            rows = (r.row0, r.row1, -r.row2)
        } else if let raw = latestRawField, let a = latestAcceleration,
                  case .success(let o) = TiltCompensation.orientation(magnetic: pipeline.calibration.apply(raw), acceleration: a) {
            rows = (o.north, o.east, o.up)
        } else {
            return nil
        }
        return Quaternion(rotationMatrix: Matrix3(rows: rows.east, rows.north, rows.up))
    }

    /// New settings; the smoothing window restarts. The magnetometer calibration is kept; when the
    /// calibrator's own settings changed it starts afresh from the current fit, which live data
    /// must confirm again.
    public mutating func reconfigure(_ configuration: Configuration) {
        guard configuration != self.configuration else { return }
        let calibration = pipeline.calibration
        let calibratorChanged = configuration.calibrator != self.configuration.calibrator
        self.configuration = configuration
        pipeline = HeadingPipeline(configuration: configuration.pipeline)
        pipeline.setCalibration(calibration)
        let gyroscopeOutputPeriod = attitudeFilter.gyroscopeOutputPeriodSeconds
        attitudeFilter = AttitudeFilter(configuration: configuration.attitudeFilter)
        attitudeFilter.gyroscopeOutputPeriodSeconds = gyroscopeOutputPeriod
        state.fused = false
        if calibratorChanged {
            let fit = calibrator.fit
            let expected = calibrator.expectedField
            calibrator = MagnetometerCalibrator(configuration: configuration.calibrator)
            calibrator.setExpectedField(expected)
            if let fit { calibrator.restore(fit) }
            appliedCalibrationGeneration = -1
            applyCalibrationIfChanged()
            persistedGeneration = calibrator.calibrationGeneration
        }
    }

    /// Applies one input. `expectedField` is the WMM field at the current place (nil when no
    /// location is known).
    public mutating func apply(_ input: Input, expectedField: MagneticField?) {
        calibrator.setExpectedField(expectedField)
        switch input {
        case .sensorsAvailable(let hasAccelerometer, _, let gyroscopeHertz):
            attitudeFilter.gyroscopeOutputPeriodSeconds = gyroscopeHertz.map { 1 / $0 }
            state.hasCompass = hasAccelerometer
            if !hasAccelerometer {
                // Without gravity there is no tilt compensation: no heading rather than one from a
                // stale accelerometer sample with the class it had.
                resetSamples()
                state.withdrawHeading(accuracy: .unknown)
            }
        case .sensorsUnavailable:
            resetSamples()
            state.hasCompass = false
            state.withdrawHeading(accuracy: .unknown)
        case .stopped:
            resetSamples()
            state.withdrawHeading(accuracy: .unknown)
            state.magneticInterference = false
        case .acceleration(let vector, let time):
            (latestAcceleration, latestAccelerationIsMean, latestAccelerationTime) = (vector, false, time)
            attitudeFilter.addAcceleration(vector, time: time)
        case .meanAcceleration(let vector, let time, let samples):
            (latestAcceleration, latestAccelerationIsMean, latestAccelerationTime) = (vector, samples > 1, time)
            attitudeFilter.addAcceleration(vector, time: time)
        case .angularVelocity(let vector, let time):
            restMeanTakenSinceGyroscope = false
            attitudeFilter.addAngularVelocity(vector, time: time)
            if attitudeFilter.isTracking(at: time) {
                publishFused(at: time, expectedField: expectedField)
            }
        case .restoreCalibration(let fit):
            calibrator.restore(fit)
            applyCalibrationIfChanged()
            persistedGeneration = calibrator.calibrationGeneration
        case .resetCalibration:
            calibrator.reset()
            applyCalibrationIfChanged()
            persistedGeneration = calibrator.calibrationGeneration
        case .calibrationPersisted(let generation):
            persistedGeneration = max(persistedGeneration, generation)
        case .headingCorrection(let correction):
            let value = correction.flatMap { $0.isFinite ? Angle.normalized180($0) : nil } ?? 0
            if state.magneticHeadingDegrees.isFinite {
                state.magneticHeadingDegrees = Angle.normalized360(state.magneticHeadingDegrees + state.headingCorrectionDegrees - value)
            }
            state.headingCorrectionDegrees = value
        case .magneticField(let vector, let time):
            addMagneticField(vector, time: time, meanOfSamples: 1, expectedField: expectedField)
        case .meanMagneticField(let vector, let time, let samples):
            addMagneticField(vector, time: time, meanOfSamples: max(1, samples), expectedField: expectedField)
        }
    }

    /// A magnetometer reading, or (`meanOfSamples` > 1) the mean of a still stretch's readings.
    private mutating func addMagneticField(_ vector: Vector3, time: Double, meanOfSamples: Int, expectedField: MagneticField?) {
        // The filter's vertical, when it tracks, is better than one accelerometer sample. When
        // the two disagree beyond the filter's tilt-recovery angle, neither is trusted: the filter may be
        // the one that is wrong (a motion its gyroscope missed, until its recovery rule acts), but
        // in a fast motion it is the accelerometer, pushed by the hand, and the dip through it is
        // anything (BROAD trial 31 at 300–480 °/s: 14–87° against the lab's 69°, the field
        // flagged as interference for 10–20 s at a time while it was clean). Without a vertical
        // the calibrator skips the dip and stores the sample without a down direction. The
        // correction's heading sigma is still taken at the filter's attitude: the one the heading
        // is published from. The filter's vertical is better sample by sample, but its errors last
        // for seconds (its tilt while the gyroscope's bias is learned): the calibrator is told, so
        // that the fit does not take them for the hard iron (issue 36, sixteenth session).
        let fused = attitudeFilter.isTracking(at: time)
        let up = attitudeFilter.upDirection
        let agreeing = latestAcceleration.flatMap(\.normalized).map {
            $0.dot(up) >= cos(Angle.radians(attitudeFilter.configuration.tiltRecoveryDegrees))
        } ?? true
        let vertical = fused ? up * TiltCompensation.standardGravity : latestAcceleration
        latestRawField = vector
        calibrator.add(rawMicrotesla: vector, accelerationMetresPerSecondSquared: fused && !agreeing ? nil : vertical, time: time,
                       attitude: fused ? attitudeFilter.attitude : nil,
                       verticalFromAttitudeFilter: fused)
        applyCalibrationIfChanged(vertical: vertical)
        let correctionSigma = correctionSigmaDegrees(raw: vector, vertical: vertical)
        latestCalibrationUncertaintyDegrees = publishedCalibrationUncertaintyDegrees(correctionSigma.estimated, raw: vector,
                                                                                     vertical: vertical)
        // The filter watches for a *change* of the field's strength or dip against the
        // reference it learns (a magnet passing); the absolute comparison with WMM and the
        // fit, debounced and with the configured tolerances, is the calibrator's flag. An
        // untrusted correction (a provisional fit, an unconfirmed raw field) is a noisier
        // measurement and teaches the gyroscope no bias (issue 36); the magnetometer's lag is
        // learned through a trusted correction or a raw field that matches the Earth's so far,
        // not through one whose errors turn with the phone (a provisional fit, a raw field that
        // does not match).
        // A rest's first mean (the gyroscope is not read) levels the kept attitude and turns its
        // yaw as one measurement of its own noise (`AttitudeFilter.addRestMeanField`); anything
        // else, and a mean that update declines, goes to the filter's running update as before.
        let restMeanTaken = configuration.restMeanMinimumSamples > 1 && meanOfSamples >= configuration.restMeanMinimumSamples
            && attitudeFilter.isSeeded && !restMeanTakenSinceGyroscope
            && attitudeFilter.addRestMeanField(pipeline.calibration.apply(vector), samples: meanOfSamples,
                                               acceleration: latestAccelerationIsMean ? latestAcceleration : nil,
                                               disturbed: calibrator.magneticInterference,
                                               correctionSigmaDegrees: correctionSigma.applied)
        if restMeanTaken {
            restMeanTakenSinceGyroscope = true
        } else {
            attitudeFilter.addMagneticField(pipeline.calibration.apply(vector), time: time, expected: nil,
                                        disturbed: calibrator.magneticInterference,
                                        correctionSigmaDegrees: correctionSigma.applied,
                                        comparesField: (correctionSigma.estimated ?? 0) <= configuration.fieldTestMaximumCorrectionSigmaDegrees,
                                        learnsBias: calibrator.correctionTrusted,
                                        learnsLag: calibrator.correctionTrusted
                                            || (correctionSigma.estimated == nil && correctionSigma.applied == 0))
        }
        guard let acceleration = latestAcceleration else { return }
        // Today's path runs all along: its moving average is ready when the gyroscope stops.
        let result = pipeline.update(magnetic: vector, acceleration: acceleration, time: time, meanOfSamples: meanOfSamples)
        if fused, attitudeFilter.isTracking(at: time) {
            if case .success(let estimate) = result { state.headingSpreadDegrees = estimate.spreadDegrees }
            rejectionStreakStartSeconds = nil
            lastRejection = nil
            publishFused(at: time, expectedField: expectedField)
            return
        }
        if restMeanTaken, let heading = attitudeFilter.heading {
            // At rest: the kept attitude, turned by the rest's mean, at its own time.
            if case .success(let estimate) = result { state.headingSpreadDegrees = estimate.spreadDegrees }
            rejectionStreakStartSeconds = nil
            lastRejection = nil
            publishFused(heading, expectedField: expectedField)
            return
        }
        switch result {
        case .success(let estimate):
            rejectionStreakStartSeconds = nil
            lastRejection = nil
            // While the filter waits for the gyroscope, whose next sample reseeds it and whose
            // heading follows within a period, a moving phone's sample does not replace the
            // heading of a rest's means or of the filter:
            // - one reading alone (the window restarted): a wake's first reading is one sample's
            //   noise, not the mean's (BROAD trial 08 at 71.17 s: 11° off, where
            //   `HeadingErrorModel` says one reading is as noisy as the residual, 2–3°);
            // - a rest's mean field tilted by one accelerometer sample of the same period: the
            //   period that ends a rest (the accelerometer moved, the field did not), whose
            //   heading a hand's push turns (BROAD trial 05 at 286 Hz, 76.68 s: 7.7° off,
            //   `HeadingError` 2.7°; trial 30 at 48 Hz, 112.37 s: 5.7° off, 2.1°).
            let lone = estimate.sampleCount == 1 && meanOfSamples == 1
            let pushed = meanOfSamples > 1 && !latestAccelerationIsMean && abs(time - latestAccelerationTime) < Self.samePeriodSeconds
            if lone || pushed, attitudeFilter.isSeeded, state.magneticHeadingDegrees.isFinite {
                return
            }
            publish(estimate, raw: vector, acceleration: acceleration, expectedField: expectedField)
        case .failure(let reason):
            lastRejection = reason
            let start = rejectionStreakStartSeconds ?? time
            rejectionStreakStartSeconds = start
            if time - start >= configuration.rejectionGraceSeconds {
                state.withdrawHeading(accuracy: .unreliable, axis: nil)
            }
        }
    }

    /// The heading uncertainty of the magnetometer's correction for a raw sample, degrees: the
    /// estimate's covariance at this attitude (`estimated`, nil without an estimate), and what the
    /// attitude filter is given (`applied`): that, else nothing for a trusted correction (a
    /// restored fit, a raw field confirmed or so far seen to match), else
    /// ``Configuration/untrustedCorrectionSigmaDegrees`` (a raw field that does not match: it may
    /// carry tens of µT of hard iron).
    private func correctionSigmaDegrees(raw: Vector3, vertical: Vector3?) -> (estimated: Double?, applied: Double) {
        let estimated = vertical.flatMap { calibrator.headingSigmaDegrees(rawMicrotesla: raw, accelerationMetresPerSecondSquared: $0) }
        if let estimated, estimated.isFinite { return (estimated, estimated) }
        // A raw field that matches the Earth's (so far) is taken as it is; one that does not is
        // the untrusted case.
        let untrusted = !calibrator.correctionTrusted && calibrator.quality == .uncalibrated
        return (nil, untrusted ? configuration.untrustedCorrectionSigmaDegrees : 0)
    }

    /// The correction's heading uncertainty for the published `HeadingError`: the estimate's own
    /// (`sigma`) and, where the data cannot tell the fit in use from no correction at all
    /// (`MagnetometerCalibrator.uncorrectedFieldFitsAsWell`), the heading difference between the two
    /// in quadrature. Only what is published: the filter is given the estimate's own, so the
    /// needle does not move for it.
    private func publishedCalibrationUncertaintyDegrees(_ sigma: Double?, raw: Vector3, vertical: Vector3?) -> Double? {
        guard let vertical, let alternative = calibrator.uncorrectedAlternativeDegrees(rawMicrotesla: raw,
                                                                                    accelerationMetresPerSecondSquared: vertical)
        else { return sigma }
        let own = sigma ?? 0
        return (own * own + alternative * alternative).squareRoot()
    }

    /// Hands a new calibration to the pipeline (it restarts its smoothing window) and to the
    /// attitude filter, which takes the new field's yaw at its next sample with the new
    /// correction's uncertainty (issue 36: keeping the old yaw, its innovation gate held the
    /// now-correct field off as a magnet, on a gyroscope whose bias it could not see), and
    /// mirrors the calibrator's state.
    private mutating func applyCalibrationIfChanged(vertical: Vector3? = nil) {
        if calibrator.calibrationGeneration != appliedCalibrationGeneration {
            appliedCalibrationGeneration = calibrator.calibrationGeneration
            let previous = pipeline.calibration
            pipeline.setCalibration(calibrator.calibration, restartingWindow: !calibrator.isProvisional)
            let sigma = latestRawField.map { correctionSigmaDegrees(raw: $0, vertical: vertical ?? latestAcceleration).applied }
                ?? configuration.untrustedCorrectionSigmaDegrees
            attitudeFilter.magneticReferenceChanged(yawSigmaDegrees: sigma, previousField: latestRawField.map(previous.apply),
                                                    newField: latestRawField.map(calibrator.calibration.apply))
        }
        state.calibrationNeeded = calibrator.calibrationNeeded
        state.calibrationProgress = calibrator.progress
        state.magneticInterference = calibrator.magneticInterference
        state.calibrationState = calibrator.state
        state.calibrationHint = state.hasCompass || calibrator.state == .collecting ? calibrator.hint : .none
        state.calibrationStage = calibrator.stage
        state.calibrationResidualMicrotesla = calibrator.fit?.residualRMSMicrotesla ?? .nan
        state.hardIronOffsetMagnitudeMicrotesla = calibrator.fit?.hardIronOffsetMicrotesla.length ?? .nan
    }

    /// A newly accepted fit not yet on disk, with its generation (report the write with
    /// ``Input/calibrationPersisted(generation:)``). Only accepted fits are persisted: a restored
    /// one is already on disk, and one being confirmed is not worth writing again.
    public var fitToPersist: (fit: CalibrationFit, generation: Int)? {
        guard calibrator.state == .calibrated, let fit = calibrator.fit,
              calibrator.calibrationGeneration != persistedGeneration else { return nil }
        return (fit, calibrator.calibrationGeneration)
    }

    private mutating func resetSamples() {
        pipeline.reset()
        latestAcceleration = nil
        (latestAccelerationIsMean, latestAccelerationTime) = (false, -.infinity)
        rejectionStreakStartSeconds = nil
        attitudeFilter.forgetAttitude()
        latestRawField = nil
        latestCalibrationUncertaintyDegrees = nil
        state.fused = false
    }

    private mutating func publishFused(at time: Double, expectedField field: MagneticField?) {
        guard let heading = attitudeFilter.heading(at: time) else { return }
        publishFused(heading, expectedField: field)
    }

    private mutating func publishFused(_ heading: FusedHeading, expectedField field: MagneticField?) {
        let horizontal = latestRawField.map { pipeline.calibration.apply($0) }.map { m -> Double in
            let down = attitudeFilter.upDirection * -1
            return (m - down * m.dot(down)).length
        } ?? 0
        let error = errorModel.estimateFused(filterSigmaDegrees: heading.sigmaDegrees,
                                             holdingOnGyroscope: heading.magneticState != .tracking,
                                             calibration: calibrator.quality, fieldDisturbed: calibrator.fieldDisturbed,
                                             expectedField: field, horizontalFieldMicrotesla: horizontal,
                                             calibrationUncertaintyDegrees: latestCalibrationUncertaintyDegrees)
        state.hasCompass = true
        state.source = .magnetometer
        state.fused = true
        state.magneticHeadingDegrees = Angle.normalized360(heading.magneticHeadingDegrees - state.headingCorrectionDegrees)
        state.axis = heading.axis
        state.headingErrorDegrees = state.headingCorrectionDegrees == 0 ? error.headingErrorDegrees
            : min(error.headingErrorDegrees, (heading.sigmaDegrees * heading.sigmaDegrees
                + Self.sunCheckUncertaintyDegrees * Self.sunCheckUncertaintyDegrees).squareRoot())
        state.accuracy = error.accuracy
        lastAccuracyLimits = error.limits
        lastHeadingErrorTerms = error.terms
        lastFusedSigmaParts = heading.sigmaParts
    }

    private mutating func publish(_ estimate: HeadingEstimate, raw: Vector3, acceleration: Vector3,
                                  expectedField field: MagneticField?) {
        let error = errorModel.estimate(estimate, calibration: calibrator.quality,
                                        fieldDisturbed: calibrator.fieldDisturbed, expectedField: field,
                                        fittedFieldMicrotesla: calibrator.fit?.fieldMicrotesla,
                                        calibrationUncertaintyDegrees: publishedCalibrationUncertaintyDegrees(
                                            calibrator.headingSigmaDegrees(rawMicrotesla: raw, accelerationMetresPerSecondSquared: acceleration),
                                            raw: raw, vertical: acceleration))
        state.hasCompass = true
        state.source = .magnetometer
        state.fused = false
        state.magneticHeadingDegrees = Angle.normalized360(estimate.magneticHeadingDegrees - state.headingCorrectionDegrees)
        state.axis = estimate.axis
        state.headingSpreadDegrees = estimate.spreadDegrees
        // A sun check measured the needle's whole bias (calibration, declination, mounting): with a
        // correction in force what is left is the window's noise and the check's own uncertainty.
        state.headingErrorDegrees = state.headingCorrectionDegrees == 0 ? error.headingErrorDegrees
            : min(error.headingErrorDegrees, (estimate.spreadDegrees * estimate.spreadDegrees
                + Self.sunCheckUncertaintyDegrees * Self.sunCheckUncertaintyDegrees).squareRoot())
        state.accuracy = error.accuracy
        lastAccuracyLimits = error.limits
        lastHeadingErrorTerms = error.terms
        lastFusedSigmaParts = nil
    }
}
