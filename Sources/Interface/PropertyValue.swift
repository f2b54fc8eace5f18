// SPDX-License-Identifier: Apache-2.0
// Hand-written companions of the generated table: the value of a property and the typed enums
// behind its string properties. No libdbus here: qiblad's bus layer turns these into D-Bus values.

/// The version of qiblad, qiblactl and qibla-sim (one string for all), published as `Version`.
public let qiblaVersion = "0.2.0"

/// The value of one `io.github.qiblad.Qibla1` property.
///
/// Equality is "would a client see the same thing": NaN equals NaN (a double that stays unknown
/// has not changed), and otherwise values compare exactly.
public enum PropertyValue: Sendable, CustomStringConvertible {
    case double(Double)
    case bool(Bool)
    case string(String)
    case uint64(UInt64)

    public var description: String {
        switch self {
        case .double(let v): "\(v)"
        case .bool(let v): "\(v)"
        case .string(let v): "\"\(v)\""
        case .uint64(let v): "\(v)"
        }
    }
}

extension PropertyValue: Equatable {
    public static func == (a: PropertyValue, b: PropertyValue) -> Bool {
        switch (a, b) {
        case (.double(let x), .double(let y)): x == y || (x.isNaN && y.isNaN)
        case (.bool(let x), .bool(let y)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.uint64(let x), .uint64(let y)): x == y
        default: false
        }
    }
}

/// Where the published location comes from (`LocationSource`). Priority: a live fix (from GeoClue2
/// or gpsd, whichever `location-source` picked), then the manual location, then the last known one.
public enum LocationSource: String, Sendable, CaseIterable {
    case geoclue
    case gpsd
    case manual
    case lastKnown = "last-known"
    case none
}
