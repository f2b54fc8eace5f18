// SPDX-License-Identifier: Apache-2.0
// Shows that `parseFiniteDouble` (a grammar check plus the standard library's `Double(_:)`) is
// correctly rounded, so the project needs no hand-written conversion (issue 9). Each result is
// checked exactly, in big-integer arithmetic, against the two midpoints around it: a decimal value v
// rounds to the double d = m·2^k iff (m − ½)·2^k ≤ v ≤ (m + ½)·2^k (with the lower gap halved at a
// power of two), and on a midpoint m must be even (IEEE 754 round to nearest, ties to even).
// Samples come from CalibrationTests' SeededGenerator (SplitMix64), so every run checks the same strings.
@testable import QiblaCore
import Testing

@Suite struct DecimalParsingTests {
    @Test func oneHundredThousandSeededDecimalsAreCorrectlyRounded() {
        var random = SeededGenerator(seed: 0x0051_B1A0)
        var checked = 0, halfway = 0
        var failures: [String] = []
        for index in 0..<100_000 {
            let sample: DecimalSample
            switch index % 10 {
            case 0..<5: sample = .random(&random, digits: 1...20, exponent: -25...25)   // what sysfs and config files hold
            case 5, 6: sample = .random(&random, digits: 17...40, exponent: -60...60)   // long mantissas
            case 7: sample = .random(&random, digits: 1...40, exponent: -345...310)     // subnormals, near overflow
            default: sample = .halfway(&random, nudge: index % 10 - 8 == 0 ? 0 : Int(random.next() % 3) - 1)
                halfway += 1
            }
            let parsed = parseFiniteDouble(sample.text)
            if let problem = sample.check(parsed) { failures.append("\(sample.text): \(problem)") }
            // The oracle is not vacuous: the neighbouring doubles are refused.
            if index % 50 == 0, let parsed, parsed != 0, parsed.nextUp.isFinite, parsed.nextDown != 0 {
                #expect(sample.check(parsed.nextUp) != nil && sample.check(parsed.nextDown) != nil, "\(sample.text)")
            }
            checked += 1
        }
        #expect(checked == 100_000 && halfway == 20_000)
        #expect(failures.isEmpty, "\(failures.count) not correctly rounded, e.g. \(failures.prefix(5))")
    }

    @Test func knownHardCasesRoundCorrectly() {
        // Halfway between 1 and its successor (ties to even: 1), just above it, and the classic
        // 2.2250738585072011e-308 (PHP/Java hang), the largest subnormal, the smallest subnormal's half.
        #expect(parseFiniteDouble("1.00000000000000011102230246251565404236316680908203125") == 1)
        #expect(parseFiniteDouble("1.00000000000000011102230246251565404236316680908203126") == 1.0000000000000002)
        #expect(parseFiniteDouble("2.2250738585072011e-308") == Double(bitPattern: 0x000F_FFFF_FFFF_FFFF))
        #expect(parseFiniteDouble("4.9406564584124654e-324") == .leastNonzeroMagnitude)
        #expect(parseFiniteDouble("2.4703282292062327e-324") == 0)  // below half the least subnormal
        #expect(parseFiniteDouble("1.7976931348623157e308") == .greatestFiniteMagnitude)
        #expect(parseFiniteDouble("1.7976931348623159e308") == nil)  // rounds to infinity
        #expect(parseFiniteDouble("0.1") == 0.1 && parseFiniteDouble("-0") == 0)
    }
}

/// A decimal string and its exact value `digits · 10^exponent` (sign separate).
struct DecimalSample {
    var text: String
    var negative: Bool
    var digits: BigUInt
    var exponent: Int

    /// Random digits with a dot somewhere (or none) and an exponent in one of the accepted spellings.
    static func random(_ random: inout SeededGenerator, digits count: ClosedRange<Int>, exponent range: ClosedRange<Int>) -> DecimalSample {
        let n = Int(random.next() % UInt64(count.count)) + count.lowerBound
        var digits = (0..<n).map { _ in Character(String(random.next() % 10)) }
        if digits.count > 1, random.next() % 4 != 0, digits[0] == "0" { digits[0] = "7" }
        let dot = Int(random.next() % UInt64(n + 1))          // n: no fractional digits
        let written = Int(random.next() % UInt64(range.count)) + range.lowerBound
        let negative = random.next() % 2 == 0
        var text = negative ? "-" : (random.next() % 8 == 0 ? "+" : "")
        text += String(digits[..<dot])
        if dot < n || random.next() % 6 == 0 { text += "." + String(digits[dot...]) }
        if written != 0 || random.next() % 4 == 0 {
            text += (random.next() % 2 == 0 ? "e" : "E") + (written >= 0 && random.next() % 3 == 0 ? "+" : "") + String(written)
        }
        return DecimalSample(text: text, negative: negative, digits: BigUInt(decimal: String(digits)),
                             exponent: written - (n - dot))
    }

    /// The exact midpoint between a random double in [1e-5, 1e15) and its successor, written out in
    /// full, then nudged by `nudge` units in its last digit (0: exactly halfway).
    static func halfway(_ random: inout SeededGenerator, nudge: Int) -> DecimalSample {
        let value = 1e-5 * pow(10, 20 * Double(random.next() >> 11) * 0x1p-53)
        let (m, k) = value.integerSignificandAndExponent
        // (2m + 1)·2^(k−1) = (2m + 1)·5^(1−k) · 10^(k−1) for k < 1; (2m + 1)·2^(k−1) · 10^0 otherwise.
        var digits = BigUInt(2 * m + 1)
        var exponent = 0
        if k < 1 { digits.multiply(byPowerOf: 5, 1 - k); exponent = k - 1 } else { digits.shiftLeft(k - 1) }
        if nudge > 0 { digits.add(UInt32(nudge)) } else if nudge < 0 { digits.subtract(UInt32(-nudge)) }
        return DecimalSample(text: "\(digits.decimalString)e\(exponent)", negative: false, digits: digits, exponent: exponent)
    }

    /// nil when `parsed` is the correctly rounded value of this decimal (nil for an overflow to ∞).
    func check(_ parsed: Double?) -> String? {
        guard let parsed else {
            // Only values at or above the midpoint between the largest double and 2^1024 may be refused.
            return compare(BigUInt((1 << 54) - 1), twoPower: 970) >= 0 ? nil : "refused a finite value"
        }
        if (parsed.sign == .minus) != negative && parsed != 0 { return "wrong sign" }
        let magnitude = abs(parsed)
        if magnitude == 0 {
            // Zero is right up to half the least subnormal, inclusive (the tie goes to even 0).
            return digits.isZero || compare(BigUInt(1), twoPower: -1075) <= 0 ? nil : "rounded to zero"
        }
        let (m, k) = magnitude.integerSignificandAndExponent
        let lowerGapHalved = m == 1 << 52 && k > -1074
        // Midpoints as (numerator, 2^power): below (4m − 1)·2^(k−2) or (2m − 1)·2^(k−1), above (2m + 1)·2^(k−1).
        let below = lowerGapHalved ? compare(BigUInt(4 * m - 1), twoPower: k - 2) : compare(BigUInt(2 * m - 1), twoPower: k - 1)
        let above = compare(BigUInt(2 * m + 1), twoPower: k - 1)
        if below < 0 || above > 0 { return "got \(parsed), not the nearest double" }
        if (below == 0 || above == 0) && m % 2 != 0 { return "got \(parsed) on a tie, not the even neighbour" }
        return nil
    }

    /// The sign of digits·10^exponent − numerator·2^power.
    private func compare(_ numerator: BigUInt, twoPower power: Int) -> Int {
        var left = digits, right = numerator
        if exponent >= 0 { left.multiply(byPowerOf: 10, exponent) } else { right.multiply(byPowerOf: 10, -exponent) }
        if power >= 0 { right.shiftLeft(power) } else { left.shiftLeft(-power) }
        return left < right ? -1 : (left == right ? 0 : 1)
    }
}

extension Double {
    /// (m, k) with self = m·2^k, m the integer significand (53 bits, fewer for subnormals).
    var integerSignificandAndExponent: (UInt64, Int) {
        let m = significandBitPattern | (exponentBitPattern == 0 ? 0 : 1 << 52)
        let k = (exponentBitPattern == 0 ? 1 : Int(exponentBitPattern)) - 1075
        return (m, k)
    }
}

/// Just enough unsigned big-integer arithmetic for exact comparisons: little-endian 32-bit limbs.
struct BigUInt: Comparable {
    private(set) var limbs: [UInt32]

    init(_ value: UInt64) {
        limbs = [UInt32(truncatingIfNeeded: value), UInt32(truncatingIfNeeded: value >> 32)]
        normalize()
    }

    init(decimal text: String) {
        self.init(0)
        for character in text.utf8 {
            multiply(by: 10)
            add(UInt32(character - 48))
        }
    }

    var isZero: Bool { limbs.isEmpty }

    private mutating func normalize() { while limbs.last == 0 { limbs.removeLast() } }

    mutating func multiply(by factor: UInt32) {
        var carry: UInt64 = 0
        for i in limbs.indices {
            let product = UInt64(limbs[i]) * UInt64(factor) + carry
            limbs[i] = UInt32(truncatingIfNeeded: product)
            carry = product >> 32
        }
        if carry != 0 { limbs.append(UInt32(carry)) }
        normalize()
    }

    /// self ·= base^exponent, in steps that fit a limb.
    mutating func multiply(byPowerOf base: UInt32, _ exponent: Int) {
        let perStep = base == 10 ? 9 : 13  // 10^9 and 5^13 < 2^32
        var left = exponent
        while left > 0 {
            let step = min(left, perStep)
            var factor: UInt32 = 1
            for _ in 0..<step { factor *= base }
            multiply(by: factor)
            left -= step
        }
    }

    mutating func add(_ value: UInt32) {
        var carry = UInt64(value)
        var i = 0
        while carry != 0 {
            if i == limbs.count { limbs.append(0) }
            let sum = UInt64(limbs[i]) + carry
            limbs[i] = UInt32(truncatingIfNeeded: sum)
            carry = sum >> 32
            i += 1
        }
    }

    mutating func subtract(_ value: UInt32) {
        var borrow = Int64(value)
        var i = 0
        while borrow != 0 {
            let difference = Int64(limbs[i]) - borrow
            limbs[i] = UInt32(truncatingIfNeeded: difference)
            borrow = difference < 0 ? 1 : 0
            i += 1
        }
        normalize()
    }

    mutating func shiftLeft(_ bits: Int) {
        guard bits > 0, !isZero else { return }
        let words = bits / 32, shift = UInt32(bits % 32)
        if shift > 0 {
            var carry: UInt32 = 0
            for i in limbs.indices {
                let limb = limbs[i]
                limbs[i] = (limb << shift) | carry
                carry = limb >> (32 - shift)
            }
            if carry != 0 { limbs.append(carry) }
        }
        limbs.insert(contentsOf: repeatElement(0, count: words), at: 0)
    }

    /// Decimal digits (divides a copy by 10^9 repeatedly).
    var decimalString: String {
        if isZero { return "0" }
        var rest = self
        var chunks: [UInt32] = []
        while !rest.isZero {
            var remainder: UInt64 = 0
            for i in rest.limbs.indices.reversed() {
                let current = (remainder << 32) | UInt64(rest.limbs[i])
                rest.limbs[i] = UInt32(current / 1_000_000_000)
                remainder = current % 1_000_000_000
            }
            rest.normalize()
            chunks.append(UInt32(remainder))
        }
        var text = String(chunks.removeLast())
        for chunk in chunks.reversed() {
            let part = String(chunk)
            text += String(repeating: "0", count: 9 - part.count) + part
        }
        return text
    }

    static func < (a: BigUInt, b: BigUInt) -> Bool {
        if a.limbs.count != b.limbs.count { return a.limbs.count < b.limbs.count }
        for i in a.limbs.indices.reversed() where a.limbs[i] != b.limbs[i] { return a.limbs[i] < b.limbs[i] }
        return false
    }
}
