// SPDX-License-Identifier: Apache-2.0
// GeoClueFix.validated: what qiblad accepts from a GeoClue2 Location object's properties
// (org.freedesktop.GeoClue2.Location.xml), without a bus.
import QiblaCore
import QiblaDBus
@testable import QiblaGeoClue
import Testing

@Suite struct GeoClueFixTests {
    /// A GetAll reply as GeoClue 2.6 sends it (captured from the real daemon fed a GGA sentence).
    static func properties(latitude: DBusValue = .double(51.5074), longitude: DBusValue = .double(-0.1278),
                           accuracy: DBusValue = .double(3), altitude: DBusValue = .double(11),
                           timestamp: DBusValue = .structure([.uint64(1_795_424_185), .uint64(250_000)])) -> [String: DBusValue] {
        ["Latitude": .variant(latitude), "Longitude": .variant(longitude), "Accuracy": .variant(accuracy),
         "Altitude": .variant(altitude), "Speed": .variant(.double(-1)), "Heading": .variant(.double(-1)),
         "Description": .variant(.string("")), "Timestamp": .variant(timestamp)]
    }

    @Test func aCompleteLocationIsAccepted() throws {
        let fix = try GeoClueFix.validated(Self.properties())
        #expect(fix.position.latitudeDegrees == 51.5074 && fix.position.longitudeDegrees == -0.1278)
        #expect(fix.hasAltitude && fix.position.heightMetres == 11)
        #expect(fix.horizontalAccuracyMetres == 3)
        #expect(fix.timeUnixSeconds == 1_795_424_185.25)
    }

    @Test func geoClueUnknownAltitudeIsNoAltitude() throws {
        // GEOCODE_LOCATION_ALTITUDE_UNKNOWN = -G_MAXDOUBLE = -1.7976931348623157e308.
        let fix = try GeoClueFix.validated(Self.properties(altitude: .double(-1.7976931348623157e308)))
        #expect(!fix.hasAltitude && fix.position.heightMetres == 0)
        for bad in [Double.nan, .infinity, -5_000, 200_000] {
            #expect(try !GeoClueFix.validated(Self.properties(altitude: .double(bad))).hasAltitude, "\(bad)")
        }
        #expect(try !GeoClueFix.validated(Self.properties(altitude: .string("11"))).hasAltitude)
    }

    @Test(arguments: [
        (DBusValue.double(.nan), DBusValue.double(0)),
        (.double(90.0001), .double(0)),
        (.double(-91), .double(0)),
        (.double(0), .double(.infinity)),
        (.double(0), .double(180.5)),
        (.double(0), .double(-180.5)),
        (.double(0), .double(359)),
    ])
    func outOfRangeCoordinatesAreRejected(latitude: DBusValue, longitude: DBusValue) {
        #expect(throws: GeoClueReadingError.self) {
            try GeoClueFix.validated(Self.properties(latitude: latitude, longitude: longitude))
        }
    }

    @Test func missingOrMistypedCoordinatesAreNamed() {
        var p = Self.properties()
        p["Latitude"] = nil
        #expect(throws: GeoClueReadingError.missing("Latitude")) { try GeoClueFix.validated(p) }
        #expect(throws: GeoClueReadingError.wrongType("Longitude", signature: "s")) {
            try GeoClueFix.validated(Self.properties(longitude: .string("-0.1278")))
        }
    }

    @Test func theAntimeridianAndThePolesAreValid() throws {
        #expect(try GeoClueFix.validated(Self.properties(longitude: .double(180))).position.longitudeDegrees == -180)
        #expect(try GeoClueFix.validated(Self.properties(longitude: .double(-180))).position.longitudeDegrees == -180)
        #expect(try GeoClueFix.validated(Self.properties(latitude: .double(90))).position.latitudeDegrees == 90)
        #expect(try GeoClueFix.validated(Self.properties(latitude: .double(-90))).position.latitudeDegrees == -90)
    }

    @Test func badAccuracyIsDroppedNotTheFix() throws {
        for bad in [DBusValue.double(-1), .double(.nan), .double(.infinity), .uint32(3)] {
            let fix = try GeoClueFix.validated(Self.properties(accuracy: bad))
            #expect(fix.horizontalAccuracyMetres == nil, "\(bad)")
        }
        // GeoClue maps HDOP ≤ 1 to an accuracy of 0 m: kept as given.
        #expect(try GeoClueFix.validated(Self.properties(accuracy: .double(0))).horizontalAccuracyMetres == 0)
    }

    @Test func timestampsAreCheckedNotTrusted() {
        #expect(GeoClueFix.timestamp(.structure([.uint64(10), .uint64(999_999)])) == 10.999999)
        #expect(GeoClueFix.timestamp(.structure([.uint64(0), .uint64(0)])) == nil)
        #expect(GeoClueFix.timestamp(.structure([.uint64(10), .uint64(1_000_000)])) == nil)
        #expect(GeoClueFix.timestamp(.structure([.uint64(10)])) == nil)
        #expect(GeoClueFix.timestamp(.structure([.int64(10), .int64(0)])) == nil)
        #expect(GeoClueFix.timestamp(nil) == nil)
    }
}
