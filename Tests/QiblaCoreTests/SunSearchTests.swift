// SPDX-License-Identifier: Apache-2.0
// Qibla-sun instants and the Kaaba's zenith and nadir passages.
import Testing
@testable import QiblaCore

@Suite("Qibla-sun times and Kaaba passages")
struct SunSearchTests {
    /// Every crossing of the sun's azimuth through the targets on a 20 s scan of the interval with
    /// the sun at least `minimum` high at both ends of the step.
    static func denseCrossings(at position: GeodeticPosition, bearing: Double, from start: Double, duration: Double,
                               minimum: Double) -> [(time: Double, kind: QiblaSunKind)] {
        let deltaT = DeltaT.seconds(unixSeconds: start + duration / 2)!
        let day = SolarDay(from: start, to: start + duration, deltaTSeconds: deltaT)
        let observer = SolarPositionAlgorithm.Observer(position)
        var found: [(Double, QiblaSunKind)] = []
        var previous = day.position(at: start, observer: observer, atmosphere: .standard)
        var t = start
        while t < start + duration {
            let next = min(t + 20, start + duration)
            let p = day.position(at: next, observer: observer, atmosphere: .standard)
            if previous.elevationDegrees >= minimum, p.elevationDegrees >= minimum {
                for kind in QiblaSunKind.allCases {
                    let target = kind.sunAzimuthDegrees(qiblaBearingDegrees: bearing)
                    let g0 = Angle.normalized180(previous.azimuthDegrees - target)
                    let g1 = Angle.normalized180(p.azimuthDegrees - target)
                    if (g0 > 0) != (g1 > 0), abs(g1 - g0) < 180 { found.append((next, kind)) }
                }
            }
            previous = p
            t = next
        }
        return found
    }

    @Test("500 random places and days: every instant found has the sun's azimuth on the Qibla (or opposite) within 0.01°, and a 20 s scan finds none that the search missed")
    func randomPlacesAgainstDenseScan() throws {
        var generator = SeededGenerator(seed: 2026)
        let search = QiblaSunSearch()
        var events = 0, worstAzimuth = 0.0, places = 0
        var absences: [String: Int] = [:]
        while places < 500 {
            let latitude = Angle.degrees(asin(generator.uniform(-1, 1)))
            let position = try GeodeticPosition(latitudeDegrees: latitude, longitudeDegrees: generator.uniform(-180, 180))
            guard let bearing = Qibla().solve(from: position).greatCircleBearing.value else { continue }
            places += 1
            let start = unixSeconds(1990, 1, 1) + generator.uniform(0, 70 * 365.25 * 86_400)
            let result = try #require(search.times(at: position, from: start))
            for event in result.events {
                events += 1
                let target = event.kind.sunAzimuthDegrees(qiblaBearingDegrees: bearing)
                let full = try #require(SolarPositionAlgorithm.position(at: event.unixSeconds, for: position))
                let error = angularError(full.azimuthDegrees, target)
                worstAzimuth = max(worstAzimuth, error)
                #expect(error <= 0.01, "\(position) at \(event.unixSeconds): azimuth \(full.azimuthDegrees), target \(target)")
                #expect(event.elevationDegrees >= search.minimumElevationDegrees)
                #expect(event.unixSeconds >= start && event.unixSeconds <= start + 86_400)
            }
            #expect(zip(result.events, result.events.dropFirst()).allSatisfy { $0.unixSeconds <= $1.unixSeconds })
            #expect(result.events.filter { $0.kind == .sun }.count <= 2 && result.events.filter { $0.kind == .shadow }.count <= 2)
            if let absence = result.absence { absences["\(absence)", default: 0] += 1 }
            #expect(result.events.isEmpty == (result.absence != nil))
            // The scan demands 0.1° of margin above the minimum elevation, so a crossing right at the
            // threshold is not counted against the search.
            for crossing in Self.denseCrossings(at: position, bearing: bearing, from: start, duration: 86_400,
                                                minimum: search.minimumElevationDegrees + 0.1) {
                let matched = result.events.contains { $0.kind == crossing.kind && abs($0.unixSeconds - crossing.time) <= 20 }
                #expect(matched, "missed a \(crossing.kind) crossing at \(crossing.time) at \(position) (start \(start))")
            }
        }
        print("SunSearchTests: 500 places, \(events) instants, worst azimuth error \(worstAzimuth)°; none found: \(absences)")
    }

    @Test("at the Kaaba the Qibla is undefined: no instants, and the API says why")
    func atTheKaaba() throws {
        let result = try #require(QiblaSunSearch().times(at: Qibla.defaultKaaba, from: unixSeconds(2026, 3, 1)))
        #expect(result.events.isEmpty)
        #expect(result.absence == .qiblaUndefined(.atKaaba))
    }

    @Test("the antipodal band and polar night have no instants, and say why")
    func antipodalAndPolarNight() throws {
        let antipode = try GeodeticPosition(latitudeDegrees: -21.4225241, longitudeDegrees: 39.8261818 - 180)
        let a = try #require(QiblaSunSearch().times(at: antipode, from: unixSeconds(2026, 3, 1)))
        #expect(a.events.isEmpty && a.absence == .qiblaUndefined(.antipodal))
        // Tromsø in December: the sun does not rise.
        let tromso = try GeodeticPosition(latitudeDegrees: 69.6492, longitudeDegrees: 18.9553)
        let night = try #require(QiblaSunSearch().times(at: tromso, from: unixSeconds(2026, 12, 21)))
        #expect(night.events.isEmpty && night.absence == .sunTooLow)
        // Out of the model's range.
        #expect(QiblaSunSearch().times(at: tromso, from: unixSeconds(2151, 1, 1)) == nil)
    }

    @Test("London in June: the sun stands in the Qibla (about 119°) in the morning, the shadow points to it in the evening")
    func london() throws {
        let london = try GeodeticPosition(latitudeDegrees: 51.5074, longitudeDegrees: -0.1278)
        let result = try #require(QiblaSunSearch().times(at: london, from: unixSeconds(2026, 6, 21)))
        let kinds = result.events.map(\.kind)
        #expect(kinds == [.sun, .shadow])
        let morning = try #require(result.events.first)
        let hours = (morning.unixSeconds - unixSeconds(2026, 6, 21)) / 3600
        #expect(hours > 5 && hours < 10, "\(hours) h UTC")
    }

    @Test("a tropical place where the shadow turns back has two crossings of one kind close together")
    func tropicalDoubleCrossing() throws {
        // Near the Tropic, the sun passing on the pole side of the zenith: azimuth turns back.
        var generator = SeededGenerator(seed: 7)
        var doubles = 0
        for _ in 0..<300 {
            let position = try GeodeticPosition(latitudeDegrees: generator.uniform(0, 20), longitudeDegrees: generator.uniform(-180, 180))
            let start = unixSeconds(2026, 6, 1) + generator.uniform(0, 40 * 86_400)
            let result = try #require(QiblaSunSearch().times(at: position, from: start))
            if result.events.filter({ $0.kind == .sun }).count == 2 || result.events.filter({ $0.kind == .shadow }).count == 2 {
                doubles += 1
            }
        }
        print("SunSearchTests: \(doubles) of 300 tropical June days with two crossings of one kind")
        #expect(doubles > 0)
    }

    @Test("the Kaaba's passages: zenith 27/28 May ≈ 09:18 UTC and 15/16 July ≈ 09:27 UTC, nadir in January and November, each within a minute")
    func kaabaPassages() throws {
        for year in [2024, 2025, 2026, 2027] {
            let passages = try #require(KaabaSunPassages.passages(year: year))
            #expect(passages.count == 4)
            let zenith = passages.filter { $0.kind == .zenith }
            let nadir = passages.filter { $0.kind == .nadir }
            #expect(zenith.count == 2 && nadir.count == 2)
            func civil(_ t: Double) -> (month: Int, day: Int, minutes: Double) {
                let days = Int((t / 86_400).rounded(.down))
                let secondsOfDay = t - Double(days) * 86_400
                for month in 1...12 {
                    for day in 1...31 where DecimalYear.daysFromCivil(year: year, month: month, day: day) == days {
                        return (month, day, secondsOfDay / 60)
                    }
                }
                return (0, 0, 0)
            }
            for p in passages {
                let c = civil(p.unixSeconds)
                print("Kaaba \(p.kind) \(year)-\(c.month)-\(c.day) \(Int(c.minutes) / 60):\(Int(c.minutes) % 60) UTC (\(p.separationDegrees)°)")
                #expect(p.separationDegrees < 0.3)
            }
            let may = civil(zenith[0].unixSeconds), july = civil(zenith[1].unixSeconds)
            #expect(may.month == 5 && [27, 28].contains(may.day))
            #expect(abs(may.minutes - (9 * 60 + 18)) <= 1, "\(may)")
            #expect(july.month == 7 && [15, 16].contains(july.day))
            #expect(abs(july.minutes - (9 * 60 + 27)) <= 1, "\(july)")
            let january = civil(nadir[0].unixSeconds), november = civil(nadir[1].unixSeconds)
            #expect(january.month == 1 && november.month == 11)
        }
        #expect(KaabaSunPassages.passages(year: 1899) == nil)
        #expect(KaabaSunPassages.passages(year: 2150) == nil)
    }
}
