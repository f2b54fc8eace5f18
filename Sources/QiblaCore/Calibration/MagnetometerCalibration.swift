// SPDX-License-Identifier: Apache-2.0
/// Hard- and soft-iron correction of a magnetometer (the standard model of e.g. Vasconcelos et
/// al., "Geometric approach to strapdown magnetometer calibration in sensor frame", IEEE TAES 47(2),
/// 2011, eq. 5, solved for the true field):
///
///     corrected = softIronMatrix · (raw − hardIronOffset)
///
/// All field values are in microtesla, in the device frame after the IIO mount matrix. The state
/// adapter serialises the fields itself (no `Codable` here, QiblaCore has no Foundation).
public struct MagnetometerCalibration: Sendable, Equatable {
    /// Constant field of magnetised parts of the device, microtesla, subtracted first.
    public var hardIronOffset: Vector3
    /// Correction of distortion by soft magnetic materials and of axis gain / misalignment
    /// (dimensionless), applied after removing the offset.
    public var softIronMatrix: Matrix3

    public init(hardIronOffset: Vector3 = .zero, softIronMatrix: Matrix3 = .identity) {
        self.hardIronOffset = hardIronOffset
        self.softIronMatrix = softIronMatrix
    }

    /// No correction.
    public static let identity = MagnetometerCalibration()

    /// True for the identity correction (zero offset, identity matrix).
    public var isIdentity: Bool { self == .identity }

    /// True when all entries are finite and the matrix is a proper (det > 0, non-singular)
    /// transformation. An invalid calibration should be discarded, not applied.
    public var isValid: Bool {
        hardIronOffset.isFinite && softIronMatrix.isFinite && softIronMatrix.determinant > 1e-9
    }

    /// The corrected field, microtesla: `softIronMatrix · (raw − hardIronOffset)`.
    @inlinable public func apply(_ raw: Vector3) -> Vector3 {
        softIronMatrix * (raw - hardIronOffset)
    }
}
