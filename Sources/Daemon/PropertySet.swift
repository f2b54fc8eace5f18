// SPDX-License-Identifier: Apache-2.0
import QiblaInterface

/// A set of properties as one machine word: bit `i` stands for `QiblaProperty.allCases[i]`.
/// Inserting, testing and iterating allocate nothing (the sample path's goal of issue 12: an
/// `Array` of changed properties grew on the heap once per `PropertiesChanged`). Iteration is in
/// `allCases` order, which is the XML order, so signals list properties as the interface does.
public struct PropertySet: Sequence, Sendable, Hashable, ExpressibleByArrayLiteral, CustomStringConvertible {
    /// `allCases` once: the synthesized `allCases` builds a new array on every call.
    static let allProperties = QiblaProperty.allCases
    /// Position of each property in ``allProperties``, by raw value's case; built once.
    private static let positions: [QiblaProperty: Int] = {
        precondition(allProperties.count <= UInt64.bitWidth, "PropertySet holds at most 64 properties")
        var positions: [QiblaProperty: Int] = [:]
        for (index, property) in allProperties.enumerated() { positions[property] = index }
        return positions
    }()

    private var bits: UInt64 = 0

    public init() {}

    public init(arrayLiteral properties: QiblaProperty...) {
        self.init()
        for property in properties { insert(property) }
    }

    /// The property's position in `QiblaProperty.allCases` (the publisher's storage index too).
    static func index(of property: QiblaProperty) -> Int {
        // Dictionary lookup by a String-backed enum hashes the case, not its raw string.
        positions[property]!
    }

    public var isEmpty: Bool { bits == 0 }
    public var count: Int { bits.nonzeroBitCount }

    public func contains(_ property: QiblaProperty) -> Bool { bits & (1 << UInt64(Self.index(of: property))) != 0 }

    public mutating func insert(_ property: QiblaProperty) { insert(index: Self.index(of: property)) }

    /// Inserts the property at `index` of `QiblaProperty.allCases`.
    mutating func insert(index: Int) { bits |= 1 << UInt64(index) }

    public struct Iterator: IteratorProtocol {
        var remaining: UInt64
        public mutating func next() -> QiblaProperty? {
            guard remaining != 0 else { return nil }
            let index = remaining.trailingZeroBitCount
            remaining &= remaining &- 1
            return PropertySet.allProperties[index]
        }
    }

    public func makeIterator() -> Iterator { Iterator(remaining: bits) }
    public var underestimatedCount: Int { count }

    public var description: String { "[" + map(\.rawValue).joined(separator: ", ") + "]" }
}
