// SPDX-License-Identifier: Apache-2.0
import QiblaCore

/// The offline list of towns, searched by name as one types (the app on each keystroke, qiblactl
/// once) and asked for the town nearest a position. Pure: the list is given (the app and qiblactl
/// read it from libgeonames through QiblaGeonames).
///
/// Every name is folded once (``SearchText``) into one byte buffer, so a search is a scan of
/// bytes without allocation per town: 24,361 towns answer in a few milliseconds (BENCHMARKS.md).
public struct PlaceIndex: Sendable {
    public let places: [Place]
    /// The folded names of every place, then its folded regions and countries; each name or
    /// region ends with a 0 byte, words within one are separated by a space.
    let text: [UInt8]
    /// Per place i: its names are text[nameStart[i] ..< otherStart[i]], its regions and
    /// countries text[otherStart[i] ..< nameStart[i + 1]].
    let nameStart: [Int32]
    let otherStart: [Int32]

    /// A match within this distance of the last known position (metres) comes before matches of
    /// the same quality farther away, whatever their population: "London" typed in Ontario is
    /// London, Ontario, "Birmingham" typed in Alabama is Birmingham, Alabama.
    public static let nearbyMetres = 100_000.0

    public init(places: [Place]) {
        self.places = places
        var text: [UInt8] = []
        text.reserveCapacity(places.count * 48)
        var nameStart: [Int32] = [], otherStart: [Int32] = []
        nameStart.reserveCapacity(places.count + 1); otherStart.reserveCapacity(places.count)
        // Regions and countries repeat: each distinct one is folded once.
        var foldedOther: [String: [UInt8]] = [:]
        func appendName(_ name: String) {
            let before = text.count
            SearchText.append(folded: name, to: &text)
            if text.count > before { text.append(0) }
        }
        func appendOther(_ other: String) {
            guard !other.isEmpty else { return }
            if let folded = foldedOther[other] {
                text += folded
            } else {
                var folded: [UInt8] = []
                SearchText.append(folded: other, to: &folded)
                folded.append(0)
                foldedOther[other] = folded
                text += folded
            }
        }
        for place in places {
            nameStart.append(Int32(text.count))
            appendName(place.name)
            if place.englishName != place.name { appendName(place.englishName) }
            for name in place.alternateNames { appendName(name) }
            otherStart.append(Int32(text.count))
            appendOther(place.region)
            appendOther(place.country)
            if place.englishRegion != place.region { appendOther(place.englishRegion) }
            if place.englishCountry != place.country { appendOther(place.englishCountry) }
        }
        nameStart.append(Int32(text.count))
        self.text = text
        self.nameStart = nameStart
        self.otherStart = otherStart
    }

    /// An index as ``PlaceIndexArchive`` stored it (checked there: offsets ascending, within `text`).
    init(places: [Place], text: [UInt8], nameStart: [Int32], otherStart: [Int32]) {
        self.places = places
        self.text = text
        self.nameStart = nameStart
        self.otherStart = otherStart
    }

    /// How well a place's names match what was typed, best first.
    public enum MatchQuality: Int, Sendable, Comparable {
        /// A name is the query ("mecca" for Makkah al Mukarramah, whose other name it is).
        case name = 0
        /// A name starts with the query ("birm" for Birmingham).
        case namePrefix = 1
        /// Every word of the query starts a word of the names ("paulo sao").
        case nameWords = 2
        /// Some words are found only in the region or country ("birmingham england").
        case withRegion = 3

        public static func < (a: MatchQuality, b: MatchQuality) -> Bool { a.rawValue < b.rawValue }
    }

    /// One match of a search: the place, how well it matched, and how far it is from the
    /// position given (metres, nil without one).
    public struct Match: Sendable, Equatable {
        public let place: Place
        public let quality: MatchQuality
        public let distanceMetres: Double?
    }

    /// The places whose words begin with every word of `query` (folded, ``SearchText``), at least
    /// one of them in the place's names, at most `limit`, best first: by match quality
    /// (``MatchQuality``), then those within ``nearbyMetres`` of `near` (the last known
    /// position), then the larger population, then the nearer to `near`, then the title. An
    /// empty query finds nothing.
    public func matches(_ query: String, limit: Int = 20, near: (latitudeDegrees: Double, longitudeDegrees: Double)? = nil) -> [Match] {
        var folded: [UInt8] = []
        SearchText.append(folded: query, to: &folded)
        guard !folded.isEmpty, limit > 0 else { return [] }
        let words = folded.split(separator: 0x20).map(Array.init)
        let here = near.flatMap { try? GeodeticPosition(latitudeDegrees: $0.latitudeDegrees, longitudeDegrees: $0.longitudeDegrees) }
        var found: [(quality: MatchQuality, index: Int)] = []
        text.withUnsafeBufferPointer { text in
            folded.withUnsafeBufferPointer { whole in
                for index in places.indices {
                    let names = Int(nameStart[index])..<Int(otherStart[index])
                    let others = Int(otherStart[index])..<Int(nameStart[index + 1])
                    var inNames = 0
                    var matched = true
                    for word in words {
                        let inName = word.withUnsafeBufferPointer { Self.someWord(of: text, in: names, startsWith: $0) }
                        if inName { inNames += 1 } else if !word.withUnsafeBufferPointer({ Self.someWord(of: text, in: others, startsWith: $0) }) {
                            matched = false
                            break
                        }
                    }
                    guard matched, inNames > 0 else { continue }
                    let quality: MatchQuality
                    if Self.someName(of: text, in: names, is: whole, wholly: true) { quality = .name }
                    else if Self.someName(of: text, in: names, is: whole, wholly: false) { quality = .namePrefix }
                    else { quality = inNames == words.count ? .nameWords : .withRegion }
                    found.append((quality, index))
                }
            }
        }
        // Ranked by keys alone; a Match (a copy of its Place) is made for the best `limit` only,
        // so a 1-letter query's thousands of matches cost no copies.
        var ranked: [(quality: MatchQuality, nearby: Bool, population: Int, distance: Double?, index: Int)] = found.map { quality, index in
            let place = places[index]
            var distance: Double?
            if let here, let there = try? GeodeticPosition(latitudeDegrees: place.latitudeDegrees, longitudeDegrees: place.longitudeDegrees) {
                distance = GreatCircle.distanceMetres(from: here, to: there)
            }
            return (quality, (distance ?? .infinity) <= Self.nearbyMetres, place.population, distance, index)
        }
        ranked.sort { a, b in
            if a.quality != b.quality { return a.quality < b.quality }
            if a.nearby != b.nearby { return a.nearby }
            if a.population != b.population { return a.population > b.population }
            let da = a.distance ?? 0, db = b.distance ?? 0
            if da != db { return da < db }
            return places[a.index].title < places[b.index].title
        }
        return ranked.prefix(limit).map { Match(place: places[$0.index], quality: $0.quality, distanceMetres: $0.distance) }
    }

    /// ``matches(_:limit:near:)``'s places.
    public func search(_ query: String, limit: Int = 20, near: (latitudeDegrees: Double, longitudeDegrees: Double)? = nil) -> [Place] {
        matches(query, limit: limit, near: near).map(\.place)
    }

    /// Whether a word of text[range] (words start the range or follow a space or a 0) starts with `word`.
    private static func someWord(of text: UnsafeBufferPointer<UInt8>, in range: Range<Int>, startsWith word: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = word.count
        guard count > 0 else { return true }
        var start = range.lowerBound
        let first = word[0]
        while start + count <= range.upperBound {
            if text[start] == first {
                var k = 1
                while k < count && text[start + k] == word[k] { k += 1 }
                if k == count { return true }
            }
            // On to the next word.
            while start < range.upperBound && text[start] != 0x20 && text[start] != 0 { start += 1 }
            start += 1
        }
        return false
    }

    /// Whether a name of text[range] (names end with a 0) is `query` (`wholly`) or starts with it.
    private static func someName(of text: UnsafeBufferPointer<UInt8>, in range: Range<Int>, is query: UnsafeBufferPointer<UInt8>, wholly: Bool) -> Bool {
        var start = range.lowerBound
        while start < range.upperBound {
            var end = start
            while end < range.upperBound && text[end] != 0 { end += 1 }
            let length = end - start
            if length == query.count || (!wholly && length > query.count) {
                var k = 0
                while k < query.count && text[start + k] == query[k] { k += 1 }
                if k == query.count { return true }
            }
            start = end + 1
        }
        return false
    }

    /// The place nearest to a position, if one is within `withinMetres` (great-circle distance on
    /// the mean Earth sphere, ``GreatCircle/distanceMetres(from:to:)``).
    public func nearest(latitudeDegrees: Double, longitudeDegrees: Double, withinMetres: Double) -> Place? {
        guard let here = try? GeodeticPosition(latitudeDegrees: latitudeDegrees, longitudeDegrees: longitudeDegrees) else { return nil }
        var best: (Double, Int)?
        for (index, place) in places.enumerated() {
            // A cheap filter first: a degree of latitude is 111 km everywhere.
            guard abs(place.latitudeDegrees - latitudeDegrees) * 111_000 <= withinMetres,
                  let there = try? GeodeticPosition(latitudeDegrees: place.latitudeDegrees, longitudeDegrees: place.longitudeDegrees) else { continue }
            let d = GreatCircle.distanceMetres(from: here, to: there)
            if d <= withinMetres, d < best?.0 ?? .infinity { best = (d, index) }
        }
        return best.map { places[$0.1] }
    }
}
