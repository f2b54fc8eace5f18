// SPDX-License-Identifier: Apache-2.0
import QiblaDBus
import QiblaSensorProxy
import Testing

/// `CompassHeading` as iio-sensor-proxy sends it: degrees from magnetic north, -1 when unknown.
@Suite struct SensorProxyReadingTests {
    @Test func headingsAreReadAndNonsenseIsRejected() {
        typealias Row = (value: DBusValue?, reading: SensorProxyHeadingReading, why: String)
        let rows: [Row] = [
            (.double(0), .degrees(0), "north"),
            (.double(271.5), .degrees(271.5), "a heading"),
            (.variant(.double(90)), .degrees(90), "in a variant, as PropertiesChanged and Get carry it"),
            (.double(360), .degrees(0), "360 is north"),
            (.double(-1), .unknown, "the documented unknown"),
            (.double(-0.5), .unknown, "any negative value is not a heading"),
            (.double(.nan), .invalid("CompassHeading is nan"), "not finite"),
            (.double(.infinity), .invalid("CompassHeading is inf"), "not finite"),
            (.double(361), .invalid("CompassHeading 361.0° is outside 0...360"), "past a turn"),
            (.int32(90), .invalid("CompassHeading is \"i\", not a double"), "wrong type"),
            (nil, .invalid("no value"), "missing"),
        ]
        for row in rows {
            #expect(SensorProxyHeadingReading(row.value) == row.reading, "\(row.why)")
        }
    }

    @Test func reasonsReadAsSentences() {
        #expect(SensorProxyUnavailability.notOnBus.description.contains("net.hadess.SensorProxy"))
        #expect(SensorProxyUnavailability.noAnswer("ClaimCompass within 10.0 s").description
            == "iio-sensor-proxy did not answer ClaimCompass within 10.0 s")
    }
}
