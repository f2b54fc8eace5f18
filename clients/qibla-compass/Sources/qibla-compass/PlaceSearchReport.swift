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
    /// With `cache` the index is loaded as ``TownList`` loads it (from the cache, or read, folded
    /// and written there): all of it is timed as "read", "index" is 0, and `town_cache=hit` or
    /// `miss` says which. Without, libgeonames is read and the index built, each step timed.
    static func run(queries: [String], near: (latitudeDegrees: Double, longitudeDegrees: Double)?, cache: TownCache?) -> Int32 {
        let c0 = MainLoop.threadCPUMicroseconds
        let t0 = MainLoop.monotonicMicroseconds
        var cacheField = "town_cache=none"
        let index: PlaceIndex
        let t1: UInt64, c1: UInt64
        do {
            if let cache {
                let loaded = try Geonames.townIndex(cache: cache)
                index = loaded.index
                cacheField = "town_cache=\(loaded.fromCache ? "hit" : "miss")"
                (t1, c1) = (MainLoop.monotonicMicroseconds, MainLoop.threadCPUMicroseconds)
            } else {
                let towns = try Geonames.towns()
                (t1, c1) = (MainLoop.monotonicMicroseconds, MainLoop.threadCPUMicroseconds)
                index = PlaceIndex(places: towns)
            }
        } catch {
            print("message=\(error.description)")
            return 1
        }
        let towns = index.places
        let t2 = MainLoop.monotonicMicroseconds, c2 = MainLoop.threadCPUMicroseconds
        var found = true
        for query in queries {
            let started = MainLoop.monotonicMicroseconds, startedCPU = MainLoop.threadCPUMicroseconds
            let matches = index.search(query, limit: 20, near: near)
            let ended = MainLoop.monotonicMicroseconds, endedCPU = MainLoop.threadCPUMicroseconds
            print("cities=\(towns.count) read_us=\(t1 - t0) index_us=\(t2 - t1) search_us=\(ended - started) "
                  + "read_cpu_us=\(c1 - c0) index_cpu_us=\(c2 - c1) search_cpu_us=\(endedCPU - startedCPU) \(cacheField) "
                  + "matches=\(matches.count) query=\(query)")
            for place in matches { print("place=\(place.title)|\(place.latitudeDegrees)|\(place.longitudeDegrees)") }
            if matches.isEmpty { print("message=\(PlaceIndex.noMatchMessage(query))") }
            found = !matches.isEmpty
        }
        return found ? 0 : 1
    }

    /// `--find-place … --typed-after MS`: the queries as a person types them on the location page,
    /// through the app's own ``TownList``: the list is read on its thread from the moment the page
    /// "opens", the first query is typed `typedAfterMilliseconds` later (0: at once) and answered
    /// as soon as the index is there, on a GLib main loop; the later ones follow in turn. Prints
    /// per query the time from its keystroke to its answer (`answer_us`, the wait for the index
    /// included) and, on the first line, the longest the main loop went without running a 2-ms
    /// timer while all this happened (`stall_us`), and whether the list was read off the main
    /// loop's thread (`read_off_main_loop`).
    static func runAsTyped(queries: [String], near: (latitudeDegrees: Double, longitudeDegrees: Double)?,
                           typedAfterMilliseconds: UInt32, cache: TownCache?) -> Int32 {
        let towns = TownList(cache: cache) { _ in }
        var found = false
        MainLoop.run { quit in
            var lastTick = MainLoop.monotonicMicroseconds, longestGap: UInt64 = 0, answered = false
            MainLoop.everyMilliseconds(2) {
                let now = MainLoop.monotonicMicroseconds
                longestGap = max(longestGap, now - lastTick)
                lastTick = now
                return !answered
            }
            towns.prepare()
            MainLoop.everyMilliseconds(typedAfterMilliseconds) {
                let keystroke = MainLoop.monotonicMicroseconds
                towns.whenReady { index in
                    let waited = MainLoop.monotonicMicroseconds - keystroke
                    answered = true
                    longestGap = max(longestGap, MainLoop.monotonicMicroseconds - lastTick)
                    let loaded = towns.loaded
                    for (k, query) in queries.enumerated() {
                        let started = MainLoop.monotonicMicroseconds, startedCPU = MainLoop.threadCPUMicroseconds
                        let matches = index.search(query, limit: 20, near: near)
                        let ended = MainLoop.monotonicMicroseconds, endedCPU = MainLoop.threadCPUMicroseconds
                        let answer = ended - started + (k == 0 ? waited : 0)
                        print("cities=\(index.places.count) read_us=\(loaded?.readMicroseconds ?? 0) index_us=\(loaded?.indexMicroseconds ?? 0) "
                              + "search_us=\(ended - started) read_cpu_us=\(loaded?.readCPUMicroseconds ?? 0) "
                              + "index_cpu_us=\(loaded?.indexCPUMicroseconds ?? 0) search_cpu_us=\(endedCPU - startedCPU) "
                              + "typed_after_ms=\(typedAfterMilliseconds) waited_us=\(k == 0 ? waited : 0) answer_us=\(answer) "
                              + (k == 0 ? "stall_us=\(longestGap) read_off_main_loop=\(loaded.map { !$0.onMainLoop } ?? false) " : "")
                              + "matches=\(matches.count) query=\(query)")
                        for place in matches { print("place=\(place.title)|\(place.latitudeDegrees)|\(place.longitudeDegrees)") }
                        if matches.isEmpty { print("message=\(PlaceIndex.noMatchMessage(query))") }
                        found = !matches.isEmpty
                    }
                    if let problem = loaded?.problem { print("message=\(problem)") }
                    quit()
                }
                return false
            }
        }
        return found ? 0 : 1
    }
}
