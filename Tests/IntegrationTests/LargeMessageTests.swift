// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import QiblaDBus
import Testing
import TestSupport

/// Issue 33: memory comes back. One message up to the bus's limit (a private bus whose
/// `max_message_size` is 64 MiB, as a session bus allows far more) is refused, and afterwards
/// qiblad's resident set is back within 1 MB of what it was before. Comparisons within one run:
/// the same daemon's resident set before and after (VmRSS; RssAnon where the daemon has settled,
/// see below), each read after a round trip that follows the hostile call (the loop handles one
/// message at a time, so the hostile one has been dispatched and released by then).
@Suite struct LargeMessageTests {
    static let busLimitBytes = 64 << 20
    static let hostileBytes = 60 << 20

    /// VmRSS of `pid`, kilobytes.
    /// How many times the daemon has given back the pages of the calls it handled while unclaimed
    /// (`CodePageTrimmer.settleAfterIdleCall`; its debug line).
    static func idleCallTrims(_ q: QibladHarness) -> Int {
        q.log.components(separatedBy: "unclaimed: gave back the pages of the calls just handled").count - 1
    }

    static func residentKilobytes(_ pid: Int32) -> Int? { SoakTests.rssKilobytes(pid).map { Int($0) } }

    /// RssAnon of `pid`, kilobytes: what a kept buffer grows (`SoakTests.anonymousKilobytes`).
    static func anonymousKilobytes(_ pid: Int32) -> Int? { SoakTests.anonymousKilobytes(pid).map { Int($0) } }

    /// The hostile calls: the payload where each kind of call carries it.
    enum Shape: CaseIterable, CustomStringConvertible {
        /// A string to a method that takes none (wrong signature).
        case stringToClaim
        /// A byte array to a method that takes none: decoded value by value, this one cost
        /// 1.9 GB and 3.5 minutes before issue 33.
        case byteArrayToClaim
        /// `Properties.Get` with its own signature, the interface name 60 MiB long.
        case longInterfaceNameToGet
        /// A 60 MiB string to a method that does not exist.
        case stringToUnknownMethod
        /// `CheckHeadingWithSun` (signature `sb`) with a 60 MiB alignment.
        case longAlignmentToCheckWithSun

        var description: String {
            switch self {
            case .stringToClaim: "s to ClaimCompass"
            case .byteArrayToClaim: "ay to ClaimCompass"
            case .longInterfaceNameToGet: "Get(ss) with a long interface name"
            case .stringToUnknownMethod: "s to an unknown method"
            case .longAlignmentToCheckWithSun: "CheckHeadingWithSun(sb) with a long alignment"
            }
        }

        func message(bytes: Int) throws -> DBusMessage {
            let text = String(repeating: "x", count: bytes)
            func call(_ interface: String, _ member: String) -> DBusMessage {
                DBusMessage.methodCall(destination: QibladHarness.name, path: QibladHarness.path, interface: interface, member: member)
            }
            switch self {
            case .stringToClaim:
                let message = call(QibladHarness.interface, "ClaimCompass")
                try message.append(.string(text))
                return message
            case .byteArrayToClaim:
                let message = call(QibladHarness.interface, "ClaimCompass")
                try message.appendByteArray([UInt8](repeating: 7, count: bytes))
                return message
            case .longInterfaceNameToGet:
                let message = call("org.freedesktop.DBus.Properties", "Get")
                try message.append(.string(text), .string("Heading"))
                return message
            case .stringToUnknownMethod:
                let message = call(QibladHarness.interface, "NoSuchMethod")
                try message.append(.string(text))
                return message
            case .longAlignmentToCheckWithSun:
                let message = call(QibladHarness.interface, "CheckHeadingWithSun")
                try message.append(.string(text), .bool(false))
                return message
            }
        }
    }

    /// Issue 37: after three claims, one 60 MiB string to `QiblaFor` (signature `dd`: refused).
    /// What stayed (3.6 → 5.4 MB on the release build) was not the message: a 4 KiB call did the
    /// same. It was the call path's code mapped again after the last release's trim (qiblad's
    /// own about 1.7 MB, ld.so's lazy binding, libdbus, libc) and, for the large one, 112 kB at the
    /// heap's top. Unclaimed, the daemon now gives them back a second after the last call of a
    /// burst: the resident set after the call and its trim is within 1 MB of the one before
    /// (release build, by hand: 3700 kB before, 5816 right after, 3704 after the trim).
    @Test func aHostileCallAfterThreeClaimsLeavesTheIdleResidentSet() throws {
        let (phone, q, client) = try Self.rig()
        defer { q.stop(); phone.stop() }
        let pid = try #require(q.daemon?.pid)
        let trims = { Self.idleCallTrims(q) }
        for round in 1...3 {
            try client.call("ClaimCompass")
            #expect(waitUntil(timeout: 15) { ((try? q.double("Heading")) ?? .nan).isFinite })
            usleep(3_500_000)
            // The release's own trim runs at the end of its loop iteration (no timer for it).
            try client.call("ReleaseCompass")
            #expect(waitUntil(timeout: 10) { q.log.components(separatedBy: "last compass claim released").count - 1 == round })
        }
        func qiblaFor(stringBytes: Int) throws -> String? {
            let message = DBusMessage.methodCall(destination: QibladHarness.name, path: QibladHarness.path,
                                                 interface: QibladHarness.interface, member: "QiblaFor")
            try message.append(.string(String(repeating: "x", count: stringBytes)))
            do { _ = try client.connection.call(message, timeoutMilliseconds: 60_000) } catch { return error.name }
            return nil
        }
        // The same call with 4 KiB first, and its trim: the baseline is an idle daemon that has
        // answered it (a trim in a moment with one thread also gives back the executable's
        // writable `.rodata`, about 1.1 MB in this debug build, which any call maps again).
        var trimmed = trims()
        #expect(try qiblaFor(stringBytes: 4096) == DBusError.invalidArgsName)
        _ = try client.get("LocationSource")
        #expect(waitUntil(timeout: 10) { trims() > trimmed }, "\(q.log)")
        let before = try #require(Self.residentKilobytes(pid))
        trimmed = trims()
        let refusal = try qiblaFor(stringBytes: Self.hostileBytes)
        let right = try #require(Self.residentKilobytes(pid))
        _ = try client.get("LocationSource")
        #expect(waitUntil(timeout: 10) { trims() > trimmed }, "\(q.log)")
        let after = try #require(Self.residentKilobytes(pid))
        print("60 MiB string to QiblaFor after three claims: refused with \(refusal ?? "no error"); VmRSS \(before) kB before, "
              + "\(right) kB right after, \(after) kB after the calls' pages were given back")
        #expect(refusal == DBusError.invalidArgsName)
        #expect(after - before <= 1024, "VmRSS grew from \(before) to \(after) kB with one 60 MiB string to QiblaFor")
        #expect(q.daemon?.isRunning == true)
    }

    /// A simulated PinePhone read by qiblad on a private bus whose message limit is 64 MiB, and a client.
    static func rig() throws -> (SimulatedPhone, QibladHarness, BusClient) {
        let bus = try PrivateBus(extra: """
            <limit name="max_message_size">\(busLimitBytes)</limit>
            <limit name="max_incoming_bytes">\(2 * busLimitBytes)</limit>
            <limit name="max_outgoing_bytes">\(2 * busLimitBytes)</limit>
            """)
        let london = try GeodeticPosition(latitudeDegrees: 51.5074, longitudeDegrees: -0.1278)
        let phone = try SimulatedPhone(phone: .pinephone, scene: scene(at: london, orientation: .init(headingDegrees: 10)))
        let q = try QibladHarness(arguments: ["--no-gpsd", "--sysfs-root", phone.sysfsRoot, "--location=51.5074,-0.1278"], bus: bus)
        try q.start()
        phone.start(rate: 20)
        return (phone, q, try BusClient(bus))
    }

    @Test func aMessageUpToTheBussLimitLeavesTheResidentSetWhereItWas() throws {
        let (phone, q, client) = try Self.rig()
        defer { q.stop(); phone.stop() }
        let pid = try #require(q.daemon?.pid)
        func roundTrip() throws { _ = try client.get("LocationSource") }
        func refused(_ message: DBusMessage) -> String? {
            do { _ = try client.connection.call(message, timeoutMilliseconds: 60_000); return nil } catch { return error.name }
        }
        // A claim until the first heading and past the trim after it settles, then the release
        // (which gives the claim's pages back): the daemon's ordinary life around the message.
        var releases = 0
        func claim() throws {
            try client.call("ClaimCompass")
            #expect(waitUntil(timeout: 15) { ((try? q.double("Heading")) ?? .nan).isFinite })
            usleep(3_500_000)
        }
        func release() throws {
            try client.call("ReleaseCompass")
            releases += 1
            let expected = releases
            #expect(waitUntil(timeout: 10) { q.log.components(separatedBy: "last compass claim released").count - 1 >= expected })
            try roundTrip()
        }
        // The same calls with small payloads first, idle and claimed, and two claims, so the code
        // they run has been mapped (and given back) once before the baseline is read.
        for shape in Shape.allCases {
            #expect(refused(try shape.message(bytes: 4096)) != nil, "\(shape): a small hostile call is refused")
        }
        try claim()
        for shape in Shape.allCases { _ = refused(try shape.message(bytes: 4096)) }
        try release()
        try claim()
        try release()
        // Each shape idle (the loop's thread reads it: the main arena); the two to ClaimCompass
        // also claimed (the sampling thread may read it while it borrows the loop: its own arena).
        //
        // `before` and `after` are read in one settled state: an idle daemon that has answered a
        // call and given back the pages the call mapped (the idle-call trim, a second after the
        // burst). Read at once after a call instead, they varied by about 1 MB with the moment
        // (which of the call path's code and the executable's writable `.rodata` was resident:
        // CI at a64ad1c read 7860 kB before and 8924 kB after in the first round, where the other
        // rounds read 8060 kB after), which is the size of the leak this test looks for.
        //
        // The settled comparison is of the anonymous resident set (RssAnon), where a kept buffer
        // shows; VmRSS is printed beside it. VmRSS also counts the file-backed pages (code,
        // libraries) that the trim gives back and the kernel may evict at any moment: once, on
        // a machine busy with a build, VmRSS read 6368 kB before where every other reading of
        // every run was 7696–7884 kB, and the test failed on a "growth" of 1.5 MB it had not made.
        let trims = { Self.idleCallTrims(q) }
        func settled() throws -> (resident: Int, anonymous: Int) {
            let trimmed = trims()
            try roundTrip()
            #expect(waitUntil(timeout: 10) { trims() > trimmed }, "the idle call's trim")
            return (try #require(Self.residentKilobytes(pid)), try #require(Self.anonymousKilobytes(pid)))
        }
        for shape in Shape.allCases {
            for claimed in [false, true] where !claimed || shape == .stringToClaim || shape == .byteArrayToClaim {
                // The same call with 4 KiB first: the baseline is a daemon that has just answered
                // it. `atOnce` is read like `right` (no trim between), for the message's own buffers.
                _ = refused(try shape.message(bytes: 4096))
                try roundTrip()
                let atOnce = try #require(Self.residentKilobytes(pid))
                let before = try settled()
                if claimed { try claim() }
                let message = try shape.message(bytes: Self.hostileBytes)
                let error = refused(message)
                try roundTrip()
                var right = try #require(Self.residentKilobytes(pid))
                if !claimed {
                    // Then a third of it: glibc raises its mmap threshold to the size of a large
                    // block freed (up to 32 MiB), so without a fixed threshold this one's buffers
                    // came from the heap and stayed (+20 MB, measured on the release build).
                    _ = refused(try shape.message(bytes: Self.hostileBytes / 3))
                    try roundTrip()
                    right = max(right, try #require(Self.residentKilobytes(pid)))
                }
                if !claimed { try claim() }
                try release()
                let after = try settled()
                print("\(shape), 60 MiB\(claimed ? ", claimed" : " then 20 MiB, idle"): refused with \(error ?? "no error"); "
                      + "VmRSS \(atOnce) kB right after the 4 KiB call, \(right) kB right after (the larger); "
                      + "settled \(before.resident) kB before, \(after.resident) kB after the release "
                      + "(RssAnon \(before.anonymous) kB, \(after.anonymous) kB)")
                #expect(error == DBusError.invalidArgsName || error == DBusError.unknownMethodName,
                        "\(shape): a 60 MiB call is refused at once (not answered, nor timed out)")
                if !claimed {
                    // Both unsettled, so the margin holds the call path's pages (up to about 2 MB,
                    // `CodePageTrimmer.settleAfterIdleCall`); the failure it guards against is +20 MB.
                    #expect(right - atOnce <= 4096, "\(shape): VmRSS grew from \(atOnce) to \(right) kB with one 60 MiB message")
                }
                #expect(after.anonymous - before.anonymous <= 1024,
                        "\(shape): RssAnon grew from \(before.anonymous) to \(after.anonymous) kB after one 60 MiB message")
            }
        }
        #expect(q.daemon?.isRunning == true)
    }
}
