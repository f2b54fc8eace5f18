// SPDX-License-Identifier: Apache-2.0
/// The 16 points of the compass (N, NNE, NE, … NNW), each covering 22.5° centred on its bearing.
public enum CompassPoint: Int, Sendable, CaseIterable, CustomStringConvertible {
    case north, northNorthEast, northEast, eastNorthEast
    case east, eastSouthEast, southEast, southSouthEast
    case south, southSouthWest, southWest, westSouthWest
    case west, westNorthWest, northWest, northNorthWest

    /// The point whose 22.5° sector contains `bearingDegrees` (degrees clockwise from north, any
    /// finite value; it is wrapped to [0, 360)). Sector boundaries belong to the clockwise
    /// neighbour: 11.25° is NNE, 348.75° is N. `nil` for NaN or infinity.
    public init?(bearingDegrees: Double) {
        guard bearingDegrees.isFinite else { return nil }
        let wrapped = Angle.normalized360(bearingDegrees)
        let index = Int(((wrapped + 11.25) / 22.5).rounded(.down)) % 16
        self.init(rawValue: index)
    }

    /// The abbreviation: "N", "NNE", "NE", "ENE", "E", "ESE", "SE", "SSE", "S", "SSW", "SW",
    /// "WSW", "W", "WNW", "NW", "NNW".
    public var abbreviation: String { CompassPoint.abbreviations[rawValue] }

    /// The bearing at the centre of this point's sector, degrees (N = 0, NNE = 22.5, …).
    public var centreBearingDegrees: Double { Double(rawValue) * 22.5 }

    public var description: String { abbreviation }

    /// The 16-point compass word for a bearing in degrees clockwise from north, e.g. 58.4 → "NE",
    /// 118.99 → "ESE", 293.0 → "WNW". Returns the empty string for a non-finite bearing (there is
    /// no direction to name).
    public static func name(forBearing bearingDegrees: Double) -> String {
        CompassPoint(bearingDegrees: bearingDegrees)?.abbreviation ?? ""
    }

    static let abbreviations = [
        "N", "NNE", "NE", "ENE", "E", "ESE", "SE", "SSE",
        "S", "SSW", "SW", "WSW", "W", "WNW", "NW", "NNW",
    ]
}
