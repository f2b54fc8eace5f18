// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import QiblaCore

/// Reproducible fuzz inputs from CalibrationTests' seeded SplitMix64.
struct FuzzRandom: RandomNumberGenerator {
    var generator: SeededGenerator
    init(state: UInt64) { generator = SeededGenerator(seed: state) }
    mutating func next() -> UInt64 { generator.next() }

    mutating func pick(_ items: [String]) -> String { items[Int(next() % UInt64(items.count))] }

    /// Text assembled from fragments that sysfs and hand-written files contain, plus random bytes.
    mutating func text(_ fragments: [String], maximumPieces: Int = 12) -> String {
        var out = ""
        for _ in 0..<Int(next() % UInt64(maximumPieces + 1)) {
            switch next() % 8 {
            case 0: out.append(Character(Unicode.Scalar(UInt8(next() % 128))))
            case 1: out += String(Double(bitPattern: next()))
            case 2: out += String(Int64(bitPattern: next()))
            default: out += pick(fragments)
            }
        }
        return out
    }
}

/// Seeded random input for the parsers of outside text (issue 13): 100,000 cases each, asserting
/// no crash and either a refusal or a value inside the documented range.
@Suite struct ParserFuzzTests {
    static let cases = 100_000
    static let numberFragments = [
        "0", "1", "-1", ".", "-", "+", "e", "E", "5", "9", "nan", "inf", "infinity", "0x", "1e308", "1e309", "-0",
        " ", "\t", "\n", ",", ";", "_", "٣", "1.0000000000000000000000000001", "4.9e-324", "2.2250738585072014e-308",
        "999999999999999999999", "00", "1e-400",
    ]

    @Test func decimalNumbersAreFiniteOrRefused() {
        var rng = FuzzRandom(state: 0xDEC1_0001)
        var accepted = 0
        for _ in 0..<Self.cases {
            let input = rng.text(Self.numberFragments, maximumPieces: 6)
            if let value = parseFiniteDouble(input) {
                accepted += 1
                #expect(value.isFinite, "\(input.debugDescription) → \(value)")
            }
            if let list = parseFiniteDoubleList(input) { #expect(list.allSatisfy { $0.isFinite }) }
            if let integer = parseDecimalInteger(input) { #expect(String(integer).count <= 20) }
        }
        print("fuzz: decimal numbers, \(Self.cases) cases, \(accepted) accepted")
        #expect(accepted > 1000)
    }

    @Test func mountMatricesAreFiniteWithoutAZeroRowOrRefused() {
        var rng = FuzzRandom(state: 0x3A7_0002)
        var accepted = 0
        let fragments = Self.numberFragments + ["0, 1, 0; 1, 0, 0; 0, 0, -1", "1, 0, 0", "0, 0, 0", ";", ";", ",", ", ", "-1"]
        for _ in 0..<Self.cases {
            let input = rng.text(fragments, maximumPieces: 14)
            switch Result(catching: { () throws(MountMatrixError) -> Matrix3 in try parseMountMatrixOrThrow(input) }) {
            case .success(let m):
                accepted += 1
                #expect(m.isFinite && m.row0 != .zero && m.row1 != .zero && m.row2 != .zero, "\(input.debugDescription)")
                #expect(parseMountMatrix(input) == m)
            case .failure:
                #expect(parseMountMatrix(input) == nil)
            }
        }
        print("fuzz: mount matrices, \(Self.cases) cases, \(accepted) accepted")
        #expect(accepted > 100)
    }
}
