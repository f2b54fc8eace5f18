// SPDX-License-Identifier: Apache-2.0
// Geodesic edge cases with values from GeographicLib 2.1 (Geodesic.WGS84.Inverse).
import Testing
@testable import QiblaCore

@Suite("Geodesic edge cases")
struct GeodesicEdgeCaseTests {
    let geodesic = Geodesic.wgs84

    func position(_ latitude: Double, _ longitude: Double) throws -> GeodeticPosition {
        try GeodeticPosition(latitudeDegrees: latitude, longitudeDegrees: longitude)
    }

    @Test("WGS84 constants")
    func constants() {
        #expect(geodesic.equatorialRadiusMetres == 6_378_137)
        #expect(geodesic.flattening == 1 / 298.257_223_563)
        #expect(abs(geodesic.polarRadiusMetres - 6_356_752.314245179) < 1e-6)
    }

    @Test("coincident points: zero distance, finite azimuths")
    func coincident() throws {
        for (lat, lon) in [(0.0, 0.0), (45.0, 10.0), (-89.0, -179.0), (90.0, 0.0), (-90.0, 123.0)] {
            let p = try position(lat, lon)
            let r = geodesic.inverse(from: p, to: p)
            #expect(r.distanceMetres == 0)
            #expect(r.initialAzimuthDegrees.isFinite && r.finalAzimuthDegrees.isFinite)
        }
    }

    @Test("equatorial antipodes go over a pole (meridian shorter than the equator)")
    func equatorialAntipodes() throws {
        let r = geodesic.inverse(from: try position(0, 0), to: try position(0, -180))
        #expect(abs(r.distanceMetres - 20_003_931.458625447) < 1e-6)
        #expect(abs(r.initialAzimuthDegrees) < 1e-12 || abs(abs(r.initialAzimuthDegrees) - 180) < 1e-12)
    }

    @Test("equatorial pairs beyond (1 − f)·180° leave the equator")
    func nearlyAntipodalEquatorial() throws {
        let r = geodesic.inverse(from: try position(0, 0), to: try position(0, 179.5))
        #expect(abs(r.distanceMetres - 19_980_861.908890963) < 1e-6)
        #expect(abs(r.initialAzimuthDegrees - 55.966495140158635) < 1e-6)
        #expect(abs(r.finalAzimuthDegrees - 124.03350485984137) < 1e-6)
        let along = geodesic.inverse(from: try position(0, 0), to: try position(0, 179))
        #expect(abs(along.distanceMetres - 19_926_188.85199597) < 1e-6)
        #expect(along.initialAzimuthDegrees == 90 && along.finalAzimuthDegrees == 90)
    }

    @Test("pole to pole")
    func poleToPole() throws {
        let r = geodesic.inverse(from: try position(90, 0), to: try position(-90, 0))
        #expect(abs(r.distanceMetres - 20_003_931.458625447) < 1e-6)
        #expect(r.initialAzimuthDegrees == 180 && r.finalAzimuthDegrees == 180)
    }

    @Test("nearly equatorial long line keeps full precision (regression)")
    func nearlyEquatorial() throws {
        let r = geodesic.inverse(
            from: try position(9.397450425810525e-05, 33.73516150272698),
            to: try position(-8.391261180045048e-05, 113.44704723124681))
        #expect(abs(r.distanceMetres - 8_873_486.529488537) < 1e-6)
        #expect(abs(r.initialAzimuthDegrees - 90.00010147495874) < 1e-9)
        #expect(abs(r.finalAzimuthDegrees - 90.00010988660581) < 1e-9)
    }

    @Test("swapping the end points reverses the azimuths")
    func reversal() throws {
        let london = try position(51.5074, -0.1278)
        let forward = geodesic.inverse(from: london, to: Qibla.defaultKaaba)
        let backward = geodesic.inverse(from: Qibla.defaultKaaba, to: london)
        #expect(abs(forward.distanceMetres - 4_794_752.668858135) < 1e-6)
        #expect(abs(forward.initialAzimuthDegrees - 118.86840285233768) < 1e-9)
        #expect(abs(forward.finalAzimuthDegrees - 144.09371510145763) < 1e-9)
        #expect(forward.distanceMetres == backward.distanceMetres)
        #expect(angularError(backward.initialAzimuthDegrees, forward.finalAzimuthDegrees + 180) < 1e-9)
        #expect(angularError(backward.finalAzimuthDegrees, forward.initialAzimuthDegrees + 180) < 1e-9)
    }

    @Test("great-circle bearing: undefined only for coincident or antipodal points")
    func greatCircle() throws {
        #expect(GreatCircle.initialBearingDegrees(from: try position(10, 20), to: try position(10, 20)) == nil)
        #expect(GreatCircle.initialBearingDegrees(from: try position(10, 20), to: try position(-10, -160)) == nil)
        #expect(GreatCircle.initialBearingDegrees(from: try position(0, 0), to: try position(0, 90)) == 90)
        #expect(GreatCircle.initialBearingDegrees(from: try position(0, 0), to: try position(10, 0)) == 0)
        #expect(GreatCircle.initialBearingDegrees(from: try position(0, 0), to: try position(-10, 0)) == 180)
        #expect(GreatCircle.initialBearingDegrees(from: try position(0, 0), to: try position(0, -90)) == 270)
    }

    @Test("sin/cos of degrees are exact at quadrants")
    func sinCosDegrees() {
        #expect(Geodesic.sinCosDegrees(90) == (1, 0))
        #expect(Geodesic.sinCosDegrees(-90) == (-1, 0))
        #expect(Geodesic.sinCosDegrees(180) == (0, -1))
        #expect(Geodesic.sinCosDegrees(270) == (-1, 0))
        #expect(Geodesic.sinCosDegrees(360) == (0, 1))
    }

    @Test("longitude difference is exact across the antimeridian")
    func longitudeDifference() {
        #expect(Geodesic.longitudeDifferenceDegrees(from: 179.9999, to: -179.9999) > 0)
        #expect(abs(Geodesic.longitudeDifferenceDegrees(from: 179.9999, to: -179.9999) - 0.0002) < 1e-12)
        #expect(Geodesic.longitudeDifferenceDegrees(from: -179.9999, to: 179.9999) < 0)
        #expect(Geodesic.longitudeDifferenceDegrees(from: 0, to: -180) == -180)
    }
}
