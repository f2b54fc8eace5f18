// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import Testing
import TestSupport

/// The sun's D-Bus members against the real qiblad on a private bus (issue 15).
@Suite(.serialized) struct SunDBusTests {
    /// The `data` array of a `busctl --json=short call` reply.
    static func replyData(_ text: String) -> [Any] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
              let data = object["data"] as? [Any] else { return [] }
        return data
    }

    /// 2026-06-21T00:00:00Z in microseconds.
    static let midsummer2026Micro: UInt64 = 1_782_000_000 * 1_000_000

    @Test func sunPositionQiblaSunTimesAndKaabaPassagesAnswerLikeQiblaCore() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.start()
        let london = GeodeticPosition(uncheckedLatitude: 51.5074, longitude: -0.1278)
        // Noon in London, 21 June 2026.
        let noon = Self.midsummer2026Micro + 12 * 3_600_000_000
        let r = try q.call("SunPosition", "ddt", ["51.5074", "-0.1278", "\(noon)"])
        #expect(r.status == 0, "\(r.stderr)")
        let v = doubles(fromBusctl: r.stdout)
        try #require(v.count == 2)
        let expected = try #require(SolarPositionAlgorithm.position(at: Double(noon) / 1e6, for: london))
        #expect(abs(v[0] - expected.azimuthDegrees) < 1e-9 && abs(v[1] - expected.elevationDegrees) < 1e-9)

        let times = try q.call("QiblaSunTimes", "ddt", ["51.5074", "-0.1278", "\(Self.midsummer2026Micro)"])
        #expect(times.status == 0, "\(times.stderr)")
        let events = try #require(Self.replyData(times.stdout).first as? [[Any]])
        #expect(events.map { $0[1] as? String } == ["sun", "shadow"])
        let core = try #require(QiblaSunSearch().times(at: london, from: Double(Self.midsummer2026Micro) / 1e6))
        for (event, reference) in zip(events, core.events) {
            let micro = try #require((event[0] as? NSNumber)?.doubleValue)
            #expect(abs(micro / 1e6 - reference.unixSeconds) < 1)
            #expect(abs(((event[2] as? NSNumber)?.doubleValue ?? .nan) - reference.elevationDegrees) < 0.01)
        }
        // At the Kaaba: an empty array, not an error.
        let kaaba = try q.call("QiblaSunTimes", "ddt", ["21.4225241", "39.8261818", "\(Self.midsummer2026Micro)"])
        #expect(kaaba.status == 0 && (Self.replyData(kaaba.stdout).first as? [Any])?.isEmpty == true, "\(kaaba.stdout)")

        let passages = try q.call("KaabaSunPassages", "i", ["2026"])
        #expect(passages.status == 0, "\(passages.stderr)")
        let list = try #require(Self.replyData(passages.stdout).first as? [[Any]])
        #expect(list.map { $0[1] as? String } == ["nadir", "zenith", "zenith", "nadir"])
    }

    @Test func invalidSunArgumentsGiveInvalidArgument() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.start()
        for (method, signature, arguments) in [
            ("SunPosition", "ddt", ["91", "0", "\(Self.midsummer2026Micro)"]),
            ("SunPosition", "ddt", ["nan", "0", "\(Self.midsummer2026Micro)"]),
            ("SunPosition", "ddt", ["0", "0", "\(UInt64(6_000_000_000) * 1_000_000)"]),
            ("QiblaSunTimes", "ddt", ["0", "inf", "0"]),
            ("QiblaSunTimes", "ddt", ["0", "0", "18446744073709551615"]),
            ("KaabaSunPassages", "i", ["1800"]),
            ("KaabaSunPassages", "i", ["2150"]),
            ("CheckHeadingWithSun", "sb", ["moon", "false"]),
        ] {
            let r = try q.call(method, signature, arguments)
            #expect(r.status != 0, "\(method)(\(arguments)) was accepted")
            #expect(r.stderr.contains("InvalidArgument") || r.stderr.contains("outside") || r.stderr.contains("must"),
                    "\(method)(\(arguments)): \(r.stderr)")
        }
        #expect(q.daemon?.isRunning == true)
    }

    @Test func nextQiblaSunTimeFollowsTheLocationAndTheCheckNeedsAClaim() throws {
        let q = try QibladHarness(); defer { q.stop() }
        try q.start()
        #expect(try q.uint64("NextQiblaSunTime") == 0)
        #expect(try q.string("NextQiblaSunKind") == "none")
        // Due north of the Kaaba (Trabzon's latitude): the Qibla is south, and the sun stands there
        // at every noon of the year.
        #expect(try q.call("SetManualLocation", "dd", ["41.0", "39.8261818"]).status == 0)
        let next = try q.uint64("NextQiblaSunTime")
        let now = UInt64(Date().timeIntervalSince1970 * 1e6)
        #expect(next > now && next < now + 86_400_000_000, "\(next)")
        #expect(try q.string("NextQiblaSunKind") == "sun")
        // At the Kaaba there is none.
        #expect(try q.call("SetManualLocation", "dd", ["21.4225241", "39.8261818"]).status == 0)
        #expect(try q.uint64("NextQiblaSunTime") == 0)
        #expect(try q.string("NextQiblaSunKind") == "none")
        // No claim: the check is refused with NotAvailable.
        let check = try q.call("CheckHeadingWithSun", "sb", ["sun", "false"])
        #expect(check.status != 0)
        #expect(check.stderr.contains("NotAvailable") || check.stderr.contains("claim"), "\(check.stderr)")
    }

    @Test func qiblactlSunPrintsTheDaysTimesInLocalTimeAndJSON() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["TZ"] = "UTC"
        let text = try run(product("qiblactl").path, ["sun", "51.5074", "-0.1278", "--date", "2026-06-21"], environment: environment)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("09:28  sun"), "\(text.stdout)")
        #expect(text.stdout.contains("face the sun") && text.stdout.contains("shadow of a vertical stick points to the Qibla"))
        #expect(text.stdout.contains("Next Kaaba passage: 2026-07-15 09:26"), "\(text.stdout)")
        let json = try run(product("qiblactl").path, ["sun", "21.4225241", "39.8261818", "--date", "2026-06-21", "--json"],
                           environment: environment)
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["none_reason"] as? String == "at-kaaba")
        #expect((object["times"] as? [Any])?.isEmpty == true)
        let bad = try run(product("qiblactl").path, ["sun", "1", "2", "--date", "2026-02-30"], environment: environment)
        #expect(bad.status == 2)
    }
}
