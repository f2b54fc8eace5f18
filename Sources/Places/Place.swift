// SPDX-License-Identifier: Apache-2.0

/// A town of the offline list, as the place search shows and finds it.
public struct Place: Sendable, Equatable {
    /// The source's identifier (GeoNames' geonameid for libgeonames' cities), "" when it has none.
    public var id: String
    /// The town's name in the user's language where a catalogue has it, else `englishName`.
    public var name: String
    /// The name as the source writes it (GeoNames' name: the local name in Latin letters, or the
    /// English one), also searched.
    public var englishName: String
    /// Other names people type (exonyms such as "Mecca", "Mekka"; names in other scripts), searched.
    public var alternateNames: [String]
    /// The first-level region (state, province, governorate) in the user's language where the
    /// catalogue has it; may be empty.
    public var region: String
    /// The country, in the user's language where the catalogue has it.
    public var country: String
    /// The region and the country as the source writes them, searched beside the translated ones.
    public var englishRegion: String
    public var englishCountry: String
    /// ISO 3166-1 alpha-2, "" when unknown.
    public var countryCode: String
    /// Inhabitants as the source counts them, 0 when unknown.
    public var population: Int
    public var latitudeDegrees: Double
    public var longitudeDegrees: Double

    public init(id: String = "", name: String, englishName: String, alternateNames: [String] = [], region: String, country: String,
                englishRegion: String? = nil, englishCountry: String? = nil, countryCode: String = "", population: Int = 0,
                latitudeDegrees: Double, longitudeDegrees: Double) {
        self.id = id
        self.name = name
        self.englishName = englishName
        self.alternateNames = alternateNames
        self.region = region
        self.country = country
        self.englishRegion = englishRegion ?? region
        self.englishCountry = englishCountry ?? country
        self.countryCode = countryCode
        self.population = population
        self.latitudeDegrees = latitudeDegrees
        self.longitudeDegrees = longitudeDegrees
    }

    /// "Birmingham, England, United Kingdom": the name, the region and the country, so two towns of
    /// one name are told apart; the region is left out when empty or the same as the name
    /// ("Istanbul, Turkey"), and `separator` is the language's list separator ("، " in Arabic).
    public func title(separator: String = ", ") -> String {
        ([name] + (region.isEmpty || region == name ? [] : [region]) + (country.isEmpty ? [] : [country])).joined(separator: separator)
    }

    /// ``title(separator:)`` with a comma.
    public var title: String { title() }
}
