// Packing of IIO buffer scans. Kernel ABI: Documentation/driver-api/iio/buffers.rst and
// Documentation/ABI/testing/sysfs-bus-iio (scan_elements/*_type, *_index): enabled channels are
// stored in increasing `_index` order, each element aligned to its own storage size, and the scan
// is padded to a multiple of its largest element.

/// A scan element type as written in `scan_elements/<channel>_type`, e.g. `le:s16/16>>0`.
public struct ScanType: Sendable, Hashable, CustomStringConvertible {
    public var isBigEndian: Bool
    public var isSigned: Bool
    /// Significant bits of the value.
    public var realBits: Int
    /// Bits the element occupies in the scan (8, 16, 32 or 64).
    public var storageBits: Int
    /// Left shift of the value inside its storage.
    public var shift: Int

    public init(isBigEndian: Bool, isSigned: Bool, realBits: Int, storageBits: Int, shift: Int) {
        self.isBigEndian = isBigEndian; self.isSigned = isSigned
        self.realBits = realBits; self.storageBits = storageBits; self.shift = shift
    }

    /// Parses `[be|le]:[s|u]<realbits>/<storagebits>>><shift>`; nil for anything else or
    /// inconsistent sizes. (The `X<repeat>` form is not supported.)
    public init?(parsing text: String) {
        let t = text.split(whereSeparator: { $0 == "\n" || $0 == " " }).first.map(String.init) ?? ""
        let parts = t.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, parts[0] == "be" || parts[0] == "le" else { return nil }
        var rest = parts[1]
        guard let sign = rest.first, sign == "s" || sign == "u" else { return nil }
        rest = rest.dropFirst()
        let bitsAndShift = rest.split(separator: ">", omittingEmptySubsequences: true)
        guard bitsAndShift.count == 2, rest.contains(">>") else { return nil }
        let sizes = bitsAndShift[0].split(separator: "/")
        guard sizes.count == 2, let real = Int(sizes[0]), let storage = Int(sizes[1]),
              let shift = Int(bitsAndShift[1]) else { return nil }
        guard [8, 16, 32, 64].contains(storage), real >= 1, shift >= 0, real + shift <= storage else { return nil }
        self.init(isBigEndian: parts[0] == "be", isSigned: sign == "s", realBits: real, storageBits: storage, shift: shift)
    }

    public var storageBytes: Int { storageBits / 8 }

    /// The ABI text, e.g. `le:s16/16>>0`.
    public var description: String {
        "\(isBigEndian ? "be" : "le"):\(isSigned ? "s" : "u")\(realBits)/\(storageBits)>>\(shift)"
    }

    /// The representable raw range for `realBits`.
    public var valueRange: ClosedRange<Int64> {
        if isSigned {
            let m = realBits >= 64 ? Int64.max : (Int64(1) << (realBits - 1)) - 1
            return (-m - 1)...m
        }
        return 0...(realBits >= 63 ? Int64.max : (Int64(1) << realBits) - 1)
    }

    /// The storage bytes for `value` (clamped to ``valueRange``), shifted and in this endianness.
    public func encode(_ value: Int64) -> [UInt8] {
        let clamped = min(max(value, valueRange.lowerBound), valueRange.upperBound)
        var word = UInt64(bitPattern: clamped) << UInt64(shift)
        if storageBits < 64 { word &= (UInt64(1) << UInt64(storageBits)) - 1 }
        var bytes = [UInt8](repeating: 0, count: storageBytes)
        for i in 0..<storageBytes {
            let byte = UInt8(truncatingIfNeeded: word >> UInt64(8 * i))
            bytes[isBigEndian ? storageBytes - 1 - i : i] = byte
        }
        return bytes
    }
}

/// One enabled channel of a scan.
public struct ScanChannel: Sendable, Hashable {
    /// The scan element name without prefix/suffix, e.g. `in_magn_x` or `in_timestamp`.
    public var name: String
    /// `scan_elements/<name>_index`.
    public var index: Int
    public var type: ScanType

    public init(name: String, index: Int, type: ScanType) {
        self.name = name; self.index = index; self.type = type
    }
}

/// Byte layout of one scan for a set of enabled channels.
public struct ScanLayout: Sendable, Hashable {
    /// Channels in increasing index order.
    public let channels: [ScanChannel]
    /// Byte offset of each channel in ``channels`` order.
    public let offsets: [Int]
    /// Scan size in bytes, padded to a multiple of the largest element.
    public let scanBytes: Int

    public init(channels: [ScanChannel]) {
        let sorted = channels.sorted { $0.index < $1.index }
        var offsets: [Int] = []
        var position = 0
        var largest = 1
        for channel in sorted {
            let size = channel.type.storageBytes
            position = (position + size - 1) / size * size
            offsets.append(position)
            position += size
            largest = max(largest, size)
        }
        self.channels = sorted
        self.offsets = offsets
        self.scanBytes = sorted.isEmpty ? 0 : (position + largest - 1) / largest * largest
    }

    /// Packs one scan. `values[name]` is the raw value of each channel; missing channels are 0.
    public func pack(_ values: [String: Int64]) -> [UInt8] {
        var scan = [UInt8](repeating: 0, count: scanBytes)
        for (channel, offset) in zip(channels, offsets) {
            let bytes = channel.type.encode(values[channel.name] ?? 0)
            scan.replaceSubrange(offset..<offset + bytes.count, with: bytes)
        }
        return scan
    }
}
