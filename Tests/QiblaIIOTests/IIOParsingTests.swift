// SPDX-License-Identifier: Apache-2.0
// Pure parsing: locale-independent decimals, mount matrices, scan element types and scan layouts.
import Testing
@testable import QiblaIIO
import QiblaCore
import QiblaIIOFormat

@Suite struct IIODecimalParsingTests {
    @Test(arguments: [
        ("0.000122", 0.000122), ("0.000146\n", 0.000146), ("-12", -12.0), ("1e-3", 0.001), ("+7", 7.0),
        ("  42 \n", 42.0), ("3.", 3.0), (".5", 0.5), ("-0.000598", -0.000598), ("2.5E2", 250.0),
        ("0.625", 0.625), ("12345678901234567890123", 12345678901234567890123.0), ("1e-30", 1e-30),
        ("0.00000000000000000000000123456789012345678", 1.23456789012345678e-24),
    ])
    func acceptsKernelNumbers(text: String, expected: Double) {
        #expect(parseFiniteDouble(text) == expected)
    }

    @Test(arguments: ["0,5", "", " ", "\n", "abc", "inf", "-inf", "nan", "NaN", "infinity", "0x10", "1.2.3",
                      "1e", "e5", "--1", "+-1", "1 2", "12abc", ".", "-", "1e400", "1,000", "٣", "1e+"])
    func rejectsGarbage(text: String) {
        #expect(parseFiniteDouble(text) == nil)
    }

    @Test func listsAndIntegers() {
        #expect(parseFiniteDoubleList("0.625 1.25 2.5 5 10 20 40 80\n") == [0.625, 1.25, 2.5, 5, 10, 20, 40, 80])
        #expect(parseFiniteDoubleList("1 2,5") == nil)
        #expect(parseDecimalInteger("3\n") == 3)
        #expect(parseDecimalInteger("3.5") == nil)
    }
}

@Suite struct IIOMountMatrixParsingTests {
    @Test func parsesRowsWithDecimals() throws {
        let matrix = try #require(parseMountMatrix("0, 1, 0; -1, 0, 0; 0, 0, 1\n"))
        #expect(matrix == Matrix3(0, 1, 0, -1, 0, 0, 0, 0, 1))
        #expect(matrix * Vector3(1, 2, 3) == Vector3(2, -1, 3))
        let tilted = try #require(parseMountMatrix("0.866025, -0.5, 0;0.5,0.866025,0; 0, 0, 1"))
        #expect(tilted.row0.x == 0.866025 && tilted.row0.y == -0.5 && tilted.row1.x == 0.5)
    }

    @Test func improperMatrixIsAcceptedAsGiven() throws {
        let mirror = try #require(parseMountMatrix("-1, 0, 0; 0, 1, 0; 0, 0, 1"))
        #expect(mirror.determinant == -1)
        #expect(mirror * Vector3(1, 2, 3) == Vector3(-1, 2, 3))
    }

    @Test func rejectsAllZeroRow() {
        #expect(throws: MountMatrixError.allZeroRow(index: 1)) {
            try parseMountMatrixOrThrow("1, 0, 0; 0, 0, 0; 0, 0, 1")
        }
        #expect(parseMountMatrix("0, 0, 0; 0, 0, 0; 0, 0, 0") == nil)
    }

    @Test(arguments: ["", "1, 0, 0; 0, 1, 0", "1, 0; 0, 1; 0, 0", "1,0,0;0,1,0;0,0,1;0,0,0", "1, 0, 0; 0, 1, 0; 0, 0, x",
                      "1, 0, 0; 0, 0,5, 0; 0, 0, 1", "nan, 0, 0; 0, 1, 0; 0, 0, 1", "1 0 0; 0 1 0; 0 0 1"])
    func rejectsMalformed(text: String) {
        #expect(parseMountMatrix(text) == nil)
    }
}

@Suite struct IIOScanElementTypeTests {
    @Test func parsesKernelForms() throws {
        let lis = try #require(IIOScanElementType(parsing: "le:s12/16>>4\n"))
        #expect(lis == IIOScanElementType(bigEndian: false, signedness: .signed, bits: 12, storageBits: 16, shift: 4))
        let be = try #require(IIOScanElementType(parsing: "be:u16/16>>0"))
        #expect(be.bigEndian && be.signedness == .unsigned && be.bits == 16 && be.shift == 0)
        let repeated = try #require(IIOScanElementType(parsing: "le:s16/16X3>>0"))
        #expect(repeated.repeatCount == 3 && repeated.lengthBytes == 6)
        let noShift = try #require(IIOScanElementType(parsing: "le:s64/64"))
        #expect(noShift.shift == 0 && noShift.storageBits == 64)
        #expect(IIOScanElementType(parsing: "le:f32/32>>0")?.signedness == .float)
        #expect(lis.description == "le:s12/16>>4")
    }

    @Test(arguments: ["", "xx:s16/16>>0", "le:q16/16>>0", "le:s16/12>>0", "le:s16/24>>0", "le:s16/16>>4",
                      "le:s16/16>>", "le:s/16", "le:s16/16X>>0", "le:s16/16>>0 junk", "le:f16/16>>0", "LE:s16/16>>0"])
    func rejectsMalformed(text: String) {
        #expect(IIOScanElementType(parsing: text) == nil)
    }

    private func type(_ text: String) -> IIOScanElementType { IIOScanElementType(parsing: text)! }

    @Test func decodesLittleEndianShiftedSigned() throws {
        // LIS3MDL-like 12-bit data left-justified in 16 bits: -5 << 4 = 0xFFB0, then +100 << 4 = 0x0640.
        let parser = ScanLayout(channels: [
            ScanChannel(name: "in_magn_x", index: 0, type: type("le:s12/16>>4")),
            ScanChannel(name: "in_magn_y", index: 1, type: type("le:s12/16>>4")),
        ])
        #expect(parser.scanSizeBytes == 4)
        #expect(parser.decode([0xB0, 0xFF, 0x40, 0x06]) == [[-5], [100]])
        // Junk in the low 4 bits (status flags) must be shifted out.
        #expect(parser.decode([0xBF, 0xFF, 0x4A, 0x06]) == [[-5], [100]])
    }

    @Test func decodesBigEndianAndUnsignedAndMasking() {
        let parser = ScanLayout(channels: [
            ScanChannel(name: "a", index: 0, type: type("be:s16/16>>0")),
            ScanChannel(name: "b", index: 1, type: type("be:u16/16>>0")),
            ScanChannel(name: "c", index: 2, type: type("le:u10/16>>2")),
            ScanChannel(name: "d", index: 3, type: type("le:s8/8>>0")),
        ])
        #expect(parser.offsets == [0, 2, 4, 6])
        #expect(parser.scanSizeBytes == 8)
        // a = 0xFF38 = -200, b = 0xFF38 = 65336, c = (0xFFFF >> 2) & 0x3FF = 1023, d = 0x80 = -128.
        #expect(parser.decode([0xFF, 0x38, 0xFF, 0x38, 0xFF, 0xFF, 0x80, 0x00]) == [[-200], [65336], [1023], [-128]])
    }

    @Test func alignsTimestampAndPadsScan() {
        // x, y, z s16 at 0, 2, 4; the s64 timestamp aligned to 8; scan padded to 16.
        let channels = [
            ScanChannel(name: "in_timestamp", index: 3, type: type("le:s64/64>>0")),
            ScanChannel(name: "in_magn_z", index: 2, type: type("le:s16/16>>0")),
            ScanChannel(name: "in_magn_x", index: 0, type: type("le:s16/16>>0")),
            ScanChannel(name: "in_magn_y", index: 1, type: type("le:s16/16>>0")),
        ]
        let parser = ScanLayout(channels: channels)
        #expect(parser.channels.map(\.name) == ["in_magn_x", "in_magn_y", "in_magn_z", "in_timestamp"])
        #expect(parser.offsets == [0, 2, 4, 8])
        #expect(parser.scanSizeBytes == 16)
        let scan: [UInt8] = [0x01, 0x00, 0xFE, 0xFF, 0x00, 0x80, 0xAA, 0xBB,
                             0x00, 0xE4, 0x0B, 0x54, 0x02, 0x00, 0x00, 0x00]
        #expect(parser.decode(scan) == [[1], [-2], [-32768], [10_000_000_000]])
        #expect(parser.decode(Array(scan.prefix(15))) == nil)

        // A single 8-bit channel plus timestamp: 1 + 7 padding + 8.
        let small = ScanLayout(channels: [ScanChannel(name: "a", index: 0, type: type("le:u8/8>>0")),
                                          ScanChannel(name: "in_timestamp", index: 1, type: type("le:s64/64>>0"))])
        #expect(small.offsets == [0, 8] && small.scanSizeBytes == 16)
        // Three 32-bit channels without timestamp: no padding beyond 12.
        let three = ScanLayout(channels: (0..<3).map { ScanChannel(name: "c\($0)", index: $0, type: type("be:s32/32>>0")) })
        #expect(three.scanSizeBytes == 12)
    }

    @Test func decodesRepeatedElements() {
        let parser = ScanLayout(channels: [
            ScanChannel(name: "in_magn", index: 0, type: type("le:s16/16X3>>0")),
            ScanChannel(name: "in_timestamp", index: 1, type: type("le:s64/64>>0")),
        ])
        #expect(parser.offsets == [0, 8])
        #expect(parser.scanSizeBytes == 16)
        let scan: [UInt8] = [0x0A, 0x00, 0xF6, 0xFF, 0x64, 0x00, 0, 0, 0x07, 0, 0, 0, 0, 0, 0, 0]
        #expect(parser.decode(scan) == [[10, -10, 100], [7]])
    }
}
