// SPDX-License-Identifier: Apache-2.0
import QiblaDBus
import QiblaEventLoop
import QiblaInterface

/// Follows qiblad on the bus for the commands that keep running (`monitor`, `waybar`) and for
/// `status --claim`: claims the compass, keeps a copy of every property (GetAll, then each
/// `PropertiesChanged`), and when qiblad leaves the bus (a restart, a crash) says it is waiting
/// and claims again as soon as a new qiblad owns the name (`NameOwnerChanged`), as
/// iio-sensor-proxy's `monitor-sensor` does.
///
/// Every call is asynchronous, so replies and signals are handled in the order qiblad sent them:
/// a signal older than the GetAll reply never overwrites the newer value in it.
final class QibladWatch {
    enum Event {
        /// qiblad is on the bus (at the start or back after a restart): `properties` is a fresh
        /// snapshot from `owner`, the unique name of this instance.
        case appeared(owner: String)
        /// These properties changed (in the order of the signal).
        case changed([String])
        /// qiblad is not on the bus: nothing is known until it comes back.
        case waiting
    }

    let connection: DBusConnection
    let claim: Bool
    /// The last value of every property, by its D-Bus name; empty while waiting.
    private(set) var properties: [String: DBusValue] = [:]
    /// The unique bus name of the qiblad whose properties these are; nil while waiting.
    private(set) var owner: String?
    /// Called on the loop thread for each event.
    var onEvent: (Event) -> Void = { _ in }
    /// Called when the watch cannot go on: the bus went away, or qiblad refused the claim.
    var onFailure: (_ message: String) -> Void = { _ in }

    private var waiting = false
    /// Bumped on each attempt to reach qiblad; replies to an older attempt are ignored.
    private var attempt = 0

    init(connection: DBusConnection, claim: Bool) {
        self.connection = connection
        self.claim = claim
    }

    /// Subscribes, attaches to `loop` and starts reaching qiblad (D-Bus activation starts it when
    /// an activation file is installed).
    func start(on loop: EventLoop) throws {
        do {
            try connection.addMatch("type='signal',sender='\(QiblaBus.name)',path='\(QiblaBus.objectPath)',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'")
            try connection.addMatch("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(QiblaBus.name)'")
        } catch {
            throw fail("cannot subscribe to qiblad's signals: \(error.message)", status: .failure)
        }
        connection.attach(to: loop)
        connection.onSignal { [weak self] message in self?.handle(message) }
        connection.onDisconnected = { [weak self] in self?.onFailure("the bus went away") }
        reach()
    }

    /// Releases the claim of the current qiblad (blocking; for the end of the command).
    func release() {
        guard claim, owner != nil else { return }
        _ = try? QibladClient.call(connection, QiblaMethod.releaseCompass.rawValue)
    }

    // MARK: Reaching qiblad

    private func reach() {
        attempt += 1
        let current = attempt
        guard claim else { return loadProperties(current) }
        send(QiblaMethod.claimCompass.rawValue, [], current) { [weak self] _ in self?.loadProperties(current) }
    }

    private func loadProperties(_ current: Int) {
        send("GetAll", [.string(QiblaBus.interface)], current, interface: "org.freedesktop.DBus.Properties") { [weak self] reply in
            guard let self else { return }
            self.properties = QibladClient.properties(fromGetAll: (try? reply.arguments()) ?? [])
            self.owner = reply.sender ?? ""
            self.waiting = false
            self.onEvent(.appeared(owner: self.owner ?? ""))
        }
    }

    private func send(_ member: String, _ arguments: [DBusValue], _ current: Int, interface: String = QiblaBus.interface,
                      then: @escaping (DBusMessage) -> Void) {
        let message = DBusMessage.methodCall(destination: QiblaBus.name, path: QiblaBus.objectPath, interface: interface, member: member)
        try? message.append(contentsOf: arguments)
        connection.callAsync(message, timeoutMilliseconds: 10_000) { [weak self] result in
            guard let self, current == self.attempt else { return }
            switch result {
            case .success(let reply): then(reply)
            case .failure(let error) where QibladClient.isAbsence(error) || error.name == DBusError.noReplyName:
                self.enterWaiting()
            case .failure(let error) where error.name == DBusError.disconnectedName:
                self.onFailure("the bus went away")
            case .failure(let error):
                self.onFailure("\(member) failed: \(error.name): \(error.message)")
            }
        }
    }

    private func enterWaiting() {
        owner = nil
        properties = [:]
        guard !waiting else { return }
        waiting = true
        onEvent(.waiting)
    }

    // MARK: Signals

    private func handle(_ message: DBusMessage) {
        guard let args = try? message.arguments() else { return }
        if message.member == "NameOwnerChanged" {
            guard args.count == 3, args[0].string == QiblaBus.name else { return }
            if args[2].string?.isEmpty ?? true {
                attempt += 1  // a reply still on its way belongs to the instance that left
                enterWaiting()
            } else {
                reach()
            }
            return
        }
        guard message.member == "PropertiesChanged", owner != nil, message.sender == owner, args.count >= 2,
              args[0].string == QiblaBus.interface, case .dictionary(_, _, let entries) = args[1] else { return }
        var changed: [String] = []
        for (key, value) in entries {
            if case .string(let name) = key, case .variant(let v) = value {
                properties[name] = v
                changed.append(name)
            }
        }
        if !changed.isEmpty { onEvent(.changed(changed)) }
    }
}

extension QibladWatch {
    /// Runs a watch on its own event loop until SIGINT or SIGTERM, or until `handle` calls its
    /// `stop`; then releases the claim. A failure (the bus went away, the claim refused) is
    /// reported on stderr and exits with status 1. The first time qiblad is found absent, a hint
    /// on stderr says how to start it; the wait goes on.
    static func run(bus: BusOptions, claim: Bool, loop created: (EventLoop) -> Void = { _ in },
                    _ handle: @escaping (_ watch: QibladWatch, _ event: Event, _ stop: @escaping () -> Void) -> Void) throws {
        let signals = try SignalWatcher([.interrupt, .terminate])
        let loop = try EventLoop()
        created(loop)
        let watch = QibladWatch(connection: try bus.connect(), claim: claim)
        var failure: String?
        var hinted = false
        // One dispatch can deliver several signals: none is shown after the stop.
        var stopped = false
        let stop = {
            stopped = true
            loop.stop()
        }
        watch.onFailure = { message in
            failure = message
            stop()
        }
        watch.onEvent = { event in
            guard !stopped else { return }
            if case .waiting = event, !hinted {
                hinted = true
                printError("qiblactl: qiblad is not on the \(bus.name) bus; waiting for it (start it with: \(bus.startHint))")
            }
            handle(watch, event, stop)
        }
        signals.attach(to: loop) { _ in stop() }
        try watch.start(on: loop)
        try loop.run()
        if let failure { throw fail(failure, status: .failure) }
        watch.release()
    }
}
