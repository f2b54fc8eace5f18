// SPDX-License-Identifier: Apache-2.0
// Converting raw IIO channel values to physical units: value = (raw + offset) × scale
// (kernel ABI Documentation/ABI/testing/sysfs-bus-iio, `in_*_raw`, `in_*_offset`, `in_*_scale`).
import QiblaCore

/// Why a sensor could not be set up.
public struct SensorSetupError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// Per-axis scale and offset of one three-axis sensor, plus its mount matrix.
public struct AxisCalibration: Sendable, Equatable {
    public var kind: SensorKind
    /// Kernel-unit scale per LSB for x, y, z (gauss or m/s²).
    public var scale: Vector3
    /// Offset in LSB added before scaling for x, y, z.
    public var offset: Vector3
    public var mountMatrix: Matrix3

    public init(kind: SensorKind, scale: Vector3, offset: Vector3, mountMatrix: Matrix3) {
        self.kind = kind; self.scale = scale; self.offset = offset; self.mountMatrix = mountMatrix
    }

    /// `M · ((raw + offset) × scale × unit)`, in microtesla or m/s²; `nil` if the result is not finite.
    public func apply(raw: Vector3) -> Vector3? {
        let unit = kind.kernelUnitToPublishedUnit
        let sensorFrame = Vector3((raw.x + offset.x) * scale.x * unit,
                                  (raw.y + offset.y) * scale.y * unit,
                                  (raw.z + offset.z) * scale.z * unit)
        let deviceFrame = mountMatrix * sensorFrame
        return deviceFrame.isFinite ? deviceFrame : nil
    }
}

/// Reads scale and offset for each axis: the per-axis attribute (`in_magn_x_scale`, LIS3MDL style)
/// first, then the shared one (`in_magn_scale`, AF8133J style). A missing offset is 0; a missing scale
/// is 1 (the raw value is then already in kernel units). Unparseable values, and a zero or negative
/// scale, are an error.
func readAxisCalibration(device: IIODevice, kind: SensorKind, mountMatrix: Matrix3) throws(SensorSetupError) -> AxisCalibration {
    func attribute(_ suffix: String, axis: String, default fallback: Double) throws(SensorSetupError) -> Double {
        let prefix = "\(device.sysfsPath)/in_\(kind.channelPrefix)"
        for path in ["\(prefix)_\(axis)_\(suffix)", "\(prefix)_\(suffix)"] {
            guard let text = try? SysfsAttribute.readText(path) else { continue }
            guard let value = parseFiniteDouble(text) else {
                throw SensorSetupError("\(device): unparseable \(path): \"\(SysfsAttribute.trimmed(text))\"")
            }
            return value
        }
        return fallback
    }
    var scale: [Double] = [], offset: [Double] = []
    for axis in ["x", "y", "z"] {
        let axisScale = try attribute("scale", axis: axis, default: 1)
        // The kernel ABI's scale converts a raw value to the channel's unit: a positive factor.
        guard axisScale > 0 else {
            throw SensorSetupError("\(device): \(kind.channelPrefix) \(axis) scale is \(axisScale == 0 ? "zero" : "negative") (\(axisScale))")
        }
        scale.append(axisScale)
        offset.append(try attribute("offset", axis: axis, default: 0))
    }
    return AxisCalibration(kind: kind, scale: Vector3(scale[0], scale[1], scale[2]),
                           offset: Vector3(offset[0], offset[1], offset[2]), mountMatrix: mountMatrix)
}
