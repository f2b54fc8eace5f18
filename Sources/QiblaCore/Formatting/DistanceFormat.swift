// SPDX-License-Identifier: Apache-2.0
/// Human-readable distances with locale-independent formatting: digits grouped by threes with a
/// comma ("4,795 km") and a full stop as the decimal mark ("4.8 km"), whatever the process locale
/// (nothing here consults the C or Foundation locale).
public enum DistanceFormat {
    /// Metres in one international mile (1 mi = 1609.344 m exactly; NIST SP 811, App. B).
    public static let metresPerMile = 1609.344
    /// Metres in one international foot (0.3048 m exactly).
    public static let metresPerFoot = 0.3048
    /// What a negative, NaN, infinite or absurdly large (≥ 10¹⁵ m) distance is shown as.
    public static let unknown = "—"

    /// Metric: below 999.5 m whole metres ("850 m"); below 9.95 km one decimal ("4.8 km");
    /// otherwise whole kilometres with grouping ("4,795 km", "10,324 km"). Rounds half away from zero.
    public static func kilometres(_ metres: Double) -> String {
        guard metres.isFinite, metres >= 0, metres < 1e15 else { return unknown }
        if metres < 999.5 {
            return "\(grouped(metres.rounded())) m"
        }
        let km = metres / 1000
        if km < 9.95 {
            return "\(oneDecimal(km)) km"
        }
        return "\(grouped(km.rounded())) km"
    }

    /// Imperial: below 0.1 mi whole feet ("328 ft"); below 9.95 mi one decimal ("3.1 mi");
    /// otherwise whole miles with grouping ("2,979 mi"). Rounds half away from zero.
    public static func miles(_ metres: Double) -> String {
        guard metres.isFinite, metres >= 0, metres < 1e15 else { return unknown }
        let mi = metres / metresPerMile
        if mi < 0.1 {
            return "\(grouped((metres / metresPerFoot).rounded())) ft"
        }
        if mi < 9.95 {
            return "\(oneDecimal(mi)) mi"
        }
        return "\(grouped(mi.rounded())) mi"
    }

    /// A whole, non-negative number with comma thousands separators: 4795 → "4,795".
    static func grouped(_ wholeNumber: Double) -> String {
        // Distances on Earth are far below 2⁵³, so the conversion is exact.
        let digits = String(Int64(wholeNumber))
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return result
    }

    /// One decimal place with a full stop: 4.84 → "4.8", 0.96 → "1.0".
    static func oneDecimal(_ value: Double) -> String {
        let tenths = Int64((value * 10).rounded())
        return "\(grouped(Double(tenths / 10))).\(tenths % 10)"
    }
}
