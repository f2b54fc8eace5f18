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

/// Estimates the heading error and its accuracy class. Pure heuristics with a geometric core;
/// the rule:
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

    var accuracy: CompassAccuracy
    switch error {
    case ...5: accuracy = .high
    case ...15: accuracy = .medium
    case ...30: accuracy = .low
    default: accuracy = .unreliable
    }
    if interference, accuracy == .high || accuracy == .medium { accuracy = .low }
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
