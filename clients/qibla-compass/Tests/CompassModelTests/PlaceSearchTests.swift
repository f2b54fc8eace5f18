// SPDX-License-Identifier: Apache-2.0
import CompassModel
import Testing

/// A few places as libgweather lists them (names in the user's language, English names, regions).
private let places = [
    Place(name: "İstanbul", englishName: "Istanbul", region: "", country: "Türkiye", latitudeDegrees: 41.0186, longitudeDegrees: 28.9647),
    Place(name: "São Paulo", englishName: "São Paulo", region: "São Paulo", country: "Brazil", latitudeDegrees: -23.5333, longitudeDegrees: -46.6167),
    Place(name: "São Carlos", englishName: "São Carlos", region: "São Paulo", country: "Brazil", latitudeDegrees: -22.0, longitudeDegrees: -47.8908),
    Place(name: "Paulo Afonso", englishName: "Paulo Afonso", region: "Bahia", country: "Brazil", latitudeDegrees: -9.4, longitudeDegrees: -38.2),
    Place(name: "Le Cap", englishName: "Cape Town", region: "", country: "Afrique du Sud", latitudeDegrees: -33.9167, longitudeDegrees: 18.4167),
    Place(name: "London", englishName: "London", region: "East and South East England", country: "United Kingdom", latitudeDegrees: 51.5, longitudeDegrees: -0.12),
    Place(name: "London", englishName: "London", region: "Ontario", country: "Canada", latitudeDegrees: 42.98, longitudeDegrees: -81.25),
    Place(name: "Londrina", englishName: "Londrina", region: "Paraná", country: "Brazil", latitudeDegrees: -23.3, longitudeDegrees: -51.15),
    Place(name: "Kraków", englishName: "Kraków", region: "", country: "Poland", latitudeDegrees: 50.06, longitudeDegrees: 19.94),
    Place(name: "Düsseldorf", englishName: "Düsseldorf", region: "Nordrhein-Westfalen", country: "Deutschland", latitudeDegrees: 51.22, longitudeDegrees: 6.77),
]

@Suite struct PlaceSearchTests {
    /// Case, accents, dotted and dotless i, ß and punctuation fold alike.
    @Test(arguments: [
        ("İstanbul", "istanbul"), ("ISTANBUL", "istanbul"), ("São Paulo", "sao paulo"), ("Zürich", "zurich"),
        ("Kraków", "krakow"), ("Straße", "strasse"), ("Łódź", "lodz"), ("Reykjavík", "reykjavik"),
        ("Saint-Étienne", "saint etienne"), ("  Cape   Town ", "cape town"), ("e\u{301}", "e"), ("Ærøskøbing", "aeroskobing"),
        ("مكة", "مكة"), ("Москва", "москва"),
    ])
    func foldsLikeAPersonTypes(text: String, folded: String) {
        #expect(SearchText.folded(text) == folded)
    }

    @Test(arguments: [
        ("istanbul", "İstanbul"), ("sao paulo", "São Paulo"), ("SÃO", "São Carlos"), ("cape town", "Le Cap"), ("le cap", "Le Cap"),
        ("krakow", "Kraków"), ("dusseldorf", "Düsseldorf"), ("paulo brazil", "São Paulo"),
    ])
    func findsThePlaceAsTyped(query: String, name: String) {
        let found = PlaceIndex(places: places).search(query)
        #expect(found.contains { $0.name == name }, "\(query) → \(found.map(\.title))")
    }

    /// The name being the query first, then names starting with it, then other words of a name.
    @Test func theBestMatchComesFirst() {
        let index = PlaceIndex(places: places)
        #expect(index.search("sao paulo").first?.title == "São Paulo, Brazil")
        #expect(index.search("lond").map(\.name) == ["London", "London", "Londrina"])
        #expect(index.search("paulo").first?.name == "Paulo Afonso")    // the name starts with it
        #expect(index.search("paulo", limit: 1).count == 1)
    }

    /// Equal matches nearer to the current position first: London typed in Ontario.
    @Test func equalMatchesNearerFirst() {
        let index = PlaceIndex(places: places)
        #expect(index.search("london", near: (43.0, -81.0)).first?.country == "Canada")
        #expect(index.search("london", near: (48.0, 2.0)).first?.country == "United Kingdom")
    }

    @Test func nothingFoundSaysSo() {
        let index = PlaceIndex(places: places)
        #expect(index.search("xqzw").isEmpty)
        #expect(index.search("   ").isEmpty)
        #expect(index.search("").isEmpty)
        #expect(PlaceIndex.noMatchMessage(" xqzw ").contains("“xqzw”"))
    }

    /// The nearest place within the distance, or none.
    @Test func nearestPlaceWithinADistance() {
        let index = PlaceIndex(places: places)
        #expect(index.nearest(latitudeDegrees: -33.9, longitudeDegrees: 18.4, withinMetres: 50_000)?.name == "Le Cap")
        #expect(index.nearest(latitudeDegrees: -40, longitudeDegrees: 18.4, withinMetres: 50_000) == nil)
        #expect(index.nearest(latitudeDegrees: .nan, longitudeDegrees: 18.4, withinMetres: 50_000) == nil)
    }
}
