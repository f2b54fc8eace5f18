// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import SystemPackage

/// A heading correction from a sun check (`CheckHeadingWithSun` with store), as persisted beside
/// the calibration of the magnetometer it belongs to.
public struct StoredHeadingCorrection: Sendable, Equatable {
    /// The IIO device's `name` attribute.
    public var deviceName: String
    /// The device's stable sysfs location (see `IIODevice.stableLocation`).
    public var devicePath: String
    /// Measured − true heading, degrees in (−180, 180]: subtracted from every heading.
    public var correctionDegrees: Double
    /// When it was stored, seconds since the Unix epoch.
    public var timestampUnixSeconds: Double

    public init(deviceName: String, devicePath: String, correctionDegrees: Double, timestampUnixSeconds: Double) {
        self.deviceName = deviceName
        self.devicePath = devicePath
        self.correctionDegrees = correctionDegrees
        self.timestampUnixSeconds = timestampUnixSeconds
    }
}

extension StateStore {
    /// Prefix of the per-device heading-correction files: `heading-correction-<name>-<hash of the path>`,
    /// the same device key as ``calibrationFile(deviceName:devicePath:)``.
    public static let headingCorrectionFilePrefix = "heading-correction-"

    public static func headingCorrectionFile(deviceName: String, devicePath: String) -> String {
        headingCorrectionFilePrefix
            + calibrationFile(deviceName: deviceName, devicePath: devicePath).dropFirst(calibrationFilePrefix.count)
    }

    /// Reads a device's heading correction: nil when there is none. A file that does not parse, is
    /// for another device, or holds a correction outside (−180, 180] is set aside.
    public func loadHeadingCorrection(deviceName: String, devicePath: String) -> Result<StoredHeadingCorrection?, StateFileProblem> {
        let name = Self.headingCorrectionFile(deviceName: deviceName, devicePath: devicePath)
        let document: KeyValueDocument
        switch loadDocument(name) {
        case .success(let d?): document = d
        case .success(nil): return .success(nil)
        case .failure(let problem): return .failure(problem)
        }
        guard document["device-name"] == deviceName, document["device-path"] == devicePath else {
            return .failure(setAside(name, reason: "written for another device"))
        }
        guard let correction = document["correction-degrees"].flatMap(parseFiniteDouble), correction > -180, correction <= 180 else {
            return .failure(setAside(name, reason: "the correction is missing or out of range"))
        }
        return .success(StoredHeadingCorrection(
            deviceName: deviceName, devicePath: devicePath, correctionDegrees: correction,
            timestampUnixSeconds: document["timestamp"].flatMap(parseFiniteDouble) ?? 0))
    }

    /// Writes a device's heading correction atomically.
    public func saveHeadingCorrection(_ correction: StoredHeadingCorrection) throws(Errno) {
        var document = KeyValueDocument()
        document.set("device-name", correction.deviceName)
        document.set("device-path", correction.devicePath)
        document.set("correction-degrees", "\(correction.correctionDegrees)")
        document.set("timestamp", "\(correction.timestampUnixSeconds)")
        try save(document, as: Self.headingCorrectionFile(deviceName: correction.deviceName, devicePath: correction.devicePath),
                 header: "qiblad state: heading correction from a sun check, heading = measured − correction (written by qiblad; removed by ResetCalibration)")
    }

    /// Removes a device's heading correction (`ResetCalibration`); nothing when there is none.
    public func removeHeadingCorrection(deviceName: String, devicePath: String) throws(Errno) {
        try remove(Self.headingCorrectionFile(deviceName: deviceName, devicePath: devicePath))
    }
}

extension StateWriter {
    /// Writes a heading correction, then calls `completion` through `deliver`.
    public func saveHeadingCorrection(_ correction: StoredHeadingCorrection, completion: @escaping Completion) {
        submit({ (store: StateStore) throws(Errno) in try store.saveHeadingCorrection(correction) }, completion: completion)
    }

    /// Removes a device's heading correction, then calls `completion` through `deliver`.
    public func removeHeadingCorrection(deviceName: String, devicePath: String, completion: @escaping Completion) {
        submit({ (store: StateStore) throws(Errno) in try store.removeHeadingCorrection(deviceName: deviceName, devicePath: devicePath) },
               completion: completion)
    }
}
