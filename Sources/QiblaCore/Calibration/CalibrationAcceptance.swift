// SPDX-License-Identifier: Apache-2.0
/// Why a calibration estimate (or an attempt) was not accepted. Each case carries the measured value.
public enum CalibrationRejection: Sendable, Equatable, CustomStringConvertible {
    /// Too few samples stored.
    case tooFewSamples(count: Int)
    /// Too little motion while collecting, seconds.
    case tooLittleMotion(seconds: Double)
    /// No estimate could be computed (degenerate samples).
    case fitFailed
    /// The parameters' uncertainty still turns the heading by more than the limit at some attitude
    /// of the acceptance tilt: the worst one-sigma heading error, degrees, at a tilt of
    /// `tiltDegrees` towards `tiltAzimuthDegrees` (0 = right edge down, 90 = top edge down; any
    /// azimuth at a tilt of 0).
    case headingUncertain(sigmaDegrees: Double, tiltDegrees: Double, tiltAzimuthDegrees: Double)
    /// λmax/λmin of S is too large: more distortion than a phone's soft iron explains.
    case eigenvalueSpreadTooLarge(spread: Double)
    /// The fitted field radius is outside the accepted range, microtesla.
    case fieldOutOfRange(fieldMicrotesla: Double, expected: ClosedRange<Double>)
    /// The fitted dip differs from WMM2025's by more than the tolerance, degrees.
    case dipOutOfRange(inclinationDegrees: Double, expectedDegrees: Double)
    /// The RMS residual exceeds the limit, microtesla.
    case residualTooLarge(residualMicrotesla: Double, limitMicrotesla: Double)
    /// The estimate moved since the previous attempt: the headings the two give differ by this
    /// much somewhere, degrees (an estimate that still moves by more than its sigma claims is not
    /// settled, whatever its covariance says).
    case notSettled(differenceDegrees: Double)

    public var description: String {
        // One decimal; a value not yet known (the first passing estimate has nothing to be
        // compared with: `.notSettled(differenceDegrees: .infinity)`) is said, not converted.
        func f(_ x: Double) -> String {
            guard x.isFinite, abs(x) < 1e12 else { return x.isNaN ? "unknown" : x > 0 ? "∞" : "−∞" }
            return String(Double(Int((x * 10).rounded())) / 10)
        }
        func whole(_ x: Double) -> String { x.isFinite && abs(x) < 1e12 ? String(Int(x.rounded())) : f(x) }
        switch self {
        case .tooFewSamples(let n): return "only \(n) distinct samples"
        case .tooLittleMotion(let s): return "only \(f(s)) s of motion"
        case .fitFailed: return "no calibration fits the samples"
        case .headingUncertain(let sigma, let tilt, let azimuth):
            return tilt == 0 ? "the heading is still uncertain by \(f(sigma))° when flat"
                : "the heading is still uncertain by \(f(sigma))° at \(whole(tilt))° of tilt towards \(whole(azimuth))°"
        case .eigenvalueSpreadTooLarge(let s): return "soft-iron eigenvalue spread \(f(s)) is too large"
        case .fieldOutOfRange(let v, let r): return "fitted field \(f(v)) µT outside \(f(r.lowerBound))…\(f(r.upperBound)) µT"
        case .dipOutOfRange(let v, let e): return "fitted dip \(f(v))° differs from the expected \(f(e))°"
        case .residualTooLarge(let r, let l): return "residual \(f(r)) µT above \(f(l)) µT"
        case .notSettled(let d):
            return d.isFinite ? "the estimate still moves (headings \(f(d))° apart from the last one)"
                : "the estimate waits for a second one to confirm it"
        }
    }
}

/// When a calibration estimate is good enough to accept: by its **uncertainty**, not by which
/// directions were covered. The estimate (`CalibrationEstimator`) carries its covariance; its
/// worst one-sigma heading error over the attitudes a person holds a compass in (flat, and tilted
/// by `acceptanceTiltDegrees` in every direction, at every heading) must be at most
/// `maximumHeadingSigmaDegrees`, and the fit must agree with WMM2025 (radius within
/// ±`fieldToleranceFraction` of F, dip within `dipToleranceDegrees`). The cheap guards of NXP
/// AN5019 (accept only a geomagnetic field in 22–67 µT, a bounded fit error) and of Android's
/// context-hub `mag_cal` (enough samples, enough motion, bounded eigenvalue spread) stay.
public struct CalibrationAcceptance: Sendable, Equatable {
    /// Minimum number of stored samples (default 40).
    public var minimumSampleCount: Int
    /// Minimum seconds of motion while collecting (default 3).
    public var minimumMotionSeconds: Double
    /// The largest one-sigma heading error the parameters may cause, degrees (default 2).
    public var maximumHeadingSigmaDegrees: Double
    /// The tilt at which the heading error is checked as well as flat, degrees (default 30).
    public var acceptanceTiltDegrees: Double
    /// Maximum λmax/λmin of the soft-iron matrix S (default 1.5).
    public var maximumEigenvalueSpread: Double
    /// The fitted radius must be within this fraction of the WMM2025 total intensity F at the
    /// location (default 0.15).
    public var fieldToleranceFraction: Double
    /// The accepted radius range when no location is known, microtesla (default 20–70: the
    /// Earth's surface field is 22–67 µT, WMM2025 report Fig. on F).
    public var fieldRangeWithoutLocationMicrotesla: ClosedRange<Double>
    /// The fitted dip must be within this of WMM2025's, degrees (default 8).
    public var dipToleranceDegrees: Double
    /// Maximum RMS residual as a fraction of the fitted radius (default 0.03) …
    public var maximumResidualFraction: Double
    /// … but never below this, microtesla (default 1.5: a noisy magnetometer, 0.8 µT per axis, in
    /// the 25 µT of the South Atlantic anomaly is not a distorted field).
    public var maximumResidualFloorMicrotesla: Double
    /// An estimate is accepted only when the previous attempt's (a second earlier) gives headings
    /// within this many times `maximumHeadingSigmaDegrees` of it at every acceptance attitude
    /// (default 1.5): early in a motion, with few samples, the Gauss–Newton covariance is
    /// optimistic, and an estimate that still moves is not yet what its sigma says.
    public var maximumSettlingFactor: Double

    public init(minimumSampleCount: Int = 40, minimumMotionSeconds: Double = 3, maximumHeadingSigmaDegrees: Double = 2,
                acceptanceTiltDegrees: Double = 30, maximumEigenvalueSpread: Double = 1.5,
                fieldToleranceFraction: Double = 0.15,
                fieldRangeWithoutLocationMicrotesla: ClosedRange<Double> = 20...70,
                dipToleranceDegrees: Double = 8, maximumResidualFraction: Double = 0.03,
                maximumSettlingFactor: Double = 1.5, maximumResidualFloorMicrotesla: Double = 1.5) {
        self.maximumResidualFloorMicrotesla = maximumResidualFloorMicrotesla
        self.maximumSettlingFactor = maximumSettlingFactor
        self.minimumSampleCount = minimumSampleCount
        self.minimumMotionSeconds = minimumMotionSeconds
        self.maximumHeadingSigmaDegrees = maximumHeadingSigmaDegrees
        self.acceptanceTiltDegrees = acceptanceTiltDegrees
        self.maximumEigenvalueSpread = maximumEigenvalueSpread
        self.fieldToleranceFraction = fieldToleranceFraction
        self.fieldRangeWithoutLocationMicrotesla = fieldRangeWithoutLocationMicrotesla
        self.dipToleranceDegrees = dipToleranceDegrees
        self.maximumResidualFraction = maximumResidualFraction
    }

    /// The accepted field range: F·(1 ± tolerance) for a known F (microtesla), else the default range.
    public func fieldRange(expectedFieldMicrotesla: Double?) -> ClosedRange<Double> {
        guard let f = expectedFieldMicrotesla, f.isFinite, f > 0 else { return fieldRangeWithoutLocationMicrotesla }
        return (f * (1 - fieldToleranceFraction))...(f * (1 + fieldToleranceFraction))
    }

    /// Checks the collection before fitting (cheap): sample count and motion.
    public func checkCollection(sampleCount: Int, motionSeconds: Double) -> CalibrationRejection? {
        if sampleCount < minimumSampleCount { return .tooFewSamples(count: sampleCount) }
        if motionSeconds < minimumMotionSeconds { return .tooLittleMotion(seconds: motionSeconds) }
        return nil
    }

    /// The worst heading sigma of an estimate over the acceptance attitudes, with where it is.
    public func worstHeadingSigma(_ estimate: CalibrationEstimate)
        -> (sigmaDegrees: Double, tiltDegrees: Double, tiltAzimuthDegrees: Double) {
        let flat = estimate.worstHeadingSigma(tiltDegrees: 0)
        let tilted = estimate.worstHeadingSigma(tiltDegrees: acceptanceTiltDegrees)
        return flat.sigmaDegrees >= tilted.sigmaDegrees ? (flat.sigmaDegrees, 0, 0)
            : (tilted.sigmaDegrees, acceptanceTiltDegrees, tilted.tiltAzimuthDegrees)
    }

    /// Checks an estimate: heading uncertainty, spread, radius, dip, residual. `nil` means accepted.
    public func check(_ estimate: CalibrationEstimate, expectedField: MagneticField?) -> CalibrationRejection? {
        let fit = estimate.fit
        if !(fit.eigenvalueSpread <= maximumEigenvalueSpread) {
            return .eigenvalueSpreadTooLarge(spread: fit.eigenvalueSpread)
        }
        let range = fieldRange(expectedFieldMicrotesla: expectedField.map { $0.totalNanotesla / 1000 })
        if !range.contains(fit.fieldMicrotesla) {
            return .fieldOutOfRange(fieldMicrotesla: fit.fieldMicrotesla, expected: range)
        }
        if let expected = expectedField, estimate.dipSampleCount > 0, estimate.inclinationDegrees.isFinite,
           abs(estimate.inclinationDegrees - expected.inclinationDegrees) > dipToleranceDegrees {
            return .dipOutOfRange(inclinationDegrees: estimate.inclinationDegrees, expectedDegrees: expected.inclinationDegrees)
        }
        let limit = max(maximumResidualFraction * fit.fieldMicrotesla, maximumResidualFloorMicrotesla)
        if !(fit.residualRMSMicrotesla <= limit) {
            return .residualTooLarge(residualMicrotesla: fit.residualRMSMicrotesla, limitMicrotesla: limit)
        }
        let worst = worstHeadingSigma(estimate)
        if !(worst.sigmaDegrees <= maximumHeadingSigmaDegrees) {
            return .headingUncertain(sigmaDegrees: worst.sigmaDegrees, tiltDegrees: worst.tiltDegrees,
                                     tiltAzimuthDegrees: worst.tiltAzimuthDegrees)
        }
        return nil
    }
}
