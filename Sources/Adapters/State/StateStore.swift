// SPDX-License-Identifier: Apache-2.0
import Logging
import QiblaCore
import QiblaPlatform
import SystemPackage

/// Why a state document does not decode.
public struct StateDocumentError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// What went wrong reading a state file; the file has been set aside when `setAsidePath` is set.
public struct StateFileProblem: Error, Sendable, CustomStringConvertible {
    public var file: String
    public var reason: String
    public var setAsidePath: String?
    public var description: String {
        if let setAsidePath { "\(file): \(reason); moved aside to \(setAsidePath)" } else { "\(file): \(reason)" }
    }
}

/// qiblad's persistent state under `$XDG_STATE_HOME/qiblad/` (or `--state-dir`): one small
/// key–value file per concern (`manual-location`, `last-known-location`, later `calibration`).
///
/// Writes are atomic (temporary file, fsync, rename, fsync of the directory). A file that cannot
/// be parsed or validated is renamed to `NAME.corrupt-UNIXTIME` — never deleted — and reported,
/// and the daemon carries on with the default.
public final class StateStore: Sendable {
    public let directory: String
    private static let formatVersion = "1"

    public static let manualLocationFile = "manual-location"
    public static let lastKnownLocationFile = "last-known-location"

    public init(directory: String) {
        self.directory = directory
    }

    /// `$XDG_STATE_HOME/qiblad`, else `$HOME/.local/state/qiblad` (XDG Base Directory spec 0.8).
    public static func defaultDirectory(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/qiblad" }
        let home = environment["HOME"] ?? "/tmp"
        return home + "/.local/state/qiblad"
    }

    public func prepare() throws(Errno) {
        try FileSystem.createDirectories(directory)
    }

    private func path(_ name: String) -> String { directory + "/" + name }

    // MARK: Locations

    public func loadLocation(_ name: String) -> Result<Location?, StateFileProblem> {
        let document: KeyValueDocument?
        switch loadDocument(name) {
        case .success(let d): document = d
        case .failure(let problem): return .failure(problem)
        }
        guard let document else { return .success(nil) }
        switch Self.location(from: document) {
        case .success(let location): return .success(location)
        case .failure(let reason): return .failure(setAside(name, reason: reason.description))
        }
    }

    /// Decodes a location state document (no I/O): a valid position with a non-negative accuracy
    /// and timestamp, or why not.
    public static func location(from document: KeyValueDocument) -> Result<Location, StateDocumentError> {
        guard let lat = document["latitude"].flatMap(parseFiniteDouble),
              let lon = document["longitude"].flatMap(parseFiniteDouble) else {
            return .failure(StateDocumentError("latitude/longitude missing or not a number"))
        }
        let height = document["height-m"].flatMap(parseFiniteDouble) ?? 0
        let position: GeodeticPosition
        do {
            position = try GeodeticPosition(latitudeDegrees: lat, longitudeDegrees: lon, heightMetres: height)
        } catch {
            return .failure(StateDocumentError("\(error)"))
        }
        let accuracy = document["accuracy-m"].flatMap(parseFiniteDouble).flatMap { $0 >= 0 ? $0 : nil }
        let timestamp = document["timestamp"].flatMap(parseFiniteDouble) ?? 0
        return .success(Location(position: position, horizontalAccuracyMetres: accuracy,
                                 timestampUnixSeconds: max(0, timestamp)))
    }

    public func saveLocation(_ location: Location?, as name: String) throws(Errno) {
        guard let location else {
            try remove(name)
            return
        }
        var document = KeyValueDocument()
        document.set("format", Self.formatVersion)
        document.set("latitude", "\(location.position.latitudeDegrees)")
        document.set("longitude", "\(location.position.longitudeDegrees)")
        document.set("height-m", "\(location.position.heightMetres)")
        if let accuracy = location.horizontalAccuracyMetres { document.set("accuracy-m", "\(accuracy)") }
        document.set("timestamp", "\(location.timestampUnixSeconds)")
        try save(document, as: name, header: "qiblad state: \(name) (written by qiblad; safe to delete)")
    }

    // MARK: Generic documents (also used by the calibration state)

    /// Reads a document; nil when the file does not exist. Unparseable files are set aside.
    public func loadDocument(_ name: String) -> Result<KeyValueDocument?, StateFileProblem> {
        let bytes: [UInt8]?
        do {
            bytes = try FileSystem.readFile(path(name))
        } catch {
            return .failure(setAside(name, reason: "unreadable (\(error))"))
        }
        guard let bytes else { return .success(nil) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(setAside(name, reason: "not UTF-8 text"))
        }
        do {
            let document = try KeyValueDocument.parse(text)
            if let format = document["format"], format != Self.formatVersion {
                return .failure(setAside(name, reason: "unknown format version \(format)"))
            }
            return .success(document)
        } catch {
            return .failure(setAside(name, reason: "\(error)"))
        }
    }

    public func save(_ document: KeyValueDocument, as name: String, header: String? = nil) throws(Errno) {
        try prepare()
        var document = document
        if document["format"] == nil { document.entries.insert(.init(key: "format", value: Self.formatVersion, line: 0), at: 0) }
        try FileSystem.writeFileAtomically(path(name), Array(document.serialized(header: header).utf8))
    }

    public func remove(_ name: String) throws(Errno) {
        guard FileSystem.exists(path(name)) else { return }
        try FileSystem.unlink(path(name))
        FileSystem.syncDirectory(containing: path(name))
    }

    /// Renames a bad file to `NAME.corrupt-UNIXTIME` so nothing is lost, and says so.
    public func setAside(_ name: String, reason: String) -> StateFileProblem {
        let target = path(name) + ".corrupt-\(Int(WallClock.nowUnixSeconds()))"
        do {
            try FileSystem.rename(path(name), target)
            return StateFileProblem(file: path(name), reason: reason, setAsidePath: target)
        } catch {
            return StateFileProblem(file: path(name), reason: reason + "; could not move it aside (\(error))", setAsidePath: nil)
        }
    }
}
