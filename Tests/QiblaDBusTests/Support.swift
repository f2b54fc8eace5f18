// SPDX-License-Identifier: Apache-2.0
// Test helpers: a QiblaDBus server running on its own EventLoop thread, and a pump for client connections.
import Foundation
import QiblaDBus
import QiblaEventLoop
import TestSupport

/// A value guarded by a lock, shared between the test and the server thread.
final class Locked<Value>: @unchecked Sendable {  // every access goes through `lock`
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.lock(); defer { lock.unlock() }; return value }
    func set(_ newValue: Value) { lock.lock(); value = newValue; lock.unlock() }
}

/// A server connection attached to an `EventLoop` that runs on a background thread; the
/// connection is created, used and closed on that thread only.
///
/// Methods on `/echo`, interface `org.qibla.Test`:
/// - `Echo(…) → (…)` returns its arguments unchanged;
/// - `Fail()` replies with the error `org.qibla.Error.Test` "as requested";
/// - `Square(d) → d`, InvalidArgs for any other signature;
/// - `Emit(s)` emits the signal `org.qibla.Test.Ping(s)` from `/echo`, then replies.
final class EchoServer: @unchecked Sendable {  // immutable after init; `loop.stop()` is thread-safe
    let loop: EventLoop
    let uniqueName: String
    private let finished = DispatchSemaphore(value: 0)

    init(address: String) throws {
        let ready = DispatchSemaphore(value: 0)
        let started = Locked<Result<(EventLoop, String), Error>?>(nil)
        let finished = self.finished
        let thread = Thread {
            do {
                let loop = try EventLoop()
                let connection = try DBusConnection(.address(address))
                connection.attach(to: loop)
                connection.registerObject(path: "/echo") { [unowned connection] call in
                    EchoServer.handle(call, on: connection)
                }
                started.set(.success((loop, connection.uniqueName)))
                ready.signal()
                try loop.run()
                connection.close()
            } catch {
                started.set(.failure(error))
                ready.signal()
            }
            finished.signal()
        }
        thread.start()
        ready.wait()
        switch started.get()! {
        case .success(let (loop, name)):
            self.loop = loop
            self.uniqueName = name
        case .failure(let error):
            throw error
        }
    }

    private static func handle(_ call: DBusMessage, on connection: DBusConnection) -> DBusMessage? {
        do {
            switch call.member {
            case "Echo":
                let reply = call.methodReturn()
                try reply.append(contentsOf: call.arguments())
                return reply
            case "Fail":
                return call.errorReply(name: "org.qibla.Error.Test", message: "as requested")
            case "Square":
                let arguments = try call.arguments(expecting: "d")
                guard let x = arguments[0].double else { throw DBusError.invalidArgs("not a double") }
                let reply = call.methodReturn()
                try reply.append(.double(x * x))
                return reply
            case "Emit":
                let text = try call.arguments(expecting: "s")[0]
                let signal = DBusMessage.signal(path: "/echo", interface: "org.qibla.Test", member: "Ping")
                try signal.append(text)
                connection.send(signal)
                return call.methodReturn()
            default:
                return call.errorReply(name: DBusError.unknownMethodName, message: "no method \(call.member ?? "")")
            }
        } catch let error as DBusError {
            return call.errorReply(error)
        } catch {
            return call.errorReply(.failed("\(error)"))
        }
    }

    func stop() {
        loop.stop()
        finished.wait()
    }

    /// A method call to this server's `/echo` object.
    func call(_ member: String, _ arguments: [DBusValue] = []) throws -> DBusMessage {
        let message = DBusMessage.methodCall(destination: uniqueName, path: "/echo", interface: "org.qibla.Test",
                                             member: member)
        try message.append(contentsOf: arguments)
        return message
    }
}

/// Pumps `connection` (no EventLoop) until `condition` holds or `seconds` pass.
func pump(_ connection: DBusConnection, seconds: Double = 5, until condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while !condition() && Date() < end {
        if !connection.readWriteDispatch(timeoutMilliseconds: 50) { break }
    }
    return condition()
}

/// Runs `loop` on the current thread until `condition` holds or `seconds` pass.
func spin(_ loop: EventLoop, seconds: Double = 5, until condition: () -> Bool) throws -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while !condition() && Date() < end {
        try loop.runOnce(maximumWait: .milliseconds(50))
    }
    return condition()
}

/// A fresh private bus that accepts connections. `PrivateBus` waits for the socket file only;
/// dbus-daemon creates it with `bind` slightly before `listen`, so a first connect can be refused.
func startBus() throws -> PrivateBus {
    let bus = try PrivateBus()
    var lastError: DBusError?
    for _ in 0..<250 {
        do {
            let probe = try DBusConnection(.address(bus.address))
            probe.close()
            return bus
        } catch {
            lastError = error
            usleep(20_000)
        }
    }
    throw lastError ?? DBusError.failed("the bus never accepted a connection")
}
