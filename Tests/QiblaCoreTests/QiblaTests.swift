// SPDX-License-Identifier: Apache-2.0
// Qibla bearings against published values (Tests/Reference/qibla-cities.csv) and the edge cases.
import Foundation
import Testing
@testable import QiblaCore

/// The leading decimal number of a field such as "295.1442 (295°8'39"")" or "261.10 (98°54' W of N)".
func leadingNumber(_ text: String) -> Double? {
    let prefix = text.prefix { "0123456789.-".contains($0) }
    return prefix.isEmpty ? nil : Double(prefix)
}

struct ReferenceCity {
    var city: String
    var position: GeodeticPosition
    var published: Double?
    var geodesicBearing: Double
    var greatCircleBearing: Double
    var geodesicDistanceKilometres: Double
    var check: String

    static func all() throws -> [ReferenceCity] {
        try readCSV("Tests/Reference/qibla-cities.csv").map { row in
            func number(_ key: String) throws -> Double {
                guard let text = row[key], let value = Double(text) else { throw VectorError.badField(key) }
                return value
            }
            return ReferenceCity(
                city: row["city"] ?? "",
                position: try GeodeticPosition(latitudeDegrees: try number("lat"), longitudeDegrees: try number("lon")),
                published: leadingNumber(row["published_bearing"] ?? ""),
                geodesicBearing: try number("geodesic_bearing"),
                greatCircleBearing: try number("great_circle_bearing"),
                geodesicDistanceKilometres: try number("geodesic_distance_km"),
                check: row["check"] ?? "")
        }
    }
}

@Suite("Qibla against published values")
struct QiblaReferenceTests {
    let qibla = Qibla()

    @Test("exact-0.001 rows match the great-circle bearing ±0.001°, table-0.03 rows ±0.03°")
    func publishedBearings() throws {
        let cities = try ReferenceCity.all()
        var exactCount = 0
        var tableCount = 0
        var maxExactError = 0.0
        var maxTableError = 0.0
        for city in cities where city.check == "exact-0.001" || city.check == "table-0.03" {
            let published = try #require(city.published, "\(city.city): no published number")
            let bearing = try #require(qibla.solve(from: city.position).greatCircleBearing.value, "\(city.city)")
            let error = angularError(bearing, published)
            if city.check == "exact-0.001" {
                exactCount += 1
                maxExactError = max(maxExactError, error)
                #expect(error <= 0.001, "\(city.city): \(bearing) vs published \(published)")
            } else {
                tableCount += 1
                maxTableError = max(maxTableError, error)
                #expect(error <= 0.03, "\(city.city): \(bearing) vs published \(published)")
            }
        }
        #expect(exactCount >= 10)
        #expect(tableCount >= 4)
        print("QiblaReferenceTests: \(exactCount) exact-0.001 rows, max error \(maxExactError)°; "
            + "\(tableCount) table-0.03 rows, max error \(maxTableError)°")
    }

    @Test("every row's geodesic_bearing, great_circle_bearing (3 decimals) and distance (0.1 km) agree")
    func printedColumns() throws {
        var maxGeodesic = 0.0
        var maxGreatCircle = 0.0
        var maxDistance = 0.0
        for city in try ReferenceCity.all() {
            let solution = qibla.solve(from: city.position)
            let geodesic = try #require(solution.geodesicBearing.value)
            let greatCircle = try #require(solution.greatCircleBearing.value)
            let e1 = angularError(geodesic, city.geodesicBearing)
            let e2 = angularError(greatCircle, city.greatCircleBearing)
            let e3 = abs(solution.distanceMetres / 1000 - city.geodesicDistanceKilometres)
            #expect(e1 <= 0.0005 + 1e-9, "\(city.city) geodesic \(geodesic) vs \(city.geodesicBearing)")
            #expect(e2 <= 0.0005 + 1e-9, "\(city.city) great circle \(greatCircle) vs \(city.greatCircleBearing)")
            #expect(e3 <= 0.05 + 1e-9, "\(city.city) distance \(solution.distanceMetres) vs \(city.geodesicDistanceKilometres) km")
            maxGeodesic = max(maxGeodesic, e1)
            maxGreatCircle = max(maxGreatCircle, e2)
            maxDistance = max(maxDistance, e3)
        }
        print("QiblaReferenceTests: printed columns max |Δ| geodesic \(maxGeodesic)°, "
            + "great circle \(maxGreatCircle)°, distance \(maxDistance) km")
    }
}

@Suite("Qibla edge cases")
struct QiblaEdgeCaseTests {
    let qibla = Qibla()
    let kaaba = Qibla.defaultKaaba

    @Test func defaultKaabaIsTheAdhanValue() {
        #expect(kaaba.latitudeDegrees == 21.4225241)
        #expect(kaaba.longitudeDegrees == 39.8261818)
    }

    @Test("at the Kaaba both bearings are undefined")
    func atKaaba() {
        let solution = qibla.solve(from: kaaba)
        #expect(solution.greatCircleBearing == .undefined(.atKaaba))
        #expect(solution.geodesicBearing == .undefined(.atKaaba))
        #expect(solution.greatCircleBearing.value == nil)
        #expect(solution.distanceMetres == 0)
    }

    @Test("0.5 m away is still at the Kaaba; 1.5 m away is not")
    func nearKaaba() throws {
        // Points 0.5 m east and 1.5 m north of the Kaaba (GeographicLib 2.1 Direct).
        let halfMetre = try GeodeticPosition(latitudeDegrees: 21.422524099999933, longitudeDegrees: 39.82618662276404)
        let near = qibla.solve(from: halfMetre)
        #expect(near.geodesicBearing == .undefined(.atKaaba))
        #expect(near.greatCircleBearing == .undefined(.atKaaba))
        #expect(abs(near.distanceMetres - 0.5) < 1e-6)

        let oneAndHalf = try GeodeticPosition(latitudeDegrees: 21.42253764737423, longitudeDegrees: 39.8261818)
        let away = qibla.solve(from: oneAndHalf)
        #expect(abs(away.distanceMetres - 1.5) < 1e-6)
        // 1.5 m north of the Kaaba, the Kaaba is due south.
        #expect(abs(try #require(away.geodesicBearing.value) - 180) < 1e-6)
        #expect(abs(try #require(away.greatCircleBearing.value) - 180) < 1e-6)
    }

    @Test("the antipode and the cut locus are in the antipodal band; 5 km off it is not")
    func antipode() throws {
        let antipode = try GeodeticPosition(latitudeDegrees: -21.4225241, longitudeDegrees: 39.8261818 - 180)
        let solution = qibla.solve(from: antipode)
        #expect(solution.greatCircleBearing == .undefined(.antipodal))
        #expect(solution.geodesicBearing == .undefined(.antipodal))
        // GeographicLib 2.1: 20003931.458625447 m.
        #expect(abs(solution.distanceMetres - 20_003_931.458625447) < 1e-6)
        #expect(qibla.isInAntipodalBand(antipode))

        // On the cut locus, 0.3° of longitude from the antipodal meridian: still undefined.
        let onCutLocus = try GeodeticPosition(latitudeDegrees: -21.4225241, longitudeDegrees: -140.1738182 + 0.3)
        #expect(qibla.solve(from: onCutLocus).geodesicBearing == .undefined(.antipodal))
        // 0.8° along the parallel (beyond the ≈ 0.56° cut locus + 1 km): defined.
        let beyondEnd = try GeodeticPosition(latitudeDegrees: -21.4225241, longitudeDegrees: -140.1738182 + 0.8)
        #expect(qibla.solve(from: beyondEnd).geodesicBearing.value != nil)
        #expect(!qibla.isInAntipodalBand(beyondEnd))

        // 0.05° (≈ 5.5 km) north of the antipode: defined and equal to GeographicLib (azi1 0.0).
        let north = try GeodeticPosition(latitudeDegrees: -21.3725241, longitudeDegrees: -140.1738182)
        let northSolution = qibla.solve(from: north)
        let northBearing = try #require(northSolution.geodesicBearing.value)
        #expect(angularError(northBearing, 0) < 1e-6)
        #expect(abs(northSolution.distanceMetres - 19_998_395.34696728) < 1e-6)

        // 1.1 km north of the antipodal parallel on the cut locus: just outside the band.
        let justOutside = try GeodeticPosition(latitudeDegrees: -21.4225241 + 0.0102, longitudeDegrees: -140.1738182 + 0.3)
        #expect(!qibla.isInAntipodalBand(justOutside))
        let justInside = try GeodeticPosition(latitudeDegrees: -21.4225241 + 0.0085, longitudeDegrees: -140.1738182 + 0.3)
        #expect(qibla.isInAntipodalBand(justInside))

        // Off the band the answer agrees with GeographicLib 2.1 (31.493834006566193°).
        let offBand = try GeodeticPosition(latitudeDegrees: -21.4125241, longitudeDegrees: -139.8738182)
        #expect(abs(try #require(qibla.solve(from: offBand).geodesicBearing.value) - 31.493834006566193) < 1e-6)
    }

    @Test("poles: bearing measured along the meridian of the given longitude")
    func poles() throws {
        let north0 = try GeodeticPosition(latitudeDegrees: 90, longitudeDegrees: 0)
        let s0 = qibla.solve(from: north0)
        // GeographicLib 2.1: azi1 140.1738182, s12 7632107.081517353.
        #expect(abs(try #require(s0.geodesicBearing.value) - 140.1738182) < 1e-9)
        #expect(abs(try #require(s0.greatCircleBearing.value) - 140.1738182) < 1e-9)
        #expect(abs(s0.distanceMetres - 7_632_107.081517353) < 1e-6)

        let north100 = try GeodeticPosition(latitudeDegrees: 90, longitudeDegrees: 100)
        let s100 = qibla.solve(from: north100)
        // GeographicLib 2.1: azi1 −119.8261818 = 240.1738182 = 180 − (39.8261818 − 100).
        #expect(abs(try #require(s100.geodesicBearing.value) - 240.1738182) < 1e-9)
        #expect(abs(try #require(s100.greatCircleBearing.value) - 240.1738182) < 1e-9)
        #expect(s100.distanceMetres == s0.distanceMetres)

        let south = try GeodeticPosition(latitudeDegrees: -90, longitudeDegrees: 0)
        let ss = qibla.solve(from: south)
        #expect(abs(try #require(ss.geodesicBearing.value) - 39.8261818) < 1e-9)
        #expect(abs(try #require(ss.greatCircleBearing.value) - 39.8261818) < 1e-9)
        #expect(abs(ss.distanceMetres - 12_371_824.377108093) < 1e-6)
    }

    @Test("antimeridian: 180.0001 is −179.9999; bearings are continuous across ±180°")
    func antimeridian() throws {
        let east = try GeodeticPosition(latitudeDegrees: 10, longitudeDegrees: 179.9999)
        let west = try GeodeticPosition(latitudeDegrees: 10, longitudeDegrees: -179.9999)
        let wrapped = try GeodeticPosition(latitudeDegrees: 10, longitudeDegrees: 180.0001)
        #expect(abs(wrapped.longitudeDegrees - -179.9999) < 1e-12)
        #expect(qibla.solve(from: wrapped).distanceMetres.isFinite)
        let e = qibla.solve(from: east)
        let w = qibla.solve(from: west)
        // GeographicLib 2.1: −50.79998742419177° / 14453309.883313779 m and −50.799847964795404° / 14453326.876178062 m.
        #expect(abs(try #require(e.geodesicBearing.value) - (360 - 50.79998742419177)) < 1e-6)
        #expect(abs(try #require(w.geodesicBearing.value) - (360 - 50.799847964795404)) < 1e-6)
        #expect(abs(e.distanceMetres - 14_453_309.883313779) < 1e-3)
        #expect(abs(w.distanceMetres - 14_453_326.876178062) < 1e-3)
        #expect(angularError(try #require(e.greatCircleBearing.value), try #require(w.greatCircleBearing.value)) < 0.001)
        // −180.0001 is outside GeodeticPosition's accepted range [−180, 360); its equivalent 179.9999 is the way in.
        #expect(throws: CoordinateError.longitudeOutOfRange(-180.0001)) {
            try GeodeticPosition(latitudeDegrees: 10, longitudeDegrees: -180.0001)
        }
    }

    @Test("longitude 359 is −1")
    func longitude359() throws {
        let a = try GeodeticPosition(latitudeDegrees: 51.5, longitudeDegrees: 359)
        let b = try GeodeticPosition(latitudeDegrees: 51.5, longitudeDegrees: -1)
        #expect(a.longitudeDegrees == -1)
        #expect(qibla.solve(from: a) == qibla.solve(from: b))
    }

    @Test("invalid input is a CoordinateError, never a NaN bearing")
    func invalidInput() {
        #expect(throws: CoordinateError.nonFiniteLatitude) { try GeodeticPosition(latitudeDegrees: .nan, longitudeDegrees: 0) }
        #expect(throws: CoordinateError.nonFiniteLatitude) { try GeodeticPosition(latitudeDegrees: -.infinity, longitudeDegrees: 0) }
        #expect(throws: CoordinateError.nonFiniteLongitude) { try GeodeticPosition(latitudeDegrees: 0, longitudeDegrees: .infinity) }
        #expect(throws: CoordinateError.nonFiniteLongitude) { try GeodeticPosition(latitudeDegrees: 0, longitudeDegrees: .nan) }
        #expect(throws: CoordinateError.nonFiniteHeight) { try GeodeticPosition(latitudeDegrees: 0, longitudeDegrees: 0, heightMetres: .nan) }
        #expect(throws: CoordinateError.latitudeOutOfRange(91)) { try GeodeticPosition(latitudeDegrees: 91, longitudeDegrees: 0) }
        #expect(throws: CoordinateError.latitudeOutOfRange(-90.5)) { try GeodeticPosition(latitudeDegrees: -90.5, longitudeDegrees: 0) }
        #expect(throws: CoordinateError.longitudeOutOfRange(-181)) { try GeodeticPosition(latitudeDegrees: 0, longitudeDegrees: -181) }
        #expect(throws: CoordinateError.longitudeOutOfRange(360)) { try GeodeticPosition(latitudeDegrees: 0, longitudeDegrees: 360) }
    }

    @Test("bearings are in [0, 360) and never NaN over a global grid")
    func globalGrid() throws {
        var latitude = -90.0
        while latitude <= 90 {
            var longitude = -180.0
            while longitude < 180 {
                let position = try GeodeticPosition(latitudeDegrees: latitude, longitudeDegrees: longitude)
                let solution = qibla.solve(from: position)
                #expect(solution.distanceMetres.isFinite && solution.distanceMetres >= 0)
                for bearing in [solution.geodesicBearing, solution.greatCircleBearing] {
                    if let value = bearing.value {
                        #expect(value >= 0 && value < 360, "\(position): \(value)")
                    } else {
                        #expect(bearing == .undefined(.antipodal), "\(position)")
                    }
                }
                longitude += 2.5
            }
            latitude += 2.5
        }
    }

    @Test("a custom Kaaba position is honoured")
    func customKaaba() throws {
        let other = Qibla(kaaba: try GeodeticPosition(latitudeDegrees: 21.42249, longitudeDegrees: 39.826174))
        let london = try GeodeticPosition(latitudeDegrees: 51.5074, longitudeDegrees: -0.1278)
        let a = try #require(other.solve(from: london).greatCircleBearing.value)
        let b = try #require(qibla.solve(from: london).greatCircleBearing.value)
        #expect(a != b)
        #expect(abs(a - b) < 0.001)
    }
}
