// STUB — replaced by the WMM2025 work (issue 2). Signatures are the contract the daemon codes against.

/// The World Magnetic Model 2025 (NOAA NCEI / BGS).
public struct MagneticModel: Sendable {
    public static let wmm2025 = MagneticModel()

    /// The main field at a geodetic position (height in metres above the ellipsoid) and decimal year.
    public func field(at position: GeodeticPosition, decimalYear: Double) -> MagneticField {
        fatalError("unimplemented")
    }
}

public struct MagneticField: Sendable, Equatable {
    /// North (X), east (Y), down (Z) components, horizontal intensity H and total intensity F, nanotesla.
    public var northNanotesla: Double
    public var eastNanotesla: Double
    public var downNanotesla: Double
    public var horizontalNanotesla: Double
    public var totalNanotesla: Double
    /// Inclination (dip), degrees, positive down.
    public var inclinationDegrees: Double
    /// Declination, degrees, east positive.
    public var declinationDegrees: Double
    /// Grid variation, degrees (defined only at |latitude| ≥ 55°, else nil).
    public var gridVariationDegrees: Double?
    /// False outside 2025.0–2030.0.
    public var isWithinValidity: Bool
    public var zone: MagneticZone
}

/// WMM compass-reliability zones (WMM2025 technical report: caution H < 6000 nT, blackout H < 2000 nT).
public enum MagneticZone: String, Sendable, Equatable {
    case normal, caution, blackout
}

/// Converts time to the decimal year the WMM takes.
public enum DecimalYear {
    /// Decimal year from seconds since the Unix epoch (UTC), using the calendar year's real length.
    public static func from(unixSeconds: Double) -> Double {
        fatalError("unimplemented")
    }
}
