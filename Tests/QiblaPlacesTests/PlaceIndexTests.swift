// SPDX-License-Identifier: Apache-2.0
import QiblaPlaces
import Testing

/// A few towns as libgeonames lists them (names in the user's language, GeoNames' names,
/// regions, populations), and one with a well-known name of ours.
private let places = WellKnownNames.adding(to: [
    Place(id: "745044", name: "İstanbul", englishName: "Istanbul", region: "İstanbul", country: "Türkiye", englishRegion: "Istanbul",
          englishCountry: "Turkey", countryCode: "TR", population: 14_804_116, latitudeDegrees: 41.01384, longitudeDegrees: 28.94966),
    Place(name: "São Paulo", englishName: "São Paulo", region: "São Paulo", country: "Brazil", population: 10_021_295,
          latitudeDegrees: -23.5475, longitudeDegrees: -46.63611),
    Place(name: "São Carlos", englishName: "São Carlos", region: "São Paulo", country: "Brazil", population: 254_484,
          latitudeDegrees: -22.0175, longitudeDegrees: -47.89083),
    Place(name: "Paulo Afonso", englishName: "Paulo Afonso", region: "Bahia", country: "Brazil", population: 85_350,
          latitudeDegrees: -9.40611, longitudeDegrees: -38.21472),
    Place(name: "Le Cap", englishName: "Cape Town", region: "Cap-Occidental", country: "Afrique du Sud", englishRegion: "Western Cape",
          englishCountry: "South Africa", population: 3_433_441, latitudeDegrees: -33.92584, longitudeDegrees: 18.42322),
    Place(name: "London", englishName: "London", region: "England", country: "United Kingdom", population: 8_961_989,
          latitudeDegrees: 51.50853, longitudeDegrees: -0.12574),
    Place(name: "London", englishName: "London", region: "Ontario", country: "Canada", population: 383_822,
          latitudeDegrees: 42.98339, longitudeDegrees: -81.23304),
    Place(name: "Londrina", englishName: "Londrina", region: "Paraná", country: "Brazil", population: 471_832,
          latitudeDegrees: -23.31028, longitudeDegrees: -51.16278),
    Place(name: "Birmingham", englishName: "Birmingham", region: "England", country: "United Kingdom", population: 984_333,
          latitudeDegrees: 52.48142, longitudeDegrees: -1.89983),
    Place(name: "Birmingham", englishName: "Birmingham", region: "Alabama", country: "United States of America", population: 212_461,
          latitudeDegrees: 33.52066, longitudeDegrees: -86.80249),
    Place(id: "104515", name: "Makkah al Mukarramah", englishName: "Makkah al Mukarramah", region: "Mecca Region", country: "Saudi Arabia",
          population: 1_323_624, latitudeDegrees: 21.42664, longitudeDegrees: 39.82563),
    Place(id: "105343", name: "Jeddah", englishName: "Jeddah", region: "Mecca Region", country: "Saudi Arabia",
          population: 2_867_446, latitudeDegrees: 21.49012, longitudeDegrees: 39.18624),
    Place(name: "Kraków", englishName: "Kraków", region: "Lesser Poland", country: "Poland", population: 755_050,
          latitudeDegrees: 50.06143, longitudeDegrees: 19.93658),
])

@Suite struct PlaceIndexTests {
    /// Case, accents, dotted and dotless i, ß, punctuation and the Arabic script's variants fold alike.
    @Test(arguments: [
        ("İstanbul", "istanbul"), ("ISTANBUL", "istanbul"), ("São Paulo", "sao paulo"), ("Zürich", "zurich"),
        ("Kraków", "krakow"), ("Straße", "strasse"), ("Łódź", "lodz"), ("Reykjavík", "reykjavik"),
        ("Saint-Étienne", "saint etienne"), ("  Cape   Town ", "cape town"), ("e\u{301}", "e"), ("Ærøskøbing", "aeroskobing"),
        ("Ta'if", "ta if"), ("Kazan’", "kazan"), ("Москва", "москва"), ("Королёв", "королев"),
        ("مكة", "مكه"), ("مکہ", "مكه"), ("مکه", "مكه"), ("مِـنْـطَـقَـة", "منطقه"), ("إسطنبول", "اسطنبول"), ("مدینہ", "مدينه"),
        ("لاہور", "لاهور"), ("لاھور", "لاهور"), ("کراچی", "كراچي"), ("پاکستان", "پاكستان"),
    ])
    func foldsLikeAPersonTypes(text: String, folded: String) {
        #expect(SearchText.folded(text) == folded)
    }

    @Test(arguments: [
        ("istanbul", "İstanbul"), ("sao paulo", "São Paulo"), ("SÃO", "São Paulo"), ("cape town", "Le Cap"), ("le cap", "Le Cap"),
        ("krakow", "Kraków"), ("paulo brazil", "São Paulo"), ("mecca", "Makkah al Mukarramah"), ("Mekka", "Makkah al Mukarramah"),
        ("makkah", "Makkah al Mukarramah"), ("مكة", "Makkah al Mukarramah"), ("مکہ", "Makkah al Mukarramah"),
        ("মক্কা", "Makkah al Mukarramah"), ("jiddah", "Jeddah"), ("Constantinople", "İstanbul"),
    ])
    func theTownAsTypedComesFirst(query: String, name: String) {
        let found = PlaceIndex(places: places).search(query)
        #expect(found.first?.name == name, "\(query) → \(found.map(\.title))")
    }

    /// Match quality first: a name that is the query, then one starting with it, then words of
    /// the name, then words that need the region; within one quality, the larger town.
    @Test func theBestMatchComesFirst() {
        let index = PlaceIndex(places: places)
        #expect(index.matches("sao paulo").map(\.quality) == [.name, .withRegion])    // São Carlos, São Paulo
        #expect(index.search("sao paulo").first?.title == "São Paulo, Brazil")
        #expect(index.search("lond").map(\.region) == ["England", "Paraná", "Ontario"])
        #expect(index.matches("paulo").map(\.quality) == [.namePrefix, .nameWords])
        #expect(index.search("paulo").first?.name == "Paulo Afonso")
        #expect(index.search("paulo", limit: 1).count == 1)
        // "Mecca" is a name of Makkah (quality .name), Jeddah only in the Mecca Region (no name word): not listed.
        #expect(index.matches("mecca").map(\.place.name) == ["Makkah al Mukarramah"])
        let region = index.matches("birmingham alabama")
        #expect(region.map(\.quality) == [.withRegion] && region.first?.place.region == "Alabama")
    }

    /// Two towns of one name: the larger first, each line with its region and country.
    @Test func theLargerOfTwoNamesakesFirst() {
        let found = PlaceIndex(places: places).search("birmingham")
        #expect(found.map(\.title) == ["Birmingham, England, United Kingdom", "Birmingham, Alabama, United States of America"])
    }

    /// A town within 100 km of the last known position comes first: London typed in Ontario,
    /// Birmingham typed in Alabama; farther away, the population decides.
    @Test func nearbyNamesakesFirst() {
        let index = PlaceIndex(places: places)
        #expect(index.search("london", near: (43.0, -81.0)).first?.country == "Canada")
        #expect(index.search("london", near: (48.85, 2.35)).first?.country == "United Kingdom")
        #expect(index.search("birmingham", near: (33.4, -86.9)).first?.region == "Alabama")
        #expect(index.search("birmingham", near: (40.7, -74.0)).first?.region == "England")
        let distances = index.matches("london", near: (43.0, -81.0)).compactMap(\.distanceMetres)
        #expect(distances.count == 2 && distances[0] < 30_000 && distances[1] > 5_000_000, "\(distances)")
    }

    @Test func nothingFoundSaysSo() {
        let index = PlaceIndex(places: places)
        #expect(index.search("xqzw").isEmpty)
        #expect(index.search("   ").isEmpty)
        #expect(index.search("").isEmpty)
        #expect(index.search("england").isEmpty)    // a region alone names no town
    }

    /// The nearest place within the distance, or none.
    @Test func nearestPlaceWithinADistance() {
        let index = PlaceIndex(places: places)
        #expect(index.nearest(latitudeDegrees: -33.9, longitudeDegrees: 18.4, withinMetres: 50_000)?.name == "Le Cap")
        #expect(index.nearest(latitudeDegrees: -40, longitudeDegrees: 18.4, withinMetres: 50_000) == nil)
        #expect(index.nearest(latitudeDegrees: .nan, longitudeDegrees: 18.4, withinMetres: 50_000) == nil)
    }

    /// Every line names the region and the country; the region is left out when it is the town's name.
    @Test func titlesTellNamesakesApart() {
        #expect(places[0].title == "İstanbul, Türkiye")
        #expect(places[9].title(separator: "، ") == "Birmingham، Alabama، United States of America")
    }
}
