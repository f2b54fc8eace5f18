// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaInterface
import Testing
@testable import QiblaDaemon

/// Flat phone, top edge at `headingDegrees`: (magnetic µT, acceleration m/s²) in the device frame
/// for a field of `fieldMicrotesla` dipping `inclinationDegrees`.
func flatReadings(headingDegrees: Double, fieldMicrotesla: Double, inclinationDegrees: Double) -> (Vector3, Vector3) {
    let i = Angle.radians(inclinationDegrees)
    let world = Vector3(0, fieldMicrotesla * cos(i), -fieldMicrotesla * sin(i))
    let toDevice = Matrix3.rotationZ(degrees: -headingDegrees).transposed
    return (toDevice * world, Vector3(0, 0, 9.80665))
}

let london = GeodeticPosition(uncheckedLatitude: 51.5074, longitude: -0.1278)
/// 2026-01-01T00:00:00Z.
let newYear2026 = 1_767_225_600.0

@Suite struct ClaimModelTests {
    @Test func theFirstClaimStartsAndTheLastReleaseStops() {
        var claims = ClaimModel()
        let r1 = claims.claim(by: ":1.1")
        #expect(r1 == .firstClaim)
        let r2 = claims.claim(by: ":1.1")
        #expect(r2 == .none, "a second claim by the same client is a no-op")
        let r3 = claims.claim(by: ":1.2")
        #expect(r3 == .none)
        let r4 = claims.release(by: ":1.9")
        #expect(r4 == .none, "releasing without a claim is a no-op")
        let r5 = claims.release(by: ":1.1")
        #expect(r5 == .none)
        #expect(claims.isClaimed)
        let r6 = claims.release(by: ":1.2")
        #expect(r6 == .lastRelease)
        #expect(!claims.isClaimed && claims.holders.isEmpty)
    }
}

@Suite struct LocationModelTests {
    func fix(_ lat: Double, _ lon: Double, accuracy: Double? = 5, height: Double = 0, at t: Double = 100) -> Location {
        Location(position: GeodeticPosition(uncheckedLatitude: lat, longitude: lon, heightMetres: height),
                 horizontalAccuracyMetres: accuracy, timestampUnixSeconds: t)
    }

    @Test func aLiveFixWinsOverManualWhichWinsOverLastKnown() {
        var m = LocationModel()
        #expect(m.current == nil)
        let r7 = m.apply(.restored(manual: nil, lastKnown: fix(1, 1)))
        #expect(r7)
        #expect(m.current?.source == .lastKnown)
        let r8 = m.apply(.manualSet(fix(2, 2, accuracy: nil)))
        #expect(r8)
        #expect(m.current?.source == .manual)
        let r9 = m.apply(.liveFix(fix(3, 3), from: .gpsd))
        #expect(r9)
        #expect(m.current?.source == .gpsd && m.current?.location == fix(3, 3))
        let r10 = m.apply(.liveFixLost)
        #expect(r10)
        #expect(m.current?.source == .manual, "losing the fix falls back to the manual location")
        #expect(m.lastKnown == fix(3, 3))
        let r11 = m.apply(.manualSet(nil))
        #expect(r11)
        #expect(m.current?.source == .lastKnown && m.current?.location == fix(3, 3))
    }

    @Test func aMoveUnderFiveMetresIsNotRepublishedButIsRemembered() {
        var m = LocationModel()
        m.apply(.liveFix(fix(51.5, 0), from: .gpsd))
        // 0.00003° of latitude ≈ 3.3 m; 0.00006° ≈ 6.7 m.
        let r12 = m.apply(.liveFix(fix(51.50003, 0, at: 101), from: .gpsd))
        #expect(!r12)
        #expect(m.liveFix == fix(51.5, 0))
        #expect(m.lastKnown == fix(51.50003, 0, at: 101) && m.lastKnownIsUnsaved)
        let r13 = m.apply(.liveFix(fix(51.50006, 0, at: 102), from: .gpsd))
        #expect(r13)
        #expect(m.liveFix?.position.latitudeDegrees == 51.50006)
    }

    @Test func significanceCountsDistanceHeightAndAccuracy() {
        let base = fix(-33.9, 18.4, accuracy: 10)
        #expect(LocationModel.isSignificantMove(from: nil, to: base))
        #expect(!LocationModel.isSignificantMove(from: base, to: fix(-33.9, 18.40004, accuracy: 10)), "≈ 3.7 m east")
        #expect(LocationModel.isSignificantMove(from: base, to: fix(-33.9, 18.40006, accuracy: 10)), "≈ 5.5 m east")
        #expect(LocationModel.isSignificantMove(from: base, to: fix(-33.9, 18.4, accuracy: 10, height: 50)))
        // A 2D fix (no height) followed by a 3D one 45 m up: the height is news.
        var twoD = base
        twoD.hasHeight = false
        #expect(LocationModel.isSignificantMove(from: twoD, to: fix(-33.9, 18.4, accuracy: 10, height: 45)))
        #expect(!LocationModel.isSignificantMove(from: base, to: fix(-33.9, 18.4, accuracy: 14)))
        #expect(LocationModel.isSignificantMove(from: base, to: fix(-33.9, 18.4, accuracy: 15)))
        #expect(LocationModel.isSignificantMove(from: base, to: fix(-33.9, 18.4, accuracy: nil)))
        // Across the antimeridian the distance is short, not 360°.
        #expect(!LocationModel.isSignificantMove(from: fix(0, 179.99999), to: fix(0, -179.99999)))
    }

    @Test func savingClearsTheUnsavedFlagOnlyForTheValueWritten() {
        var m = LocationModel()
        m.apply(.liveFix(fix(10, 10), from: .gpsd))
        m.apply(.liveFix(fix(10, 11, at: 200), from: .gpsd))
        #expect(m.lastKnownIsUnsaved)
        m.apply(.lastKnownSaved(fix(10, 10)))
        #expect(m.lastKnownIsUnsaved, "an older write does not count")
        m.apply(.lastKnownSaved(fix(10, 11, at: 200)))
        #expect(!m.lastKnownIsUnsaved)
    }
}

@Suite struct CompassModelTests {
    let field = MagneticModel.wmm2025.field(at: london, decimalYear: 2026.0)

    func feed(_ m: inout CompassModel, heading: Double, field f: Double = 49, dip: Double = 66.5,
              from t0: Double, count: Int, step: Double = 0.05, expected: MagneticField?) {
        let (mag, acc) = flatReadings(headingDegrees: heading, fieldMicrotesla: f, inclinationDegrees: dip)
        for i in 0..<count {
            m.apply(.acceleration(acc, timeSeconds: t0 + Double(i) * step), expectedField: expected)
            m.apply(.magneticField(mag, timeSeconds: t0 + Double(i) * step), expectedField: expected)
        }
    }

    @Test func samplesGiveAHeadingWithAnAccuracy() {
        var m = CompassModel()
        m.apply(.sensorsAvailable(hasAccelerometer: true), expectedField: field)
        #expect(m.state.hasCompass && m.state.magneticHeadingDegrees.isNaN)
        feed(&m, heading: 120, field: field.totalNanotesla / 1000, dip: field.inclinationDegrees,
             from: 0, count: 20, expected: field)
        #expect(abs(m.state.magneticHeadingDegrees - 120) < 1e-6)
        #expect(m.state.axis == .top)
        #expect(m.state.headingErrorDegrees.isFinite && m.state.accuracy != .unknown)
        #expect(!m.state.magneticInterference)
    }

    @Test func rejectedSamplesWithdrawTheHeadingOnlyAfterTheGrace() {
        var m = CompassModel()
        feed(&m, heading: 45, from: 0, count: 10, expected: field)
        #expect(abs(m.state.magneticHeadingDegrees - 45) < 1e-6)
        // Free fall: no gravity, so "up" is unknown; every sample is rejected.
        let (mag, _) = flatReadings(headingDegrees: 45, fieldMicrotesla: 49, inclinationDegrees: 66.5)
        m.apply(.acceleration(.zero, timeSeconds: 0.5), expectedField: field)
        for i in 0..<19 {   // 0.9 s of rejections at 20 Hz
            m.apply(.magneticField(mag, timeSeconds: 1 + Double(i) * 0.05), expectedField: field)
        }
        #expect(abs(m.state.magneticHeadingDegrees - 45) < 1e-6, "within the 1 s grace the heading stays")
        #expect(m.lastRejection != nil)
        m.apply(.magneticField(mag, timeSeconds: 2.0), expectedField: field)
        #expect(m.state.magneticHeadingDegrees.isNaN && m.state.headingErrorDegrees.isNaN)
        #expect(m.state.accuracy == .unreliable)
        // A good sample ends the streak.
        feed(&m, heading: 50, from: 3, count: 1, expected: field)
        #expect(m.lastRejection == nil && abs(m.state.magneticHeadingDegrees - 50) < 1e-6)
    }

    @Test func withoutAnAccelerometerSampleNoHeadingIsMade() {
        var m = CompassModel()
        let (mag, _) = flatReadings(headingDegrees: 10, fieldMicrotesla: 49, inclinationDegrees: 66.5)
        m.apply(.magneticField(mag, timeSeconds: 0), expectedField: field)
        #expect(m.state.magneticHeadingDegrees.isNaN)
    }

    @Test func losingTheSensorsForgetsTheHeading() {
        var m = CompassModel()
        m.apply(.sensorsAvailable(hasAccelerometer: true), expectedField: field)
        feed(&m, heading: 200, from: 0, count: 5, expected: field)
        m.apply(.sensorsUnavailable, expectedField: field)
        #expect(!m.state.hasCompass && m.state.magneticHeadingDegrees.isNaN && m.state.axis == .none)
        #expect(m.state.accuracy == .unknown)
        m.apply(.sensorsAvailable(hasAccelerometer: false), expectedField: field)
        #expect(!m.state.hasCompass, "a magnetometer alone is no compass")
    }

    /// Issue 22: the accelerometer vanishes while the compass is claimed (its sysfs directory
    /// removed): no heading with the class it had, HasCompass false, and the magnetometer's next
    /// samples publish nothing until gravity is back.
    @Test func losingTheAccelerometerWhileClaimedWithdrawsTheHeadingAndItsClass() {
        var m = CompassModel()
        m.apply(.sensorsAvailable(hasAccelerometer: true), expectedField: field)
        feed(&m, heading: 200, from: 0, count: 10, expected: field)
        #expect(m.state.hasCompass && m.state.magneticHeadingDegrees.isFinite && m.state.accuracy != .unknown)
        m.apply(.sensorsAvailable(hasAccelerometer: false), expectedField: field)
        #expect(!m.state.hasCompass && m.state.magneticHeadingDegrees.isNaN && m.state.accuracy == .unknown)
        let (mag, _) = flatReadings(headingDegrees: 200, fieldMicrotesla: 49, inclinationDegrees: 66.5)
        m.apply(.magneticField(mag, timeSeconds: 5), expectedField: field)
        #expect(m.state.magneticHeadingDegrees.isNaN && m.state.accuracy == .unknown,
                "no untilted heading from a stale gravity sample")
        m.apply(.sensorsAvailable(hasAccelerometer: true), expectedField: field)
        feed(&m, heading: 120, from: 10, count: 10, expected: field)
        #expect(m.state.hasCompass && m.state.magneticHeadingDegrees.isFinite)
    }

    /// The first position north along 139° W whose WMM2025 zone is `zone` (the north dip pole is near 86° N).
    func position(in zone: MagneticZone) throws -> (GeodeticPosition, MagneticField) {
        for step in 0...800 {
            let p = GeodeticPosition(uncheckedLatitude: 78 + Double(step) * 0.01, longitude: -139)
            let f = MagneticModel.wmm2025.field(at: p, decimalYear: 2026.0)
            if f.zone == zone { return (p, f) }
        }
        throw CancellationError()
    }

    /// Feeds a clean sensor turning through many directions at `field`, so the calibrator sees the
    /// field match (a factory-calibrated magnetometer), then a still phone.
    func feedMatching(_ m: inout CompassModel, _ f: MagneticField?, reference: MagneticField) {
        for (i, heading) in stride(from: 0.0, to: 360, by: 10).enumerated() {
            feed(&m, heading: heading, field: reference.totalNanotesla / 1000, dip: reference.inclinationDegrees,
                 from: Double(i) * 0.5, count: 10, expected: f)
        }
    }

    @Test(arguments: [MagneticZone.caution, .blackout])
    func theMagneticZoneCapsTheAccuracy(zone: MagneticZone) throws {
        let (_, f) = try position(in: zone)
        var m = CompassModel()
        feedMatching(&m, f, reference: f)
        if zone == .blackout {
            // The field is so close to vertical that samples are rejected (or capped, if not).
            #expect(m.state.accuracy == .unreliable)
            #expect(m.lastAccuracyLimits.isEmpty || m.lastAccuracyLimits.contains(.blackoutZone))
        } else {
            #expect(m.lastAccuracyLimits.contains(.cautionZone))
            #expect(m.state.accuracy != .high && m.state.accuracy != .medium)
        }
    }

    @Test func withoutALocationTheAccuracyIsAtMostLow() {
        var m = CompassModel()
        feedMatching(&m, nil, reference: field)
        #expect(m.lastAccuracyLimits.contains(.noLocation))
        #expect(m.state.accuracy != .high && m.state.accuracy != .medium)
        #expect(m.state.magneticHeadingDegrees.isFinite, "the needle is shown even so")
    }

    @Test func aCleanSensorThatReadsTheExpectedFieldNeedsNoCalibration() {
        var m = CompassModel()
        feedMatching(&m, field, reference: field)
        #expect(!m.state.calibrationNeeded)
        #expect(m.state.accuracy == .medium || m.state.accuracy == .high)
        #expect(!m.state.magneticInterference)
    }

    @Test func aSensorReadingTwiceTheFieldNeedsCalibrationAndIsUnreliable() {
        var m = CompassModel()
        let (mag, acc) = flatReadings(headingDegrees: 30, fieldMicrotesla: 2 * field.totalNanotesla / 1000,
                                      inclinationDegrees: field.inclinationDegrees)
        for i in 0..<60 {
            m.apply(.acceleration(acc, timeSeconds: Double(i) * 0.05), expectedField: field)
            m.apply(.magneticField(mag + Vector3(Double(i % 3), 0, 0), timeSeconds: Double(i) * 0.05), expectedField: field)
        }
        #expect(m.state.calibrationNeeded)
        #expect(m.state.accuracy == .unreliable)
        #expect(abs(m.state.magneticHeadingDegrees - 30) < 5, "the uncorrected needle is still published")
        m.apply(.resetCalibration, expectedField: field)
        #expect(m.state.calibrationProgress == 0)
    }

    @Test func reconfiguringKeepsTheCalibrationAndChangesTheWindow() {
        var m = CompassModel()
        var c = CompassModel.Configuration()
        c.smoothingWindowSeconds = 2
        m.reconfigure(c)
        #expect(m.configuration.smoothingWindowSeconds == 2)
    }
}

@Suite struct PropertyPublisherTests {
    func properties(heading: Double = .nan, error: Double = .nan, latitude: Double = .nan) -> PublishedProperties {
        var p = PublishedProperties()
        p.heading = heading
        p.magneticHeading = heading
        p.headingError = error
        p.latitude = latitude
        return p
    }

    @Test func nothingIsSentBeforeTheNameIsOwned() {
        var publisher = PropertyPublisher()
        let r14 = publisher.update(properties(latitude: 1), nowSeconds: 0)
        #expect(r14.isEmpty)
        publisher.goLive()
        let r15 = publisher.update(properties(latitude: 1), nowSeconds: 0)
        #expect(r15.isEmpty, "already what clients read")
        let r16 = publisher.update(properties(latitude: 2), nowSeconds: 0)
        #expect(r16.immediate == [.latitude])
    }

    @Test func headingChangesBelowTheResolutionAreNotSent() {
        var publisher = PropertyPublisher()
        publisher.goLive()
        _ = publisher.update(properties(heading: 10, error: 3), nowSeconds: 0)
        let r17 = publisher.update(properties(heading: 10, error: 3), nowSeconds: 10)
        #expect(r17.isEmpty)
        let r18 = publisher.update(properties(heading: 10.09, error: 3.05), nowSeconds: 10)
        #expect(r18.isEmpty)
        let r19 = publisher.update(properties(heading: 10.15, error: 3.05), nowSeconds: 10)
        #expect(r19.heading == [.heading, .magneticHeading])
        // 359.95° → 0.02° is a turn of 0.07°: not a change worth a signal.
        _ = publisher.update(properties(heading: 359.95, error: 3), nowSeconds: 20)
        let r20 = publisher.update(properties(heading: 0.02, error: 3), nowSeconds: 30)
        #expect(r20.isEmpty)
        // HeadingError is a magnitude: 3 → 3.2 is sent.
        let r21 = publisher.update(properties(heading: 0.02, error: 3.2), nowSeconds: 40)
        #expect(r21.heading == [.headingError])
        // Known → unknown is always sent.
        let r22 = publisher.update(properties(heading: .nan, error: 3.2), nowSeconds: 50)
        #expect(r22.heading == [.heading, .magneticHeading])
    }

    @Test func theHeadingGroupIsRateLimitedButImmediateChangesAreNot() {
        var publisher = PropertyPublisher()
        publisher.configuration.maxSignalRateHertz = 10
        publisher.goLive()
        _ = publisher.update(properties(heading: 10), nowSeconds: 0)
        let r23 = publisher.update(properties(heading: 20), nowSeconds: 1)
        #expect(r23.heading == [.heading, .magneticHeading])
        let held = publisher.update(properties(heading: 30, latitude: 5), nowSeconds: 1.04)
        #expect(held.immediate == [.latitude] && held.heading.isEmpty)
        #expect(abs((held.retryAfterSeconds ?? 0) - 0.06) < 1e-9)
        let sent = publisher.update(properties(heading: 31, latitude: 5), nowSeconds: 1.1)
        #expect(sent.heading == [.heading, .magneticHeading] && sent.retryAfterSeconds == nil)
    }

    /// Issue 30: a fused heading is signalled up to 50 times a second by default, the magnetometer's
    /// moving average up to 10; `HeadingFused` itself goes out at once.
    @Test func aFusedHeadingIsSignalledAtItsOwnRate() {
        var publisher = PropertyPublisher()
        publisher.goLive()
        var fused = properties(heading: 10)
        fused.headingFused = true
        _ = publisher.update(fused, nowSeconds: 0)
        fused.heading = 20; fused.magneticHeading = 20
        let first = publisher.update(fused, nowSeconds: 1)
        #expect(first.heading == [.heading, .magneticHeading])
        fused.heading = 21; fused.magneticHeading = 21
        // 20 ms later: due at 50 Hz.
        #expect(publisher.update(fused, nowSeconds: 1.02).heading == [.heading, .magneticHeading])
        fused.heading = 22; fused.magneticHeading = 22
        // 10 ms later: held for the other 10 ms.
        let held = publisher.update(fused, nowSeconds: 1.03)
        #expect(held.heading.isEmpty && abs((held.retryAfterSeconds ?? 0) - 0.01) < 1e-9)
        // Unfused again (the phone rests, the gyroscope is off): 10 Hz.
        var plain = fused
        plain.headingFused = false
        plain.heading = 23; plain.magneticHeading = 23
        let switched = publisher.update(plain, nowSeconds: 1.05)
        #expect(switched.immediate == [.headingFused])
        #expect(switched.heading.isEmpty && abs((switched.retryAfterSeconds ?? 0) - 0.07) < 1e-9)
    }

    @Test func aHeadingChangeDueWithinTheSlackGoesOutNowInsteadOfArmingATimer() {
        var publisher = PropertyPublisher()
        publisher.configuration.maxSignalRateHertz = 10
        publisher.goLive()
        _ = publisher.update(properties(heading: 10), nowSeconds: 0)
        // 0.1 s interval: 5 ms of slack (the hand-off came 0.2 ms early, as a sampling thread's does).
        let early = publisher.update(properties(heading: 20), nowSeconds: 0.0998)
        #expect(early.heading == [.heading, .magneticHeading] && early.retryAfterSeconds == nil)
        // Beyond the slack the change is held, and the timer is for the rest of the interval.
        let held = publisher.update(properties(heading: 30), nowSeconds: 0.0998 + 0.094)
        #expect(held.heading.isEmpty)
        #expect(abs((held.retryAfterSeconds ?? 0) - 0.006) < 1e-9)
        // At 1 Hz the slack is still 5 ms, not a tenth of a second.
        var slow = PropertyPublisher()
        slow.configuration.maxSignalRateHertz = 1
        slow.goLive()
        _ = slow.update(properties(heading: 10), nowSeconds: 0)
        #expect(slow.update(properties(heading: 20), nowSeconds: 0.99).heading.isEmpty)
        #expect(!slow.update(properties(heading: 20), nowSeconds: 0.996).heading.isEmpty)
    }
}

@Suite struct DaemonModelTests {
    @Test func theTrueHeadingAndTheTurnComeFromTheModelsNotFromPublishedValues() throws {
        var model = DaemonModel()
        let manual = Location(position: london, timestampUnixSeconds: newYear2026)
        model.apply(.manualSet(manual), nowUnixSeconds: newYear2026)
        let place = try #require(model.place)
        let declination = place.answer.declinationDegrees
        let field = place.answer.field
        model.apply(.sensorsAvailable(hasAccelerometer: true), nowUnixSeconds: newYear2026)
        let (mag, acc) = flatReadings(headingDegrees: 100, fieldMicrotesla: field.totalNanotesla / 1000,
                                      inclinationDegrees: field.inclinationDegrees)
        model.apply(.acceleration(acc, timeSeconds: 1), nowUnixSeconds: newYear2026)
        model.apply(.magneticField(mag, timeSeconds: 1), nowUnixSeconds: newYear2026)
        let p = model.properties
        #expect(p.locationSource == .manual && p.altitude.isNaN && p.locationAccuracy.isNaN)
        #expect(abs(p.magneticHeading - 100) < 1e-6)
        #expect(abs(p.heading - Angle.normalized360(100 + declination)) < 1e-6)
        #expect(abs(p.qiblaRelativeBearing - Angle.turn(from: p.heading, to: p.qiblaBearing)) < 1e-9)
        #expect(abs(p.qiblaBearing - 118.987) < 0.01, "London's great-circle Qibla")
        #expect(p.locationTimestampMicroseconds == UInt64(newYear2026) * 1_000_000)
    }

    @Test func withoutALocationTheTrueHeadingIsUnknown() {
        var model = DaemonModel()
        let (mag, acc) = flatReadings(headingDegrees: 100, fieldMicrotesla: 49, inclinationDegrees: 66)
        model.apply(.acceleration(acc, timeSeconds: 1), nowUnixSeconds: newYear2026)
        model.apply(.magneticField(mag, timeSeconds: 1), nowUnixSeconds: newYear2026)
        let p = model.properties
        #expect(abs(p.magneticHeading - 100) < 1e-6)
        #expect(p.heading.isNaN && p.qiblaRelativeBearing.isNaN && p.declination.isNaN)
        #expect(p.compassAccuracy == .low || p.compassAccuracy == .unreliable, "no declination: at most low")
    }

    @Test func theDeclinationIsRecomputedWhenTheDayChanges() throws {
        var model = DaemonModel()
        model.apply(.manualSet(Location(position: london, timestampUnixSeconds: newYear2026)), nowUnixSeconds: newYear2026)
        let first = try #require(model.place)
        // A year later the secular variation has moved London's declination by about 0.2°.
        let later = newYear2026 + 365 * 86_400
        model.apply(.acceleration(Vector3(0, 0, 9.8), timeSeconds: 1), nowUnixSeconds: later)
        let second = try #require(model.place)
        #expect(second.dayNumber == first.dayNumber + 365)
        #expect(abs(second.answer.declinationDegrees - first.answer.declinationDegrees) > 0.05)
    }

    @Test func reconfiguringTheBearingModelRepublishesTheQibla() {
        var model = DaemonModel()
        model.apply(.manualSet(Location(position: london, timestampUnixSeconds: newYear2026)), nowUnixSeconds: newYear2026)
        let greatCircle = model.properties.qiblaBearing
        var configuration = DaemonModel.Configuration()
        configuration.qibla.bearingModel = .geodesic
        model.reconfigure(configuration, nowUnixSeconds: newYear2026)
        #expect(model.properties.qiblaBearing == model.properties.qiblaBearingGeodesic)
        #expect(abs(model.properties.qiblaBearing - greatCircle) > 0.01)
    }

    @Test func timestampsThatDoNotFitArePublishedAsNone() {
        #expect(DaemonModel.microseconds(-1) == 0)
        #expect(DaemonModel.microseconds(.infinity) == 0)
        #expect(DaemonModel.microseconds(1e300) == 0)
        #expect(DaemonModel.microseconds(1.5) == 1_500_000)
        #expect(DaemonModel.dayNumber(.nan) == 0)
    }
}

@Suite struct InterfaceTableTests {
    @Test func everyPropertyHasAValueOfItsSignature() {
        let p = PublishedProperties()
        for property in QiblaProperty.allCases {
            let signature = switch p[property] {
            case .double: "d"
            case .bool: "b"
            case .string: "s"
            case .uint64: "t"
            }
            #expect(signature == property.signature, "\(property)")
        }
        #expect(QiblaProperty.allCases.filter { $0.throttleGroup == .heading }
                == [.heading, .magneticHeading, .qiblaRelativeBearing, .headingError])
        #expect(QiblaProperty.version.throttleGroup == .constant)
    }

    @Test func nanEqualsNanButNothingElseDiffers() {
        #expect(PropertyValue.double(.nan) == .double(.nan))
        #expect(PropertyValue.double(0) != .double(.nan))
        #expect(PropertyValue.double(-0.0) == .double(0))
        #expect(PropertyValue.string("a") != .uint64(1))
    }
}
