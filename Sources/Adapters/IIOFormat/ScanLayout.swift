// SPDX-License-Identifier: Apache-2.0
// The binary layout of IIO buffer scans (kernel Documentation/iio/iio_devbuf.rst and
// Documentation/driver-api/iio/buffers.rst): enabled channels are stored in increasing `*_index`
// order, each at an offset aligned to its own length, and the scan is padded to a multiple of its
// largest element (as the kernel's iio_compute_scan_bytes does).

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

/// Where each enabled channel sits in a scan; decodes scans (the reader) and packs them (the simulator).
public struct ScanLayout: Sendable, Hashable {
    /// Enabled channels in scan order (by `index`).
    public let channels: [ScanChannel]
    /// Byte offset of each channel in ``channels``.
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

    /// Decodes one scan (at least ``scanSizeBytes`` long): per channel, its `repeatCount` values.
    /// Allocates the arrays it returns; a reader on a hot path uses ``value(ofChannel:repetition:inScanAt:of:)``.
    public func decode(_ scan: UnsafeRawBufferPointer) -> [[Int64]] {
        precondition(scan.count >= scanSizeBytes, "short scan")
        return channels.indices.map { channel in
            (0..<channels[channel].type.repeatCount).map { value(ofChannel: channel, repetition: $0, inScanAt: 0, of: scan) }
        }
    }

    /// The raw value of one channel, read in place from the scan that starts `scanOffset` bytes into
    /// `bytes` (so a reader decodes straight from its read buffer, with no heap allocation).
    /// - Parameters:
    ///   - channel: the channel's position in ``channels`` (see ``channelIndex(named:)``).
    ///   - repetition: which of the element's `repeatCount` values (0 for an unrepeated element).
    ///   - scanOffset: where the scan starts in `bytes`; `bytes` must hold ``scanSizeBytes`` from there.
    /// - Returns: the storage word with endianness, shift, mask and sign applied
    ///   (``IIOScanElementType/decodeWord(_:at:)``), in the channel's raw units.
    public func value(ofChannel channel: Int, repetition: Int = 0, inScanAt scanOffset: Int,
                      of bytes: UnsafeRawBufferPointer) -> Int64 {
        let type = channels[channel].type
        precondition(repetition >= 0 && repetition < type.repeatCount, "no such repetition")
        precondition(scanOffset >= 0 && scanOffset + scanSizeBytes <= bytes.count, "short scan")
        return type.decodeWord(bytes, at: scanOffset + offsets[channel] + repetition * type.storageBytes)
    }

    /// Decodes one scan held in an array; nil unless it is exactly ``scanSizeBytes`` long.
    public func decode(_ scan: [UInt8]) -> [[Int64]]? {
        guard scan.count == scanSizeBytes else { return nil }
        return scan.withUnsafeBytes { decode($0) }
    }

    /// Packs one scan. `values[name]` is the raw value of each channel (written to every repetition);
    /// missing channels are 0.
    public func pack(_ values: [String: Int64]) -> [UInt8] {
        var scan = [UInt8](repeating: 0, count: scanSizeBytes)
        for (channel, offset) in zip(channels, offsets) {
            let word = channel.type.encodeWord(values[channel.name] ?? 0)
            for repetition in 0..<channel.type.repeatCount {
                let start = offset + repetition * word.count
                scan.replaceSubrange(start..<start + word.count, with: word)
            }
        }
        return scan
    }
}
