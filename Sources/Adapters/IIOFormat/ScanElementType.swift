// SPDX-License-Identifier: Apache-2.0
// The type of one IIO buffer scan element, shared by the reader (QiblaIIO's buffered driver) and
// the writer (QiblaSimulator's fake /dev/iio:deviceN), so both sides speak one grammar.
// Kernel ABI: Documentation/ABI/testing/sysfs-bus-iio, `scan_elements/<channel>_type`:
// "[be|le]:[s|u]bits/storagebits[Xrepeat]>>shift" (the kernel also prints `f` for floats).

/// One `scan_elements/*_type` value, e.g. `le:s12/16>>4`: a 12-bit signed value stored little-endian
/// in 16 bits, shifted left by 4 inside its storage.
public struct IIOScanElementType: Sendable, Hashable, CustomStringConvertible {
    public enum Signedness: Sendable, Hashable { case signed, unsigned, float }

    public var bigEndian: Bool
    public var signedness: Signedness
    /// Valid data bits ("realbits").
    public var bits: Int
    /// Bits the element occupies in the scan (8, 16, 32 or 64).
    public var storageBits: Int
    /// Number of consecutive repetitions (≥ 1; `X<repeat>`).
    public var repeatCount: Int
    /// Position of the value inside its storage word: the reader shifts right by it, the writer left.
    public var shift: Int

    public init(bigEndian: Bool, signedness: Signedness, bits: Int, storageBits: Int, repeatCount: Int = 1, shift: Int = 0) {
        self.bigEndian = bigEndian; self.signedness = signedness; self.bits = bits
        self.storageBits = storageBits; self.repeatCount = repeatCount; self.shift = shift
    }

    /// Parses the kernel's text (surrounding blanks and the trailing newline allowed); `nil` for
    /// anything malformed or unsupported: storage not 8/16/32/64 bits, bits + shift beyond storage,
    /// a float other than 32/64 bits unshifted, more than 64 repetitions. `>>shift` may be omitted (0).
    public init?(parsing text: some StringProtocol) {
        var bytes = Array(text.utf8)[...]
        while let last = bytes.last, last == 0x0A || last == 0x20 || last == 0x09 || last == 0x0D { bytes.removeLast() }
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
        func expect(_ literal: String) -> Bool {
            guard bytes.starts(with: literal.utf8) else { return false }
            bytes.removeFirst(literal.utf8.count)
            return true
        }
        func number() -> Int? {
            var value = 0, digits = 0
            while let byte = bytes.first, byte >= 0x30, byte <= 0x39, digits < 4 {
                value = value * 10 + Int(byte - 0x30); digits += 1; bytes.removeFirst()
            }
            return digits > 0 ? value : nil
        }
        let bigEndian: Bool
        if expect("be:") { bigEndian = true } else if expect("le:") { bigEndian = false } else { return nil }
        let signedness: Signedness
        if expect("s") { signedness = .signed } else if expect("u") { signedness = .unsigned }
        else if expect("f") { signedness = .float } else { return nil }
        guard let bits = number(), expect("/"), let storageBits = number() else { return nil }
        var repeatCount = 1
        if expect("X") {
            guard let parsed = number() else { return nil }
            repeatCount = max(1, parsed)
        }
        var shift = 0
        if expect(">>") {
            guard let parsed = number() else { return nil }
            shift = parsed
        }
        guard bytes.isEmpty, [8, 16, 32, 64].contains(storageBits), bits >= 1,
              bits + shift <= storageBits, repeatCount <= 64 else { return nil }
        if signedness == .float, !(bits == storageBits && (bits == 32 || bits == 64) && shift == 0) { return nil }
        self.init(bigEndian: bigEndian, signedness: signedness, bits: bits, storageBits: storageBits,
                  repeatCount: repeatCount, shift: shift)
    }

    /// The ABI text, e.g. `le:s12/16>>4` (`X<repeat>` only when repeated).
    public var description: String {
        let sign = switch signedness { case .signed: "s"; case .unsigned: "u"; case .float: "f" }
        let repeatText = repeatCount > 1 ? "X\(repeatCount)" : ""
        return "\(bigEndian ? "be" : "le"):\(sign)\(bits)/\(storageBits)\(repeatText)>>\(shift)"
    }

    /// Bytes of one storage word.
    public var storageBytes: Int { storageBits / 8 }

    /// Bytes of the whole element including repetitions; also its alignment in the scan.
    public var lengthBytes: Int { storageBytes * repeatCount }

    /// The raw values `bits` can hold (integer types).
    public var valueRange: ClosedRange<Int64> {
        if signedness == .signed {
            let m = bits >= 64 ? Int64.max : (Int64(1) << (bits - 1)) - 1
            return (-m - 1)...m
        }
        return 0...(bits >= 63 ? Int64.max : (Int64(1) << bits) - 1)
    }

    /// Decodes one storage word at `offset` of `scan`: endianness, shift, mask, sign extension.
    /// Float elements are returned as their value rounded toward zero (IIO floats are rare).
    public func decodeWord(_ scan: UnsafeRawBufferPointer, at offset: Int) -> Int64 {
        let width = storageBytes
        var word: UInt64 = 0
        for byteIndex in 0..<width {
            let byte = UInt64(scan[offset + (bigEndian ? byteIndex : width - 1 - byteIndex)])
            word = (word << 8) | byte
        }
        switch signedness {
        case .float:
            let value = storageBits == 32 ? Double(Float(bitPattern: UInt32(truncatingIfNeeded: word))) : Double(bitPattern: word)
            guard value.isFinite else { return 0 }
            return Int64(exactly: value.rounded(.towardZero)) ?? 0
        case .unsigned, .signed:
            word >>= UInt64(shift)
            if bits < 64 { word &= (UInt64(1) << UInt64(bits)) - 1 }
            if signedness == .signed, bits < 64, word & (UInt64(1) << UInt64(bits - 1)) != 0 {
                word |= ~((UInt64(1) << UInt64(bits)) - 1)
            }
            return Int64(bitPattern: word)
        }
    }

    /// The storage bytes of one word for `value` (clamped to ``valueRange``), shifted and in this
    /// endianness: the inverse of ``decodeWord(_:at:)``. Floats store `Double(value)`.
    public func encodeWord(_ value: Int64) -> [UInt8] {
        var word: UInt64
        switch signedness {
        case .float:
            word = storageBits == 32 ? UInt64(Float(value).bitPattern) : Double(value).bitPattern
        case .signed, .unsigned:
            let clamped = min(max(value, valueRange.lowerBound), valueRange.upperBound)
            word = UInt64(bitPattern: clamped) << UInt64(shift)
            if storageBits < 64 { word &= (UInt64(1) << UInt64(storageBits)) - 1 }
        }
        var bytes = [UInt8](repeating: 0, count: storageBytes)
        for i in 0..<storageBytes {
            bytes[bigEndian ? storageBytes - 1 - i : i] = UInt8(truncatingIfNeeded: word >> UInt64(8 * i))
        }
        return bytes
    }
}
