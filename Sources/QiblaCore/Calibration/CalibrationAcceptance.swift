// SPDX-License-Identifier: Apache-2.0
/// Why a calibration fit (or a fit attempt) was not accepted. Each case carries the measured value.
public enum CalibrationRejection: Sendable, Equatable, CustomStringConvertible {
    /// Too few direction cells hold samples: the fit would extrapolate over the unseen part of the
    /// sphere (e.g. a phone turned only flat on a table). Fraction of cells filled, 0–1.
    case insufficientCoverage(fraction: Double)
    /// The sample directions reach both hemispheres (component ≥ the threshold either way) of too
    /// few device axes.
    case hemispheresNotCovered(axes: Int)
    /// Too few samples stored.
    case tooFewSamples(count: Int)
    /// Too little motion while collecting, seconds.
    case tooLittleMotion(seconds: Double)
    /// Neither the ellipsoid nor the sphere could be fitted (degenerate samples).
    case fitFailed
    /// λmax/λmin of S is too large: more distortion than a phone's soft iron explains.
    case eigenvalueSpreadTooLarge(spread: Double)
    /// The fitted field radius is outside the accepted range, microtesla.
    case fieldOutOfRange(fieldMicrotesla: Double, expected: ClosedRange<Double>)
    /// The RMS residual exceeds the limit, microtesla.
    case residualTooLarge(residualMicrotesla: Double, limitMicrotesla: Double)

    public var description: String {
        switch self {
        case .insufficientCoverage(let f): return "orientation coverage \(Int((f * 100).rounded())) % is too low"
        case .hemispheresNotCovered(let axes): return "samples span both hemispheres of only \(axes) axes"
        case .tooFewSamples(let n): return "only \(n) samples"
        case .tooLittleMotion(let s): return "only \(s) s of motion"
        case .fitFailed: return "no ellipsoid or sphere fits the samples"
        case .eigenvalueSpreadTooLarge(let s): return "soft-iron eigenvalue spread \(s) is too large"
        case .fieldOutOfRange(let f, let r): return "fitted field \(f) µT outside \(r.lowerBound)…\(r.upperBound) µT"
        case .residualTooLarge(let r, let l): return "residual \(r) µT above \(l) µT"
        }
    }
}

/// When a calibration fit is trustworthy enough to apply. Defaults follow the numbers and
/// the practice of NXP's eCompass library (AN5019: accept a new fit only with a lower fit error and
/// a geomagnetic field in 22–67 µT) and Android's `CompassCalibrator`-style acceptance.
public struct CalibrationAcceptance: Sendable, Equatable {
    /// Minimum fraction of direction cells filled (default 0.6).
    public var minimumCoverage: Double
    /// Minimum number of device axes whose both hemispheres hold sample directions (default 3).
    public var minimumHemisphereAxes: Int
    /// A direction counts towards a hemisphere when its component along the axis is at least this
    /// (default 0.5, i.e. within 60° of the axis).
    public var hemisphereComponentThreshold: Double
    /// Minimum number of stored samples (default 40).
    public var minimumSampleCount: Int
    /// Minimum seconds of motion while collecting (default 5).
    public var minimumMotionSeconds: Double
    /// Maximum λmax/λmin of the soft-iron matrix S (default 1.5).
    public var maximumEigenvalueSpread: Double
    /// The fitted radius must be within this fraction of the WMM2025 total intensity F at the
    /// location (default 0.15).
    public var fieldToleranceFraction: Double
    /// The accepted radius range when no location is known, microtesla (default 20–70: the
    /// Earth's surface field is 22–67 µT, WMM2025 report Fig. on F).
    public var fieldRangeWithoutLocationMicrotesla: ClosedRange<Double>
    /// Maximum RMS residual as a fraction of the fitted radius (default 0.03).
    public var maximumResidualFraction: Double

    public init(minimumCoverage: Double = 0.6, minimumHemisphereAxes: Int = 3,
                hemisphereComponentThreshold: Double = 0.5, minimumSampleCount: Int = 40,
                minimumMotionSeconds: Double = 5, maximumEigenvalueSpread: Double = 1.5,
                fieldToleranceFraction: Double = 0.15,
                fieldRangeWithoutLocationMicrotesla: ClosedRange<Double> = 20...70,
                maximumResidualFraction: Double = 0.03) {
        self.minimumCoverage = minimumCoverage
        self.minimumHemisphereAxes = minimumHemisphereAxes
        self.hemisphereComponentThreshold = hemisphereComponentThreshold
        self.minimumSampleCount = minimumSampleCount
        self.minimumMotionSeconds = minimumMotionSeconds
        self.maximumEigenvalueSpread = maximumEigenvalueSpread
        self.fieldToleranceFraction = fieldToleranceFraction
        self.fieldRangeWithoutLocationMicrotesla = fieldRangeWithoutLocationMicrotesla
        self.maximumResidualFraction = maximumResidualFraction
    }

    /// The accepted field range: F·(1 ± tolerance) for a known F (microtesla), else the default range.
    public func fieldRange(expectedFieldMicrotesla: Double?) -> ClosedRange<Double> {
        guard let f = expectedFieldMicrotesla, f.isFinite, f > 0 else { return fieldRangeWithoutLocationMicrotesla }
        return (f * (1 - fieldToleranceFraction))...(f * (1 + fieldToleranceFraction))
    }

    /// Checks the collection before fitting (cheap): coverage, sample count and motion.
    public func checkCollection(coverage: Double, sampleCount: Int, motionSeconds: Double) -> CalibrationRejection? {
        if coverage < minimumCoverage { return .insufficientCoverage(fraction: coverage) }
        if sampleCount < minimumSampleCount { return .tooFewSamples(count: sampleCount) }
        if motionSeconds < minimumMotionSeconds { return .tooLittleMotion(seconds: motionSeconds) }
        return nil
    }

    /// Checks a fit: hemispheres (measured from the fitted centre), spread, radius, residual.
    /// `nil` means accepted.
    public func check(_ fit: CalibrationFit, hemisphereAxes: Int,
                      expectedFieldMicrotesla: Double?) -> CalibrationRejection? {
        if hemisphereAxes < minimumHemisphereAxes { return .hemispheresNotCovered(axes: hemisphereAxes) }
        if !(fit.eigenvalueSpread <= maximumEigenvalueSpread) {
            return .eigenvalueSpreadTooLarge(spread: fit.eigenvalueSpread)
        }
        let range = fieldRange(expectedFieldMicrotesla: expectedFieldMicrotesla)
        if !range.contains(fit.fieldMicrotesla) {
            return .fieldOutOfRange(fieldMicrotesla: fit.fieldMicrotesla, expected: range)
        }
        let limit = maximumResidualFraction * fit.fieldMicrotesla
        if !(fit.residualRMSMicrotesla <= limit) {
            return .residualTooLarge(residualMicrotesla: fit.residualRMSMicrotesla, limitMicrotesla: limit)
        }
        return nil
    }
}
