// SPDX-License-Identifier: Apache-2.0
// QiblaDBus against a real dbus-daemon (TestSupport.PrivateBus); nothing is mocked.
import Foundation
import QiblaDBus
import QiblaEventLoop
import Testing
import TestSupport

/// Every kind of DBusValue, including the awkward ones (computed, so LeakSanitizer runs stay quiet).
var everyKind: [DBusValue] { [
    .byte(0), .byte(255), .bool(true), .bool(false),
    .int16(.min), .uint16(.max), .int32(.min), .uint32(.max), .int64(.min), .uint64(.max),
    .double(21.422_487), .double(-0.0), .double(.infinity), .double(.nan), .double(.leastNonzeroMagnitude),
    .string(""), .string("Qibla قبلة — 🕋 Makkah"), .objectPath("/"), .objectPath("/org/qibla/Compass"),
    .signature(""), .signature("a{sv}(dd)"),
    .array(elementSignature: "s", []),
    .array(elementSignature: "i", [.int32(1), .int32(-2), .int32(3)]),
    .array(elementSignature: "ay", [.array(elementSignature: "y", [.byte(1)]), .array(elementSignature: "y", [])]),
    .dictionary(keySignature: "s", valueSignature: "v", []),
    .properties(["QiblaBearing": .double(58.5), "Valid": .bool(true), "Source": .string("gpsd")]),
    .dictionary(keySignature: "i", valueSignature: "a(dd)",
                [(.int32(7), .array(elementSignature: "(dd)", [.structure([.double(1), .double(2)])]))]),
    .structure([.string("Kaaba"), .double(21.4225), .double(39.8262), .bool(true)]),
    .structure([.structure([.byte(1)]), .array(elementSignature: "(ss)", [.structure([.string("a"), .string("b")])])]),
    .variant(.int32(42)),
    .variant(.variant(.string("nested"))),
    .variant(.array(elementSignature: "a{sv}", [
        .properties(["x": .double(.nan), "y": .array(elementSignature: "t", [.uint64(1)])]),
        .properties([:]),
    ])),
    .variant(.structure([.objectPath("/a"), .signature("v")])),
] }

@Suite(.serialized)
struct QiblaDBusTests {
    @Test func everyValueKindSurvivesARoundTripThroughTheBus() throws {
        let bus = try startBus()
        let server = try EchoServer(address: bus.address)
        defer { server.stop() }
        let client = try DBusConnection(.address(bus.address))
        defer { client.close() }

        let call = try server.call("Echo", everyKind)
        let reply = try client.call(call)
        #expect(reply.type == .methodReturn)
        #expect(reply.replySerial == call.serial)
        #expect(reply.sender == server.uniqueName)
        #expect(reply.signature == everyKind.map(\.signature).joined())
        let echoed = try reply.arguments()
        #expect(echoed == everyKind)
        #expect(echoed[13].double?.isNaN == true)
        #expect(echoed[16].string == "Qibla قبلة — 🕋 Makkah")
        #expect(echoed[25].signature == "a{sv}")
        #expect(echoed[25].stringKeyedDictionary?["QiblaBearing"]?.unwrappingVariants == .double(58.5))

        // One argument at a time, so a type that only fails alone would show up.
        for value in everyKind {
            let single = try client.call(try server.call("Echo", [value]))
            #expect(try single.arguments() == [value], "\(value.signature)")
        }
        // No arguments at all.
        #expect(try client.call(try server.call("Echo")).arguments().isEmpty)
    }

    @Test func signaturesOfValues() {
        #expect(DBusValue.properties([:]).signature == "a{sv}")
        #expect(DBusValue.structure([.double(1), .strings(["a"])]).signature == "(das)")
        #expect(DBusValue.variant(.int32(1)).signature == "v")
        #expect(DBusValue(Int64(-1)) == .int64(-1))
        #expect(DBusValue(UInt8(1)) != .uint16(1))
        #expect(DBusValue.double(.nan) == .double(.nan))
        #expect(DBusValue.double(0) == .double(-0.0))
        #expect(DBusValue.double(1) != .double(2))
        #expect(DBusValue.dictionary(keySignature: "s", valueSignature: "i", [(.string("a"), .int32(1))])
                != .dictionary(keySignature: "s", valueSignature: "i", [(.string("a"), .int32(2))]))
    }

    @Test func propertiesChangedWrittenDirectlyEqualsTheValueTree() throws {
        let changed: [(name: String, value: DBusBasicValue)] = [
            (name: "Heading", value: .double(.nan)), (name: "HasCompass", value: .bool(true)),
            (name: "LocationSource", value: .string("gpsd")), (name: "LocationTimestamp", value: .uint64(.max)),
            (name: "A", value: .int32(-1)), (name: "B", value: .uint32(7)), (name: "C", value: .int64(.min)),
        ]
        let direct = DBusMessage.signal(path: "/org/qibla", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")
        try direct.appendPropertiesChanged(interface: "org.qibla.Test", changed: changed)
        let tree = DBusMessage.signal(path: "/org/qibla", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")
        try tree.append(.string("org.qibla.Test"),
                        .dictionary(keySignature: "s", valueSignature: "v", changed.map { (.string($0.name), .variant($0.value.value)) }),
                        .array(elementSignature: "s", []))
        #expect(direct.signature == "sa{sv}as")
        #expect(try direct.arguments() == tree.arguments())
        let empty = DBusMessage.signal(path: "/org/qibla", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")
        try empty.appendPropertiesChanged(interface: "org.qibla.Test", changed: [(name: String, value: DBusBasicValue)]())
        #expect(try empty.arguments() == [.string("org.qibla.Test"), .dictionary(keySignature: "s", valueSignature: "v", []),
                                          .array(elementSignature: "s", [])])
        // NUL in a name or a string value, or a bad interface name: thrown, nothing appended.
        let rejected = DBusMessage.signal(path: "/org/qibla", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")
        #expect(throws: DBusError.self) { try rejected.appendPropertiesChanged(interface: "org.qibla.Test", changed: [(name: "a\0b", value: .bool(true))]) }
        #expect(throws: DBusError.self) { try rejected.appendPropertiesChanged(interface: "org.qibla.Test", changed: [(name: "a", value: .string("\0"))]) }
        #expect(throws: DBusError.self) { try rejected.appendPropertiesChanged(interface: "not an interface", changed: changed) }
        #expect(rejected.signature == "")
    }

    @Test func preparedPropertiesChangedEqualsTheCheckedOne() throws {
        let changed: [(name: String, value: DBusBasicValue)] = [
            (name: "Heading", value: .double(271.5)), (name: "HasCompass", value: .bool(false)),
            (name: "LocationSource", value: .string("manual")), (name: "LocationTimestamp", value: .uint64(42)),
        ]
        let prepared = try DBusPropertiesChangedSignal(path: "/org/qibla", interface: "org.qibla.Test")
        func viaPrepared(_ entries: [(name: String, value: DBusBasicValue)]) throws(DBusError) -> DBusMessage {
            try prepared.message { writer throws(DBusError) in
                for entry in entries { try writer.append(name: entry.name, value: entry.value) }
            }
        }
        let checked = DBusMessage.signal(path: "/org/qibla", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")
        try checked.appendPropertiesChanged(interface: "org.qibla.Test", changed: changed)
        // Each message is a fresh copy of the prototype: the same header and body as the checked
        // construction, writable, and the prototype is not changed by what a copy receives.
        for _ in 0..<2 {
            let message = try viaPrepared(changed)
            #expect(message.type == .signal)
            #expect(message.path == checked.path && message.interface == checked.interface && message.member == checked.member)
            #expect(message.signature == "sa{sv}as" && message.serial == 0)
            #expect(try message.arguments() == checked.arguments())
        }
        #expect(try viaPrepared([]).arguments() == [.string("org.qibla.Test"), .dictionary(keySignature: "s", valueSignature: "v", []),
                                                   .array(elementSignature: "s", [])])
        // NUL in a name or a string value: thrown, and no message.
        #expect(throws: DBusError.self) { try viaPrepared([(name: "a\0b", value: .bool(true))]) }
        #expect(throws: DBusError.self) { try viaPrepared(changed + [(name: "a", value: .string("\0"))]) }
        #expect(try viaPrepared(changed).arguments() == checked.arguments())
        // The names are checked once, when it is prepared.
        #expect(throws: DBusError.self) { try DBusPropertiesChangedSignal(path: "no/slash", interface: "org.qibla.Test") }
        #expect(throws: DBusError.self) { try DBusPropertiesChangedSignal(path: "/org/qibla", interface: "not an interface") }
    }

    @Test func invalidValuesAndNamesAreRejectedWithoutCrashing() throws {
        let message = DBusMessage.signal(path: "/org/qibla", interface: "org.qibla.Test", member: "Ping")
        let bad: [DBusValue] = [
            .string("nul\u{0}inside"),
            .objectPath("no/leading/slash"), .objectPath("/trailing/"), .objectPath("/bad-char"),
            .signature("a{"), .signature("(")
            , .array(elementSignature: "s", [.int32(1)]),
            .array(elementSignature: "", []), .array(elementSignature: "ss", []), .array(elementSignature: "{sv}", []),
            .dictionary(keySignature: "v", valueSignature: "s", []),
            .dictionary(keySignature: "s", valueSignature: "s", [(.string("k"), .int32(1))]),
            .structure([]),
            .variant(.structure([])),
            .array(elementSignature: "v", [.variant(.string("ok")), .string("not a variant")]),
        ]
        for value in bad {
            #expect(throws: DBusError.self, "\(value)") { try message.append(.int32(1), value) }
        }
        #expect(message.signature == "", "nothing was appended by a failed append")

        // Too deep: 65 nested variants.
        var deep = DBusValue.int32(0)
        for _ in 0..<65 { deep = .variant(deep) }
        #expect(throws: DBusError.self) { try message.append(deep) }

        #expect(throws: DBusError.self) {
            try DBusMessage.methodCall(validatingDestination: "not a bus name", path: "/", interface: nil, member: "M")
        }
        #expect(throws: DBusError.self) {
            try DBusMessage.methodCall(validatingDestination: nil, path: "//", interface: nil, member: "M")
        }
        #expect(throws: DBusError.self) {
            try DBusMessage.methodCall(validatingDestination: nil, path: "/", interface: "nodots", member: "M")
        }
        #expect(throws: DBusError.self) {
            try DBusMessage.signal(validatingPath: "/", interface: "org.qibla.Test", member: "Bad.Member")
        }
        let call = DBusMessage.methodCall(destination: "org.qibla.Compass", path: "/", interface: nil, member: "M")
        let error = call.errorReply(name: "not an error name", message: "oops\u{0}")
        #expect(error.type == .error)
        #expect(error.errorName == DBusError.failedName)
        #expect(try error.arguments() == [.string("not an error name: oops")])
        #expect(call.methodReturn().type == .methodReturn, "a reply to an unsent call is an orphan, not a crash")
        #expect(call.errorReply(name: "org.qibla.Error.X", message: "m").errorName == "org.qibla.Error.X")

        #expect(DBusNames.isValidObjectPath("/org/qibla/Compass"))
        #expect(!DBusNames.isValidObjectPath(""))
        #expect(!DBusNames.isValidObjectPath("/a\u{0}b"))
        #expect(DBusNames.isValidBusName(":1.42"))
        #expect(DBusNames.isValidWellKnownBusName("org.qibla.Compass"))
        #expect(!DBusNames.isValidWellKnownBusName(":1.42"))
        #expect(!DBusNames.isValidBusName("org"))
        #expect(!DBusNames.isValidInterfaceName("org.1qibla"))
        #expect(DBusNames.isValidMemberName("GetAll"))
        #expect(!DBusNames.isValidMemberName("Get-All"))
        #expect(DBusNames.isValidSignature("a{sv}(dd)s"))
        #expect(!DBusNames.isValidSingleTypeSignature("ss"))
        #expect(!DBusNames.isValidSignature(String(repeating: "a", count: 33) + "i"))
    }

    @Test func accessorsReturnNilForOtherTypes() {
        let values: [DBusValue] = [.string("58.5"), .int32(58), .variant(.double(58.5))]
        #expect(values.compactMap(\.double).isEmpty)
        #expect(values[0].string == "58.5")
        #expect(values[1].int32 == 58)
        #expect(values[1].uint32 == nil)
        #expect(values[2].variant?.double == 58.5)
        #expect(values[2].unwrappingVariants.double == 58.5)
        #expect(DBusValue.strings(["a", "b"]).strings == ["a", "b"])
        #expect(DBusValue.int32(1).stringKeyedDictionary == nil)
    }

    @Test func requestNameReportsOwnership() throws {
        let bus = try startBus()
        let first = try DBusConnection(.address(bus.address))
        let second = try DBusConnection(.address(bus.address))
        defer { first.close(); second.close() }
        #expect(first.uniqueName.hasPrefix(":"))
        #expect(first.uniqueName != second.uniqueName)

        #expect(try first.requestName("org.qibla.Compass") == .primaryOwner)
        #expect(try first.requestName("org.qibla.Compass") == .alreadyOwner)
        #expect(try second.requestName("org.qibla.Compass", doNotQueue: true) == .exists)
        #expect(try second.requestName("org.qibla.Compass", doNotQueue: false) == .inQueue)

        // The name answers on the owner's connection.
        let ping = DBusMessage.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                          interface: "org.freedesktop.DBus", member: "GetNameOwner")
        try ping.append(.string("org.qibla.Compass"))
        #expect(try second.call(ping).arguments() == [.string(first.uniqueName)])

        // Releasing hands it to the queued connection.
        try first.releaseName("org.qibla.Compass")
        let again = DBusMessage.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                           interface: "org.freedesktop.DBus", member: "GetNameOwner")
        try again.append(.string("org.qibla.Compass"))
        #expect(try first.call(again).arguments() == [.string(second.uniqueName)])

        #expect(throws: DBusError.self) { try first.requestName(":1.99") }
        #expect(throws: DBusError.self) { try first.requestName("nodots") }
    }

    @Test func errorRepliesArriveAsDBusError() throws {
        let bus = try startBus()
        let server = try EchoServer(address: bus.address)
        defer { server.stop() }
        let client = try DBusConnection(.address(bus.address))
        defer { client.close() }

        let failure = expectDBusError { try client.call(try server.call("Fail")) }
        #expect(failure?.name == "org.qibla.Error.Test")
        #expect(failure?.message == "as requested")

        // Unregistered path: libdbus answers UnknownMethod for the server.
        let lost = DBusMessage.methodCall(destination: server.uniqueName, path: "/nowhere", interface: "org.qibla.Test",
                                          member: "Echo")
        let unknown = expectDBusError { try client.call(lost) }
        #expect(unknown?.name == DBusError.unknownMethodName)

        // Wrong argument types: decoded without crashing, answered with InvalidArgs.
        let wrongType = expectDBusError { try client.call(try server.call("Square", [.string("2")])) }
        #expect(wrongType?.name == DBusError.invalidArgsName)
        #expect(wrongType?.message.contains("\"d\"") == true)
        #expect(try client.call(try server.call("Square", [.double(-3)])).arguments() == [.double(9)])

        // No such peer.
        let nobody = DBusMessage.methodCall(destination: "org.qibla.Nobody", path: "/", interface: nil, member: "M")
        let missing = expectDBusError { try client.call(nobody) }
        #expect(missing?.name == "org.freedesktop.DBus.Error.ServiceUnknown")

        // A bad match rule is refused by the bus, not by a crash.
        #expect(throws: DBusError.self) { try client.addMatch("type='nonsense'") }

        // Odd timeouts are clamped rather than passed to libdbus (which aborts on them).
        #expect(try client.call(try server.call("Echo", [.byte(1)]), timeoutMilliseconds: -7).arguments() == [.byte(1)])
        // An orphan reply (to a call never sent) is dropped by send.
        client.send(DBusMessage.methodCall(destination: server.uniqueName, path: "/", interface: nil, member: "M").methodReturn())
        #expect(try client.call(try server.call("Echo", [.byte(2)])).arguments() == [.byte(2)], "still connected")
    }

    @Test func signalsReachConnectionsWithAMatchRule() throws {
        let bus = try startBus()
        let emitter = try DBusConnection(.address(bus.address))
        let listener = try DBusConnection(.address(bus.address))
        let deaf = try DBusConnection(.address(bus.address))
        defer { emitter.close(); listener.close(); deaf.close() }

        var heard: [DBusMessage] = []
        listener.onSignal { if $0.interface == "org.qibla.Compass" { heard.append($0) } }
        try listener.addMatch("type='signal',interface='org.qibla.Compass'")
        var deafHeard = 0
        deaf.onSignal { if $0.interface == "org.qibla.Compass" { deafHeard += 1 } }

        let signal = DBusMessage.signal(path: "/org/qibla/Compass", interface: "org.qibla.Compass", member: "QiblaChanged")
        try signal.append(.double(58.48), .properties(["Valid": .bool(true)]))
        emitter.send(signal)
        emitter.flush()

        #expect(pump(listener) { !heard.isEmpty })
        let received = try #require(heard.first)
        #expect(received.type == .signal)
        #expect(received.sender == emitter.uniqueName)
        #expect(received.path == "/org/qibla/Compass")
        #expect(received.member == "QiblaChanged")
        #expect(try received.arguments() == [.double(58.48), .properties(["Valid": .bool(true)])])

        _ = pump(deaf, seconds: 0.3) { false }
        #expect(deafHeard == 0, "no match rule, no signal")

        try listener.removeMatch("type='signal',interface='org.qibla.Compass'")
        emitter.send(signal.copyForResend())
        emitter.flush()
        _ = pump(listener, seconds: 0.3) { false }
        #expect(heard.count == 1)
    }

    @Test func nameOwnerChangedIsSeenWhenAConnectionCloses() throws {
        let bus = try startBus()
        let watcher = try DBusConnection(.address(bus.address))
        defer { watcher.close() }
        var changes: [[DBusValue]] = []
        watcher.onSignal { message in
            if message.sender == "org.freedesktop.DBus", message.member == "NameOwnerChanged",
               let arguments = try? message.arguments() {
                changes.append(arguments)
            }
        }
        try watcher.addMatch("type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged'")

        let leaving = try DBusConnection(.address(bus.address))
        let name = leaving.uniqueName
        _ = try leaving.requestName("org.qibla.Compass")
        leaving.close()
        #expect(leaving.uniqueName == "")

        #expect(pump(watcher) { changes.contains([.string(name), .string(name), .string("")]) })
        #expect(changes.contains([.string("org.qibla.Compass"), .string(name), .string("")]))
        #expect(changes.contains([.string(name), .string(""), .string(name)]), "the arrival was seen too")
    }

    @Test func serverOnAnEventLoopAnswersBusctl() throws {
        let bus = try startBus()
        let server = try EchoServer(address: bus.address)
        defer { server.stop() }

        let echo = try bus.busctl(["call", server.uniqueName, "/echo", "org.qibla.Test", "Echo", "sdas", "hello", "2.5",
                                   "2", "a", "b"])
        #expect(echo.status == 0, "\(echo.stderr)")
        #expect(echo.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "sdas \"hello\" 2.5 2 \"a\" \"b\"")

        let fail = try bus.busctl(["call", server.uniqueName, "/echo", "org.qibla.Test", "Fail"])
        #expect(fail.status != 0)
        #expect(fail.stderr.contains("as requested"))

        // Many calls in a row keep working (the loop dispatches everything it reads).
        let client = try DBusConnection(.address(bus.address))
        defer { client.close() }
        for i in 0..<200 {
            #expect(try client.call(try server.call("Echo", [.uint32(UInt32(i))])).arguments() == [.uint32(UInt32(i))])
        }
    }

    /// busctl (sd-bus, an independent implementation) encodes the call and decodes the echo:
    /// our decoder and encoder must agree with it, not only with each other.
    @Test func busctlArgumentsSurviveOurEchoServer() throws {
        let bus = try startBus()
        let server = try EchoServer(address: bus.address)
        defer { server.stop() }
        let signature = "ybnqiuxtdsogasa{sv}(sd)vv"
        let result = try bus.busctl(["--json=short", "call", server.uniqueName, "/echo", "org.qibla.Test", "Echo", "--",
                                     signature, "255", "false", "-5", "7", "-9", "4000000000", "-9000000000000",
                                     "12345678901234", "2.5", "héllo 🕋", "/o/p", "a{sv}", "2", "x", "y", "1", "k", "d",
                                     "1.5", "s", "3", "d", "-0.25", "ad", "0"])
        #expect(result.status == 0, "\(result.stderr)")
        let payload = try #require(jsonObject(result.stdout))
        #expect(payload["type"] as? String == signature)
        let data = try #require(payload["data"] as? [Any])
        try expectBusctlPayload(data, bool: false, lastVariant: -0.25)
    }

    /// Our encoder, decoded by `busctl monitor` (sd-bus).
    @Test func busctlMonitorDecodesWhatWeEncode() throws {
        let bus = try startBus()
        let monitor = try ChildProcess("busctl", ["--address=\(bus.address)", "monitor", "--json=short"])
        defer { monitor.terminate() }
        // systemd 252 says "Monitoring bus message stream." once it is a monitor; 257 (Debian 13) says
        // nothing with --json: the signal below is sent again until the monitor shows it.
        _ = waitUntil(timeout: 2) { (monitor.standardOutput + monitor.standardError).contains("Monitoring") }
        #expect(monitor.isRunning, "busctl monitor: \(monitor.standardError)")
        let emitter = try DBusConnection(.address(bus.address))
        defer { emitter.close() }
        // The monitor sees every message; give it a moment after BecomeMonitor by sending a marker first.
        var signal = DBusMessage.signal(path: "/a", interface: "org.qibla.Test", member: "QiblaTypes")
        let values: [DBusValue] = [
            .byte(255), .bool(true), .int16(-5), .uint16(7), .int32(-9), .uint32(4_000_000_000), .int64(-9_000_000_000_000),
            .uint64(12_345_678_901_234), .double(2.5), .string("héllo 🕋"), .objectPath("/o/p"), .signature("a{sv}"),
            .strings(["x", "y"]), .properties(["k": .double(1.5)]), .structure([.string("s"), .double(3)]),
            .variant(.double(.nan)), .variant(.doubles([])),
        ]
        try signal.append(contentsOf: values)
        emitter.send(signal)
        emitter.flush()
        var line: String?
        waitUntil {
            line = monitor.standardOutput.split(separator: "\n").first { $0.contains("\"QiblaTypes\"") }.map(String.init)
            if line == nil {  // resend in case the monitor was not registered yet
                signal = DBusMessage.signal(path: "/a", interface: "org.qibla.Test", member: "QiblaTypes")
                try? signal.append(contentsOf: values)
                emitter.send(signal)
                emitter.flush()
            }
            return line != nil
        }
        let message = try #require(jsonObject(line ?? ""))
        #expect(message["sender"] as? String == emitter.uniqueName)
        let payload = try #require(message["payload"] as? [String: Any])
        #expect(payload["type"] as? String == values.map(\.signature).joined())
        let data = try #require(payload["data"] as? [Any])
        try expectBusctlPayload(data, bool: true, lastVariant: nil)
    }

    @Test func asyncCallsAndSignalsOnAClientEventLoop() throws {
        let bus = try startBus()
        let server = try EchoServer(address: bus.address)
        defer { server.stop() }
        let loop = try EventLoop()
        let client = try DBusConnection(.address(bus.address))
        defer { client.close() }
        client.attach(to: loop)

        var pings: [String] = []
        client.onSignal { message in
            if message.member == "Ping", let text = (try? message.arguments())?.first?.string { pings.append(text) }
        }
        try client.addMatch("type='signal',interface='org.qibla.Test',member='Ping'")

        var results: [Result<DBusMessage, DBusError>] = []
        client.callAsync(try server.call("Echo", [.string("async")])) { results.append($0) }
        client.callAsync(try server.call("Fail")) { results.append($0) }
        client.callAsync(try server.call("Emit", [.string("from the server")])) { results.append($0) }
        #expect(try spin(loop) { results.count == 3 && pings.count == 1 })

        #expect(try results[0].get().arguments() == [.string("async")])
        guard case .failure(let error) = results[1] else { Issue.record("Fail succeeded"); return }
        #expect(error.name == "org.qibla.Error.Test")
        #expect(error.message == "as requested")
        #expect((try? results[2].get())?.type == .methodReturn)
        #expect(pings == ["from the server"])

        // A blocking call on an attached connection still works, and does not strand signals.
        _ = try client.call(try server.call("Emit", [.string("second")]))
        #expect(try spin(loop) { pings.count == 2 })
    }

    /// An attached, idle connection must not keep the loop busy (no spinning write watch, no
    /// short libdbus timers): over half a second the loop wakes only for our own stop timer.
    @Test func anIdleAttachedConnectionDoesNotWakeTheLoop() throws {
        let bus = try startBus()
        let loop = try EventLoop()
        let connection = try DBusConnection(.address(bus.address))
        defer { connection.close() }
        connection.attach(to: loop)
        try connection.addMatch("type='signal',interface='org.qibla.Test'")
        connection.send(DBusMessage.signal(path: "/", interface: "org.qibla.Test", member: "Hello"))
        _ = try spin(loop, seconds: 0.3) { false }  // write out and settle

        let before = loop.wakeupCount
        loop.schedule(after: .milliseconds(500)) { loop.stop() }
        try loop.run()
        #expect(loop.wakeupCount - before <= 2, "woke \(loop.wakeupCount - before) times while idle")
    }

    @Test func asyncCallTimesOutThroughTheLoop() throws {
        let bus = try startBus()
        let loop = try EventLoop()
        let silent = try DBusConnection(.address(bus.address))  // never dispatches, so never answers
        let client = try DBusConnection(.address(bus.address))
        defer { client.close(); silent.close() }
        client.attach(to: loop)
        var result: Result<DBusMessage, DBusError>?
        let call = DBusMessage.methodCall(destination: silent.uniqueName, path: "/", interface: nil, member: "Hang")
        client.callAsync(call, timeoutMilliseconds: 200) { result = $0 }
        #expect(try spin(loop) { result != nil })
        guard case .failure(let error)? = result else { Issue.record("expected a timeout"); return }
        #expect(error.name == DBusError.noReplyName)
    }

    @Test func onDisconnectedFiresWhenTheBusDies() throws {
        let bus = try startBus()
        let loop = try EventLoop()
        let attached = try DBusConnection(.address(bus.address))
        let plain = try DBusConnection(.address(bus.address))
        defer { attached.close(); plain.close() }
        attached.attach(to: loop)
        var attachedLost = 0, plainLost = 0
        attached.onDisconnected = { attachedLost += 1 }
        plain.onDisconnected = { plainLost += 1 }
        #expect(try spin(loop, seconds: 0.2) { false } == false)
        #expect(attachedLost == 0)

        bus.kill()
        #expect(try spin(loop) { attachedLost == 1 })
        #expect(!attached.isConnected)
        #expect(pump(plain) { plainLost == 1 })
        #expect(!plain.readWriteDispatch(timeoutMilliseconds: 0))

        // Using a dead connection throws or is ignored; never crashes.
        #expect(throws: DBusError.self) { try attached.requestName("org.qibla.Compass") }
        attached.send(DBusMessage.signal(path: "/", interface: "org.qibla.Test", member: "Late"))
        var late: Result<DBusMessage, DBusError>?
        attached.callAsync(DBusMessage.methodCall(destination: "org.qibla.X", path: "/", interface: nil, member: "M")) {
            late = $0
        }
        #expect(try spin(loop, seconds: 2) { late != nil })
        #expect(throws: DBusError.self) { try late?.get() }
        _ = try spin(loop, seconds: 0.1) { false }
        #expect(attachedLost == 1, "reported once")
    }

    @Test func aHandlerMayCloseItsOwnConnection() throws {
        let bus = try startBus()
        let loop = try EventLoop()
        let server = try DBusConnection(.address(bus.address))
        let client = try DBusConnection(.address(bus.address))
        defer { server.close(); client.close() }
        server.attach(to: loop)
        client.attach(to: loop)
        var served = 0
        server.registerObject(path: "/quit") { [unowned server] call in
            served += 1
            server.close()
            return call.methodReturn()
        }
        var results: [Result<DBusMessage, DBusError>] = []
        for _ in 0..<3 {
            client.callAsync(DBusMessage.methodCall(destination: server.uniqueName, path: "/quit", interface: nil,
                                                    member: "Quit")) { results.append($0) }
        }
        #expect(try spin(loop) { results.count == 3 })
        #expect(served == 1, "no dispatch after close")
        #expect(results.allSatisfy { (try? $0.get()) == nil }, "the server went away without replying")
    }

    @Test func closeReleasesHandlersAndDetachesFromTheLoop() throws {
        final class Witness {}
        let bus = try startBus()
        let loop = try EventLoop()
        weak var witness: Witness?
        do {
            let strong = Witness()
            witness = strong
            let connection = try DBusConnection(.address(bus.address))
            connection.attach(to: loop)
            connection.registerObject(path: "/w") { _ in _ = strong; return nil }
            connection.onSignal { _ in _ = strong }
            connection.callAsync(DBusMessage.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                        interface: "org.freedesktop.DBus.Peer", member: "Ping")) { _ in
                _ = strong
            }
            // A call that will never be answered is still pending at close.
            let silent = try DBusConnection(.address(bus.address))
            defer { silent.close() }
            var abandoned: Result<DBusMessage, DBusError>?
            connection.callAsync(DBusMessage.methodCall(destination: silent.uniqueName, path: "/", interface: nil,
                                                        member: "Hang")) { result in
                _ = strong
                abandoned = result
            }
            #expect(try spin(loop, seconds: 0.3) { false } == false)
            #expect(abandoned == nil)
            connection.close()
            connection.close()  // idempotent
            #expect(throws: DBusError.self) { try abandoned?.get() }
            #expect((try? abandoned?.get()) == nil)
            if case .failure(let error)? = abandoned { #expect(error.name == DBusError.disconnectedName) }
            #expect(throws: DBusError.self) { try connection.addMatch("type='signal'") }
        }
        #expect(witness == nil, "libdbus released every Swift box")
        // The loop has nothing of the connection left: one iteration with no timers returns promptly.
        try loop.runOnce(maximumWait: .milliseconds(10))
    }
}

extension DBusMessage {
    /// A fresh signal with the same header and body (sent messages cannot be sent twice).
    func copyForResend() -> DBusMessage {
        let copy = DBusMessage.signal(path: path!, interface: interface!, member: member!)
        try! copy.append(contentsOf: arguments())
        return copy
    }
}

func jsonObject(_ text: String) -> [String: Any]? {
    guard let data = text.data(using: .utf8) else { return nil }
    return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
}

/// The payload `ybnqiuxtdsogasa{sv}(sd)vv` as busctl's JSON shows it. `lastVariant` nil means NaN (JSON null).
func expectBusctlPayload(_ data: [Any], bool: Bool, lastVariant: Double?) throws {
    try #require(data.count == 17)
    #expect((data[0] as? NSNumber)?.intValue == 255)
    #expect(data[1] as? Bool == bool)
    #expect((data[2] as? NSNumber)?.intValue == -5)
    #expect((data[3] as? NSNumber)?.intValue == 7)
    #expect((data[4] as? NSNumber)?.intValue == -9)
    #expect((data[5] as? NSNumber)?.int64Value == 4_000_000_000)
    #expect((data[6] as? NSNumber)?.int64Value == -9_000_000_000_000)
    #expect((data[7] as? NSNumber)?.int64Value == 12_345_678_901_234)
    #expect((data[8] as? NSNumber)?.doubleValue == 2.5)
    #expect(data[9] as? String == "héllo 🕋")
    #expect(data[10] as? String == "/o/p")
    #expect(data[11] as? String == "a{sv}")
    #expect(data[12] as? [String] == ["x", "y"])
    let dictionary = try #require(data[13] as? [String: Any])
    let k = try #require(dictionary["k"] as? [String: Any])
    #expect(k["type"] as? String == "d")
    #expect((k["data"] as? NSNumber)?.doubleValue == 1.5)
    let structure = try #require(data[14] as? [Any])
    #expect(structure.first as? String == "s")
    #expect((structure.last as? NSNumber)?.doubleValue == 3)
    let first = try #require(data[15] as? [String: Any])
    #expect(first["type"] as? String == "d")
    if let lastVariant {
        #expect((first["data"] as? NSNumber)?.doubleValue == lastVariant)
    } else {
        #expect(first["data"] is NSNull, "NaN is shown as null")
    }
    let second = try #require(data[16] as? [String: Any])
    #expect(second["type"] as? String == "ad")
    #expect((second["data"] as? [Any])?.isEmpty == true)
}

/// The DBusError `body` throws, recorded as an issue when it throws nothing or something else.
/// (`#expect(throws:)` returns the error from Swift 6.1 on; Debian 13's swiftlang is 6.0.)
private func expectDBusError<Result>(sourceLocation: SourceLocation = #_sourceLocation,
                                     _ body: () throws -> Result) -> DBusError? {
    do {
        _ = try body()
        Issue.record("expected a DBusError, nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as DBusError {
        return error
    } catch {
        Issue.record("expected a DBusError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
