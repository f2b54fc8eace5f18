// SPDX-License-Identifier: Apache-2.0
/// Coarse accuracy class of the published heading (names as Android's `SENSOR_STATUS_ACCURACY_*`
/// plus `unknown` and `unreliable`).
public enum CompassAccuracy: String, Sendable, Equatable, CaseIterable {
    /// No heading or no spread: nothing can be said.
    case unknown
    /// Estimated error above 30°, or worse.
    case unreliable
    /// Estimated error in (15°, 30°], or magnetic interference detected.
    case low
    /// Estimated error in (5°, 15°].
    case medium
    /// Estimated error of 5° or less.
    case high

    /// The documented bucket of a one-sigma heading error: ≤ 5° high, ≤ 15° medium, ≤ 30° low,
    /// else (or not finite) unreliable.
    public init(headingErrorDegrees error: Double) {
        switch error {
        case ...5: self = .high
        case ...15: self = .medium
        case ...30: self = .low
        default: self = .unreliable
        }
        if !error.isFinite { self = .unreliable }
    }

    /// Rank for capping: unknown < unreliable < low < medium < high.
    private var rank: Int {
        switch self {
        case .unknown: 0
        case .unreliable: 1
        case .low: 2
        case .medium: 3
        case .high: 4
        }
    }

    /// This class, lowered to `limit` if it is better than `limit`.
    public func capped(at limit: CompassAccuracy) -> CompassAccuracy { rank > limit.rank ? limit : self }
}

/// Field-strength deviation (fraction of the expected total field) above which the environment
/// counts as magnetically disturbed.
public let magneticInterferenceFieldFraction = 0.25
/// Dip-angle deviation (degrees) above which the environment counts as magnetically disturbed.
public let magneticInterferenceInclinationDegrees = 10.0
/// Heading error (degrees) assumed for residual calibration error when calibrated.
public let calibratedResidualErrorDegrees = 2.0
/// Heading error (degrees) assumed for an uncalibrated magnetometer.
public let uncalibratedErrorDegrees = 10.0

/// Legacy (before issue 10; kept for existing callers — new code uses `HeadingErrorModel`, which
/// models every error source and the WMM zones). Estimates the heading error and its accuracy
/// class. Pure heuristics with a geometric core; the rule:
///
/// 1. `spreadDegrees` nil or non-finite, or a non-finite measured field → `.unknown`, error 180°.
/// 2. **Interference** (`magneticInterference`): the measured total field deviates from the WMM
///    total field F₀ by more than 25 % (|F − F₀| > 0.25 F₀), or the measured dip deviates from the
///    WMM inclination I₀ by more than 10°. Only the comparisons whose expected value is given
///    (non-nil, finite) are made; without a position both are skipped and the flag is false.
/// 3. **Disturbance bound** d, microtesla: the smallest disturbance vector that explains the
///    observed magnitude and dip differences — two vectors of lengths F and F₀ separated by at
///    least the angle ΔI = |I − I₀| are at least √(F² + F₀² − 2 F F₀ cos ΔI) apart (law of
///    cosines; with only F₀ known, d = |F − F₀|; with only I₀ known, F₀ := F). A disturbance d
///    perpendicular to the horizontal field H₀ = F₀ cos I₀ turns it by asin(d / H₀) (180° if
///    d ≥ H₀); that worst case is the interference error term.
/// 4. Heading error = √(spread² + calibration² + interference²), capped at 180°, where
///    calibration is 2° when `calibrated`, else 10°.
/// 5. Class by error: ≤ 5° high, ≤ 15° medium, ≤ 30° low, else unreliable; with interference the
///    class is at most `.low`.
///
/// - Parameters:
///   - spreadDegrees: circular standard deviation of the smoothed heading, degrees.
///   - measuredFieldMicrotesla: |m| after calibration, microtesla.
///   - expectedFieldMicrotesla: WMM total intensity F at the position, microtesla (nT / 1000).
///   - measuredInclinationDegrees: measured dip, degrees, positive down.
///   - expectedInclinationDegrees: WMM inclination I at the position, degrees.
///   - calibrated: whether a (non-identity) magnetometer calibration is applied.
public func estimateAccuracy(
    spreadDegrees: Double?,
    measuredFieldMicrotesla: Double,
    expectedFieldMicrotesla: Double?,
    measuredInclinationDegrees: Double,
    expectedInclinationDegrees: Double?,
    calibrated: Bool
) -> (accuracy: CompassAccuracy, headingErrorDegrees: Double, magneticInterference: Bool) {
    guard let spread = spreadDegrees, spread.isFinite, spread >= 0,
          measuredFieldMicrotesla.isFinite, measuredFieldMicrotesla >= 0 else {
        return (.unknown, 180, false)
    }
    let f = measuredFieldMicrotesla
    let f0 = expectedFieldMicrotesla.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
    let i0 = expectedInclinationDegrees.flatMap { $0.isFinite && abs($0) <= 90 ? $0 : nil }
    let deltaI: Double? = i0.flatMap { expected in
        measuredInclinationDegrees.isFinite ? abs(measuredInclinationDegrees - expected) : nil
    }

    var interference = false
    if let f0, abs(f - f0) > magneticInterferenceFieldFraction * f0 { interference = true }
    if let deltaI, deltaI > magneticInterferenceInclinationDegrees { interference = true }
    // A measured dip we cannot compute while an expected one exists counts as disturbed.
    if i0 != nil, deltaI == nil { interference = true }

    var interferenceError = 0.0
    if f0 != nil || deltaI != nil {
        let reference = f0 ?? f
        let angle = Angle.radians(deltaI ?? 0)
        let d = max(0, f * f + reference * reference - 2 * f * reference * cos(angle)).squareRoot()
        let horizontal = reference * cos(Angle.radians(i0 ?? measuredInclinationDegrees))
        if horizontal.isFinite, horizontal > 0, d < horizontal {
            interferenceError = Angle.degrees(asin(d / horizontal))
        } else if d > 0 || !(horizontal > 0) {
            interferenceError = 180
        }
    }

    let calibration = calibrated ? calibratedResidualErrorDegrees : uncalibratedErrorDegrees
    let total = (spread * spread + calibration * calibration + interferenceError * interferenceError).squareRoot()
    let error = total.isFinite ? min(180, total) : 180

    var accuracy = CompassAccuracy(headingErrorDegrees: error)
    if interference { accuracy = accuracy.capped(at: .low) }
    return (accuracy, error, interference)
}

/// True heading, degrees clockwise from true north in [0, 360): magnetic heading plus the
/// declination (east positive, as WMM's D). `nil` if either input is not finite.
/// - Parameters:
///   - magnetic: magnetic heading, degrees.
///   - declination: magnetic declination, degrees, east positive.
public func trueHeading(magnetic: Double, declination: Double) -> Double? {
    guard magnetic.isFinite, declination.isFinite else { return nil }
    return Angle.normalized360(magnetic + declination)
}

/// The turn from the current heading to the Qibla, degrees in (−180, 180]: positive means turn
/// clockwise (right). Both inputs are degrees from the same north (true north normally).
/// `nil` if either input is not finite.
public func relativeBearing(qibla: Double, heading: Double) -> Double? {
    guard qibla.isFinite, heading.isFinite else { return nil }
    return Angle.turn(from: heading, to: qibla)
}

// MARK: Honest heading error (issue 10)

/// The error sources of one heading, each a one-sigma angle in degrees (see `HeadingErrorModel`).
public struct HeadingErrorTerms: Sendable, Equatable {
    /// Standard error of the smoothed mean plus the lag of a turning phone.
    public var smoothingDegrees: Double
    /// Calibration residual against the horizontal field, or 180 when uncalibrated.
    public var calibrationDegrees: Double
    /// Tilt error amplified by tan|I|.
    public var tiltDegrees: Double
    /// WMM2025 declination uncertainty (0 without a location).
    public var declinationDegrees: Double
    /// Disturbance implied by the field's deviation from the expected magnitude and dip.
    public var disturbanceDegrees: Double
    /// The attitude filter's own heading sigma (gyroscope drift, magnetometer noise, tilt), when
    /// the heading is fused (`HeadingErrorModel.estimateFused`); 0 otherwise.
    public var filterDegrees: Double = 0
}

/// Why the accuracy class is lower than the error alone would give (a set, no allocation).
public struct AccuracyLimits: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// The field differs from the expected one (interference, or a calibration that does not fit):
    /// `unreliable`.
    public static let fieldDisturbed = AccuracyLimits(rawValue: 1 << 0)
    /// No calibration and the field does not match, the heading may be anything: `unreliable`.
    public static let uncalibrated = AccuracyLimits(rawValue: 1 << 1)
    /// A restored calibration not yet confirmed by live data: at most `medium`.
    public static let unvalidatedCalibration = AccuracyLimits(rawValue: 1 << 2)
    /// No location: no declination, so no true heading: at most `low`.
    public static let noLocation = AccuracyLimits(rawValue: 1 << 3)
    /// WMM caution zone (H < 6000 nT): at most `low`.
    public static let cautionZone = AccuracyLimits(rawValue: 1 << 4)
    /// WMM blackout zone (H < 2000 nT): `unreliable`.
    public static let blackoutZone = AccuracyLimits(rawValue: 1 << 5)
    /// No fit; the uncorrected field matches, but its residual is assumed, not measured: at most
    /// `medium`.
    public static let unfittedCalibration = AccuracyLimits(rawValue: 1 << 6)
    /// The phone is turning (the smoothing term, noise plus lag, exceeds
    /// `HeadingErrorModel.steadySmoothingDegrees`), or the window has just restarted (fewer than
    /// `HeadingErrorModel.minimumSteadySampleCount` samples): the one-sigma figure is least certain
    /// while the window catches up, so `high` waits until it has: at most `medium`.
    public static let turning = AccuracyLimits(rawValue: 1 << 7)
    /// No accepted fit yet: the calibration's best current estimate is in use, its uncertainty in
    /// the calibration term: at most `medium`.
    public static let provisionalCalibration = AccuracyLimits(rawValue: 1 << 8)
    /// The hand is accelerating the phone (`HeadingEstimate.accelerationDeviationMetresPerSecondSquared`
    /// above `HeadingErrorModel.steadyAccelerationMetresPerSecondSquared`): the vertical the tilt
    /// compensation uses is off by an unknown amount: at most `medium`.
    public static let accelerating = AccuracyLimits(rawValue: 1 << 9)
    /// A fused heading rests on the gyroscope alone (the magnetometer is held off during a
    /// disturbance, or being taken back): its sigma grows with the drift: at most `medium`.
    public static let holdingOnGyroscope = AccuracyLimits(rawValue: 1 << 10)
}

/// A heading's one-sigma error and its accuracy class.
public struct HeadingErrorEstimate: Sendable, Equatable {
    /// One-sigma heading error, degrees, in [0, 180]: √(Σ termᵢ²), capped at 180.
    public var headingErrorDegrees: Double
    /// `CompassAccuracy(headingErrorDegrees:)` lowered by every limit in `limits`.
    public var accuracy: CompassAccuracy
    /// The error sources.
    public var terms: HeadingErrorTerms
    /// The caps that applied.
    public var limits: AccuracyLimits
}

/// The heading error model of issue 10: `HeadingError` as an honest one-sigma estimate in degrees,
/// the root-sum-square of independent error sources (all angles in degrees; H, F in microtesla;
/// H is the WMM2025 horizontal intensity at the location, or the measured one without a location):
///
/// 1. **Smoothing**: the published heading is the circular mean of n samples with circular
///    standard deviation s (Mardia & Jupp 2000, §2.3), so its noise is the standard error s/√n.
///    A turning phone also spreads the window, but then the mean lags the newest sample by about
///    the deviation δ of the newest sample from the mean (the window's spread is no measure of the
///    lag: half a window of constant heading and half of turning has a large spread and a lag of
///    its whole turn). At rest δ is one sample's noise, expected to be about the calibration term
///    c of 2 (a fit's residual is mostly sensor noise), so the lag is √max(0, δ² − c²):
///    term² = s²/n + max(0, δ² − c²).
/// 2. **Calibration**: a residual field error r (µT, the fit's RMS residual) in the worst direction
///    turns the horizontal field by atan(r/H); when the fit's covariance is known, its heading
///    error at the current attitude σ (`CalibrationEstimate.headingSigmaDegrees`) replaces most of
///    that: √(σ² + (atan(r/H)/2)²). Uncalibrated but matching the expected field
///    (factory-calibrated): r = `uncalibratedMatchingResidualMicrotesla`. Uncalibrated and not
///    matching: 180 (unknown).
/// 3. **Tilt**: an error ε (rad) in the gravity direction about the magnetic-north axis turns the
///    computed heading by ≈ ε·tan|I| (the vertical field leaks into the horizontal one; cf. NXP
///    AN4248 "Implementing a tilt-compensated eCompass", §"effect of tilt error"), with
///    ε = √(σₐ² + L²) / g₀: atan(ε·tan|I|), σₐ = `accelerometerErrorMetresPerSecondSquared`, L the
///    window's RMS of |a| − g₀ less the accelerometer's noise (a hand's linear acceleration,
///    assumed as large across the reading as along it).
/// 4. **Declination**: WMM2025 uncertainty of D, √(0.26² + (5417 / H[nT])²) (WMM2025 technical
///    report, table of uncertainty estimates), when a location is known.
/// 5. **Disturbance**: the smallest disturbance vector d explaining the window's mean magnitude F
///    and dip I against the expected F₀ (the fitted radius when calibrated, else WMM) and I₀, by the
///    law of cosines d² = F² + F₀² − 2FF₀cos(I − I₀), less 2(F₀ε + r) (what the tilt error and
///    the calibration residual of terms 2–3 explain at two sigma); it turns H by asin(d/H) (180
///    if d ≥ H).
///
/// Accuracy: the documented buckets of `CompassAccuracy(headingErrorDegrees:)`, then the limits:
/// field disturbed or uncalibrated → unreliable; WMM blackout zone (H < 2000 nT) → unreliable;
/// caution zone (H < 6000 nT) or no location → at most low; unvalidated restored fit, no fit
/// with a matching field (factory calibration, residual assumed), or a turning phone (smoothing
/// term above `steadySmoothingDegrees`) → at most medium. Validated by simulation (`AccuracyHonestyTests`): the share of samples whose real error
/// is ≤ the estimate lies in [55 %, 85 %], ≥ 99 % are within 3×, and `high` is never reported with a
/// real error above 10°.
public struct HeadingErrorModel: Sendable, Equatable {
    /// One-sigma error of the measured gravity direction per axis that smoothing does not remove
    /// (accelerometer bias and slow drift, hand motion), m/s² (default 0.1 ≈ 10 mg, a phone
    /// accelerometer's typical zero-g offset after factory trim).
    public var accelerometerErrorMetresPerSecondSquared: Double
    /// One-sigma residual field error per axis assumed for an uncalibrated sensor whose field
    /// matches the expected one (a factory-calibrated magnetometer), microtesla (default 1).
    public var uncalibratedMatchingResidualMicrotesla: Double
    /// Constant part of the WMM declination uncertainty, degrees (WMM2025: 0.26).
    public var declinationUncertaintyDegrees: Double
    /// H-dependent part of the WMM declination uncertainty: this over H in nT, degrees
    /// (WMM2025: 5417).
    public var declinationUncertaintyNanotesla: Double

    /// Smoothing term (degrees) above which the phone counts as turning and `high` is withheld.
    public var steadySmoothingDegrees: Double = 2
    /// A window of fewer samples than this (default 5: it just restarted after an axis switch, a
    /// fast turn or a new calibration) cannot tell a turning phone from a steady one: `high` is
    /// withheld as for turning.
    public var minimumSteadySampleCount: Int = 5
    /// RMS |a| − g₀ over the window (m/s²) above which the phone counts as accelerated and `high`
    /// is withheld (default 0.15: three times a still phone's accelerometer noise).
    public var steadyAccelerationMetresPerSecondSquared: Double = 0.15
    /// A still phone's accelerometer noise per axis, m/s² (default 0.05, a phone IMU's noise at
    /// 20 Hz): the part of |a| − g₀ that is not the hand's acceleration.
    public var accelerometerNoiseMetresPerSecondSquared: Double = 0.05

    public init(accelerometerErrorMetresPerSecondSquared: Double = 0.1,
                uncalibratedMatchingResidualMicrotesla: Double = 1,
                declinationUncertaintyDegrees: Double = 0.26,
                declinationUncertaintyNanotesla: Double = 5417) {
        self.accelerometerErrorMetresPerSecondSquared = accelerometerErrorMetresPerSecondSquared
        self.uncalibratedMatchingResidualMicrotesla = uncalibratedMatchingResidualMicrotesla
        self.declinationUncertaintyDegrees = declinationUncertaintyDegrees
        self.declinationUncertaintyNanotesla = declinationUncertaintyNanotesla
    }

    /// The WMM2025 declination uncertainty at horizontal intensity H (nanotesla), degrees.
    public func declinationUncertaintyDegrees(horizontalNanotesla h: Double) -> Double {
        guard h > 0, h.isFinite else { return 180 }
        let a = declinationUncertaintyDegrees, b = declinationUncertaintyNanotesla / h
        return min(180, (a * a + b * b).squareRoot())
    }

    /// The error of one published heading.
    /// - Parameters:
    ///   - estimate: the pipeline's smoothed estimate.
    ///   - calibration: `MagnetometerCalibrator.quality`.
    ///   - fieldDisturbed: `MagnetometerCalibrator.fieldDisturbed` (debounced).
    ///   - expectedField: WMM2025 at the location, `nil` when no location is known.
    ///   - fittedFieldMicrotesla: the calibration's fitted radius (`MagnetometerCalibrator.fit`),
    ///     the expected magnitude when calibrated; `nil` uses the WMM total intensity.
    ///   - calibrationUncertaintyDegrees: the heading error the calibration parameters' uncertainty
    ///     causes at this attitude (`MagnetometerCalibrator.headingSigmaDegrees`), degrees, or `nil`
    ///     when the correction has no covariance (a restored fit, none at all). Added in quadrature
    ///     to half the residual's term: the covariance carries the fit's own error, and the
    ///     residual is then mostly the sensor's noise, which the smoothing term already counts.
    public func estimate(_ estimate: HeadingEstimate, calibration: CalibrationQuality, fieldDisturbed: Bool,
                         expectedField: MagneticField?, fittedFieldMicrotesla: Double? = nil,
                         calibrationUncertaintyDegrees: Double? = nil) -> HeadingErrorEstimate {
        let measuredF = estimate.fieldStrengthMicrotesla
        let measuredI = estimate.inclinationDegrees
        let wmmH = expectedField.map { $0.horizontalNanotesla / 1000 }
        let horizontal = wmmH ?? measuredF * cos(Angle.radians(measuredI))
        let inclination = expectedField?.inclinationDegrees ?? measuredI
        func angleAgainstHorizontal(_ d: Double) -> Double {
            guard horizontal > 0, horizontal.isFinite, d.isFinite else { return 180 }
            return d >= horizontal ? 180 : Angle.degrees(asin(max(0, d) / horizontal))
        }

        // 2. Calibration.
        let (residual, residualTerm, calibrationTerm) = calibrationTerms(
            calibration, horizontalMicrotesla: horizontal, calibrationUncertaintyDegrees: calibrationUncertaintyDegrees)

        // One sample's heading noise expected from the residual (the fit's residual is mostly the
        // sensor's noise): the part of δ that is not lag.
        let noise = min(residualTerm, 45)

        // 1. Smoothing. One reading has no spread to measure: it is as noisy as the residual
        // says (a window restarted by a calibration change or an axis switch, or a wake's first
        // reading: BROAD trial 08 at 71.17 s, 11° off while the window's spread of 0 gave 2.4°).
        var s = estimate.spreadDegrees.isFinite ? estimate.spreadDegrees : 180
        if estimate.sampleCount <= 1 { s = max(s, noise) }
        let n = Double(max(1, estimate.sampleCount))
        let deviation = Angle.turn(from: estimate.magneticHeadingDegrees, to: estimate.instantaneousHeadingDegrees)
        let lag2 = max(0, deviation * deviation - noise * noise)
        let smoothing = (s * s / n + lag2).squareRoot()

        // 3. Tilt: the accelerometer's error plus the hand's linear acceleration across the reading,
        // taken as large as the measured one along it (isotropic hand motion).
        // The window's RMS of |a| − g₀ less the accelerometer's own noise (which smoothing averages).
        let shake = estimate.accelerationDeviationMetresPerSecondSquared.isFinite
            ? estimate.accelerationDeviationMetresPerSecondSquared : 0
        let handAcceleration = max(0, shake * shake
            - accelerometerNoiseMetresPerSecondSquared * accelerometerNoiseMetresPerSecondSquared).squareRoot()
        let epsilon = (accelerometerErrorMetresPerSecondSquared * accelerometerErrorMetresPerSecondSquared
            + handAcceleration * handAcceleration).squareRoot() / TiltCompensation.standardGravity
        let tiltTerm = abs(inclination) >= 90 ? 180 : Angle.degrees(atan(epsilon * tan(Angle.radians(abs(inclination)))))

        // 4. Declination.
        let declinationTerm = expectedField.map { declinationUncertaintyDegrees(horizontalNanotesla: $0.horizontalNanotesla) } ?? 0

        // 5. Disturbance (law of cosines).
        var disturbanceTerm = 0.0
        let f0 = fittedFieldMicrotesla ?? expectedField.map { $0.totalNanotesla / 1000 }
        if f0 != nil || expectedField != nil {
            let reference = f0 ?? measuredF
            let deltaI = Angle.radians(expectedField.map { measuredI - $0.inclinationDegrees } ?? 0)
            let d2 = measuredF * measuredF + reference * reference - 2 * measuredF * reference * cos(deltaI)
            // The part of d that the tilt error and the calibration residual (terms 2 and 3) explain
            // at two sigma is not evidence of a disturbance.
            let explained = 2 * (reference * epsilon + residual)
            disturbanceTerm = angleAgainstHorizontal(max(0, max(0, d2).squareRoot() - explained))
        }

        let terms = HeadingErrorTerms(smoothingDegrees: smoothing, calibrationDegrees: calibrationTerm,
                                      tiltDegrees: tiltTerm, declinationDegrees: declinationTerm,
                                      disturbanceDegrees: disturbanceTerm)
        let sum = smoothing * smoothing + calibrationTerm * calibrationTerm + tiltTerm * tiltTerm
            + declinationTerm * declinationTerm + disturbanceTerm * disturbanceTerm
        let error = sum.isFinite ? min(180, sum.squareRoot()) : 180

        var limits: AccuracyLimits = []
        if fieldDisturbed { limits.insert(.fieldDisturbed) }
        if smoothing > steadySmoothingDegrees || estimate.sampleCount < minimumSteadySampleCount { limits.insert(.turning) }
        if shake > steadyAccelerationMetresPerSecondSquared { limits.insert(.accelerating) }
        return classify(error: error, terms: terms, limits: limits, calibration: calibration, expectedField: expectedField)
    }

    /// The error of a heading from the attitude filter (`AttitudeFilter`, issue 30): the filter's
    /// own sigma (which holds the smoothing, tilt and — while the magnetometer is held off —
    /// disturbance parts: the gyroscope carries the heading then) in quadrature with the
    /// calibration (term 2) and declination (term 4) terms computed as in
    /// ``estimate(_:calibration:fieldDisturbed:expectedField:fittedFieldMicrotesla:calibrationUncertaintyDegrees:)``.
    /// Accuracy: the same buckets and caps, but a disturbed field while the filter holds the
    /// heading on the gyroscope caps at `medium` (`holdingOnGyroscope`) instead of `unreliable`:
    /// the needle no longer follows the magnet, and the sigma grows with the gyroscope's drift.
    /// - Parameters:
    ///   - filterSigmaDegrees: `FusedHeading.sigmaDegrees`.
    ///   - holdingOnGyroscope: the filter's `MagneticState` is not `tracking`.
    ///   - horizontalFieldMicrotesla: the measured horizontal field, used without a location.
    public func estimateFused(filterSigmaDegrees: Double, holdingOnGyroscope: Bool, calibration: CalibrationQuality,
                              fieldDisturbed: Bool, expectedField: MagneticField?, horizontalFieldMicrotesla: Double,
                              calibrationUncertaintyDegrees: Double? = nil) -> HeadingErrorEstimate {
        let horizontal = expectedField.map { $0.horizontalNanotesla / 1000 } ?? horizontalFieldMicrotesla
        let (_, _, calibrationTerm) = calibrationTerms(calibration, horizontalMicrotesla: horizontal,
                                                       calibrationUncertaintyDegrees: calibrationUncertaintyDegrees)
        let filter = filterSigmaDegrees.isFinite ? max(0, filterSigmaDegrees) : 180
        let declinationTerm = expectedField.map { declinationUncertaintyDegrees(horizontalNanotesla: $0.horizontalNanotesla) } ?? 0
        let terms = HeadingErrorTerms(smoothingDegrees: 0, calibrationDegrees: calibrationTerm, tiltDegrees: 0,
                                      declinationDegrees: declinationTerm, disturbanceDegrees: 0, filterDegrees: filter)
        let sum = filter * filter + calibrationTerm * calibrationTerm + declinationTerm * declinationTerm
        let error = sum.isFinite ? min(180, sum.squareRoot()) : 180
        var limits: AccuracyLimits = []
        if holdingOnGyroscope { limits.insert(.holdingOnGyroscope) } else if fieldDisturbed { limits.insert(.fieldDisturbed) }
        return classify(error: error, terms: terms, limits: limits, calibration: calibration, expectedField: expectedField)
    }

    /// Term 2: the residual (µT), its angle against the horizontal field H (degrees) and the
    /// calibration term (degrees).
    private func calibrationTerms(_ calibration: CalibrationQuality, horizontalMicrotesla horizontal: Double,
                                  calibrationUncertaintyDegrees: Double?) -> (Double, Double, Double) {
        let residual: Double
        switch calibration {
        case .calibrated(let r), .unvalidated(let r), .provisional(let r): residual = r.isFinite ? max(0, r) : .infinity
        case .uncalibratedMatching: residual = uncalibratedMatchingResidualMicrotesla
        case .uncalibrated: residual = .infinity
        }
        let residualTerm = horizontal > 0 && residual.isFinite ? Angle.degrees(atan(residual / horizontal)) : 180
        let calibrationTerm: Double
        if let sigma = calibrationUncertaintyDegrees {
            let uncertainty = sigma.isFinite ? max(0, sigma) : 180
            let share = residualTerm / 2
            calibrationTerm = min(180, (share * share + uncertainty * uncertainty).squareRoot())
        } else {
            calibrationTerm = residualTerm
        }
        return (residual, residualTerm, calibrationTerm)
    }

    /// The accuracy class: the buckets, then the calibration and location limits added to
    /// `limits`, then the caps.
    private func classify(error: Double, terms: HeadingErrorTerms, limits given: AccuracyLimits,
                          calibration: CalibrationQuality, expectedField: MagneticField?) -> HeadingErrorEstimate {
        var limits = given
        if calibration == .uncalibrated { limits.insert(.uncalibrated) }
        if case .unvalidated = calibration { limits.insert(.unvalidatedCalibration) }
        if case .provisional = calibration { limits.insert(.provisionalCalibration) }
        if calibration == .uncalibratedMatching { limits.insert(.unfittedCalibration) }
        if expectedField == nil { limits.insert(.noLocation) }
        switch expectedField?.zone {
        case .caution?: limits.insert(.cautionZone)
        case .blackout?: limits.insert(.blackoutZone)
        case .normal?, nil: break
        }
        var accuracy = CompassAccuracy(headingErrorDegrees: error)
        if !limits.isDisjoint(with: [.fieldDisturbed, .uncalibrated, .blackoutZone]) {
            accuracy = accuracy.capped(at: .unreliable)
        }
        if !limits.isDisjoint(with: [.noLocation, .cautionZone]) { accuracy = accuracy.capped(at: .low) }
        if !limits.isDisjoint(with: [.unvalidatedCalibration, .unfittedCalibration, .turning, .provisionalCalibration,
                                     .accelerating, .holdingOnGyroscope]) {
            accuracy = accuracy.capped(at: .medium)
        }
        return HeadingErrorEstimate(headingErrorDegrees: error, accuracy: accuracy, terms: terms, limits: limits)
    }
}
