// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import qiblactl

/// `qiblactl remind`'s policy (`ReminderSchedule`), event by event: times in microseconds since
/// the epoch, as qiblad publishes `NextQiblaSunTime`.
@Suite struct ReminderScheduleTests {
    enum Event { case published(UInt64, String), fired }
    typealias Step = (event: Event, now: UInt64, expected: [ReminderSchedule.Action], wakeUp: UInt64?)

    static let cases: [(String, [Step])] = [
        ("on time, once", [
            (.published(1_000_000_000, "sun"), 10, [], 1_000_000_000),
            (.fired, 999_999_999, [], 1_000_000_000),                       // a timer a hair early: not yet
            (.fired, 1_000_000_000, [.notify(kind: "sun", timeMicroseconds: 1_000_000_000)], nil),
            (.fired, 1_000_000_500, [], nil),                               // never twice
            (.published(5_000_000_000, "shadow"), 1_000_000_600, [], 5_000_000_000),
        ]),
        ("qiblad moves on just before the timer fires", [
            (.published(1_000_000_000, "shadow"), 10, [], 1_000_000_000),
            (.published(7_000_000_000, "sun"), 1_000_000_100, [.notify(kind: "shadow", timeMicroseconds: 1_000_000_000)], 7_000_000_000),
            (.fired, 1_000_000_200, [], 7_000_000_000),
        ]),
        ("a new place before the time: the old time is dropped", [
            (.published(1_000_000_000, "sun"), 10, [], 1_000_000_000),
            (.published(2_000_000_000, "shadow"), 500_000_000, [], 2_000_000_000),
        ]),
        ("no time ahead, or an unknown kind", [
            (.published(0, "none"), 10, [], nil),
            (.published(1_000_000_000, "eclipse"), 10, [], nil),
        ]),
        ("more than a minute late (the device slept through it): skipped", [
            (.published(1_000_000_000, "sun"), 10, [], 1_000_000_000),
            (.fired, 1_000_000_000 + 61_000_000, [], nil),
        ]),
    ]

    @Test(arguments: cases)
    func remindsAtEachTimeOnce(name: String, steps: [Step]) {
        var schedule = ReminderSchedule()
        for (index, step) in steps.enumerated() {
            let actions: [ReminderSchedule.Action]
            switch step.event {
            case .published(let time, let kind): actions = schedule.published(timeMicroseconds: time, kind: kind, nowMicroseconds: step.now)
            case .fired: actions = schedule.due(nowMicroseconds: step.now)
            }
            #expect(actions == step.expected, "\(name), step \(index + 1)")
            #expect(schedule.wakeUpMicroseconds == step.wakeUp, "\(name), step \(index + 1): wake-up")
        }
    }

    @Test func theWordsSayWhatToDo() {
        #expect(ReminderSchedule.words(kind: "sun").0 == "Face the sun now")
        #expect(ReminderSchedule.words(kind: "shadow").0 == "Your shadow points to the Qibla now")
    }
}
