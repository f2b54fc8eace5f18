// SPDX-License-Identifier: Apache-2.0
import CompassModel
import WorldPlaces

/// `--find-place`: the search the location page runs, from the command line, timed (the tests'
/// table of cities and languages, and the measurement of a 1-letter query, use it).
enum PlaceSearchReport {
    static func run(query: String, near: (latitudeDegrees: Double, longitudeDegrees: Double)?) -> Int32 {
        let t0 = MainLoop.monotonicMicroseconds
        let cities = WorldPlaces.cities()
        let t1 = MainLoop.monotonicMicroseconds
        let index = PlaceIndex(places: cities)
        let t2 = MainLoop.monotonicMicroseconds
        let matches = index.search(query, limit: 20, near: near)
        let t3 = MainLoop.monotonicMicroseconds
        print("cities=\(cities.count) read_us=\(t1 - t0) index_us=\(t2 - t1) search_us=\(t3 - t2) matches=\(matches.count)")
        for place in matches { print("place=\(place.title)|\(place.latitudeDegrees)|\(place.longitudeDegrees)") }
        if matches.isEmpty { print("message=\(PlaceIndex.noMatchMessage(query))") }
        return matches.isEmpty ? 1 : 0
    }
}
