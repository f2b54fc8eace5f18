// SPDX-License-Identifier: Apache-2.0
/// Which model a calibration fit used.
public enum CalibrationFitKind: String, Sendable, Equatable {
    /// Hard iron b and a symmetric soft-iron matrix S (9 parameters).
    case ellipsoid
    /// `CalibrationEstimator` with the hard iron determined and the soft iron still near its prior.
    case hardIron = "hard-iron"
    /// `CalibrationEstimator` with the hard iron and the soft iron's diagonal determined.
    case diagonalSoftIron = "diagonal-soft-iron"
    /// Hard iron b only, S = identity (4 parameters with the radius): the fallback when the
    /// ellipsoid is ill-conditioned.
    case sphere
}

/// A fitted magnetometer calibration `corrected = S · (raw − b)` with its quality figures.
///
/// Normalisation: S is symmetric positive definite with det S = 1 (volume preserving, the
/// convention of NXP AN4246 §"soft-iron" and AN5019, where the inverse soft-iron matrix W⁻¹ has unit
/// determinant), so the corrected samples lie on a sphere of radius `fieldMicrotesla` equal to the
/// geometric mean of the raw ellipsoid's semi-axes.
public struct CalibrationFit: Sendable, Equatable {
    /// The model used.
    public var kind: CalibrationFitKind
    /// Hard-iron offset b, microtesla, device frame.
    public var hardIronOffsetMicrotesla: Vector3
    /// Soft-iron correction S: symmetric, det 1 (identity for a sphere fit).
    public var softIronMatrix: Matrix3
    /// Radius of the corrected-field sphere: the field strength the sensor sees, microtesla.
    public var fieldMicrotesla: Double
    /// RMS geometric residual √(mean (|S(mᵢ − b)| − R)²), microtesla.
    public var residualRMSMicrotesla: Double
    /// λmax / λmin of S (1 for a sphere): how far the raw samples are from a sphere.
    public var eigenvalueSpread: Double
    /// Number of samples fitted.
    public var sampleCount: Int

    public init(kind: CalibrationFitKind, hardIronOffsetMicrotesla: Vector3, softIronMatrix: Matrix3,
                fieldMicrotesla: Double, residualRMSMicrotesla: Double, eigenvalueSpread: Double, sampleCount: Int) {
        self.kind = kind
        self.hardIronOffsetMicrotesla = hardIronOffsetMicrotesla
        self.softIronMatrix = softIronMatrix
        self.fieldMicrotesla = fieldMicrotesla
        self.residualRMSMicrotesla = residualRMSMicrotesla
        self.eigenvalueSpread = eigenvalueSpread
        self.sampleCount = sampleCount
    }

    /// The correction to apply to raw samples.
    public var calibration: MagnetometerCalibration {
        MagnetometerCalibration(hardIronOffset: hardIronOffsetMicrotesla, softIronMatrix: softIronMatrix)
    }
}
