// SPDX-License-Identifier: Apache-2.0
import QiblaGeonames
import QiblaPlaces

/// libgeonames' towns and their search index, loaded once on a thread of their own
/// (``MainLoop/inBackground(named:_:then:)``), so the GTK main loop never waits for them: from
/// the towns' cache (`TownCache`, $XDG_CACHE_HOME/qiblad) when it is there and current, else read
/// from libgeonames and folded (BENCHMARKS.md: 60–150 ms) and written to the cache for next time. Whoever needs the index before it is
/// ready asks ``whenReady(_:)`` and is answered on the main loop as soon as it arrives: no
/// waiting, no polling. Used on the main loop only.
final class TownList {
    /// What the worker thread hands back: the index (empty when the list could not be read) and
    /// what the two steps took there (from the cache: all of it in "read", "index" 0).
    struct Loaded: Sendable {
        var index: PlaceIndex
        var problem: String?
        /// Whether the index came from the cache, and what the cache did, in words.
        var fromCache: Bool
        var cacheReport: String
        var readMicroseconds: UInt64
        var indexMicroseconds: UInt64
        var readCPUMicroseconds: UInt64
        var indexCPUMicroseconds: UInt64
        /// Whether the work ran on the thread of the main loop (it must not).
        var onMainLoop: Bool
    }

    private(set) var index: PlaceIndex?
    private(set) var loaded: Loaded?
    private var started = false
    private var waiting: [(PlaceIndex) -> Void] = []
    private let log: (String) -> Void
    private let cache: TownCache?

    /// `cache`: where the index is kept between runs (nil: always read from libgeonames).
    init(cache: TownCache? = TownCache.user, log: @escaping (String) -> Void) {
        self.cache = cache
        self.log = log
    }

    /// Starts reading the list, once; it arrives on the main loop a moment later.
    func prepare() {
        guard !started else { return }
        started = true
        let cache = self.cache
        MainLoop.inBackground(named: "town-list", { Self.load(cache: cache) }) { [self] loaded in
            self.loaded = loaded
            index = loaded.index
            if let problem = loaded.problem { log("place list: \(problem)") }
            log("place list: \(loaded.index.places.count) towns read in \(loaded.readMicroseconds / 1000) ms, "
                + "indexed in \(loaded.indexMicroseconds / 1000) ms, off the main loop (town cache: \(loaded.cacheReport))")
            let actions = waiting
            waiting = []
            for action in actions { action(loaded.index) }
        }
    }

    /// `action` with the index: now when it is built, else on the main loop once it is (the read
    /// is started if it was not).
    func whenReady(_ action: @escaping (PlaceIndex) -> Void) {
        if let index { action(index); return }
        waiting.append(action)
        prepare()
    }

    /// On the worker thread: the index from the cache, else the towns read (through the user's
    /// catalogue) and folded into the index, and the cache written; without a cache, the two
    /// steps timed apart.
    private static func load(cache: TownCache?) -> Loaded {
        let c0 = MainLoop.threadCPUMicroseconds, t0 = MainLoop.monotonicMicroseconds
        if let cache {
            var index = PlaceIndex(places: [])
            var problem: String?, fromCache = false, report = ""
            do {
                let loaded = try Geonames.townIndex(cache: cache)
                (index, fromCache, report) = (loaded.index, loaded.fromCache, loaded.cacheReport)
            } catch {
                problem = error.description
            }
            let c1 = MainLoop.threadCPUMicroseconds, t1 = MainLoop.monotonicMicroseconds
            return Loaded(index: index, problem: problem, fromCache: fromCache, cacheReport: report, readMicroseconds: t1 - t0,
                          indexMicroseconds: 0, readCPUMicroseconds: c1 - c0, indexCPUMicroseconds: 0, onMainLoop: MainLoop.isOnMainLoop)
        }
        var towns: [Place] = []
        var problem: String?
        do {
            towns = try Geonames.towns()
        } catch {
            problem = error.description
        }
        let c1 = MainLoop.threadCPUMicroseconds, t1 = MainLoop.monotonicMicroseconds
        let index = PlaceIndex(places: towns)
        let c2 = MainLoop.threadCPUMicroseconds, t2 = MainLoop.monotonicMicroseconds
        return Loaded(index: index, problem: problem, fromCache: false, cacheReport: "no cache", readMicroseconds: t1 - t0,
                      indexMicroseconds: t2 - t1, readCPUMicroseconds: c1 - c0, indexCPUMicroseconds: c2 - c1,
                      onMainLoop: MainLoop.isOnMainLoop)
    }
}
