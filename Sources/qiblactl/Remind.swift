// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import QiblaDBus
import QiblaEventLoop
import QiblaInterface
import QiblaPlatform

/// `qiblactl remind`: a notification at each of the day's Qibla-sun times, while nothing else
/// runs — the user service `qibla-remind.service` (off by default; `systemctl --user enable --now
/// qibla-remind.service`, or the app's menu).
///
/// It holds no claim: it follows qiblad's `NextQiblaSunTime` and `NextQiblaSunKind` (GetAll, then
/// PropertiesChanged; qiblad moves them on itself when a time passes or the place changes) and
/// sleeps on one timer until that instant. Nothing wakes it between two times: an unclaimed
/// qiblad publishes nothing but a new place or the next sun time.
struct Remind: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            abstract: tr("Post a notification at each Qibla-sun time (face the sun; your shadow points to the Qibla)."),
            discussion: tr("Runs until interrupted, asleep between the times qiblad publishes as NextQiblaSunTime, and posts each through org.freedesktop.Notifications on the session bus. As a user service: systemctl --user enable --now qibla-remind.service (and disable --now to stop). A time is announced once, not before it comes, and not at all when more than a minute late (the phone was asleep through it).")) }

    @OptionGroup var bus: BusOptions

    func run() throws {
        // Notifications go to the user's session bus, whichever bus qiblad is on.
        let notifications = bus.system ? try BusOptions().connect() : nil
        var schedule = ReminderSchedule()
        var timer: EventLoop.Token?
        var loop: EventLoop?
        func arm(_ watch: QibladWatch) {
            if let timer { loop?.cancel(timer) }
            timer = nil
            guard let due = schedule.wakeUpMicroseconds, let loop else { return }
            let now = WallClock.nowUnixSeconds() * 1e6
            let delay = max(0, (Double(due) - now) / 1e6)
            timer = loop.schedule(after: .milliseconds(Int64((delay * 1000).rounded(.up)))) {
                timer = nil
                post(schedule.due(nowMicroseconds: Self.now), on: notifications ?? watch.connection)
                arm(watch)
            }
        }
        try QibladWatch.run(bus: bus, claim: false, loop: { loop = $0 }) { watch, event, _ in
            switch event {
            case .appeared, .changed:
                let time = watch.properties[QiblaProperty.nextQiblaSunTime.rawValue]?.uint64 ?? 0
                let kind = watch.properties[QiblaProperty.nextQiblaSunKind.rawValue]?.string ?? "none"
                let actions = schedule.published(timeMicroseconds: time, kind: kind, nowMicroseconds: Self.now)
                post(actions, on: notifications ?? watch.connection)
                if case .appeared = event { printError("qiblactl: next Qibla-sun time: \(schedule.describeNext)") }
                arm(watch)
            case .waiting:
                break   // the last published time still stands; qiblad will publish again when back
            }
        }
    }

    static var now: UInt64 { UInt64(max(0, WallClock.nowUnixSeconds() * 1e6)) }

    /// org.freedesktop.Notifications.Notify (the Desktop Notifications Specification 1.2):
    /// app name, no replaced id, the app's icon, summary, body, no actions, the desktop entry as a
    /// hint, the server's default timeout.
    private func post(_ actions: [ReminderSchedule.Action], on connection: DBusConnection) {
        for case .notify(let kind, let time) in actions {
            let (summary, body) = ReminderSchedule.words(kind: kind)
            let message = DBusMessage.methodCall(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                                 interface: "org.freedesktop.Notifications", member: "Notify")
            do {
                try message.append(contentsOf: [
                    .string("Qibla Compass"), .uint32(0), .string("io.github.qiblad.Compass"), .string(summary), .string(body),
                    .array(elementSignature: "s", []),
                    .dictionary(keySignature: "s", valueSignature: "v", [(.string("desktop-entry"), .variant(.string("io.github.qiblad.Compass"))),
                                                                          (.string("category"), .variant(.string("x-qiblad.reminder")))]),
                    .int32(-1),
                ])
            } catch {
                printError("qiblactl: cannot build the notification: \(error.message)")
                continue
            }
            connection.callAsync(message, timeoutMilliseconds: 10_000) { result in
                if case .failure(let error) = result { printError("qiblactl: notification not posted: \(error.name): \(error.message)") }
            }
            printError("qiblactl: reminded: \(summary) (\(kind) at \(time) µs)")
        }
    }
}

/// When to remind, from what qiblad publishes; pure (times in microseconds since the epoch, as
/// `NextQiblaSunTime`). Each time is announced once, at or after it (never before), and not when
/// more than ``lateLimitMicroseconds`` late. If qiblad moves on to the next time before this
/// process's timer fired for the current one (both wake at the same instant), the current one is
/// still announced.
struct ReminderSchedule: Equatable {
    enum Action: Equatable { case notify(kind: String, timeMicroseconds: UInt64) }

    /// The time being waited for and its kind (`sun`, `shadow`).
    private(set) var next: (time: UInt64, kind: String)?
    /// The last time announced.
    private(set) var lastAnnounced: UInt64 = 0
    static let lateLimitMicroseconds: UInt64 = 60_000_000

    static func == (a: Self, b: Self) -> Bool { a.next?.time == b.next?.time && a.next?.kind == b.next?.kind && a.lastAnnounced == b.lastAnnounced }

    /// qiblad published `NextQiblaSunTime`/`NextQiblaSunKind` (0 / `none`: no time ahead).
    mutating func published(timeMicroseconds time: UInt64, kind: String, nowMicroseconds now: UInt64) -> [Action] {
        var actions = due(nowMicroseconds: now)   // the time qiblad just moved past
        next = time == 0 || !["sun", "shadow"].contains(kind) ? nil : (time, kind)
        actions += due(nowMicroseconds: now)
        return actions
    }

    /// The timer fired (or anything woke the process): the time, if it has come.
    mutating func due(nowMicroseconds now: UInt64) -> [Action] {
        guard let next, next.time > lastAnnounced, now >= next.time else { return [] }
        lastAnnounced = next.time
        return now - next.time <= Self.lateLimitMicroseconds ? [.notify(kind: next.kind, timeMicroseconds: next.time)] : []
    }

    /// When to wake next: the time not yet announced; nil when there is none.
    var wakeUpMicroseconds: UInt64? { next.flatMap { $0.time > lastAnnounced ? $0.time : nil } }

    var describeNext: String { next.map { "\($0.kind) at \($0.time) µs since the epoch" } ?? "none" }

    /// The notification's summary and body, in the user's language (``Words``).
    static func words(kind: String) -> (String, String) {
        kind == "sun"
            ? (tr("Face the sun now"), tr("The sun stands in the direction of the Qibla."))
            : (tr("Your shadow points to the Qibla now"), tr("Stand with the sun behind you and face along your shadow."))
    }
}
