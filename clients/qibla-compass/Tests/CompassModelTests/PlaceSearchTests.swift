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

/// Numbers in the user's digits and separators (the catalogue says which).
@Suite struct LocaleNumbersTests {
    @Test func arabicDigitsAndSeparators() {
        let arabic = LocaleNumbers(digits: "٠١٢٣٤٥٦٧٨٩", separators: "٫٬")
        #expect(arabic.localized("7,621 km · 33.90° S, 18.40° E") == "٧٬٦٢١ km · ٣٣٫٩٠° S, ١٨٫٤٠° E")
        #expect(arabic.localized("Turn left 24°") == "Turn left ٢٤°")
    }

    @Test func turkishSeparatorsLatinDigits() {
        let turkish = LocaleNumbers(digits: "0123456789", separators: ",.")
        #expect(turkish.localized("7,621 km, 12.5°") == "7.621 km, 12,5°")
        #expect(LocaleNumbers(digits: "0123456789", separators: ".,").isLatin)
        // A catalogue's text that is not ten digits and two separators changes nothing.
        #expect(LocaleNumbers(digits: "012", separators: ".").localized("7,621.5") == "7,621.5")
    }

    /// What a person types in their digits is read as numbers.
    @Test func typedInOtherDigits() throws {
        #expect(LocaleNumbers.asciiDigits("٣٣٫٩ ١٨٫٤") == "33.9 18.4")
        #expect(LocaleNumbers.asciiDigits("۳۳.۹ ۱۸.۴") == "33.9 18.4")
        #expect(LocaleNumbers.asciiDigits("২৩.৭ ৯০.৪") == "23.7 90.4")
        let position = try ManualLocationInput.parse("-٣٣٫٩ ١٨٫٤").get()
        #expect(position.latitude == -33.9 && position.longitude == 18.4)
    }
}

@Suite struct PlaceTitleTests {
    /// Without a catalogue (the tests' language) the separator is a comma.
    @Test func titleWithTheLanguagesSeparator() {
        let place = Place(name: "Birmingham", englishName: "Birmingham", region: "England", country: "United Kingdom",
                          latitudeDegrees: 52.48, longitudeDegrees: -1.9)
        #expect(place.localizedTitle == "Birmingham, England, United Kingdom")
    }
}
