// SPDX-License-Identifier: Apache-2.0
/// Converts time to the decimal year the WMM takes: year + (elapsed part of the year) / (length of
/// that calendar year), in the proleptic Gregorian calendar, UTC. Pure: no clock is read.
///
/// Calendar arithmetic: Howard Hinnant, "chrono-Compatible Low-Level Date Algorithms"
/// (`days_from_civil` / `civil_from_days`), exact for every date representable here.
public enum DecimalYear {
    /// Decimal year from seconds since the Unix epoch (1970-01-01T00:00:00Z), using the calendar
    /// year's real length (365 or 366 days; leap seconds are not counted, as in POSIX time).
    ///
    /// A non-finite input is returned unchanged (NaN stays NaN, which ``MagneticModel`` reports as
    /// out of validity). Beyond ±10⁹ days from 1970 the calendar is not computed and the result is
    /// 1970 + t / 365.2425 days (such times are out of any model's validity anyway).
    public static func from(unixSeconds: Double) -> Double {
        guard unixSeconds.isFinite else { return unixSeconds }
        let secondsPerDay = 86_400.0
        let dayNumber = (unixSeconds / secondsPerDay).rounded(.down)
        guard abs(dayNumber) < 1e9 else { return 1970 + unixSeconds / (365.2425 * secondsPerDay) }
        let year = civilYear(daysSinceEpoch: Int(dayNumber))
        let startDay = daysFromCivil(year: year, month: 1, day: 1)
        let nextStartDay = daysFromCivil(year: year + 1, month: 1, day: 1)
        let elapsed = unixSeconds - Double(startDay) * secondsPerDay
        return Double(year) + elapsed / (Double(nextStartDay - startDay) * secondsPerDay)
    }

    /// Decimal year at 00:00 UTC plus `secondsOfDay` on a civil (Gregorian) date, or nil if the date
    /// does not exist (month outside 1…12, day outside the month, or seconds outside 0..<86 400).
    public static func from(year: Int, month: Int, day: Int, secondsOfDay: Double = 0) -> Double? {
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
              abs(year) < 1_000_000, secondsOfDay >= 0, secondsOfDay < 86_400
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return from(unixSeconds: Double(days) * 86_400 + secondsOfDay)
    }

    /// Seconds since the Unix epoch at 00:00 UTC plus `secondsOfDay` on a civil (Gregorian) date, or
    /// nil if the date does not exist (as ``from(year:month:day:secondsOfDay:)``).
    public static func unixSeconds(year: Int, month: Int, day: Int, secondsOfDay: Double = 0) -> Double? {
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
              abs(year) < 1_000_000, secondsOfDay >= 0, secondsOfDay < 86_400
        else { return nil }
        return Double(daysFromCivil(year: year, month: month, day: day)) * 86_400 + secondsOfDay
    }

    /// Days since 1970-01-01 of a civil date (Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400                                          // [0, 399]
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1  // [0, 365]
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear   // [0, 146096]
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil year containing a day counted from 1970-01-01 (Hinnant's `civil_from_days`).
    static func civilYear(daysSinceEpoch: Int) -> Int { civilDate(daysSinceEpoch: daysSinceEpoch).year }

    /// The civil (Gregorian) date of a day counted from 1970-01-01 (Hinnant's `civil_from_days`).
    public static func civilDate(daysSinceEpoch: Int) -> (year: Int, month: Int, day: Int) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153                           // March = 0
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2:
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return leap ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
