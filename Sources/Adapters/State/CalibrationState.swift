// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import SystemPackage

/// A magnetometer calibration as persisted: the fit and the device it belongs to.
public struct StoredCalibration: Sendable, Equatable {
    /// The IIO device's `name` attribute (e.g. `lsm9ds1_magn`).
    public var deviceName: String
    /// The device's stable sysfs location (see `IIODevice.stableLocation`).
    public var devicePath: String
    public var fit: CalibrationFit
    /// When it was accepted, seconds since the Unix epoch.
    public var timestampUnixSeconds: Double

    public init(deviceName: String, devicePath: String, fit: CalibrationFit, timestampUnixSeconds: Double) {
        self.deviceName = deviceName
        self.devicePath = devicePath
        self.fit = fit
        self.timestampUnixSeconds = timestampUnixSeconds
    }
}

extension StateStore {
    /// Prefix of the per-device calibration files: `calibration-<name>-<hash of the path>`.
    public static let calibrationFilePrefix = "calibration-"

    /// The file of one magnetometer: its name (letters, digits, `_`, `-` kept) and an FNV-1a hash
    /// of its sysfs location, so two sensors of the same kind never share a file.
    public static func calibrationFile(deviceName: String, devicePath: String) -> String {
        let safeName = String(deviceName.map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" ? $0 : "_" }.prefix(64))
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in devicePath.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let hex = String(hash, radix: 16)
        return calibrationFilePrefix + (safeName.isEmpty ? "unnamed" : safeName) + "-" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Reads the calibration of a device: nil when there is none. A file that does not parse, is
    /// for another device, or holds an invalid fit is set aside (renamed, never deleted).
    public func loadCalibration(deviceName: String, devicePath: String) -> Result<StoredCalibration?, StateFileProblem> {
        let name = Self.calibrationFile(deviceName: deviceName, devicePath: devicePath)
        let document: KeyValueDocument
        switch loadDocument(name) {
        case .success(let d?): document = d
        case .success(nil): return .success(nil)
        case .failure(let problem): return .failure(problem)
        }
        switch Self.calibration(from: document, deviceName: deviceName, devicePath: devicePath) {
        case .success(let stored): return .success(stored)
        case .failure(let reason): return .failure(setAside(name, reason: reason.description))
        }
    }

    /// Largest believable hard-iron offset component, microtesla (50 gauss: three times the full
    /// scale of common phone magnetometers, ±16 gauss).
    public static let maximumHardIronMicrotesla = 5000.0

    /// Decodes a calibration state document for a device (no I/O): a valid fit — offset components
    /// within ±``maximumHardIronMicrotesla``, soft-iron entries within ±10 and invertible, field
    /// 1–1000 µT, residual no larger than the field, eigenvalue spread 1–100 — or why not.
    public static func calibration(from document: KeyValueDocument, deviceName: String,
                                   devicePath: String) -> Result<StoredCalibration, StateDocumentError> {
        func number(_ key: String) -> Double? { document[key].flatMap(parseFiniteDouble) }
        func vector(_ key: String) -> [Double]? {
            guard let text = document[key] else { return nil }
            let cells = text.split(separator: ",", omittingEmptySubsequences: false)
            let values = cells.compactMap { parseFiniteDouble($0) }
            return values.count == cells.count ? values : nil
        }
        guard document["device-name"] == deviceName, document["device-path"] == devicePath else {
            return .failure(StateDocumentError("written for another device"))
        }
        guard let kind = document["kind"].flatMap(CalibrationFitKind.init(rawValue:)),
              let offset = vector("hard-iron-offset-ut"), offset.count == 3,
              let s = vector("soft-iron-matrix"), s.count == 9,
              let field = number("field-ut"), field > 0,
              let residual = number("residual-ut"), residual >= 0,
              let spread = number("eigenvalue-spread"), spread >= 1,
              let samples = document["samples"].flatMap({ Int($0) }), samples > 0,
              offset.allSatisfy({ abs($0) <= maximumHardIronMicrotesla }), s.allSatisfy({ abs($0) <= 10 }),
              (1...1000).contains(field), residual <= field, spread <= 100 else {
            return .failure(StateDocumentError("a calibration value is missing or out of range"))
        }
        let fit = CalibrationFit(kind: kind, hardIronOffsetMicrotesla: Vector3(offset[0], offset[1], offset[2]),
                                 softIronMatrix: Matrix3(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]),
                                 fieldMicrotesla: field, residualRMSMicrotesla: residual,
                                 eigenvalueSpread: spread, sampleCount: samples)
        guard fit.calibration.isValid else {
            return .failure(StateDocumentError("the soft-iron matrix is not a valid correction"))
        }
        return .success(StoredCalibration(deviceName: deviceName, devicePath: devicePath, fit: fit,
                                          timestampUnixSeconds: max(0, number("timestamp") ?? 0)))
    }

    /// Writes a device's calibration atomically.
    public func saveCalibration(_ calibration: StoredCalibration) throws(Errno) {
        let fit = calibration.fit
        let b = fit.hardIronOffsetMicrotesla, s = fit.softIronMatrix
        var document = KeyValueDocument()
        document.set("device-name", calibration.deviceName)
        document.set("device-path", calibration.devicePath)
        document.set("kind", fit.kind.rawValue)
        document.set("hard-iron-offset-ut", "\(b.x), \(b.y), \(b.z)")
        document.set("soft-iron-matrix", [s.row0, s.row1, s.row2].map { "\($0.x), \($0.y), \($0.z)" }.joined(separator: ", "))
        document.set("field-ut", "\(fit.fieldMicrotesla)")
        document.set("residual-ut", "\(fit.residualRMSMicrotesla)")
        document.set("eigenvalue-spread", "\(fit.eigenvalueSpread)")
        document.set("samples", "\(fit.sampleCount)")
        document.set("timestamp", "\(calibration.timestampUnixSeconds)")
        try save(document, as: Self.calibrationFile(deviceName: calibration.deviceName, devicePath: calibration.devicePath),
                 header: "qiblad state: magnetometer calibration, corrected = S · (raw − b) (written by qiblad; delete to recalibrate)")
    }

    /// Removes a device's calibration file (`ResetCalibration`); nothing when there is none.
    public func removeCalibration(deviceName: String, devicePath: String) throws(Errno) {
        try remove(Self.calibrationFile(deviceName: deviceName, devicePath: devicePath))
    }
}
