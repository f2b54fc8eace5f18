// SPDX-License-Identifier: Apache-2.0

/// Names people type for towns that GeoNames' main name does not give: the exonyms of the holy
/// cities and of other towns Muslims travel to or ask the Qibla from ("Mecca", "Mekka", "Madinah",
/// "Jiddah"), the old or other spellings in common use ("Bombay", "Timbuktu"/"Tombouctou"), and
/// the holy cities in the scripts of the app's languages (Arabic, Urdu, Persian, Bengali), so
/// that they are found whatever the user's language. Keyed by GeoNames' geonameid (the ids of
/// libgeonames 0.3.0's list: geonames.org, CC BY 4.0); spellings from the cities' articles in
/// the Wikipedias of those languages. A small table of our own, so no second database
/// (libgweather) is read for a handful of names.
public enum WellKnownNames {
    public static let byGeonameID: [String: [String]] = [
        // Makkah al Mukarramah, Saudi Arabia
        "104515": ["Mecca", "Makkah", "Makka", "Mekka", "Mekke", "Mekah", "Mecque", "La Mecque", "Meca", "Mekkah",
                   "مكة", "مكة المكرمة", "مکہ", "مکہ مکرمہ", "مکه", "مکه مکرمه", "মক্কা"],
        // Medina, Saudi Arabia
        "109223": ["Madinah", "Al Madinah", "Madina", "Madinah al Munawwarah", "Medine", "Médine", "Medinah", "Madinah Al-Munawwarah",
                   "المدينة المنورة", "المدينة", "مدینہ", "مدینہ منورہ", "مدینه", "مدینه منوره", "মদিনা"],
        // Jeddah, Saudi Arabia
        "105343": ["Jiddah", "Jidda", "Jedda", "Djeddah", "Cidde", "جدة", "جدہ", "جده", "জেদ্দা"],
        // Jerusalem (al-Quds)
        "281184": ["Al Quds", "Al-Quds", "Quds", "Kudüs", "Baitulmaqdis", "Baitul Maqdis", "القدس", "قدس"],
        // Hebron (al-Khalil), West Bank
        "285066": ["Al Khalil", "Al-Khalil", "El Khalil", "الخليل"],
        // Ta'if, Saudi Arabia
        "107968": ["Taif", "Tayif"],
        // Timbuktu, Mali
        "2449067": ["Tombouctou", "Tumbuktu"],
        // Mogadishu, Somalia
        "53654": ["Muqdisho", "Mogadiscio"],
        // Samarkand and Bukhara, Uzbekistan
        "1216265": ["Samarqand", "Semerkant"],
        "1217662": ["Buxoro", "Bukhoro", "Buhara"],
        // Mumbai, Kolkata, Chennai (India); Dhaka, Chittagong (Bangladesh)
        "1275339": ["Bombay"],
        "1275004": ["Calcutta"],
        "1264527": ["Madras"],
        "1185241": ["Dacca"],
        "1205733": ["Chattogram"],
        // Cairo, Algiers, Fes, Marrakesh, Tripoli
        "360630": ["Al Qahirah", "Le Caire", "Kahire", "Kairo"],
        "2507480": ["Alger", "Al Jazair", "El Djazair", "Cezayir"],
        "2548885": ["Fez", "Fès"],
        "2542997": ["Marrakech", "Marrakesch"],
        // Kazan', Tatarstan (GeoNames writes the soft sign)
        "551487": ["Kazan"],
        // Ürümqi, Xinjiang
        "1529102": ["Urumchi"],
        // Istanbul
        "745044": ["Constantinople", "Stamboul"],
    ]

    /// `places` with their well-known names added to ``Place/alternateNames`` (by ``Place/id``).
    public static func adding(to places: [Place]) -> [Place] {
        places.map { place in
            guard let names = byGeonameID[place.id] else { return place }
            var place = place
            place.alternateNames += names
            return place
        }
    }
}
