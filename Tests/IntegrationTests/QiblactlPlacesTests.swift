// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

/// Towns by name from the command line (issue 38): `qiblactl places` lists libgeonames' towns
/// ranked as the app ranks them, `qiblactl set-location NAME` pins the first.
@Suite struct QiblactlPlacesTests {
    /// `places --json`: the documented keys, the two Birminghams told apart, the larger first.
    @Test func placesListsMatchesForScripts() throws {
        let r = try run(product("qiblactl").path, ["places", "--json", "--limit", "3", "birmingham"],
                        environment: ["LANGUAGE": "en", "LC_ALL": translatedLocale])
        #expect(r.status == 0, "\(r.stderr)")
        let o = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(o["query"] as? String == "birmingham")
        #expect(o["near"] is NSNull)
        let matches = try #require(o["matches"] as? [[String: Any]])
        #expect(matches.count == 3)
        for key in ["name", "english_name", "region", "country", "country_code", "title", "population", "latitude", "longitude",
                    "match", "distance_km"] {
            #expect(matches.first?.keys.contains(key) == true, "missing \(key)")
        }
        #expect(matches.map { $0["title"] as? String ?? "" }.prefix(2) == ["Birmingham, England, United Kingdom",
                                                                           "Birmingham, Alabama, United States of America"])
        #expect(matches.first?["match"] as? String == "name")
    }

    /// --near puts a namesake within 100 km first, with its distance.
    @Test func nearPutsTheLocalNamesakeFirst() throws {
        let r = try run(product("qiblactl").path, ["places", "--json", "--near=33.4,-86.9", "birmingham"],
                        environment: ["LANGUAGE": "en", "LC_ALL": translatedLocale])
        #expect(r.status == 0, "\(r.stderr)")
        let o = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let first = try #require((o["matches"] as? [[String: Any]])?.first)
        #expect(first["region"] as? String == "Alabama", "\(first)")
        #expect((first["distance_km"] as? Double ?? 999) < 30, "\(first)")
    }

    /// The user's language: names from libgeonames' catalogue, searched in its script too.
    @Test(arguments: [("ar", "makkah", "مكة المكرمة"), ("ar", "مكة", "مكة المكرمة"), ("ru", "Стамбул", "Стамбул"), ("tr", "istanbul", "İstanbul"),
                      ("ur", "لاہور", "لاھور"), ("ur", "لاھور", "لاھور")])
    func namesInTheUsersLanguage(language: String, query: String, name: String) throws {
        let r = try run(product("qiblactl").path, ["places", "--limit", "1", query], environment: ["LANGUAGE": language, "LC_ALL": translatedLocale])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix(name), "\(language) \(query): \(r.stdout)")
    }

    /// The towns' cache: the first run writes it, the next reads it, and both print exactly what a
    /// run that cannot write one prints, in Arabic, Urdu and Turkish; QIBLACTL_DEBUG says which.
    @Test(arguments: [("ar", "مكة"), ("ur", "مکہ"), ("tr", "istanbul"), ("en", "birmingham")])
    func theTownCacheChangesNothingButTheTime(language: String, query: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("qiblactl-town-cache-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func places(cache: String) throws -> (stdout: String, stderr: String) {
            let r = try run(product("qiblactl").path, ["places", "--json", "--limit", "20", query],
                            environment: ["LANGUAGE": language, "LC_ALL": translatedLocale, "XDG_CACHE_HOME": cache, "QIBLACTL_DEBUG": "1"])
            #expect(r.status == 0, "\(r.stderr)")
            return (r.stdout, r.stderr)
        }
        let without = try places(cache: "/proc/no-such-directory")
        #expect(without.stderr.contains("not written"), "\(without.stderr)")
        let cold = try places(cache: directory)
        #expect(cold.stderr.contains("written anew"), "\(cold.stderr)")
        let warm = try places(cache: directory)
        #expect(warm.stderr.contains("town cache: read \(directory)/qiblad/towns-\(language).cache"), "\(warm.stderr)")
        #expect(without.stdout.contains("\"matches\": [{"), "\(without.stdout)")
        #expect(cold.stdout == without.stdout && warm.stdout == without.stdout, "\(warm.stdout)\nvs\n\(without.stdout)")
    }

    @Test func noMatchExitsOneAndSaysSo() throws {
        let r = try run(product("qiblactl").path, ["places", "xqzwv"])
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("no town called “xqzwv”"), "\(r.stderr)")
        let empty = try run(product("qiblactl").path, ["places", " "])
        #expect(empty.status == 64, "\(empty.stderr)")
    }

    /// `set-location NAME` pins the first match (named on stderr), coordinates still work, and a
    /// name that matches nothing changes nothing.
    @Test func setLocationByName() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.start()
        let env = q.bus.environment.merging(["LANGUAGE": "en", "LC_ALL": translatedLocale]) { $1 }
        let set = try run(product("qiblactl").path, ["set-location", "Kota", "Bharu"], environment: env)
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stderr.contains("Kota Bharu, Kelantan, Malaysia"), "\(set.stderr)")
        #expect(set.stdout.contains("source manual"), "\(set.stdout)")
        let json = try run(product("qiblactl").path, ["status", "--json"], environment: env)
        let o = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(abs((o["Latitude"] as? Double ?? 0) - 6.12) < 0.1 && abs((o["Longitude"] as? Double ?? 0) - 102.24) < 0.1, "\(o)")
        let none = try run(product("qiblactl").path, ["set-location", "xqzwv"], environment: env)
        #expect(none.status == 2 && none.stderr.contains("no town called"), "\(none.stderr)")
        let after = try run(product("qiblactl").path, ["status", "--json"], environment: env)
        let p = try #require(try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [String: Any])
        #expect(abs((p["Latitude"] as? Double ?? 0) - 6.12) < 0.1, "\(p)")
        let typo = try run(product("qiblactl").path, ["set-location", "--sytem", "1", "2"], environment: env)
        #expect(typo.status == 64 && typo.stderr.contains("unknown option"), "\(typo.stderr)")
    }
}
