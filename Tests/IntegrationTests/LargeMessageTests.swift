// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaDBus
import Testing
import TestSupport

/// Issue 33: memory comes back. One message up to the bus's limit (a private bus whose
/// `max_message_size` is 64 MiB, as a session bus allows far more) is refused, and afterwards
/// qiblad's resident set is back within 1 MB of what it was before. Comparisons within one run:
/// the same daemon's VmRSS before and after, each read after a round trip that follows the
/// hostile call (the loop handles one message at a time, so the hostile one has been dispatched
/// and released by then).
@Suite struct LargeMessageTests {
    static let busLimitBytes = 64 << 20
    static let hostileBytes = 60 << 20

    /// VmRSS of `pid`, kilobytes.
    static func residentKilobytes(_ pid: Int32) -> Int? { SoakTests.rssKilobytes(pid).map { Int($0) } }

    /// The hostile calls: the payload where each kind of call carries it.
    enum Shape: CaseIterable, CustomStringConvertible {
        /// A string to a method that takes none (wrong signature).
        case stringToClaim
        /// `Properties.Get` with its own signature, the interface name 60 MiB long.
        case longInterfaceNameToGet
        /// A 60 MiB string to a method that does not exist.
        case stringToUnknownMethod
        /// `CheckHeadingWithSun` (signature `sb`) with a 60 MiB alignment.
        case longAlignmentToCheckWithSun

        var description: String {
            switch self {
            case .stringToClaim: "s to ClaimCompass"
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

    @Test func aMessageUpToTheBussLimitLeavesTheResidentSetWhereItWas() throws {
        let bus = try PrivateBus(extra: """
            <limit name="max_message_size">\(Self.busLimitBytes)</limit>
            <limit name="max_incoming_bytes">\(2 * Self.busLimitBytes)</limit>
            <limit name="max_outgoing_bytes">\(2 * Self.busLimitBytes)</limit>
            """)
        let q = try QibladHarness(bus: bus); defer { q.stop() }
        try q.start()
        let pid = try #require(q.daemon?.pid)
        let client = try BusClient(bus)
        func roundTrip() throws { _ = try client.get("LocationSource") }
        func refused(_ message: DBusMessage) -> String? {
            do { _ = try client.connection.call(message, timeoutMilliseconds: 60_000); return nil } catch { return error.name }
        }
        // The same calls with small payloads first, so the code they run is mapped before the
        // baseline is read (the daemon gives its code pages back after start-up).
        for shape in Shape.allCases {
            #expect(refused(try shape.message(bytes: 4096)) != nil, "\(shape): a small hostile call is refused")
        }
        try roundTrip()
        for shape in Shape.allCases {
            let before = try #require(Self.residentKilobytes(pid))
            let message = try shape.message(bytes: Self.hostileBytes)
            let error = refused(message)
            try roundTrip()
            let after = try #require(Self.residentKilobytes(pid))
            print("\(shape), 60 MiB: refused with \(error ?? "no error"); VmRSS \(before) → \(after) kB")
            #expect(error != nil, "\(shape): a 60 MiB call is refused")
            #expect(after - before <= 1024, "\(shape): VmRSS grew from \(before) to \(after) kB after one 60 MiB message")
        }
        #expect(q.daemon?.isRunning == true)
        #expect(try q.string("LocationSource") == "none")
    }
}
