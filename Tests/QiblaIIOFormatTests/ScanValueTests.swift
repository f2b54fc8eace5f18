// SPDX-License-Identifier: Apache-2.0
import QiblaIIOFormat
import Testing

/// `ScanLayout.value(ofChannel:repetition:inScanAt:of:)`, the reader's in-place decode: scans packed
/// by the simulator's side (`pack`) read back at any offset of a larger buffer, as `decode` reads them.
@Suite struct ScanValueTests {
    private func type(_ text: String) -> IIOScanElementType { IIOScanElementType(parsing: text)! }

    @Test func valuesAreReadInPlaceFromScansAtAnyOffset() {
        let elements = [("in_accel_x", "be:s16/16>>0"), ("in_accel_y", "le:s12/16>>4"), ("in_accel_z", "le:u10/16>>2"),
                        ("in_timestamp", "le:s64/64>>0")]
        let layout = ScanLayout(channels: elements.enumerated().map { ScanChannel(name: $1.0, index: $0, type: type($1.1)) })
        #expect(layout.scanSizeBytes == 16)
        let scans: [[String: Int64]] = [
            ["in_accel_x": -200, "in_accel_y": -5, "in_accel_z": 1023, "in_timestamp": 1_700_000_000_000_000_000],
            ["in_accel_x": 32767, "in_accel_y": 2047, "in_accel_z": 0, "in_timestamp": -1],
        ]
        // Three junk bytes first: a scan need not start at an aligned address in the read buffer.
        let bytes: [UInt8] = [0xAA, 0xBB, 0xCC] + scans.flatMap { layout.pack($0) }
        bytes.withUnsafeBytes { buffer in
            for (number, values) in scans.enumerated() {
                let start = 3 + number * layout.scanSizeBytes
                for (channel, element) in layout.channels.enumerated() {
                    #expect(layout.value(ofChannel: channel, inScanAt: start, of: buffer) == values[element.name], "\(element.name)")
                }
                let decoded = layout.decode(UnsafeRawBufferPointer(rebasing: buffer[start..<start + layout.scanSizeBytes]))
                #expect(decoded == layout.channels.map { [values[$0.name]!] })
            }
        }
    }

    @Test func repeatedElementsAreReadByRepetition() {
        let layout = ScanLayout(channels: [ScanChannel(name: "in_magn", index: 0, type: type("le:s16/16X3>>0")),
                                           ScanChannel(name: "in_timestamp", index: 1, type: type("le:s64/64>>0"))])
        let scan: [UInt8] = [0x0A, 0x00, 0xF6, 0xFF, 0x64, 0x00, 0, 0, 0x07, 0, 0, 0, 0, 0, 0, 0]
        scan.withUnsafeBytes { buffer in
            #expect((0..<3).map { layout.value(ofChannel: 0, repetition: $0, inScanAt: 0, of: buffer) } == [10, -10, 100])
            #expect(layout.value(ofChannel: 1, inScanAt: 0, of: buffer) == 7)
        }
    }
}
