// SPDX-License-Identifier: Apache-2.0
// InlineArray (SE-0453) arrived in Swift 6.2. Debian 13's swiftlang is 6.0.3, so the three fixed
// sizes qiblad keeps inline have stand-ins there with the same initializer and subscript and the
// same storage: a homogeneous tuple, laid out like an array (no heap). Swift 6.2 and later use
// InlineArray itself (the typealiases below and at SensorSampleBatch's storage).

#if compiler(>=6.2)
/// A calibration's covariance, row-major 14 × 14.
typealias InlineDoubles196 = InlineArray<196, Double>
/// One row of the estimator's projection.
typealias InlineDoubles11 = InlineArray<11, Double>
#else
/// A calibration's covariance, row-major 14 × 14 (InlineArray<196, Double> from Swift 6.2).
typealias InlineDoubles196 = InlineTuple196
/// One row of the estimator's projection (InlineArray<11, Double> from Swift 6.2).
typealias InlineDoubles11 = InlineTuple11

/// 196 doubles inline: 14 rows of 14.
struct InlineTuple196: Sendable {
    typealias Row = (Double, Double, Double, Double, Double, Double, Double, Double, Double, Double, Double, Double, Double, Double)
    private var storage: (Row, Row, Row, Row, Row, Row, Row, Row, Row, Row, Row, Row, Row, Row)

    init(repeating value: Double) {
        let row: Row = (value, value, value, value, value, value, value, value, value, value, value, value, value, value)
        storage = (row, row, row, row, row, row, row, row, row, row, row, row, row, row)
    }

    subscript(index: Int) -> Double {
        get {
            precondition(index >= 0 && index < 196, "index out of range")
            return withUnsafeBytes(of: storage) { $0.load(fromByteOffset: index * MemoryLayout<Double>.stride, as: Double.self) }
        }
        set {
            precondition(index >= 0 && index < 196, "index out of range")
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: newValue, toByteOffset: index * MemoryLayout<Double>.stride, as: Double.self) }
        }
    }
}

/// 11 doubles inline.
struct InlineTuple11: Sendable {
    private var storage: (Double, Double, Double, Double, Double, Double, Double, Double, Double, Double, Double)

    init(repeating value: Double) { storage = (value, value, value, value, value, value, value, value, value, value, value) }

    subscript(index: Int) -> Double {
        get {
            precondition(index >= 0 && index < 11, "index out of range")
            return withUnsafeBytes(of: storage) { $0.load(fromByteOffset: index * MemoryLayout<Double>.stride, as: Double.self) }
        }
        set {
            precondition(index >= 0 && index < 11, "index out of range")
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: newValue, toByteOffset: index * MemoryLayout<Double>.stride, as: Double.self) }
        }
    }
}

/// 24 elements inline (InlineArray<24, Element> from Swift 6.2), for SensorSampleBatch.
public struct InlineTuple24<Element> {
    private var storage: (Element, Element, Element, Element, Element, Element, Element, Element, Element, Element, Element, Element, Element, Element, Element, Element, Element, Element, Element, Element, Element, Element, Element, Element)

    public init(repeating value: Element) { storage = (value, value, value, value, value, value, value, value, value, value, value, value, value, value, value, value, value, value, value, value, value, value, value, value) }

    public subscript(index: Int) -> Element {
        get {
            precondition(index >= 0 && index < 24, "index out of range")
            return withUnsafePointer(to: storage) {
                $0.withMemoryRebound(to: Element.self, capacity: 24) { $0[index] }
            }
        }
        set {
            precondition(index >= 0 && index < 24, "index out of range")
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: Element.self, capacity: 24) { $0[index] = newValue }
            }
        }
    }
}

extension InlineTuple24: Sendable where Element: Sendable {}
#endif
