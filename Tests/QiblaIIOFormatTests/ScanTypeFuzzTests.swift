// SPDX-License-Identifier: Apache-2.0
import QiblaIIOFormat
import Testing

/// Seeded random `scan_elements/*_type` text (issue 13): 100,000 cases, each refused or inside the
/// kernel ABI's ranges (Documentation/ABI/testing/sysfs-bus-iio).
@Suite struct ScanTypeFuzzTests {
    @Test func scanTypesAreInRangeOrRefused() {
        var state: UInt64 = 0x5CA7_0003
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let fragments = ["le", "be", ":", "s", "u", "f", "12", "16", "/", "32", "64", "8", ">>", "4", "0", "X", "3", "65",
                         "99999999999999999999", "-1", " ", "\n", "le:s12/16>>4", "be:u16/16", "le:s64/64>>0", "le:f32/32"]
        var accepted = 0
        for _ in 0..<100_000 {
            var input = ""
            for _ in 0..<Int(next() % 10) {
                input += next() % 9 == 0 ? String(Character(Unicode.Scalar(UInt8(next() % 128)))) : fragments[Int(next() % UInt64(fragments.count))]
            }
            guard let type = IIOScanElementType(parsing: input) else { continue }
            accepted += 1
            #expect([8, 16, 32, 64].contains(type.storageBits), "\(input.debugDescription)")
            #expect(type.bits >= 1 && type.shift >= 0 && type.bits + type.shift <= type.storageBits, "\(input.debugDescription)")
            #expect((1...64).contains(type.repeatCount))
        }
        print("fuzz: IIO scan types, 100000 cases, \(accepted) accepted")
        #expect(accepted > 100)
    }
}
