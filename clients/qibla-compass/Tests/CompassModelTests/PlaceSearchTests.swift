// SPDX-License-Identifier: Apache-2.0
import CompassModel
import QiblaPlaces
import Testing

// The search itself is tested in the root package (QiblaPlacesTests, and the held-out towns
// against libgeonames in QiblaGeonamesTests); here, what the app says about it.
@Suite struct PlaceSearchTests {
    @Test func nothingFoundSaysSo() {
        #expect(PlaceIndex.noMatchMessage(" xqzw ").contains("“xqzw”"))
        #expect(" a b  ".trimmingSpaces == "a b")
    }
}
