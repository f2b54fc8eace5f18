// Locale-independent parsing of the numbers sysfs prints ("0.000146", "-12", "1e-3").

/// Parses a decimal number as the IIO core prints it, independent of any C locale.
///
/// Grammar (checked by hand): optional surrounding ASCII whitespace, optional sign, digits with at most
/// one `.` (at least one digit in total), optional exponent `e`/`E`, optional sign, digits.
/// Rejected: empty text, `0,5` (comma decimals), `abc`, `inf`, `nan`, hex, several dots.
/// Conversion uses Clinger's exact fast path (W. D. Clinger, "How to read floating point numbers
/// accurately", PLDI 1990: ≤ 15 significant digits and |power of ten| ≤ 22 give a correctly rounded
/// result from one multiplication or division); other inputs go through the standard library's
/// `Double(_:)`, which always uses the C locale. The result is finite or `nil`.
public func parseIIODecimal<S: StringProtocol>(_ text: S) -> Double? {
    let bytes = Array(text.utf8)
    var start = 0, end = bytes.count
    while start < end, isSpace(bytes[start]) { start += 1 }
    while end > start, isSpace(bytes[end - 1]) { end -= 1 }
    guard start < end else { return nil }

    var index = start
    var negative = false
    if bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
        negative = bytes[index] == UInt8(ascii: "-")
        index += 1
    }
    var mantissa: UInt64 = 0
    var significantDigits = 0
    var digitCount = 0
    var decimalExponent = 0
    var seenDot = false
    var overflowed = false
    while index < end {
        let byte = bytes[index]
        if byte == UInt8(ascii: ".") {
            if seenDot { return nil }
            seenDot = true
        } else if let digit = digitValue(byte) {
            digitCount += 1
            if mantissa == 0 && digit == 0 {
                if seenDot { decimalExponent -= 1 }
            } else if significantDigits < 19 {
                mantissa = mantissa * 10 + UInt64(digit)
                significantDigits += 1
                if seenDot { decimalExponent -= 1 }
            } else {
                overflowed = true
                if !seenDot { decimalExponent += 1 }
            }
        } else {
            break
        }
        index += 1
    }
    guard digitCount > 0 else { return nil }
    if index < end {
        guard bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") else { return nil }
        index += 1
        var exponentNegative = false
        if index < end, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            exponentNegative = bytes[index] == UInt8(ascii: "-")
            index += 1
        }
        var exponent = 0
        var exponentDigits = 0
        while index < end, let digit = digitValue(bytes[index]) {
            exponent = min(exponent * 10 + digit, 100_000)
            exponentDigits += 1
            index += 1
        }
        guard exponentDigits > 0, index == end else { return nil }
        decimalExponent += exponentNegative ? -exponent : exponent
    }

    let value: Double
    if mantissa == 0 {
        value = 0
    } else if !overflowed, significantDigits <= 15, abs(decimalExponent) <= 22 {
        let power = exactPowersOfTen[abs(decimalExponent)]
        value = decimalExponent < 0 ? Double(mantissa) / power : Double(mantissa) * power
    } else {
        // Grammar already validated; the standard library's conversion is locale-independent.
        guard let slow = Double(String(decoding: bytes[start..<end], as: UTF8.self)) else { return nil }
        value = abs(slow)
    }
    guard value.isFinite else { return nil }
    return negative ? -value : value
}

/// Parses a whitespace-separated list of decimals (`sampling_frequency_available`); `nil` if any is bad.
func parseIIODecimalList<S: StringProtocol>(_ text: S) -> [Double]? {
    var values: [Double] = []
    for word in text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }) {
        guard let value = parseIIODecimal(word) else { return nil }
        values.append(value)
    }
    return values
}

/// Parses a decimal integer (`*_index`, `buffer/length`, `*_en`) by hand.
func parseIIOInteger<S: StringProtocol>(_ text: S) -> Int? {
    guard let value = parseIIODecimal(text), value == value.rounded(), abs(value) < 9.0e15 else { return nil }
    return Int(value)
}

private let exactPowersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]

@inline(__always) private func isSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
}

@inline(__always) private func digitValue(_ byte: UInt8) -> Int? {
    byte >= 0x30 && byte <= 0x39 ? Int(byte - 0x30) : nil
}
