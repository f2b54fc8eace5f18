// SPDX-License-Identifier: Apache-2.0
import CompassModel
import QiblaGeonames
import QiblaPlaces

/// `--find-place`: the search the location page runs, from the command line, timed (the tests'
/// table of towns and languages, and the benchmark of the first and later keystrokes, use it).
/// `queries` are searched in turn over one index, as keystrokes are: "s", "sa", "sao".
enum PlaceSearchReport {
    static func run(queries: [String], near: (latitudeDegrees: Double, longitudeDegrees: Double)?) -> Int32 {
        let t0 = MainLoop.monotonicMicroseconds
        let towns: [Place]
        do {
            towns = try Geonames.towns()
        } catch {
            print("message=\(error.description)")
            return 1
        }
        let t1 = MainLoop.monotonicMicroseconds
        let index = PlaceIndex(places: towns)
        let t2 = MainLoop.monotonicMicroseconds
        var found = true
        for query in queries {
            let started = MainLoop.monotonicMicroseconds
            let matches = index.search(query, limit: 20, near: near)
            let ended = MainLoop.monotonicMicroseconds
            print("cities=\(towns.count) read_us=\(t1 - t0) index_us=\(t2 - t1) search_us=\(ended - started) matches=\(matches.count) query=\(query)")
            for place in matches { print("place=\(place.title)|\(place.latitudeDegrees)|\(place.longitudeDegrees)") }
            if matches.isEmpty { print("message=\(PlaceIndex.noMatchMessage(query))") }
            found = !matches.isEmpty
        }
        return found ? 0 : 1
    }
}
