// SPDX-License-Identifier: Apache-2.0
import QiblaDaemon
import QiblaInterface
import Testing

@Suite struct PropertySetTests {
    @Test func everyPropertyFitsInOneWord() {
        #expect(QiblaProperty.allCases.count <= 64)
        var all = PropertySet()
        for property in QiblaProperty.allCases { all.insert(property) }
        #expect(all.count == QiblaProperty.allCases.count)
        #expect(Array(all) == QiblaProperty.allCases, "iteration is in XML (allCases) order")
    }

    @Test func insertionOrderDoesNotChangeTheIterationOrder() {
        let set: PropertySet = [.headingError, .heading, .latitude, .heading]
        #expect(Array(set) == [.latitude, .heading, .headingError])
        #expect(set.count == 3 && set.contains(.heading) && !set.contains(.magneticHeading))
        #expect(PropertySet().isEmpty && Array(PropertySet()).isEmpty)
        #expect(set.description == "[Latitude, Heading, HeadingError]")
    }
}
