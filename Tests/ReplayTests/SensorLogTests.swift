// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaSensorLog
import Testing

@Suite struct SensorLogTests {
    @Test func parsesHeaderAndGroupsSamplesByTime() throws {
        let text = """
            # latitude = -33.9
            # longitude = 18.4
            # time = 2025-06-01T12:00:00Z
            # device = PinePhone
            0.000 accel 0 0 9.81
            0.000 gyro 0.01 -0.02 0
            0.000 magn 12.5 -3 -30
            0.020 magn 12.6 -3 -30
            # a comment between samples
            0.020 accel 0 0.1 9.8
            """
        let log = try SensorLog.parse(text)
        #expect(log.headerValue("device") == "PinePhone")
        #expect(log.instants.count == 2)
        #expect(log.instants[0].timeText == "0.000")
        #expect(log.instants[0].angularVelocity == Vector3(0.01, -0.02, 0))
        #expect(log.instants[1].magneticField == Vector3(12.6, -3, -30))
        #expect(log.instants[1].angularVelocity == nil)
        #expect(log.hasGyroscope)
        let position = try #require(try log.position())
        #expect(position.latitudeDegrees == -33.9 && position.longitudeDegrees == 18.4)
        #expect(try log.startUnixSeconds() == 1_748_779_200)
    }

    @Test(arguments: [
        ("0 accel 0 0", 1, "fields"),
        ("0 compass 0 0 1", 1, "KIND"),
        ("x accel 0 0 1", 1, "TIME"),
        ("0 accel nan 0 1", 1, "finite"),
        ("1 accel 0 0 1\n0.5 accel 0 0 1", 2, "backwards"),
        ("1 accel 0 0 1\n1 accel 0 0 1", 2, "second accel"),
        ("# bad key = 1\n0 accel 0 0 1", 1, "header"),
    ])
    func rejectsBadLinesWithTheirNumber(text: String, line: Int, words: String) {
        #expect {
            _ = try SensorLog.parse(text)
        } throws: { error in
            guard let error = error as? SensorLogError else { return false }
            return error.line == line && error.message.contains(words)
        }
    }

    @Test func headerCoordinatesAndTimeAreChecked() throws {
        #expect(throws: SensorLogError.self) { _ = try SensorLog.parse("# latitude = 95\n# longitude = 0\n").position() }
        #expect(throws: SensorLogError.self) { _ = try SensorLog.parse("# latitude = 10\n").position() }
        #expect(throws: SensorLogError.self) { _ = try SensorLog.parse("# time = yesterday\n").startUnixSeconds() }
        #expect(try SensorLog.parse("0 accel 0 0 1").position() == nil)
        // The gyroscope's own output rate: hertz, with or without the unit; anything else is said.
        #expect(try SensorLog.parse("# gyroscope_rate = 285.7143 Hz\n").gyroscopeOutputHertz() == 285.7143)
        #expect(try SensorLog.parse("# gyroscope_rate = 416\n").gyroscopeOutputHertz() == 416)
        #expect(try SensorLog.parse("0 gyro 0 0 1").gyroscopeOutputHertz() == nil)
        for bad in ["0", "-50 Hz", "fast", "nan"] {
            #expect {
                _ = try SensorLog.parse("# gyroscope_rate = \(bad)\n").gyroscopeOutputHertz()
            } throws: { error in (error as? SensorLogError)?.message.contains("gyroscope_rate") == true }
        }
        #expect(SensorLog.unixSeconds(iso8601: "2025-06-01T14:30:00.5+02:00") == 1_748_781_000.5)
        #expect(SensorLog.unixSeconds(iso8601: "2025-06-01") == 1_748_736_000)
        #expect(SensorLog.unixSeconds(iso8601: "2025-02-30T00:00:00Z") == nil)
        // The calendar the recorder writes its `time` with (Hinnant's civil_from_days).
        #expect(DecimalYear.civilDate(daysSinceEpoch: 20_240) == (2025, 6, 1))
        #expect(DecimalYear.civilDate(daysSinceEpoch: -1) == (1969, 12, 31))
        #expect(DecimalYear.civilDate(daysSinceEpoch: 11_016) == (2000, 2, 29))
    }

    @Test func writtenLinesReadBack() throws {
        let line = SensorLog.sampleLine(timeSeconds: 12.3456789, kind: .magn, Vector3(-0.0000004, 512.25, -33.125))
        #expect(line == "12.345679 magn 0.000000 512.250000 -33.125000")
        let log = try SensorLog.parse(SensorLog.headerLine(key: "latitude", value: "21.4") + "\n" + line)
        #expect(log.headerValue("latitude") == "21.4")
        #expect(log.instants.first?.magneticField == Vector3(0, 512.25, -33.125))
    }
}
