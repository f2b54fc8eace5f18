// The binary layout of IIO buffer scans (kernel ABI Documentation/ABI/testing/sysfs-bus-iio,
// `scan_elements/*_type`; Documentation/iio/iio_devbuf.rst). Each enabled channel sits at an offset
// aligned to its own size, in `*_index` order, and the scan is padded to a multiple of its largest
// element (as the kernel's iio_compute_scan_bytes does).

/// One `scan_elements/*_type` value: `[be|le]:[s|u|f]BITS/STORAGE[Xrepeat][>>SHIFT]`, e.g. `le:s12/16>>4`.
public struct IIOScanElementType: Sendable, Hashable, CustomStringConvertible {
    public enum Signedness: Sendable, Hashable { case signed, unsigned, float }

    public var bigEndian: Bool
    public var signedness: Signedness
    /// Valid data bits.
    public var bits: Int
    /// Bits the element occupies in the scan (8, 16, 32 or 64).
    public var storageBits: Int
    /// Number of consecutive repetitions (≥ 1).
    public var repeatCount: Int
    /// Right shift applied before masking to `bits`.
    public var shift: Int

    public init(bigEndian: Bool, signedness: Signedness, bits: Int, storageBits: Int, repeatCount: Int = 1, shift: Int = 0) {
        self.bigEndian = bigEndian; self.signedness = signedness; self.bits = bits
        self.storageBits = storageBits; self.repeatCount = repeatCount; self.shift = shift
    }

    /// Bytes of the whole element including repetitions; also its alignment in the scan.
    public var lengthBytes: Int { storageBits / 8 * repeatCount }

    /// Parses the kernel's text; `nil` for anything malformed or unsupported (storage not 8/16/32/64 bits,
    /// bits + shift beyond storage, float other than 32/64 bits).
    public static func parse(_ text: String) -> IIOScanElementType? {
        let trimmed = SysfsAttribute.trimmed(text)
        let bytes = Array(trimmed.utf8)
        var index = 0
        func expect(_ literal: String) -> Bool {
            let literalBytes = Array(literal.utf8)
            guard bytes.count - index >= literalBytes.count,
                  Array(bytes[index..<index + literalBytes.count]) == literalBytes else { return false }
            index += literalBytes.count
            return true
        }
        func number() -> Int? {
            var value = 0, digits = 0
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39, digits < 4 {
                value = value * 10 + Int(bytes[index] - 0x30); digits += 1; index += 1
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
        guard index == bytes.count, [8, 16, 32, 64].contains(storageBits), bits >= 1,
              bits + shift <= storageBits, repeatCount <= 64 else { return nil }
        if signedness == .float, !(bits == storageBits && (bits == 32 || bits == 64) && shift == 0) { return nil }
        return IIOScanElementType(bigEndian: bigEndian, signedness: signedness, bits: bits,
                                  storageBits: storageBits, repeatCount: repeatCount, shift: shift)
    }

    public var description: String {
        let sign = switch signedness { case .signed: "s"; case .unsigned: "u"; case .float: "f" }
        let repeatText = repeatCount > 1 ? "X\(repeatCount)" : ""
        return "\(bigEndian ? "be" : "le"):\(sign)\(bits)/\(storageBits)\(repeatText)>>\(shift)"
    }

    /// Decodes one storage word at `offset` of `scan`: endianness, shift, mask, sign extension.
    /// Float elements are returned as their value rounded toward zero (IIO floats are rare).
    func decodeWord(_ scan: UnsafeRawBufferPointer, at offset: Int) -> Int64 {
        let width = storageBits / 8
        var word: UInt64 = 0
        for byteIndex in 0..<width {
            let byte = UInt64(scan[offset + (bigEndian ? byteIndex : width - 1 - byteIndex)])
            word = (word << 8) | byte
        }
        switch signedness {
        case .float:
            let value = storageBits == 32 ? Double(Float(bitPattern: UInt32(truncatingIfNeeded: word))) : Double(bitPattern: word)
            guard value.isFinite else { return 0 }
            return Int64(clamping: Int64(exactly: value.rounded(.towardZero)) ?? 0)
        case .unsigned, .signed:
            word >>= UInt64(shift)
            if bits < 64 { word &= (UInt64(1) << UInt64(bits)) - 1 }
            if signedness == .signed, bits < 64, word & (UInt64(1) << UInt64(bits - 1)) != 0 {
                word |= ~((UInt64(1) << UInt64(bits)) - 1)
            }
            return Int64(bitPattern: word)
        }
    }
}

/// One enabled scan element.
public struct ScanChannel: Sendable, Hashable {
    /// The element's name without suffix, e.g. `in_magn_x`, `in_timestamp`.
    public var name: String
    /// `*_index`: position in the scan.
    public var index: Int
    public var type: IIOScanElementType

    public init(name: String, index: Int, type: IIOScanElementType) {
        self.name = name; self.index = index; self.type = type
    }
}

/// Splits scans into channel values.
public struct ScanParser: Sendable {
    /// Enabled channels in scan order (by `index`).
    public let channels: [ScanChannel]
    /// Byte offset of each channel in `channels`.
    public let offsets: [Int]
    /// Bytes per scan, including the trailing padding.
    public let scanSizeBytes: Int

    public init(channels: [ScanChannel]) {
        let ordered = channels.sorted { $0.index < $1.index }
        var offsets: [Int] = []
        var position = 0, largest = 1
        for channel in ordered {
            let length = channel.type.lengthBytes
            largest = max(largest, length)
            position = Self.align(position, to: length)
            offsets.append(position)
            position += length
        }
        self.channels = ordered
        self.offsets = offsets
        scanSizeBytes = ordered.isEmpty ? 0 : Self.align(position, to: largest)
    }

    private static func align(_ value: Int, to alignment: Int) -> Int {
        alignment <= 1 ? value : (value + alignment - 1) / alignment * alignment
    }

    /// The position of the channel called `name` in ``channels``.
    public func channelIndex(named name: String) -> Int? { channels.firstIndex { $0.name == name } }

    /// Decodes one scan (`scan.count` must be ``scanSizeBytes``): per channel, its `repeatCount` values.
    public func decode(_ scan: UnsafeRawBufferPointer) -> [[Int64]] {
        precondition(scan.count >= scanSizeBytes, "short scan")
        return zip(channels, offsets).map { channel, offset in
            let width = channel.type.storageBits / 8
            return (0..<channel.type.repeatCount).map { channel.type.decodeWord(scan, at: offset + $0 * width) }
        }
    }

    /// Convenience for tests and tools: decodes one scan held in an array.
    public func decode(_ scan: [UInt8]) -> [[Int64]]? {
        guard scan.count == scanSizeBytes else { return nil }
        return scan.withUnsafeBytes { decode($0) }
    }
}
