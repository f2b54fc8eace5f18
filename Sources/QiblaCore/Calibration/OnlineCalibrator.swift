// SPDX-License-Identifier: Apache-2.0
/// How far the magnetometer correction in use can be trusted: the calibration input of
/// `HeadingErrorModel`.
public enum CalibrationQuality: Sendable, Equatable {
    /// An accepted (or validated) fit with this RMS residual, microtesla.
    case calibrated(residualMicrotesla: Double)
    /// A restored fit not yet confirmed by live data, with its RMS residual, microtesla.
    case unvalidated(residualMicrotesla: Double)
    /// No fit, but the uncorrected field has matched the expected field for a while (a
    /// factory-calibrated sensor).
    case uncalibratedMatching
    /// No fit, and the live field does not match (or has not yet been seen to match).
    case uncalibrated
}

/// The online magnetometer calibrator: the lifecycle state machine of issue 10, as a pure value.
///
/// The daemon calls `add(rawMicrotesla:accelerationMetresPerSecondSquared:time:)` for every
/// magnetometer sample (O(1), no heap allocation; about once a second it also runs a fit attempt,
/// which is allocation-free too) and reads `calibration` (apply it with
/// `HeadingPipeline.setCalibration`, it changes only when `calibrationGeneration` does),
/// `progress`, `calibrationNeeded`, `magneticInterference`, `quality` and `fieldDisturbed` (inputs of
/// `HeadingErrorModel`). `setExpectedField` takes the WMM2025 field when the location changes.
///
/// States:
/// - `collecting`: no fit; samples go into a `CalibrationSampleSet`; every `fitIntervalSeconds` a
///   fit is attempted and judged by `CalibrationAcceptance`; `progress` is the largest coverage
///   seen (monotone). An accepted fit moves to `calibrated`.
/// - `unvalidated`: a restored fit is applied but not trusted; matching live data for
///   `confirmationSeconds` across `confirmationMinimumCells` direction cells validates it
///   (→ `calibrated`), contradiction discards it (→ `collecting`).
/// - `calibrated`: an accepted fit; the corrected field is compared with the fitted radius and the
///   WMM dip. A mismatch that lasts `contradictionSeconds` (leaky) across
///   `contradictionMinimumCells` direction cells — a swapped sensor, a magnet glued into a case —
///   discards the fit (→ `collecting`, `calibrationNeeded` again); a shorter or single-direction one
///   is interference.
///
/// `calibrationNeeded` is measured, not assumed: true only while collecting when the uncorrected
/// field has been seen not to match the expected field (debounced by the interference detector) and
/// has not since been confirmed to match; latched until a fit is accepted or the field is confirmed.
public struct MagnetometerCalibrator: Sendable {
    public struct Configuration: Sendable, Equatable {
        public var sampleSet: CalibrationSampleSet.Configuration
        public var fitter: EllipsoidFitter.Configuration
        public var acceptance: CalibrationAcceptance
        public var interference: MagneticInterferenceDetector.Configuration
        /// Seconds of sample time between fit attempts while collecting (default 1).
        public var fitIntervalSeconds: Double
        /// A fit is attempted only from this fraction of `acceptance.minimumCoverage` on (default
        /// 0.5); below it the attempt is rejected for coverage without fitting.
        public var fitFromCoverageFraction: Double
        /// The raw field must move this far from the last motion anchor for the interval to count
        /// as motion, microtesla (default 3: several times the noise, so a still phone adds none).
        public var motionThresholdMicrotesla: Double
        /// Longest interval one motion step may add, seconds (default 0.5).
        public var maximumMotionStepSeconds: Double
        /// Leaky mismatch time after which an applied fit (or a confirmed uncorrected field) is
        /// declared contradicted, seconds (default 5).
        public var contradictionSeconds: Double
        /// Distinct direction cells the mismatching samples must span for a contradiction (default 4),
        /// so a phone resting on a steel table is interference, not a new sensor.
        public var contradictionMinimumCells: Int
        /// During a contradiction the corrected magnitude must vary by at least this fraction of the
        /// expected field across the mismatching samples (default 0.2). A disturbance fixed in the
        /// world (a magnet on the desk, a car) leaves |corrected| nearly constant as the phone turns;
        /// a changed hard iron b′ makes it range over |F ± (b′ − b)|.
        public var contradictionMagnitudeSpreadFraction: Double
        /// Seconds of matching field needed to confirm a restored fit or the uncorrected field (default 2).
        public var confirmationSeconds: Double
        /// Distinct direction cells the matching samples must span to confirm (default 3).
        public var confirmationMinimumCells: Int
        /// Seconds of clean field after which an uncorrected sensor counts as `uncalibratedMatching`
        /// for the accuracy model (default 0.5).
        public var matchingEvidenceSeconds: Double

        public init(sampleSet: CalibrationSampleSet.Configuration = .init(),
                    fitter: EllipsoidFitter.Configuration = .init(),
                    acceptance: CalibrationAcceptance = .init(),
                    interference: MagneticInterferenceDetector.Configuration = .init(),
                    fitIntervalSeconds: Double = 1, fitFromCoverageFraction: Double = 0.5,
                    motionThresholdMicrotesla: Double = 3, maximumMotionStepSeconds: Double = 0.5,
                    contradictionSeconds: Double = 5, contradictionMinimumCells: Int = 4,
                    contradictionMagnitudeSpreadFraction: Double = 0.2,
                    confirmationSeconds: Double = 2, confirmationMinimumCells: Int = 3,
                    matchingEvidenceSeconds: Double = 0.5) {
            self.sampleSet = sampleSet
            self.fitter = fitter
            self.acceptance = acceptance
            self.interference = interference
            self.fitIntervalSeconds = fitIntervalSeconds
            self.fitFromCoverageFraction = fitFromCoverageFraction
            self.motionThresholdMicrotesla = motionThresholdMicrotesla
            self.maximumMotionStepSeconds = maximumMotionStepSeconds
            self.contradictionSeconds = contradictionSeconds
            self.contradictionMinimumCells = contradictionMinimumCells
            self.contradictionMagnitudeSpreadFraction = contradictionMagnitudeSpreadFraction
            self.confirmationSeconds = confirmationSeconds
            self.confirmationMinimumCells = confirmationMinimumCells
            self.matchingEvidenceSeconds = matchingEvidenceSeconds
        }
    }

    /// The lifecycle state.
    public enum State: String, Sendable, Equatable {
        case collecting, unvalidated, calibrated
    }

    public let configuration: Configuration
    public private(set) var state = State.collecting
    /// The fit in use (accepted or restored), `nil` while collecting.
    public private(set) var fit: CalibrationFit?
    /// Incremented whenever `calibration` changes (accept, restore, discard, reset).
    public private(set) var calibrationGeneration = 0
    /// `CalibrationProgress`: the largest orientation coverage seen while collecting (monotone),
    /// 1 once a fit is applied.
    public private(set) var progress = 0.0
    /// Why the latest fit attempt was not accepted (`nil` before any attempt and after acceptance).
    public private(set) var lastRejection: CalibrationRejection?
    /// The latest fit computed, accepted or not (diagnostics).
    public private(set) var lastAttemptedFit: CalibrationFit?
    /// Seconds of motion seen while collecting.
    public private(set) var motionSeconds = 0.0
    /// How many applied fits were discarded as contradicted by live data.
    public private(set) var discardedFitCount = 0
    /// The expected field at the current location (WMM2025), `nil` when unknown.
    public private(set) var expectedField: MagneticField?

    private var samples: CalibrationSampleSet
    private var fitter: EllipsoidFitter
    private var detector: MagneticInterferenceDetector
    private var lastTime: Double?
    private var lastAttemptTime: Double?
    private var motionAnchor: Vector3?
    private var motionAnchorTime = 0.0
    private var fieldConfirmed = false
    private var needsCalibrationLatched = false
    private var matchSeconds = 0.0
    private var matchCells: UInt64 = 0
    private var mismatchSeconds = 0.0
    private var mismatchCells: UInt64 = 0
    private var mismatchMinimumField = Double.infinity
    private var mismatchMaximumField = 0.0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        samples = CalibrationSampleSet(configuration: configuration.sampleSet)
        fitter = EllipsoidFitter(configuration: configuration.fitter)
        detector = MagneticInterferenceDetector(configuration: configuration.interference)
    }

    // MARK: What the daemon reads

    /// The correction to apply to raw samples (identity while collecting).
    public var calibration: MagnetometerCalibration { fit?.calibration ?? .identity }

    /// `CalibrationNeeded`: no fit and the live field is known not to match the expected field.
    public var calibrationNeeded: Bool { state == .collecting && needsCalibrationLatched }

    /// Whether the (corrected) live field currently differs from the expected one (debounced),
    /// whatever the cause: interference or a wrong calibration. An input of `HeadingErrorModel`.
    public var fieldDisturbed: Bool { detector.isDisturbed }

    /// `MagneticInterference`: the field is disturbed while the correction in use is trusted
    /// (an accepted fit, or an uncorrected field that was confirmed to match). A disturbance seen
    /// through an untrusted correction is reported as `calibrationNeeded` instead.
    public var magneticInterference: Bool {
        detector.isDisturbed && (state == .calibrated || (state == .collecting && fieldConfirmed))
    }

    /// The calibration input of the accuracy model.
    public var quality: CalibrationQuality {
        switch state {
        case .calibrated: return .calibrated(residualMicrotesla: fit?.residualRMSMicrotesla ?? 0)
        case .unvalidated: return .unvalidated(residualMicrotesla: fit?.residualRMSMicrotesla ?? 0)
        case .collecting:
            if needsCalibrationLatched || detector.isDisturbed { return .uncalibrated }
            return fieldConfirmed || detector.cleanSeconds >= configuration.matchingEvidenceSeconds
                ? .uncalibratedMatching : .uncalibrated
        }
    }

    /// Orientation coverage of the current collection, 0–1 (not monotone; see `progress`).
    public var coverage: Double { samples.coverage }

    /// Samples stored for the next fit.
    public var storedSampleCount: Int { samples.sampleCount }

    /// Memory bound: the calibrator's inline size plus the heap storage it allocated in `init`,
    /// bytes. Nothing is allocated after `init`.
    public var memoryBytes: Int {
        MemoryLayout<Self>.size + samples.storageBytes + fitter.storageBytes
    }

    // MARK: What the daemon calls

    /// Sets the WMM2025 field at the current location (`nil`: unknown). Restarts the debounces.
    public mutating func setExpectedField(_ field: MagneticField?) {
        guard field != expectedField else { return }
        expectedField = field
        detector.reset()
        clearEvidence()
    }

    /// Applies a persisted fit as `unvalidated`: used at once, trusted only after live data
    /// confirms it, discarded when live data contradicts it. An invalid fit is ignored.
    public mutating func restore(_ restored: CalibrationFit) {
        guard restored.calibration.isValid, restored.fieldMicrotesla.isFinite, restored.fieldMicrotesla > 0 else { return }
        fit = restored
        state = .unvalidated
        progress = 1
        lastRejection = nil
        calibrationGeneration += 1
        samples.removeAll()
        detector.reset()
        clearEvidence()
        needsCalibrationLatched = false
    }

    /// Forgets the fit and every sample and starts collecting afresh (`ResetCalibration`). The
    /// expected field is kept.
    public mutating func reset() {
        if fit != nil { calibrationGeneration += 1 }
        discard(countAsContradiction: false)
        lastTime = nil
        lastAttemptTime = nil
        lastAttemptedFit = nil
        lastRejection = nil
    }

    /// Processes one raw magnetometer sample.
    /// - Parameters:
    ///   - rawMicrotesla: the uncorrected reading, microtesla, device frame (after the mount matrix).
    ///   - acceleration: the latest accelerometer reading (reaction to gravity, m/s², device frame),
    ///     for the dip; `nil` skips the dip comparison.
    ///   - time: sample time, seconds, any monotonic origin. Non-finite samples are ignored; time
    ///     running backwards restarts the time steps.
    public mutating func add(rawMicrotesla raw: Vector3, accelerationMetresPerSecondSquared acceleration: Vector3?,
                             time: Double) {
        guard raw.isFinite, time.isFinite else { return }
        var step = 0.0
        if let last = lastTime, time >= last { step = min(time - last, configuration.interference.maximumStepSeconds) }
        if let last = lastTime, time < last { lastAttemptTime = nil; motionAnchor = nil }
        lastTime = time

        // Compare the corrected field with the expectation.
        let corrected = fit.map { $0.calibration.apply(raw) } ?? raw
        let field = corrected.length
        var inclination: Double?
        if let a = acceleration, a.isFinite {
            let g = a.length
            if g >= TiltCompensation.freeFallFraction * TiltCompensation.standardGravity, field > 0 {
                let down = -corrected.dot(a) / (g * field)
                inclination = Angle.degrees(asin(max(-1, min(1, down))))
            }
        }
        let expectedMagnitude: Double? = state == .calibrated
            ? fit?.fieldMicrotesla : expectedField.map { $0.totalNanotesla / 1000 }
        let disturbed = detector.update(fieldMicrotesla: field, inclinationDegrees: inclination,
                                        expectedFieldMicrotesla: expectedMagnitude,
                                        expectedInclinationDegrees: expectedField?.inclinationDegrees, time: time)
        let cellBit: UInt64 = samples.cells.index(of: corrected).map { 1 << UInt64($0 & 63) } ?? 0
        updateEvidence(matched: detector.lastSampleMatched == true, disturbed: disturbed, cellBit: cellBit,
                       fieldMicrotesla: field, expectedFieldMicrotesla: expectedMagnitude, step: step)

        guard state == .collecting else { return }
        if let anchor = motionAnchor {
            if (raw - anchor).length >= configuration.motionThresholdMicrotesla {
                motionSeconds += min(max(0, time - motionAnchorTime), configuration.maximumMotionStepSeconds)
                motionAnchor = raw
                motionAnchorTime = time
            }
        } else {
            motionAnchor = raw
            motionAnchorTime = time
        }
        samples.add(raw, time: time)
        progress = max(progress, samples.coverage)
        if let last = lastAttemptTime, time - last < configuration.fitIntervalSeconds { return }
        if lastAttemptTime == nil { lastAttemptTime = time; return }
        lastAttemptTime = time
        attemptFit()
    }

    // MARK: Evidence

    private mutating func clearEvidence() {
        matchSeconds = 0; matchCells = 0
        clearMismatch()
        fieldConfirmed = state == .calibrated
    }

    private mutating func clearMismatch() {
        mismatchSeconds = 0; mismatchCells = 0
        mismatchMinimumField = .infinity; mismatchMaximumField = 0
    }

    private mutating func updateEvidence(matched: Bool, disturbed: Bool, cellBit: UInt64, fieldMicrotesla: Double,
                                         expectedFieldMicrotesla: Double?, step: Double) {
        if matched {
            matchSeconds += step
            matchCells |= cellBit
        }
        if disturbed {
            mismatchSeconds += step
            if !matched {
                mismatchCells |= cellBit
                mismatchMinimumField = min(mismatchMinimumField, fieldMicrotesla)
                mismatchMaximumField = max(mismatchMaximumField, fieldMicrotesla)
            }
        } else {
            mismatchSeconds = max(0, mismatchSeconds - step)
            if mismatchSeconds == 0 { clearMismatch() }
        }
        let reference = expectedFieldMicrotesla ?? fieldMicrotesla
        let confirmed = !disturbed && matchSeconds >= configuration.confirmationSeconds
            && matchCells.nonzeroBitCount >= configuration.confirmationMinimumCells
        let contradicted = mismatchSeconds >= configuration.contradictionSeconds
            && mismatchCells.nonzeroBitCount >= configuration.contradictionMinimumCells
            && mismatchMaximumField - mismatchMinimumField >= configuration.contradictionMagnitudeSpreadFraction * reference
        switch state {
        case .calibrated:
            if contradicted { discard(countAsContradiction: true) }
        case .unvalidated:
            if contradicted {
                discard(countAsContradiction: true)
            } else if confirmed {
                state = .calibrated
                fieldConfirmed = true
                detector.reset()
                clearMismatch()
            }
        case .collecting:
            if contradicted, fieldConfirmed {
                fieldConfirmed = false
                matchSeconds = 0; matchCells = 0
            }
            if confirmed, !needsCalibrationLatched || matchCells.nonzeroBitCount >= configuration.confirmationMinimumCells {
                fieldConfirmed = true
                needsCalibrationLatched = false
            }
            if disturbed, !fieldConfirmed {
                needsCalibrationLatched = true
                matchSeconds = 0; matchCells = 0
            }
        }
    }

    private mutating func discard(countAsContradiction: Bool) {
        if fit != nil {
            calibrationGeneration += 1
            if countAsContradiction { discardedFitCount += 1 }
        }
        fit = nil
        state = .collecting
        progress = 0
        motionSeconds = 0
        motionAnchor = nil
        samples.removeAll()
        detector.reset()
        needsCalibrationLatched = false
        clearEvidence()
    }

    // MARK: Fitting

    private mutating func attemptFit() {
        let acceptance = configuration.acceptance
        let coverage = samples.coverage
        guard coverage >= configuration.fitFromCoverageFraction * acceptance.minimumCoverage,
              samples.sampleCount >= 12 else {
            lastRejection = .insufficientCoverage(fraction: coverage)
            return
        }
        // Move the fitter out (its scratch stays uniquely referenced: no copy, no allocation).
        var fitter = EllipsoidFitter.unallocated
        swap(&fitter, &self.fitter)
        let result = samples.withPackedSamples { fitter.fit($0) }
        swap(&fitter, &self.fitter)
        lastAttemptedFit = result
        guard let result else {
            lastRejection = .fitFailed
            return
        }
        // A plausible fit is the better centre for bucketing directions.
        if result.eigenvalueSpread <= 3, result.fieldMicrotesla > 5, result.fieldMicrotesla < 500 {
            samples.recentre(result.hardIronOffsetMicrotesla)
        }
        if let rejection = acceptance.checkCollection(coverage: samples.coverage, sampleCount: samples.sampleCount,
                                                      motionSeconds: motionSeconds) {
            lastRejection = rejection
            return
        }
        let axes = samples.spread(from: result.hardIronOffsetMicrotesla,
                                  threshold: acceptance.hemisphereComponentThreshold).axesWithBothHemispheres
        if let rejection = acceptance.check(result, hemisphereAxes: axes,
                                            expectedFieldMicrotesla: expectedField.map { $0.totalNanotesla / 1000 }) {
            lastRejection = rejection
            return
        }
        fit = result
        state = .calibrated
        progress = 1
        lastRejection = nil
        calibrationGeneration += 1
        needsCalibrationLatched = false
        detector.reset()
        clearEvidence()
    }
}
