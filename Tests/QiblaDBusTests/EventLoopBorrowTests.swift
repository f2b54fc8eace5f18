// SPDX-License-Identifier: Apache-2.0
// EventLoop.runWhileAsleep: a thread that is awake anyway does the loop's work while the loop's
// thread sleeps in poll (issue 12: one wakeup per sample, the sampling thread's).
import QiblaEventLoop
import QiblaPlatform
import Synchronization
import Testing
import TestSupport

@Suite struct EventLoopBorrowTests {
    /// A loop running on its own thread until the test ends.
    final class RunningLoop: Sendable {
        let loop: EventLoop
        let thread: PlatformThread

        init() throws {
            let loop = try EventLoop()
            self.loop = loop
            thread = try PlatformThread.start { _ in try? loop.run() }
        }

        /// Borrows the loop, retrying until its thread is asleep (it may still be starting).
        func borrow<T: Sendable>(_ work: () -> T) -> T? {
            for _ in 0..<2000 {
                var result: T?
                if loop.runWhileAsleep({ result = work() }) { return result }
                MonotonicClock.sleep(for: .milliseconds(1))
            }
            return nil
        }

        func stop() {
            loop.stop()
            _ = thread.waitForExit(timeout: .seconds(5))
        }
    }

    @Test func borrowingASleepingLoopDoesNotWakeItsThread() throws {
        let running = try RunningLoop()
        defer { running.stop() }
        let before = try #require(running.borrow { running.loop.wakeupCount })
        var ran = 0
        for _ in 0..<50 { if running.loop.runWhileAsleep({ ran += 1 }) { continue } }
        let after = try #require(running.borrow { running.loop.wakeupCount })
        #expect(ran >= 45, "the sleeping loop was lent only \(ran) times of 50")
        #expect(after == before, "50 borrows woke the loop's thread \(after - before) times")
    }

    @Test func aTimerArmedByABorrowerFiresOnTheLoopsThread() throws {
        let running = try RunningLoop()
        defer { running.stop() }
        let fired = Atomic<Bool>(false)
        let scheduled: Bool? = running.borrow {
            running.loop.schedule(after: .milliseconds(20)) { fired.store(true, ordering: .releasing) }
            return true
        }
        #expect(scheduled == true)
        #expect(waitUntil(timeout: 5) { fired.load(ordering: .acquiring) },
                "the loop slept on its old set (no timers) instead of waking for the borrower's timer")
    }

    @Test func aWatchAddedByABorrowerIsPolledByTheLoop() throws {
        let running = try RunningLoop()
        defer { running.stop() }
        let event = try EventFD()
        defer { event.close() }
        let seen = Atomic<Int>(0)
        let added: Bool? = running.borrow {
            running.loop.watch(event.fileDescriptor) { _ in
                event.drain()
                seen.add(1, ordering: .relaxed)
            }
            return true
        }
        #expect(added == true)
        event.signal()
        #expect(waitUntil(timeout: 5) { seen.load(ordering: .relaxed) == 1 })
    }

    @Test func anAwakeLoopIsNotLentAndWorkPostedMeanwhileWaitsForTheBorrower() throws {
        let running = try RunningLoop()
        defer { running.stop() }
        // Awake: a posted handler keeps the loop's thread busy for 300 ms.
        let busy = Atomic<Bool>(false)
        running.loop.post {
            busy.store(true, ordering: .releasing)
            MonotonicClock.sleep(for: .milliseconds(300))
            busy.store(false, ordering: .releasing)
        }
        #expect(waitUntil(timeout: 5) { busy.load(ordering: .acquiring) })
        #expect(!running.loop.runWhileAsleep {}, "the loop was lent while its thread ran a handler")
        #expect(waitUntil(timeout: 5) { !busy.load(ordering: .acquiring) })

        // Borrowed: work posted during the borrow runs only after the borrower has returned.
        let borrowing = Atomic<Bool>(false)
        let overlapped = Atomic<Int>(-1)  // -1 not run yet, 1 ran during the borrow, 0 after
        let lent: Bool? = running.borrow {
            borrowing.store(true, ordering: .releasing)
            running.loop.post { overlapped.store(borrowing.load(ordering: .acquiring) ? 1 : 0, ordering: .releasing) }
            MonotonicClock.sleep(for: .milliseconds(200))
            borrowing.store(false, ordering: .releasing)
            return true
        }
        #expect(lent == true)
        #expect(waitUntil(timeout: 5) { overlapped.load(ordering: .acquiring) != -1 })
        #expect(overlapped.load(ordering: .acquiring) == 0, "posted work ran while the loop was lent")
    }
}
