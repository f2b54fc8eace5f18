// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

/// One run of `qibla-compass --find-place` in a language: its timing line and the places found.
func findPlace(_ query: String, language: String, near: (Double, Double)? = nil) throws -> (timing: [String: String], places: [(title: String, latitude: Double, longitude: Double)], output: String) {
    let r = try run(compassApp, ["--find-place", query] + (near.map { ["--near", "\($0.0)", "\($0.1)"] } ?? []),
                    environment: ["LANGUAGE": language, "LC_ALL": translatedLocale])
    var timing: [String: String] = [:]
    var places: [(String, Double, Double)] = []
    for line in r.stdout.split(separator: "\n") {
        if line.hasPrefix("place=") {
            let parts = line.dropFirst(6).split(separator: "|").map(String.init)
            if parts.count == 3, let lat = Double(parts[1]), let lon = Double(parts[2]) { places.append((parts[0], lat, lon)) }
        } else if line.hasPrefix("cities="), timing.isEmpty {
            for pair in line.split(separator: " ") {
                let kv = pair.split(separator: "=", maxSplits: 1)
                if kv.count == 2 { timing[String(kv[0])] = String(kv[1]) }
            }
        }
    }
    return (timing, places, r.stdout)
}

@Suite struct TownSearchTests {
    /// Against libgeonames' real list: a town typed as people type it, in their language and
    /// script, is the first match, within 0.1° of where the city is (reference coordinates from
    /// the cities' own surveys as published in encyclopaedias, not from the list). Issue 38's
    /// misses (Makkah, Mekka, Bradford, Hebron) among them; the root package's
    /// HeldOutTownsTests has the whole held-out list.
    @Test(arguments: [
        ("istanbul", "en", 41.01, 28.98), ("İSTANBUL", "tr", 41.01, 28.98), ("sao paulo", "en", -23.55, -46.63),
        ("São Paulo", "pt", -23.55, -46.63), ("le cap", "fr", -33.92, 18.42), ("cape town", "fr", -33.92, 18.42),
        ("munchen", "de", 48.14, 11.58), ("munich", "en", 48.14, 11.58), ("مكة", "ar", 21.42, 39.83), ("mecca", "en", 21.42, 39.83),
        ("zurich", "en", 47.37, 8.54), ("jakarta", "id", -6.2, 106.85), ("krakow", "pl", 50.06, 19.94), ("reykjavik", "is", 64.15, -21.94),
        ("makkah", "ar", 21.42, 39.83), ("Mekka", "de", 21.42, 39.83), ("مكة", "en", 21.42, 39.83), ("مکہ", "ur", 21.42, 39.83),
        ("bradford", "en", 53.79, -1.75), ("hebron", "ar", 31.53, 35.09), ("Стамбул", "ru", 41.01, 28.98), ("İstanbul", "en", 41.01, 28.98),
        ("القاهرة", "ar", 30.06, 31.25), ("kota bharu", "ms", 6.13, 102.24), ("ঢাকা", "bn", 23.71, 90.41),
    ])
    func aCityAsTypedInItsLanguage(query: String, language: String, latitude: Double, longitude: Double) throws {
        let (timing, places, output) = try findPlace(query, language: language)
        let first = try #require(places.first, "nothing for \(query) in \(language): \(output)")
        #expect(abs(first.latitude - latitude) <= 0.1 && abs(first.longitude - longitude) <= 0.1,
                "\(query) (\(language)) → \(first.title) at \(first.latitude), \(first.longitude); expected \(latitude), \(longitude)")
        print("\(language) '\(query)' → \(first.title) (\(timing["search_us"] ?? "?") µs)")
    }

    /// Names in the user's language where libgeonames' catalogue has them, whatever was typed:
    /// Makkah is مكة المكرمة in Arabic, Istanbul İstanbul in Turkish; the region and country too.
    @Test func namesInTheUsersLanguage() throws {
        let arabic = try findPlace("makkah", language: "ar")
        #expect(arabic.places.first?.title.hasPrefix("مكة المكرمة") == true, "\(arabic.output)")
        #expect(arabic.places.first?.title.contains("السعودية") == true, "\(arabic.output)")
        let turkish = try findPlace("istanbul", language: "tr")
        #expect(turkish.places.first?.title.hasPrefix("İstanbul") == true, "\(turkish.output)")
    }

    /// London typed in Ontario is London, Ontario; in Europe, London in England.
    @Test func equalNamesNearerFirst() throws {
        let ontario = try findPlace("london", language: "en", near: (43.0, -81.0))
        #expect(ontario.places.first.map { abs($0.latitude - 42.98) < 0.1 && abs($0.longitude + 81.25) < 0.1 } == true, "\(ontario.output)")
        let europe = try findPlace("london", language: "en", near: (48.85, 2.35))
        #expect(europe.places.first.map { abs($0.latitude - 51.51) < 0.1 && abs($0.longitude + 0.13) < 0.15 } == true, "\(europe.output)")
    }

    /// No match: a clear message, exit status 1.
    @Test func noMatchSaysSo() throws {
        let r = try run(compassApp, ["--find-place", "xqzwv"], environment: ["LANGUAGE": "en", "LC_ALL": translatedLocale])
        #expect(r.status == 1)
        #expect(r.stdout.contains("message=No place called “xqzwv” in the offline list."), "\(r.stdout)")
    }

    /// A 1-letter query matches thousands of places; the list keeps the best 20, and the time
    /// the search took is printed (measured, not limited here: BENCHMARKS.md has the figures).
    @Test func aOneLetterQueryIsCapped() throws {
        let (timing, places, output) = try findPlace("a", language: "en")
        #expect(places.count == 20, "\(output)")
        #expect(Int(timing["cities"] ?? "") ?? 0 > 24_000, "\(timing)")
        print("one letter: \(timing)")
    }

    /// Typed as a person types on the location page (`--typed-after`): the list is read off the
    /// main loop (on the thread ``TownList`` starts), the first keystroke, typed at once or half a
    /// second after the page opened, is answered once the index is there, and every keystroke
    /// gets its answer, the same as without the wait. (How long each takes is in BENCHMARKS.md.)
    @Test(arguments: [0, 500]) func keystrokesTypedAsThePageOpens(typedAfterMilliseconds: Int) throws {
        let typed = ["b", "bir", "birmingham e"]
        let r = try run(compassApp, typed.flatMap { ["--find-place", $0] } + ["--typed-after", "\(typedAfterMilliseconds)"],
                        environment: ["LANGUAGE": "en", "LC_ALL": translatedLocale])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        let answers = r.stdout.split(separator: "\n").filter { $0.hasPrefix("cities=") }
        #expect(answers.count == typed.count, "\(r.stdout)")
        #expect(answers.first?.contains(" read_off_main_loop=true ") == true, "\(answers)")
        #expect(answers.first?.contains(" answer_us=") == true && answers.first?.contains(" stall_us=") == true, "\(answers)")
        #expect(answers.last?.hasSuffix("query=birmingham e") == true, "\(answers)")
        // The last keystroke's places: the lines after its answer line, as a search without the wait lists them.
        let lastPlaces = r.stdout.split(separator: "\n").reversed().prefix { !$0.hasPrefix("cities=") }.reversed()
            .map { String($0.dropFirst(6).split(separator: "|")[0]) }
        #expect(lastPlaces.first == "Birmingham, England, United Kingdom", "\(r.stdout)")
        let direct = try findPlace("birmingham e", language: "en")
        #expect(lastPlaces == direct.places.map(\.title), "\(direct.output)")
    }

    /// The towns' cache (issue 38): the first run reads libgeonames and writes it, the next loads
    /// it, and both list the very places a run without the cache lists, in Arabic, Urdu and
    /// Turkish too; a cache directory that cannot be made changes nothing but the time.
    @Test(arguments: [("مكة", "ar"), ("مکہ", "ur"), ("istanbul", "tr"), ("birmingham e", "en")])
    func theTownCacheGivesTheSameAnswers(query: String, language: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("qibla-compass-town-cache-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func places(_ extra: [String], cache: String) throws -> (line: String, titles: [String]) {
            let r = try run(compassApp, ["--find-place", query] + extra, environment: ["LANGUAGE": language, "LC_ALL": translatedLocale, "XDG_CACHE_HOME": cache])
            #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
            let lines = r.stdout.split(separator: "\n").map(String.init)
            return (lines.first { $0.hasPrefix("cities=") } ?? "", lines.filter { $0.hasPrefix("place=") })
        }
        let without = try places(["--no-town-cache"], cache: directory)
        #expect(without.line.contains(" town_cache=none ") && !without.titles.isEmpty, "\(without)")
        let cold = try places([], cache: directory)
        #expect(cold.line.contains(" town_cache=miss "), "\(cold.line)")
        #expect(FileManager.default.fileExists(atPath: directory + "/qiblad/towns-\(language).cache"))
        let warm = try places([], cache: directory)
        #expect(warm.line.contains(" town_cache=hit "), "\(warm.line)")
        #expect(cold.titles == without.titles && warm.titles == without.titles, "\(warm.titles) vs \(without.titles)")
        let blocked = try places([], cache: "/proc/no-such-directory")
        #expect(blocked.line.contains(" town_cache=miss ") && blocked.titles == without.titles, "\(blocked)")
    }

    /// A bad `--typed-after` is refused with a clear message.
    @Test func aBadTypedAfterIsRefused() throws {
        let r = try run(compassApp, ["--find-place", "b", "--typed-after", "soon"], environment: ["LANGUAGE": "en", "LC_ALL": translatedLocale])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--typed-after takes MILLISECONDS"), "\(r.stderr)")
    }
}
