// SPDX-License-Identifier: Apache-2.0
// The lifetime of asynchronous calls (issue 13, the soak's LeakSanitizer report): what a pending
// call holds on its connection, and that it is completed and freed however the connection ends.
import Foundation
@testable import QiblaDBus
import QiblaEventLoop
import Testing
import TestSupport

/// Whether the Swift runtime has given `object` a side table, as it does when the first `weak`
/// reference to it is formed. The object's refcount word (the second word of every Swift heap
/// object) then holds the side table's address shifted right by 3 bits, with its two top bits set
/// (`UseSlowRC` and `SideTableMark`; swift/stdlib/public/SwiftShims/swift/shims/RefCount.h, 64-bit
/// layout). LeakSanitizer scans memory for plain pointers and cannot follow that one, so the side
/// table of an object still alive at exit is reported as a 32-byte direct leak
/// (swiftlang/swift-corelibs-xctest#342, llvm/llvm-project#56751). `nil` on a 32-bit target.
func hasWeakReferenceSideTable(_ object: AnyObject) -> Bool? {
    guard MemoryLayout<UInt>.size == 8 else { return nil }
    let refCounts = Unmanaged.passUnretained(object).toOpaque().load(fromByteOffset: 8, as: UInt64.self)
    return refCounts >> 62 == 0b11
}

@Suite struct PendingCallLifetimeTests {
    static func ping() -> DBusMessage {
        DBusMessage.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                               interface: "org.freedesktop.DBus.Peer", member: "Ping")
    }

    /// The probe itself, so that a change of the runtime's layout fails here instead of letting the
    /// next test pass for the wrong reason.
    @Test func theSideTableProbeSeesAWeakReference() throws {
        final class Target {}
        let target = Target()
        guard let before = hasWeakReferenceSideTable(target) else { return }
        #expect(!before)
        weak var observer: Target?  // assigned apart: `weak let` is Swift 6.2, Debian 13 has 6.0
        observer = target
        #expect(observer != nil)
        #expect(hasWeakReferenceSideTable(target) == true)
        withExtendedLifetime(target) {}
    }

    /// The daemon's bus connection lives until the process exits. Before the fix every async call
    /// held a `weak` reference to it, which gave it a side table that LeakSanitizer reported at exit
    /// (the soak's "32 bytes from swift_weakAssign in PendingReply.init"). A pending call now holds
    /// its connection `unowned`: the connection's `close()` (also run by its deinit) detaches every
    /// pending call before it goes, so none can outlive it and reach for it.
    @Test func asyncCallsGiveTheirConnectionNoWeakReferenceSideTable() throws {
        let bus = try startBus()
        let loop = try EventLoop()
        let client = try DBusConnection(.address(bus.address))
        defer { client.close() }
        client.attach(to: loop)
        var answered = 0
        for _ in 0..<3 {
            client.callAsync(Self.ping()) { if case .success = $0 { answered += 1 } }
        }
        #expect(try spin(loop) { answered == 3 })
        #expect(hasWeakReferenceSideTable(client.raw) != true,
                "a weak reference to the connection: LeakSanitizer reports its side table at exit")
    }

    /// A connection dropped with a call still pending, without `close()`: its deinit completes the
    /// call with `Disconnected` exactly once, frees the call's Swift box (and what its completion
    /// captured), and leaves nothing on the loop.
    @Test func aConnectionDroppedWithACallPendingCompletesAndFreesIt() throws {
        final class Witness {}
        let bus = try startBus()
        let loop = try EventLoop()
        let silent = try DBusConnection(.address(bus.address))  // never dispatches, so never answers
        defer { silent.close() }
        weak var witness: Witness?
        var results: [Result<DBusMessage, DBusError>] = []
        do {
            let strong = Witness()
            witness = strong
            let connection = try DBusConnection(.address(bus.address))
            connection.attach(to: loop)
            connection.callAsync(DBusMessage.methodCall(destination: silent.uniqueName, path: "/", interface: nil,
                                                        member: "Hang")) { result in
                _ = strong
                results.append(result)
            }
            #expect(try spin(loop, seconds: 0.3) { false } == false)
            #expect(results.isEmpty)
        }
        #expect(results.count == 1)
        if case .failure(let error)? = results.first { #expect(error.name == DBusError.disconnectedName) }
        #expect(witness == nil, "libdbus released the pending call's Swift box")
        try loop.runOnce(maximumWait: .milliseconds(10))
        #expect(results.count == 1, "completed once")
    }

    /// Many calls completed one by one leave no pending call behind: a witness captured by every
    /// completion is freed once they have all answered, before the connection is closed.
    @Test func completedCallsAreFreedWhileTheConnectionLives() throws {
        final class Witness {}
        let bus = try startBus()
        let loop = try EventLoop()
        let client = try DBusConnection(.address(bus.address))
        defer { client.close() }
        client.attach(to: loop)
        weak var witness: Witness?
        var answered = 0
        do {
            let strong = Witness()
            witness = strong
            for _ in 0..<200 {
                client.callAsync(Self.ping()) { _ in
                    _ = strong
                    answered += 1
                }
            }
        }
        #expect(try spin(loop) { answered == 200 })
        #expect(witness == nil, "every completed call's box was released")
    }
}
