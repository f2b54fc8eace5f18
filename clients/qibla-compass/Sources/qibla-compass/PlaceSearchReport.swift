// SPDX-License-Identifier: Apache-2.0
import CompassModel
import QiblaGeonames
import QiblaPlaces

/// `--find-place`: the search the location page runs, from the command line, timed (the tests'
/// table of towns and languages, and the benchmark of the first and later keystrokes, use it).
/// `queries` are searched in turn over one index, as keystrokes are: "s", "sa", "sao". Each step
/// is timed twice: on the monotonic clock (what a person waits) and in this thread's processor
/// time (what it costs, whatever else a shared machine runs).
enum PlaceSearchReport {
    static func run(queries: [String], near: (latitudeDegrees: Double, longitudeDegrees: Double)?) -> Int32 {
        let c0 = MainLoop.threadCPUMicroseconds
        let t0 = MainLoop.monotonicMicroseconds
        let towns: [Place]
        do {
            towns = try Geonames.towns()
        } catch {
            print("message=\(error.description)")
            return 1
        }
        let t1 = MainLoop.monotonicMicroseconds, c1 = MainLoop.threadCPUMicroseconds
        let index = PlaceIndex(places: towns)
        let t2 = MainLoop.monotonicMicroseconds, c2 = MainLoop.threadCPUMicroseconds
        var found = true
        for query in queries {
            let started = MainLoop.monotonicMicroseconds, startedCPU = MainLoop.threadCPUMicroseconds
            let matches = index.search(query, limit: 20, near: near)
            let ended = MainLoop.monotonicMicroseconds, endedCPU = MainLoop.threadCPUMicroseconds
            print("cities=\(towns.count) read_us=\(t1 - t0) index_us=\(t2 - t1) search_us=\(ended - started) "
                  + "read_cpu_us=\(c1 - c0) index_cpu_us=\(c2 - c1) search_cpu_us=\(endedCPU - startedCPU) matches=\(matches.count) query=\(query)")
            for place in matches { print("place=\(place.title)|\(place.latitudeDegrees)|\(place.longitudeDegrees)") }
            if matches.isEmpty { print("message=\(PlaceIndex.noMatchMessage(query))") }
            found = !matches.isEmpty
        }
        return found ? 0 : 1
    }
}
