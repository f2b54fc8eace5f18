// SPDX-License-Identifier: Apache-2.0
/// How far the magnetometer correction in use can be trusted: the calibration input of
/// `HeadingErrorModel`.
public enum CalibrationQuality: Sendable, Equatable {
    /// An accepted (or validated) fit with this RMS residual, microtesla.
    case calibrated(residualMicrotesla: Double)
    /// A restored fit not yet confirmed by live data, with its RMS residual, microtesla.
    case unvalidated(residualMicrotesla: Double)
    /// No accepted fit yet; the best current estimate is in use, with its RMS residual, microtesla.
    /// Its uncertainty at the current attitude is `MagnetometerCalibrator.headingSigmaDegrees`.
    case provisional(residualMicrotesla: Double)
    /// No fit, but the uncorrected field has matched the expected field for a while (a
    /// factory-calibrated sensor).
    case uncalibratedMatching
    /// No fit, and the live field does not match (or has not yet been seen to match).
    case uncalibrated
}

/// What motion the calibration still needs (`CalibrationHint`), from the estimate's weakest
/// attitude.
public enum CalibrationHint: String, Sendable, Equatable, CaseIterable {
    /// Nothing: a fit is in use and trusted (or no magnetometer).
    case none
    /// Too few distinct samples or too little motion yet: move the phone.
    case move
    /// The heading is still uncertain with the top edge tilted up or down.
    case tiltForwardBack = "tilt-forward-back"
    /// The heading is still uncertain with the phone rolled to the left or right.
    case tiltLeftRight = "tilt-left-right"
    /// The heading is still uncertain even flat: turn through all directions.
    case turnAround = "turn-around"
    /// The samples do not fit any calibration within its limits (a magnet, steel, a laptop near).
    case awayFromMetal = "away-from-metal"

    /// What to tell the user, in English (empty for `none`).
    public var instruction: String {
        switch self {
        case .none: ""
        case .move: "keep moving the phone slowly through different orientations"
        case .tiltForwardBack: "tilt the top edge down and up as you move"
        case .tiltLeftRight: "roll the phone to the left and right as you move"
        case .turnAround: "turn round slowly, all the way, with the phone"
        case .awayFromMetal: "move away from metal, magnets and electronics"
        }
    }
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
/// - `collecting`: no accepted fit; samples (with the accelerometer's down direction) go into a
///   `CalibrationSampleSet`; every `fitIntervalSeconds` `CalibrationEstimator` estimates the
///   calibration with its covariance. Once the hard iron is determined (`CalibrationStage`) and the
///   fit is plausible, that estimate is used **provisionally** (`calibration`, `quality`
///   `.provisional`, and its heading uncertainty at the current attitude in
///   `headingSigmaDegrees`): the needle is usable while the calibration learns. `CalibrationAcceptance`
///   accepts the estimate by its uncertainty (→ `calibrated`). `progress` measures the
///   uncertainty shrinking towards the acceptance limit (monotone); `hint` says what motion is
///   missing.
/// - `unvalidated`: a restored fit is applied but not trusted; matching live data for
///   `confirmationSeconds` across `confirmationMinimumCells` direction cells validates it
///   (→ `calibrated`), contradiction discards it (→ `collecting`).
/// - `calibrated`: an accepted fit; samples keep being collected (bounded, while the field is not
///   disturbed) and every `refineIntervalSeconds` a new estimate replaces the fit when it is better
///   determined (its worst heading sigma at most `refinementImprovement` of the current one; in
///   the first `freshFitSeconds` after the acceptance, no worse determined) and
///   agrees with it (headings within 3 σ at every acceptance attitude). A new estimate that
///   disagrees, while the recent samples point the same way in the world more tightly through it
///   (`FieldAttitudeHistory`), contradicts the fit: the phone's own field changed (a magnet put
///   into or taken out of its case), and the fit and the samples are discarded (→ `collecting`).
///   The corrected field is compared with the fitted radius and the WMM dip. A mismatch that
///   lasts `contradictionSeconds` (leaky) across `contradictionMinimumCells` direction cells — a swapped sensor, a magnet glued into a case —
///   discards the fit (→ `collecting`, `calibrationNeeded` again); a shorter or single-direction one
///   is interference. An accepted or refined fit that the lengths cannot tell from no correction
///   is put in use as no correction when the recent samples, seen through the attitude filter's
///   attitudes (`add(…attitude:)`, `FieldAttitudeHistory`), point the same way in the world at
///   least as tightly uncorrected (`alternativeFit` keeps it).
///
/// `calibrationNeeded` is measured, not assumed: true only while collecting when the uncorrected
/// field has been seen not to match the expected field (debounced by the interference detector) and
/// has not since been confirmed to match; latched until a fit is accepted or the field is confirmed.
public struct MagnetometerCalibrator: Sendable {
    public struct Configuration: Sendable, Equatable {
        public var sampleSet: CalibrationSampleSet.Configuration
        /// The estimator's priors and noise floors.
        public var priors: CalibrationPriors
        public var acceptance: CalibrationAcceptance
        public var interference: MagneticInterferenceDetector.Configuration
        /// Seconds of sample time between fit attempts while collecting (default 1).
        public var fitIntervalSeconds: Double
        /// Seconds of sample time between refinement attempts once calibrated (default 5).
        public var refineIntervalSeconds: Double
        /// An attempt while collecting waits for this many new distinct samples (default 5).
        public var minimumNewSamplesPerAttempt: Int
        /// A refinement replaces the fit only when its worst heading sigma is at most this fraction
        /// of the current one's (default 0.8).
        public var refinementImprovement: Double
        /// For this long after an acceptance from samples that came with the attitude filter's
        /// vertical, seconds (default 20; 0 never), a refinement replaces the fit when its worst
        /// heading sigma is at most `freshFitImprovement` (default 1: no worse determined) of the
        /// current one's, instead of `refinementImprovement`. A fit is accepted as soon as its
        /// covariance allows, often in the middle of the motion that calibrates it, from samples
        /// whose verticals (the filter's, while it still learns the gyroscope's bias) carry errors
        /// that last for seconds and that the covariance does not hold; the estimates of the next
        /// seconds add calmer samples with better verticals and are better than their covariance
        /// says. Later, the 20 % rule again: taking every refit at any time made real recordings
        /// worse (BROAD trial 31 2.28° → 2.69°). An accelerometer's vertical does not get better
        /// after the acceptance: without a gyroscope (`LowDipAccuracyTests`' units at London) the
        /// rule made three fits better and three worse (`FreshFitTests`).
        /// Measured (issue 36; BENCHMARKS.md, eighteenth session): the first use at London over
        /// seeds 1–10, holds 0.73° → 0.57° RMS mean and the worst seed 1.29° → 0.84°; BROAD
        /// 1.82° / 2.47° → 1.79° / 2.50° at 48 Hz, 2.03° / 2.28° → 1.95° / 2.26° at 286 Hz.
        public var freshFitSeconds: Double = 20
        /// The fraction `refinementImprovement` becomes within `freshFitSeconds` (default 1).
        public var freshFitImprovement: Double = 1
        /// A provisional estimate is used only while its residual is at most this fraction of its
        /// radius, or of the expected field's strength where that is smaller (default 0.08), and its
        /// radius is plausible (the acceptance range widened by half).
        public var provisionalMaximumResidualFraction: Double
        /// … and while its worst one-sigma heading error flat is at most this, degrees (default 10):
        /// a phone only turned on a table leaves the hard iron's vertical part loose, which only
        /// matters once it tilts, and the per-sample `headingSigmaDegrees` says so.
        /// A provisional estimate replaces an uncorrected field that already lies on a sphere about
        /// the origin only if its residual is below this fraction of that field's spread (default
        /// 0.5; `identityExplainsSamples`).
        public var identityResidualRatio: Double = 0.5
        /// A fit in use whose residual is not below 1/this of the uncorrected field's spread
        /// (`uncorrectedFieldFitsAsWell`) leaves the uncorrected field as likely: the heading
        /// difference between the two counts in the published uncertainty (default 1.5; 0 never).
        public var identityAlternativeRatio: Double = 1.5
        /// Such a fit, when it is accepted or refined, is set aside for no correction at all
        /// (`alternativeFit`) when the recent samples seen through the attitude filter's
        /// attitudes (`FieldAttitudeHistory`) point the same way in the world at least as tightly
        /// uncorrected as through the fit (default true): a false hard iron turns with the phone.
        /// The same comparison lets a refinement that disagrees with the fit in use discard it
        /// (`fitsDiscardedForAChangedFieldCount`).
        public var comparesCorrectionsInTheWorld: Bool = true
        /// The error of an attitude filter's vertical that persists from sample to sample while
        /// the phone moves, degrees (default 1.4; `add(…verticalFromAttitudeFilter: true)`): it
        /// joins the dip residual's sigma of such samples through the field's horizontal part
        /// (`CalibrationEstimator`, "Vertical"), 0.9 µT at Karachi, 0.5 µT at London.
        /// Measured in the first-use scene (`FirstUseVerticalTests`, `FIRST_USE_VERTICAL=1`): the
        /// filter's vertical is 0.7–1.7° off RMS over the waving, its own tilt sigma 1.2–1.7°;
        /// every sample fitted with it gave up to 1.6° of heading error at Karachi where the
        /// scene's true vertical gave 0.5°. 0 takes the vertical's errors as independent.
        public var attitudeFilterVerticalErrorDegrees: Double = 1.4
        /// The window of samples and attitudes for that comparison.
        public var fieldAttitudeHistory = FieldAttitudeHistory.Configuration()
        /// A disagreeing refinement discards the fit only when its circular variance in the world
        /// is at most this fraction of the fit's (default 0.9: about one standard error of a
        /// variance from the history's 200 samples, √(2/200), less)…
        public var changedFieldVarianceRatio: Double = 0.9
        /// …and the two disagree by more than this, degrees (default 5: a change that matters to
        /// the needle; a magnet's few µT turn the heading by up to |Δb|/H, 19° for BROAD trial
        /// 36's 5.5 µT at Berlin, while the near-ties of a 1 µT false fit and no correction stay
        /// below it).
        public var changedFieldMinimumDisagreementDegrees: Double = 5
        /// …and the new estimate's RMS residual over the stored samples is at least this multiple
        /// of the one the fit in use had over its own (default 1.25; 0 leaves it out). Samples
        /// from before and after a change lie on two spheres, which an estimate mixing them fits
        /// worse; a refinement of a fit that was only less well determined explains the samples
        /// as well as it did. Unlike the disagreement against the sigmas, this does not depend on
        /// the covariance's scale (`CalibrationPriors.covarianceInflation`). BROAD with an
        /// uninflated covariance (1.0): trial 36's magnet taken off, 1.36–1.47 µT against the
        /// fit's 0.72–0.81 (48 and 286 Hz); trial 35's magnet left on, 0.73 against 0.78 and 0.63
        /// against 0.61, and the undisturbed trial 03 at 286 Hz, 0.56 against 0.54 — the three
        /// near-ties the other tests took for a change at that scale.
        public var changedFieldResidualRatio: Double = 1.25
        public var provisionalMaximumFlatHeadingSigmaDegrees: Double
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
                    priors: CalibrationPriors = .init(),
                    acceptance: CalibrationAcceptance = .init(),
                    interference: MagneticInterferenceDetector.Configuration = .init(),
                    fitIntervalSeconds: Double = 1, refineIntervalSeconds: Double = 5, minimumNewSamplesPerAttempt: Int = 5,
                    refinementImprovement: Double = 0.8, provisionalMaximumResidualFraction: Double = 0.08,
                    provisionalMaximumFlatHeadingSigmaDegrees: Double = 10,
                    motionThresholdMicrotesla: Double = 3, maximumMotionStepSeconds: Double = 0.5,
                    contradictionSeconds: Double = 5, contradictionMinimumCells: Int = 4,
                    contradictionMagnitudeSpreadFraction: Double = 0.2,
                    confirmationSeconds: Double = 2, confirmationMinimumCells: Int = 3,
                    matchingEvidenceSeconds: Double = 0.5) {
            self.sampleSet = sampleSet
            self.priors = priors
            self.acceptance = acceptance
            self.interference = interference
            self.fitIntervalSeconds = fitIntervalSeconds
            self.refineIntervalSeconds = refineIntervalSeconds
            self.minimumNewSamplesPerAttempt = minimumNewSamplesPerAttempt
            self.refinementImprovement = refinementImprovement
            self.provisionalMaximumResidualFraction = provisionalMaximumResidualFraction
            self.provisionalMaximumFlatHeadingSigmaDegrees = provisionalMaximumFlatHeadingSigmaDegrees
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
    /// The estimate behind the correction in use, with its covariance: the provisional one while
    /// collecting (once usable), the accepted or refined one while calibrated; `nil` without one
    /// and for a restored fit (persisted without its covariance).
    public private(set) var estimate: CalibrationEstimate? {
        didSet {
            estimateFit = estimate?.fit
            stage = estimate?.stage ?? .none
        }
    }
    /// `estimate?.stage` (`none` without one), kept with it.
    public private(set) var stage = CalibrationStage.none
    /// `estimate?.fit`, kept with it (the fit's normalisation takes an eigen-decomposition: not per
    /// sample).
    private var estimateFit: CalibrationFit?
    /// Incremented whenever `calibration` changes (accept, refine, restore, discard, reset, and each
    /// new provisional estimate).
    public private(set) var calibrationGeneration = 0
    /// `CalibrationProgress`: progress towards acceptance while collecting — the samples and motion
    /// needed, then the worst heading sigma shrinking from 45° towards the acceptance limit (on a
    /// logarithmic scale) — monotone, below 1 until a fit is accepted; 1 once a fit is applied.
    public private(set) var progress = 0.0
    /// `CalibrationHint`: what motion is still missing.
    public private(set) var hint = CalibrationHint.move
    /// Why the latest estimate was not accepted (`nil` before any attempt and after acceptance).
    public private(set) var lastRejection: CalibrationRejection?
    /// The latest estimate computed, accepted or not (diagnostics).
    public private(set) var lastAttemptedEstimate: CalibrationEstimate?
    /// The previous attempt's estimate when it passed every check (for the settling check).
    private var previousPassingEstimate: CalibrationEstimate?
    /// The worst heading sigma of the latest estimate over the acceptance attitudes, degrees.
    public private(set) var lastWorstHeadingSigmaDegrees = Double.infinity
    /// Seconds of motion seen while collecting.
    public private(set) var motionSeconds = 0.0
    /// How many applied fits were discarded as contradicted by live data.
    public private(set) var discardedFitCount = 0
    /// How many times an accepted fit was replaced by a better-determined one.
    public private(set) var refinementCount = 0
    /// Estimates computed since `init` (the cost driver: about 1 ms each on a desktop core).
    public private(set) var estimateCount = 0
    /// The expected field at the current location (WMM2025), `nil` when unknown.
    public private(set) var expectedField: MagneticField?
    /// The fit in use explains its samples less than ``Configuration/identityAlternativeRatio``
    /// times better (RMS about each one's own radius) than the uncorrected field does: the data
    /// cannot tell them apart. BROAD, 30 trials: the fits accepted beside a stationary magnet (a
    /// magnetometer that needs no correction, offsets of 1.3–2.9 µT learned from the magnet's
    /// field) are 1.04–1.32 times better than the uncorrected field, the fits of a magnet fixed
    /// to the sensor 2.8–11 times. Set when a fit is accepted or refined.
    public private(set) var uncorrectedFieldFitsAsWell = false
    /// The fit that was accepted (or refined) when no correction at all is in use in its place
    /// (``Configuration/comparesCorrectionsInTheWorld``): the alternative whose heading difference
    /// the published uncertainty counts. `nil` otherwise.
    public private(set) var alternativeFit: CalibrationFit?
    /// How many accepted or refined fits were set aside for no correction.
    public private(set) var fitsSetAsideCount = 0
    /// How many fits were discarded because a refinement disagreed with them and the field
    /// pointed steadier in the world through it (the phone's own field changed: a magnet put into
    /// or taken out of its case). Each counts in ``discardedFitCount`` too.
    public private(set) var fitsDiscardedForAChangedFieldCount = 0

    private var samples: CalibrationSampleSet
    private var history: FieldAttitudeHistory
    private var estimator: CalibrationEstimator
    private var detector: MagneticInterferenceDetector
    private var lastTime: Double?
    /// When the fit in use was accepted (sample time, seconds) while the samples came with the
    /// attitude filter's vertical (``Configuration/freshFitSeconds``); nil otherwise and for a
    /// restored fit.
    private var acceptedTime: Double?
    /// The latest sample came with the attitude filter's vertical (`add(…verticalFromAttitudeFilter:)`).
    private var latestVerticalFromAttitudeFilter = false
    private var lastAttemptTime: Double?
    private var samplesSinceAttempt = 0
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

    /// The largest worst-case heading sigma progress starts from, degrees.
    static let progressStartSigmaDegrees = 45.0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        samples = CalibrationSampleSet(configuration: configuration.sampleSet)
        estimator = CalibrationEstimator(priors: configuration.priors)
        detector = MagneticInterferenceDetector(configuration: configuration.interference)
        history = FieldAttitudeHistory(configuration: configuration.fieldAttitudeHistory)
    }

    // MARK: What the daemon reads

    /// The uncorrected field was confirmed to match the expected one and has not been seen not to.
    private var uncorrectedFieldTrusted: Bool { fieldConfirmed && !needsCalibrationLatched }

    /// True while collecting with a usable provisional estimate in use.
    public var isProvisional: Bool { state == .collecting && estimateFit != nil }

    /// The correction to apply to raw samples: the fit in use, else the provisional estimate, else
    /// the identity.
    public var calibration: MagnetometerCalibration {
        if let fit { return fit.calibration }
        return estimateFit?.calibration ?? .identity
    }

    /// `CalibrationNeeded`: no fit and the live field is known not to match the expected field,
    /// or a restored fit not yet confirmed whose corrected field does not match it (turning the
    /// phone confirms the fit or discards it; see `quality`).
    public var calibrationNeeded: Bool {
        state == .collecting && needsCalibrationLatched || state == .unvalidated && detector.isDisturbed
    }

    /// Whether the (corrected) live field currently differs from the expected one (debounced),
    /// whatever the cause: interference or a wrong calibration. An input of `HeadingErrorModel`.
    /// False while a provisional estimate is in use: the detector compares the uncorrected field,
    /// and the error model's disturbance term measures the corrected one.
    public var fieldDisturbed: Bool { isProvisional ? false : detector.isDisturbed }

    /// `MagneticInterference`: the field is disturbed while the correction in use is trusted
    /// (an accepted fit, or an uncorrected field that was confirmed to match). A disturbance seen
    /// through an untrusted correction is reported as `calibrationNeeded` instead.
    public var magneticInterference: Bool {
        detector.isDisturbed && (state == .calibrated || (state == .collecting && fieldConfirmed && !isProvisional))
    }

    /// The correction in use can be trusted to tell north: an accepted fit, a restored one (until
    /// live data contradicts it, and while its corrected field matches the expected one), or an
    /// uncorrected field confirmed to match the Earth's over at least as many distinct samples as
    /// an acceptance asks for. A provisional estimate, or a raw
    /// field confirmed by a few samples, is not (the attitude filter learns no gyroscope bias from
    /// it: a phone with 40 µT of hard iron waved about matches the Earth's strength and dip now and
    /// then, and a wrong field would teach a rate that never was; issue 36).
    public var correctionTrusted: Bool {
        state == .calibrated || (state == .unvalidated && !detector.isDisturbed)
            || (state == .collecting && uncorrectedFieldTrusted && !isProvisional
                && samples.sampleCount >= configuration.acceptance.minimumSampleCount)
    }

    /// The calibration input of the accuracy model.
    public var quality: CalibrationQuality {
        switch state {
        case .calibrated: return .calibrated(residualMicrotesla: fit?.residualRMSMicrotesla ?? 0)
        case .unvalidated:
            // A restored fit whose corrected field does not match the expected one is no more
            // use than an uncorrected field that does not: the fit may be another day's (a
            // magnet since taken out of the case or moved), and a still phone cannot tell that
            // from a magnet nearby until it turns (BROAD trial 33 after 32 through one state
            // directory: a fit with 60 µT of hard iron restored on a unit with 29 µT read
            // 102 µT against WMM's 50 and was published 2.4° sure for 41 s, 20–30° off).
            if detector.isDisturbed { return .uncalibrated }
            return .unvalidated(residualMicrotesla: fit?.residualRMSMicrotesla ?? 0)
        case .collecting:
            if let estimateFit { return .provisional(residualMicrotesla: estimateFit.residualRMSMicrotesla) }
            if needsCalibrationLatched || detector.isDisturbed { return .uncalibrated }
            return fieldConfirmed || detector.cleanSeconds >= configuration.matchingEvidenceSeconds
                ? .uncalibratedMatching : .uncalibrated
        }
    }

    /// The one-sigma heading error, degrees, that the uncertainty of the correction in use causes
    /// for this raw sample at the attitude given by the accelerometer's reading; `nil` for a
    /// restored fit (its covariance is not persisted) and without a correction.
    public func headingSigmaDegrees(rawMicrotesla raw: Vector3, accelerationMetresPerSecondSquared a: Vector3) -> Double? {
        estimate?.headingSigmaDegrees(raw: raw, down: -a)
    }

    /// Samples stored for the next estimate.
    public var storedSampleCount: Int { samples.sampleCount }

    /// Memory bound: the calibrator's inline size plus the heap storage it allocated in `init`,
    /// bytes. Nothing is allocated after `init`.
    public var memoryBytes: Int {
        MemoryLayout<Self>.size + samples.storageBytes + estimator.storageBytes + history.storageBytes
    }

    // MARK: What the daemon calls

    /// Sets the WMM2025 field at the current location (`nil`: unknown). Restarts the debounces and
    /// the evidence when the field changes materially (``changesMaterially(from:to:tolerances:)``); a
    /// position fix a few metres on, or the next day's model, keeps them.
    public mutating func setExpectedField(_ field: MagneticField?) {
        guard field != expectedField else { return }
        let material = Self.changesMaterially(from: expectedField, to: field, tolerances: configuration.interference)
        expectedField = field
        guard material else { return }
        detector.reset()
        clearEvidence()
    }

    /// Whether a new expected field can change what the detector and the evidence decided against
    /// the old one: known against unknown, or a strength or dip that moved by more than a tenth of
    /// the detector's tolerance (1.5 % and 0.8° by default; WMM2025's field changes by that much
    /// over a few hundred kilometres, or decades). A live fix republished on every significant
    /// move — a walk, or gpsd's accuracy changing by 5 m — cleared them each time: a magnet's
    /// interference flag went out for the half second of its debounce after every fix, and a
    /// factory-calibrated magnetometer lost the confirmation that keeps provisional fits off it.
    static func changesMaterially(from old: MagneticField?, to new: MagneticField?,
                                  tolerances: MagneticInterferenceDetector.Configuration) -> Bool {
        guard let old, let new else { return (old == nil) != (new == nil) }
        let f0 = old.totalNanotesla, f1 = new.totalNanotesla
        guard f0.isFinite, f1.isFinite, f0 > 0, old.inclinationDegrees.isFinite, new.inclinationDegrees.isFinite
        else { return true }
        return abs(f1 - f0) > 0.1 * tolerances.fieldToleranceFraction * f0
            || abs(new.inclinationDegrees - old.inclinationDegrees) > 0.1 * tolerances.inclinationToleranceDegrees
    }

    /// Applies a persisted fit as `unvalidated`: used at once, trusted only after live data
    /// confirms it, discarded when live data contradicts it. An invalid fit is ignored.
    public mutating func restore(_ restored: CalibrationFit) {
        guard restored.calibration.isValid, restored.fieldMicrotesla.isFinite, restored.fieldMicrotesla > 0 else { return }
        fit = restored
        alternativeFit = nil
        estimate = nil
        acceptedTime = nil
        uncorrectedFieldFitsAsWell = false
        state = .unvalidated
        progress = 1
        hint = .none
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
        if fit != nil || estimate != nil { calibrationGeneration += 1 }
        discard(countAsContradiction: false)
        history.removeAll()
        lastTime = nil
        lastAttemptTime = nil
        lastAttemptedEstimate = nil
        previousPassingEstimate = nil
        lastRejection = nil
        lastWorstHeadingSigmaDegrees = .infinity
    }

    /// Processes one raw magnetometer sample.
    /// - Parameters:
    ///   - rawMicrotesla: the uncorrected reading, microtesla, device frame (after the mount matrix).
    ///   - acceleration: the latest accelerometer reading (reaction to gravity, m/s², device frame),
    ///     for the dip; `nil` skips the dip comparison and stores the sample without a down
    ///     direction.
    ///   - time: sample time, seconds, any monotonic origin. Non-finite samples are ignored; time
    ///     running backwards restarts the time steps.
    ///   - attitude: the attitude filter's attitude (device → world) at this sample while it
    ///     tracks with the gyroscope, else `nil` (``Configuration/comparesCorrectionsInTheWorld``).
    ///   - verticalFromAttitudeFilter: `acceleration` is an attitude filter's vertical (its "up"
    ///     times g), not an accelerometer's reading: its errors persist from sample to sample, so
    ///     the fit weighs the sample's dip by ``Configuration/attitudeFilterVerticalErrorDegrees``,
    ///     and close samples with the same vertical are averaged (`CalibrationSampleSet`).
    public mutating func add(rawMicrotesla raw: Vector3, accelerationMetresPerSecondSquared acceleration: Vector3?,
                             time: Double, attitude: Quaternion? = nil, verticalFromAttitudeFilter: Bool = false) {
        guard raw.isFinite, time.isFinite else { return }
        if let attitude { history.add(raw: raw, attitude: attitude, time: time) }
        var step = 0.0
        if let last = lastTime, time >= last { step = min(time - last, configuration.interference.maximumStepSeconds) }
        if let last = lastTime, time < last { lastAttemptTime = nil; motionAnchor = nil }
        lastTime = time

        // Compare the corrected field (through a trusted fit, else raw) with the expectation.
        let corrected = fit.map { $0.calibration.apply(raw) } ?? raw
        let field = corrected.length
        var inclination: Double?
        var down = Vector3.zero
        if let a = acceleration, a.isFinite {
            let g = a.length
            if g >= TiltCompensation.freeFallFraction * TiltCompensation.standardGravity, field > 0 {
                let cosine = -corrected.dot(a) / (g * field)
                inclination = Angle.degrees(asin(max(-1, min(1, cosine))))
            }
            // The down direction for the estimator only while the phone is not being accelerated
            // hard (|a| within 5 % of g): a hand's swing tilts the apparent vertical.
            if abs(g - TiltCompensation.standardGravity) <= 0.05 * TiltCompensation.standardGravity { down = -a }
        }
        let verticalSigma = verticalFromAttitudeFilter ? Angle.radians(configuration.attitudeFilterVerticalErrorDegrees) : nil
        latestVerticalFromAttitudeFilter = verticalFromAttitudeFilter
        let expectedMagnitude: Double? = state == .calibrated
            ? fit?.fieldMicrotesla : expectedField.map { $0.totalNanotesla / 1000 }
        let disturbed = detector.update(fieldMicrotesla: field, inclinationDegrees: inclination,
                                        expectedFieldMicrotesla: expectedMagnitude,
                                        expectedInclinationDegrees: expectedField?.inclinationDegrees, time: time)
        let cellBit: UInt64 = samples.cells.index(of: corrected).map { 1 << UInt64($0 & 63) } ?? 0
        updateEvidence(matched: detector.lastSampleMatched == true, disturbed: disturbed, cellBit: cellBit,
                       fieldMicrotesla: field, expectedFieldMicrotesla: expectedMagnitude, step: step)

        switch state {
        case .unvalidated:
            return
        case .calibrated:
            // Refinement: keep learning from clean samples only.
            guard !disturbed else { return }
            // Only new distinct samples count: a phone lying still (its samples replace each
            // other) costs no refinement attempts.
            let distinct = samples.distinctCount
            samples.add(raw, down: down, verticalSigmaRadians: verticalSigma, time: time)
            if samples.distinctCount != distinct { samplesSinceAttempt += 1 }
            if let last = lastAttemptTime, time - last < configuration.refineIntervalSeconds { return }
            if lastAttemptTime == nil { lastAttemptTime = time; return }
            lastAttemptTime = time
            // Ten new distinct samples at least: a still phone's noise now and then leaves one.
            if samplesSinceAttempt >= 10 { attemptRefinement() }
        case .collecting:
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
            let distinct = samples.distinctCount
            samples.add(raw, down: down, verticalSigmaRadians: verticalSigma, time: time)
            if samples.distinctCount != distinct { samplesSinceAttempt += 1 }
            updateProgress()
            if let last = lastAttemptTime, time - last < configuration.fitIntervalSeconds { return }
            if lastAttemptTime == nil { lastAttemptTime = time; return }
            // An estimate changes only with new distinct samples: a phone lying still, or turned
            // round and round along the same path, costs no attempts (each is about a millisecond).
            guard samplesSinceAttempt >= configuration.minimumNewSamplesPerAttempt else { return }
            lastAttemptTime = time
            attemptFit()
        }
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
                lastAttemptTime = nil
            }
        case .collecting:
            if contradicted, fieldConfirmed {
                fieldConfirmed = false
                matchSeconds = 0; matchCells = 0
            }
            if confirmed, !needsCalibrationLatched || matchCells.nonzeroBitCount >= configuration.confirmationMinimumCells {
                fieldConfirmed = true
                needsCalibrationLatched = false
                if estimate != nil {
                    // The identity is trusted now: drop the provisional estimate.
                    estimate = nil
                    calibrationGeneration += 1
                }
            }
            if disturbed, !fieldConfirmed {
                needsCalibrationLatched = true
                matchSeconds = 0; matchCells = 0
            }
        }
    }

    private mutating func discard(countAsContradiction: Bool) {
        if fit != nil || estimate != nil {
            calibrationGeneration += 1
            if countAsContradiction, fit != nil { discardedFitCount += 1 }
        }
        fit = nil
        alternativeFit = nil
        estimate = nil
        acceptedTime = nil
        uncorrectedFieldFitsAsWell = false
        state = .collecting
        progress = 0
        hint = .move
        motionSeconds = 0
        motionAnchor = nil
        samplesSinceAttempt = 0
        samples.removeAll()
        previousPassingEstimate = nil
        detector.reset()
        needsCalibrationLatched = false
        clearEvidence()
    }

    // MARK: Estimating

    /// Runs the estimator over the stored samples (no allocation), starting from `start`.
    private mutating func runEstimator(start: CalibrationEstimate?) -> CalibrationEstimate? {
        samplesSinceAttempt = 0
        estimateCount += 1
        guard samples.sampleCount >= 12 else { return nil }
        var estimator = CalibrationEstimator.unallocated
        swap(&estimator, &self.estimator)
        let expected = expectedField
        let result = samples.withPackedSamplesDownsAndVerticalSigmas { raw, down, vertical in
            estimator.estimate(raw: raw, down: down, verticalSigmaRadians: vertical, expectedField: expected, start: start)
        }
        swap(&estimator, &self.estimator)
        lastAttemptedEstimate = result
        return result
    }

    /// The field strengths a provisional estimate may have, µT: the acceptance range widened by
    /// half on each side.
    private var plausibleProvisionalFieldRange: ClosedRange<Double> {
        let range = configuration.acceptance.fieldRange(expectedFieldMicrotesla: expectedField.map { $0.totalNanotesla / 1000 })
        let margin = (range.upperBound - range.lowerBound) / 2
        return (range.lowerBound - margin)...(range.upperBound + margin)
    }

    /// Whether an estimate is good enough to steer the needle while it learns: a flat heading
    /// within `provisionalMaximumFlatHeadingSigmaDegrees`, the radius plausible (the acceptance
    /// range widened by half) and the residual bounded by a fraction of the smaller of that radius
    /// and the expected field's strength (a fit off the mark inflates its radius: BROAD trial 29's
    /// early hard-iron fit of 89 µT, residual 5 µT, radius above 63 µT where WMM says 50 µT).
    private func isUsableProvisionally(_ candidate: CalibrationEstimate) -> Bool {
        guard candidate.worstHeadingSigma(tiltDegrees: 0).sigmaDegrees
            <= configuration.provisionalMaximumFlatHeadingSigmaDegrees else { return false }
        let fit = candidate.fit
        let radius = min(fit.fieldMicrotesla, expectedField.map { $0.totalNanotesla / 1000 } ?? .infinity)
        return plausibleProvisionalFieldRange.contains(fit.fieldMicrotesla)
            && fit.residualRMSMicrotesla <= configuration.provisionalMaximumResidualFraction * radius
            && fit.calibration.isValid
    }

    /// Whether the uncorrected field lies on a sphere about the origin about as well as
    /// `candidate` on its own sphere: the RMS spread of the samples' lengths within the provisional
    /// residual bound of their mean length, that mean within the plausible range (as for a
    /// provisional estimate), and `candidate`'s residual at least
    /// ``Configuration/identityResidualRatio`` of the spread. (A room's steel can make the local
    /// field's intensity differ from WMM's by 15 %: BROAD's lab, 42.8 µT against 49.7 µT; the
    /// radius is not what a provisional estimate corrects.) A phone with tens of µT of hard iron
    /// has a spread of tens of µT and is never held back by this.
    private mutating func identityExplainsSamples(as candidate: CalibrationEstimate) -> Bool {
        let (mean, spread, count) = uncorrectedLengths()
        guard count >= 12 else { return false }
        return plausibleProvisionalFieldRange.contains(mean)
            && spread <= configuration.provisionalMaximumResidualFraction * mean
            && candidate.fit.residualRMSMicrotesla >= configuration.identityResidualRatio * spread
    }

    /// The stored samples' uncorrected lengths: mean and RMS spread about it, microtesla, and count.
    private mutating func uncorrectedLengths() -> (mean: Double, spread: Double, count: Int) {
        samples.withPackedSamplesAndDowns { raw, _ -> (Double, Double, Int) in
            var sum = 0.0, sumSquares = 0.0
            for x in raw { let l = x.length; sum += l; sumSquares += l * l }
            let n = Double(max(1, raw.count))
            return (sum / n, max(0, sumSquares / n - (sum / n) * (sum / n)).squareRoot(), raw.count)
        }
    }

    /// Whether the uncorrected field explains the stored samples about as well as `fit`.
    private mutating func uncorrectedFieldFitsAsWell(as fit: CalibrationFit) -> Bool {
        let ratio = configuration.identityAlternativeRatio
        guard ratio > 0 else { return false }
        let (mean, spread, count) = uncorrectedLengths()
        return count >= 12 && mean.isFinite && spread < ratio * fit.residualRMSMicrotesla
    }

    /// Puts `candidate` in use — or no correction at all in its place, when the lengths cannot tell
    /// the two apart (`uncorrectedFieldFitsAsWell`) and the recent samples, seen through the
    /// filter's attitudes, point the same way in the world at least as tightly uncorrected
    /// (`FieldAttitudeHistory`). No correction is then a sphere fit about the origin: the raw
    /// lengths' mean as its radius, their RMS spread as its residual.
    private mutating func use(_ candidate: CalibrationFit) {
        alternativeFit = nil
        fit = candidate
        guard configuration.comparesCorrectionsInTheWorld, uncorrectedFieldFitsAsWell,
              let uncorrected = history.meanResultantLength(of: .identity),
              let corrected = history.meanResultantLength(of: candidate.calibration),
              uncorrected >= corrected else { return }
        let (mean, spread, count) = uncorrectedLengths()
        guard mean.isFinite, mean > 0 else { return }
        fit = CalibrationFit(kind: .sphere, hardIronOffsetMicrotesla: .zero, softIronMatrix: .identity,
                             fieldMicrotesla: mean, residualRMSMicrotesla: spread, eigenvalueSpread: 1, sampleCount: count)
        alternativeFit = candidate
        fitsSetAsideCount += 1
    }

    /// Whether the recent samples, seen through the filter's attitudes (`FieldAttitudeHistory`),
    /// point the same way in the world more tightly corrected by `candidate` than by `current`
    /// (false when the history cannot judge: too few samples, or the phone did not turn): their
    /// circular variance, −2·ln R̄ (Mardia & Jupp, "Directional Statistics", 2000, §2.3.4), at most
    /// ``Configuration/changedFieldVarianceRatio`` of the current's. BROAD: trial 36's magnet taken
    /// off, 6.7° → 5.8° at 48 Hz and 5.1° → 4.8° at 286 Hz (circular standard deviations, the fit
    /// in use → the new estimate); a 1 µT false hard iron in the undisturbed trial 21, 7.1° → 6.9°,
    /// is not taken (a ratio of 0.8 kept trial 36's magnet at 286 Hz until 128 s). Near-ties still
    /// pass it now and then (trials 03, 05 and 21), which
    /// ``Configuration/changedFieldMinimumDisagreementDegrees`` keeps out.
    private func pointsSteadierInTheWorld(_ candidate: CalibrationFit, than current: CalibrationFit) -> Bool {
        guard configuration.comparesCorrectionsInTheWorld,
              let new = history.meanResultantLength(of: candidate.calibration),
              let old = history.meanResultantLength(of: current.calibration), new > 0, old > 0 else { return false }
        return -2 * log(new) <= configuration.changedFieldVarianceRatio * (-2 * log(old))
    }

    /// The heading difference, degrees, between this raw sample corrected by the fit in use and
    /// left uncorrected (or, when no correction is in use in place of a fit, corrected by that
    /// fit: `alternativeFit`), at the attitude the accelerometer gives, when the data cannot tell the
    /// two apart (`uncorrectedFieldFitsAsWell`); nil otherwise.
    public func uncorrectedAlternativeDegrees(rawMicrotesla raw: Vector3, accelerationMetresPerSecondSquared a: Vector3) -> Double? {
        guard uncorrectedFieldFitsAsWell, let fit, let down = (-a).normalized else { return nil }
        let corrected = fit.calibration.apply(raw)
        let other = alternativeFit?.calibration.apply(raw) ?? raw
        let h1 = corrected - down * corrected.dot(down), h2 = other - down * other.dot(down)
        let angle = atan2(down.dot(h2.cross(h1)), h2.dot(h1))
        return angle.isFinite ? abs(Angle.degrees(angle)) : nil
    }

    private mutating func attemptFit() {
        let acceptance = configuration.acceptance
        guard let result = runEstimator(start: estimate ?? lastAttemptedEstimateIfPlausible) else {
            lastRejection = samples.sampleCount < 12 ? .tooFewSamples(count: samples.sampleCount) : .fitFailed
            updateHint()
            return
        }
        // A plausible estimate is the better centre for bucketing directions.
        let plausible = isUsableProvisionally(result)
        if plausible { samples.recentre(result.hardIronOffsetMicrotesla) }
        // An uncorrected field confirmed to match the Earth's (a factory-calibrated magnetometer)
        // is already a good correction: a provisional estimate does not replace it. Nor does one
        // whose samples the uncorrected field explains nearly as well before that confirmation
        // comes: a few seconds of motion give a fit that bends an already right field by degrees
        // (BROAD trial 04: a provisional fit 2 s into the motion turned the needle 63° for a
        // second; issue 36).
        let usable = plausible && !uncorrectedFieldTrusted && !identityExplainsSamples(as: result)
        let worst = acceptance.worstHeadingSigma(result)
        lastWorstHeadingSigmaDegrees = worst.sigmaDegrees

        if usable {
            if estimate != result { calibrationGeneration += 1 }
            estimate = result
        } else if estimate != nil {
            estimate = nil
            calibrationGeneration += 1
        }
        updateProgress()

        if let rejection = acceptance.checkCollection(sampleCount: samples.sampleCount, motionSeconds: motionSeconds)
            ?? acceptance.check(result, expectedField: expectedField) {
            lastRejection = rejection
            previousPassingEstimate = nil
            updateHint()
            return
        }
        // Settled: the previous attempt passed too and gives nearly the same headings.
        guard let previous = previousPassingEstimate else {
            previousPassingEstimate = result
            lastRejection = .notSettled(differenceDegrees: .infinity)
            updateHint()
            return
        }
        let moved = Self.largestHeadingDifferenceDegrees(previous.fit, result.fit, tiltDegrees: acceptance.acceptanceTiltDegrees,
                                                        inclinationDegrees: result.inclinationDegrees)
        previousPassingEstimate = result
        guard moved <= acceptance.maximumSettlingFactor * acceptance.maximumHeadingSigmaDegrees else {
            lastRejection = .notSettled(differenceDegrees: moved)
            updateHint()
            return
        }
        accept(result)
    }

    /// The last estimate as a starting point when it was usable.
    private var lastAttemptedEstimateIfPlausible: CalibrationEstimate? {
        guard let last = lastAttemptedEstimate, isUsableProvisionally(last) else { return nil }
        return last
    }

    private mutating func accept(_ result: CalibrationEstimate) {
        acceptedTime = latestVerticalFromAttitudeFilter ? lastTime : nil
        uncorrectedFieldFitsAsWell = uncorrectedFieldFitsAsWell(as: result.fit)
        use(result.fit)
        estimate = result
        state = .calibrated
        progress = 1
        hint = .none
        lastRejection = nil
        calibrationGeneration += 1
        needsCalibrationLatched = false
        detector.reset()
        clearEvidence()
        lastAttemptTime = nil
    }

    private mutating func attemptRefinement() {
        guard let current = fit, let result = runEstimator(start: estimate) else { return }
        let acceptance = configuration.acceptance
        guard acceptance.check(result, expectedField: expectedField) == nil else { return }
        let worst = acceptance.worstHeadingSigma(result).sigmaDegrees
        let currentWorst = estimate.map { acceptance.worstHeadingSigma($0).sigmaDegrees } ?? acceptance.maximumHeadingSigmaDegrees
        // Agreement: at every acceptance attitude the two corrections give headings within 3 σ.
        let disagreement = Self.largestHeadingDifferenceDegrees(current, result.fit,
                                                                tiltDegrees: acceptance.acceptanceTiltDegrees,
                                                                inclinationDegrees: result.inclinationDegrees)
        let allowed = 3 * (worst * worst + currentWorst * currentWorst).squareRoot()
        if disagreement > max(allowed, configuration.changedFieldMinimumDisagreementDegrees),
           result.fit.residualRMSMicrotesla >= configuration.changedFieldResidualRatio * current.residualRMSMicrotesla,
           pointsSteadierInTheWorld(result.fit, than: current) {
            // The phone's own field changed (a magnet put into or taken out of its case): the new
            // estimate disagrees with the fit in use, beyond both their sigmas and by a change that
            // matters to the needle, fits the stored samples worse than the fit in use did (two
            // spheres mixed), and the recent field, seen through the filter's attitudes,
            // stays put in the world better through it. The fit in use is
            // contradicted, and so are the stored samples from before the change, which the new
            // estimate still mixes in (BROAD trial 36: a refit kept 3.6 of the magnet's 5.4 µT):
            // both are discarded, and the calibration starts again from the samples to come.
            fitsDiscardedForAChangedFieldCount += 1
            discard(countAsContradiction: true)
            return
        }
        let sinceAcceptance = acceptedTime.flatMap { accepted in lastTime.map { $0 - accepted } }
        let fresh = sinceAcceptance.map { $0 >= 0 && $0 <= configuration.freshFitSeconds } ?? false
        let improvement = fresh ? configuration.freshFitImprovement : configuration.refinementImprovement
        guard worst <= improvement * currentWorst else { return }
        // A much better determined estimate (half the sigma) replaces the fit even when it
        // disagrees: it was computed from the same samples and more, so the old fit was wrong
        // beyond its sigma (the settling check makes that rare, not impossible).
        guard disagreement <= allowed || worst <= 0.5 * currentWorst else { return }
        uncorrectedFieldFitsAsWell = uncorrectedFieldFitsAsWell(as: result.fit)
        use(result.fit)
        estimate = result
        lastWorstHeadingSigmaDegrees = worst
        refinementCount += 1
        calibrationGeneration += 1
    }

    /// The largest difference, degrees, between the headings two corrections give for the same
    /// field, over flat and `tiltDegrees` attitudes (8 tilt directions × 12 headings), for a field
    /// of `b`'s radius and the dip `inclinationDegrees` (0 when unknown).
    static func largestHeadingDifferenceDegrees(_ a: CalibrationFit, _ b: CalibrationFit, tiltDegrees: Double,
                                                inclinationDegrees: Double) -> Double {
        guard let inverse = a.softIronMatrix.inverse else { return 180 }
        let dip = Angle.radians(inclinationDegrees.isFinite ? inclinationDegrees : 0)
        var largest = 0.0
        for tilt in [0.0, Angle.radians(tiltDegrees)] {
            for k in 0..<(tilt == 0 ? 1 : 8) {
                let azimuth = 2 * Double.pi * Double(k) / 8
                let down = Vector3(sin(tilt) * cos(azimuth), sin(tilt) * sin(azimuth), -cos(tilt))
                let reference = abs(down.x) < 0.9 ? Vector3(1, 0, 0) : Vector3(0, 1, 0)
                guard let e1 = (reference - down * reference.dot(down)).normalized else { continue }
                let e2 = down.cross(e1)
                for h in 0..<12 {
                    let psi = 2 * Double.pi * Double(h) / 12
                    let north = e1 * cos(psi) + e2 * sin(psi)
                    let truth = north * (a.fieldMicrotesla * cos(dip)) + down * (a.fieldMicrotesla * sin(dip))
                    let raw = inverse * truth + a.hardIronOffsetMicrotesla
                    let other = b.calibration.apply(raw)
                    let horizontal = other - down * other.dot(down)
                    // The angle between `north` and the other correction's horizontal field.
                    let angle = atan2(down.dot(north.cross(horizontal)), north.dot(horizontal))
                    largest = max(largest, abs(Angle.degrees(angle)))
                }
            }
        }
        return largest
    }

    // MARK: Progress and hint

    private mutating func updateProgress() {
        guard state == .collecting else { return }
        let acceptance = configuration.acceptance
        let collected = min(1, Double(samples.sampleCount) / Double(max(1, acceptance.minimumSampleCount)),
                            motionSeconds / max(1e-9, acceptance.minimumMotionSeconds))
        var certainty = 0.0
        if lastAttemptedEstimate != nil, lastWorstHeadingSigmaDegrees.isFinite {
            let start = Self.progressStartSigmaDegrees, goal = acceptance.maximumHeadingSigmaDegrees
            certainty = max(0, min(1, log(start / max(goal, lastWorstHeadingSigmaDegrees)) / log(start / goal)))
        }
        progress = max(progress, min(0.99, 0.2 * collected + 0.8 * certainty))
    }

    /// The hint follows the estimate's weakest attitude when there is an estimate whose heading is
    /// still too uncertain (even while the sample count or the motion is short, or the soft iron's
    /// spread is out of bounds before the soft iron is determined, so a phone only turned flat is
    /// asked to tilt), else the rejection.
    private mutating func updateHint() {
        guard state == .collecting else { hint = .none; return }
        var reason = lastRejection
        switch lastRejection {
        case .eigenvalueSpreadTooLarge? where lastAttemptedEstimate.map({ $0.stage < .ellipsoid }) == true,
             .tooFewSamples?, .tooLittleMotion?:
            // A spread from a soft iron the samples do not determine yet (a phone turned only flat)
            // asks for the missing motion, not for a place away from metal.
            if let last = lastAttemptedEstimate {
                let acceptance = configuration.acceptance
                let worst = acceptance.worstHeadingSigma(last)
                if worst.sigmaDegrees > acceptance.maximumHeadingSigmaDegrees {
                    reason = .headingUncertain(sigmaDegrees: worst.sigmaDegrees, tiltDegrees: worst.tiltDegrees,
                                               tiltAzimuthDegrees: worst.tiltAzimuthDegrees)
                }
            }
        default:
            break
        }
        switch reason {
        case nil, .tooFewSamples?, .tooLittleMotion?, .fitFailed?, .notSettled?:
            hint = .move
        case .eigenvalueSpreadTooLarge?, .fieldOutOfRange?, .dipOutOfRange?, .residualTooLarge?:
            hint = .awayFromMetal
        case .headingUncertain(_, let tilt, let azimuth)?:
            if tilt == 0 {
                hint = .turnAround
            } else {
                // Azimuth 0°/180°: a side edge down (roll); 90°/270°: the top or bottom edge down (pitch).
                let a = Angle.normalized360(azimuth)
                let nearSide = min(abs(a - 0), abs(a - 180), abs(a - 360)) <= 45
                hint = nearSide ? .tiltLeftRight : .tiltForwardBack
            }
        }
    }
}
