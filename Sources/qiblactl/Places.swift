// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import QiblaCore
import QiblaGeonames
import QiblaPlatform
import QiblaPlaces

// MARK: places (no daemon needed)

struct Places: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "places",
            abstract: tr("List the towns whose names match NAME, best first (no daemon needed)."),
            discussion: paragraphs(tr("The offline list is libgeonames' (every town of 15,000 people or more, from geonames.org) with a few well-known names of our own (Mecca, Mekka, Madinah, …); names in the user's language where its catalogue has them. Ranked as Qibla Compass ranks them: a name that is NAME, then a name starting with it, then every word starting a word of the name, then matches that need the region or country (\"birmingham england\"); within each, towns within 100 km of --near first, then the larger population, then the nearer. --json prints one object: query, near, matches (each: name, english_name, region, country, country_code, title, population, latitude, longitude, match, distance_km). Exit status 1 when nothing matches."),
                                    tr("The towns and their index are kept in $XDG_CACHE_HOME/qiblad (~/.cache/qiblad), rebuilt when libgeonames or the language changes; delete it at will; QIBLACTL_DEBUG=1 says what it did."))) }

    @Flag(name: .long, help: ArgumentHelp(tr("Print one JSON object."))) var json = false
    @Option(name: .long, help: ArgumentHelp(tr("Rank towns near LAT,LON first (degrees; --near=-33.9,18.4)."))) var near: String?
    @Option(name: .long, help: ArgumentHelp(tr("At most this many towns (1–100)."))) var limit = 10
    @Argument(help: ArgumentHelp(tr("The name as typed, in any case, with or without accents (several words are one name).")))
    var name: [String] = []

    func validate() throws {
        guard (1...100).contains(limit) else { throw ValidationError("--limit takes 1 to 100") }
        guard name.joined().contains(where: { $0 != " " }) else { throw ValidationError("give a NAME to look for") }
    }

    func run() throws {
        let position = try near.map { try parsePosition($0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)) }
        let query = name.joined(separator: " ")
        let matches = try TownSearch.matches(query, limit: limit, near: position)
        if json {
            var o = JSONObject()
            o.set("query", query)
            o.set("near", position.map { p -> JSONObject in
                var n = JSONObject()
                n.set("latitude", p.latitudeDegrees)
                n.set("longitude", p.longitudeDegrees)
                return n
            })
            o.set("matches", matches.map(TownSearch.json))
            print(o.text)
        } else {
            for match in matches {
                print("\(match.place.title)  \(fixed(match.place.latitudeDegrees, 4)), \(fixed(match.place.longitudeDegrees, 4))")
            }
        }
        if matches.isEmpty {
            if !json { printError("qiblactl: " + TownSearch.noMatch(query)) }
            throw ExitCode(1)
        }
    }
}

/// The offline towns (libgeonames, through the towns' cache in $XDG_CACHE_HOME/qiblad) and the
/// shared search over them.
enum TownSearch {
    static func matches(_ query: String, limit: Int, near: GeodeticPosition?) throws -> [PlaceIndex.Match] {
        Geonames.useUserLanguage()
        let loaded: LoadedTowns
        do {
            loaded = try Geonames.townIndex(cache: TownCache.user)
        } catch {
            throw fail("cannot read the offline list of towns: \(error.description)", status: .failure)
        }
        // The cache is never an error: what it did is told only when asked (README, "Places by name").
        if Environment.value("QIBLACTL_DEBUG") != nil { printError("qiblactl: town cache: \(loaded.cacheReport)") }
        return loaded.index.matches(query, limit: limit, near: near.map { ($0.latitudeDegrees, $0.longitudeDegrees) })
    }

    static func noMatch(_ query: String) -> String {
        fill(tr("no town called “{query}” in the offline list (towns of 15,000 people or more); try another spelling, a larger town nearby, or LATITUDE LONGITUDE"),
             ["query": query])
    }

    static func json(_ match: PlaceIndex.Match) -> JSONObject {
        var o = JSONObject()
        o.set("name", match.place.name)
        o.set("english_name", match.place.englishName)
        o.set("region", match.place.region)
        o.set("country", match.place.country)
        o.set("country_code", match.place.countryCode)
        o.set("title", match.place.title)
        o.set("population", match.place.population)
        o.set("latitude", match.place.latitudeDegrees)
        o.set("longitude", match.place.longitudeDegrees)
        o.set("match", String(describing: match.quality))
        o.set("distance_km", match.distanceMetres.map { $0 / 1000 })
        return o
    }
}
