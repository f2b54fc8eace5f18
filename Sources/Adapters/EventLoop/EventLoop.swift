// SPDX-License-Identifier: Apache-2.0
import QiblaPlatform
import Synchronization
import SystemPackage

/// A single-threaded `poll(2)` reactor: the one thread that owns the D-Bus connection, the gpsd
/// socket and the IIO buffer file descriptors.
///
/// - Everything except ``post(_:)`` and ``stop()`` must be called on the loop's own thread (from
///   inside a handler, or before ``run()`` starts).
/// - Other threads (the sysfs polling thread, signal handling) hand work over with ``post(_:)``,
///   which writes to an `eventfd` so the loop wakes at once.
/// - With no timers armed the loop sleeps in `poll(…, -1)`: zero wakeups when idle.
/// - While the loop sleeps in `poll`, another thread may **borrow** it with
///   ``runWhileAsleep(_:)``: the work runs on that thread, as if on the loop's (the loop's thread
///   waits for it if it wakes meanwhile), so a thread that is awake anyway (the sampling thread)
///   does not have to wake the loop's as well. Loop-confined state is therefore confined to
///   *whoever holds the loop*: the loop's thread while it is awake, a borrower while it sleeps.
public final class EventLoop: @unchecked Sendable {
    /// Identifies a registered watch or timer, for removal.
    public struct Token: Hashable, Sendable {
        fileprivate let raw: UInt64
    }

    /// Readiness a watch waits for: `.readable` (`POLLIN`) and `.writable` (`POLLOUT`).
    public typealias Interest = PollEvents

    /// What `poll(2)` reported for a watch. `hangup`/`error` are reported even when not asked for.
    public typealias Readiness = PollEvents

    private struct Watch {
        var fd: FileDescriptor
        var interest: Interest
        var handler: (Readiness) -> Void
    }

    private struct Timer {
        var deadline: ContinuousClock.Instant
        var interval: Duration?
        var handler: () -> Void
    }

    private var watches: [UInt64: Watch] = [:]
    private var timers: [UInt64: Timer] = [:]
    /// The earliest deadline ``schedule(after:repeating:_:)`` set since a borrower began its work.
    private var earliestScheduled: ContinuousClock.Instant?
    /// Handlers run just before the loop goes to sleep in `poll` (libdbus dispatch, libgps buffered data).
    private var beforeSleep: [UInt64: () -> Void] = [:]
    /// `beforeSleep`'s hooks in token order, rebuilt when a hook is added or cancelled: running
    /// them iterates this array instead of copying the dictionary's values on every wakeup.
    private var beforeSleepHooks: [Hook] = []
    /// A closure stored at its own abstraction: putting a bare closure into an `Array` makes Swift
    /// box a reabstraction thunk for it, one heap allocation per `post`.
    private struct Hook { let run: () -> Void }
    private struct PostedWork { let run: @Sendable () -> Void }
    private var nextToken: UInt64 = 1
    private let wakeup: EventFD
    private let posted = Mutex<[PostedWork]>([])
    /// Posted work being run (loop thread); swapped with `posted`'s queue.
    private var running: [PostedWork] = []
    private let stopRequested = Atomic<Bool>(false)
    private let clock = ContinuousClock()

    /// Who holds the loop (``runWhileAsleep(_:)``): its own thread (awake), nobody (asleep in
    /// `poll`), a borrower, or a borrower while the loop's thread has woken and waits for it.
    private enum Holder: Int { case loopThread = 0, nobody = 1, borrower = 2, borrowerAwaited = 3 }
    private let holder = Atomic<Int>(Holder.loopThread.rawValue)
    /// Signalled by a borrower that gives the loop back while the loop's thread waits for it.
    private let loopReturned: EventFD
    /// When the loop's thread will wake by itself (its next timer), nil for never: a borrower that
    /// arms an earlier timer or changes the watches wakes it so it sleeps on the new set.
    private var sleepingUntil: ContinuousClock.Instant?

    /// Counts loop iterations that returned from `poll` (for the idle-wakeup tests and benchmarks).
    public private(set) var wakeupCount: UInt64 = 0

    public init() throws(Errno) {
        wakeup = try EventFD()
        do { loopReturned = try EventFD() } catch { wakeup.close(); throw error }
    }

    deinit {
        wakeup.close()
        loopReturned.close()
    }

    // MARK: Registration (loop thread only)

    /// Calls `handler` whenever `fd` is ready for `interest` (level-triggered, like `poll`).
    @discardableResult
    public func watch(_ fd: FileDescriptor, for interest: Interest = .readable,
                      _ handler: @escaping (Readiness) -> Void) -> Token {
        let token = makeToken()
        watches[token.raw] = Watch(fd: fd, interest: interest, handler: handler)
        pollSetIsStale = true
        return token
    }

    /// Changes what a watch waits for; an empty interest keeps the watch but stops polling it.
    public func update(_ token: Token, interest: Interest) {
        guard watches[token.raw]?.interest != interest else { return }
        watches[token.raw]?.interest = interest
        pollSetIsStale = true
    }

    /// Runs `handler` once after `delay`, or every `repeating` after that when given.
    @discardableResult
    public func schedule(after delay: Duration, repeating: Duration? = nil,
                         _ handler: @escaping () -> Void) -> Token {
        let token = makeToken()
        let deadline = clock.now.advanced(by: delay)
        timers[token.raw] = Timer(deadline: deadline, interval: repeating, handler: handler)
        earliestScheduled = min(earliestScheduled ?? deadline, deadline)
        return token
    }

    /// Runs `handler` on every iteration just before the loop sleeps.
    @discardableResult
    public func beforeSleeping(_ handler: @escaping () -> Void) -> Token {
        let token = makeToken()
        beforeSleep[token.raw] = handler
        rebuildBeforeSleepHooks()
        return token
    }

    private func rebuildBeforeSleepHooks() {
        beforeSleepHooks = beforeSleep.sorted { $0.key < $1.key }.map { Hook(run: $0.value) }
    }

    /// Removes a watch, timer or before-sleep hook. Removing twice is harmless.
    public func cancel(_ token: Token) {
        if watches.removeValue(forKey: token.raw) != nil { pollSetIsStale = true }
        timers[token.raw] = nil
        if beforeSleep.removeValue(forKey: token.raw) != nil { rebuildBeforeSleepHooks() }
    }

    /// Whether a timer is still armed.
    public func isScheduled(_ token: Token) -> Bool { timers[token.raw] != nil }

    // MARK: Cross-thread

    /// Queues `work` to run on the loop thread and wakes the loop. Safe from any thread.
    public func post(_ work: @escaping @Sendable () -> Void) {
        posted.withLock { $0.append(PostedWork(run: work)) }
        wakeup.signal()
    }

    /// Runs `work` on the calling thread if the loop's thread is asleep in `poll`, holding the loop
    /// meanwhile (if the loop's thread wakes, it waits until `work` returns), and returns true.
    /// Returns false without running `work` when the loop's thread is awake or the loop is
    /// borrowed already: then ``post(_:)`` it. Safe from any thread but the loop's own.
    ///
    /// `work` may use everything a handler may (watch, schedule, cancel, post); if it arms a timer
    /// earlier than the loop's thread planned to wake, or changes the watches, the loop's thread
    /// is woken once afterwards to sleep on the new set. Leader/follower hand-off: a thread that is
    /// awake anyway does the loop's work instead of waking a second thread for it.
    public func runWhileAsleep(_ work: () -> Void) -> Bool {
        guard holder.compareExchange(expected: Holder.nobody.rawValue, desired: Holder.borrower.rawValue,
                                     ordering: .acquiring).exchanged else { return false }
        earliestScheduled = nil
        work()
        // The sleeping loop counted every timer it had; only one armed by `work` can be earlier.
        var mustWake = pollSetIsStale
        if !mustWake, let next = earliestScheduled {
            if let sleepingUntil { mustWake = next < sleepingUntil } else { mustWake = true }
        }
        let previous = holder.exchange(Holder.nobody.rawValue, ordering: .releasing)
        if previous == Holder.borrowerAwaited.rawValue {
            loopReturned.signal()  // awake already: it recomputes its sleep on its next iteration
        } else if mustWake {
            wakeup.signal()
        }
        return true
    }

    /// The loop's thread takes the loop back after `poll` returns, waiting for a borrower to finish.
    private func reclaimFromBorrower() {
        while !holder.compareExchange(expected: Holder.nobody.rawValue, desired: Holder.loopThread.rawValue,
                                      ordering: .acquiring).exchanged {
            guard holder.compareExchange(expected: Holder.borrower.rawValue, desired: Holder.borrowerAwaited.rawValue,
                                         ordering: .relaxed).exchanged else { continue }
            _ = try? loopReturned.fileDescriptor.poll(for: .readable, timeout: nil)
            loopReturned.drain()
        }
    }

    private func nextTimerDeadline() -> ContinuousClock.Instant? {
        timers.values.lazy.map(\.deadline).min()
    }

    /// Asks ``run()`` to return after the current iteration. Safe from any thread.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        wakeup.signal()
    }

    // MARK: Running

    /// Runs until ``stop()``. Returns normally; errors from `poll` other than `EINTR` are thrown.
    public func run() throws(Errno) {
        stopRequested.store(false, ordering: .releasing)
        while !stopRequested.load(ordering: .acquiring) {
            try runOnce(maximumWait: nil)
        }
    }

    /// One iteration: before-sleep hooks, `poll` (bounded by the next timer and `maximumWait`),
    /// then ready handlers, due timers and posted work.
    public func runOnce(maximumWait: Duration?) throws(Errno) {
        if !beforeSleepHooks.isEmpty { for hook in beforeSleepHooks { hook.run() } }
        if stopRequested.load(ordering: .acquiring) { return }

        var wait = maximumWait
        let now = clock.now
        sleepingUntil = maximumWait.map { now.advanced(by: $0) }
        if let next = nextTimerDeadline() {
            let untilNext = max(.zero, now.duration(to: next))
            wait = min(wait ?? untilNext, untilNext)
            sleepingUntil = min(sleepingUntil ?? next, next)
        }
        if !posted.withLock({ $0.isEmpty }) { wait = .zero }

        if pollSetIsStale { rebuildPollSet() }
        // Asleep: a borrower may hold the loop until poll returns (runWhileAsleep).
        holder.store(Holder.nobody.rawValue, ordering: .releasing)
        let ready: Int
        do { ready = try pollSet.poll(timeout: wait) } catch {
            reclaimFromBorrower()
            throw error
        }
        reclaimFromBorrower()
        wakeupCount &+= 1

        if ready > 0 {
            if !pollSet.returnedEvents(at: 0).isEmpty { wakeup.drain() }
            // Handlers may add or cancel watches; iterate over this round's snapshot.
            let keys = pollKeys
            let results = pollSet
            for (index, key) in keys.enumerated() {
                let readiness = results.returnedEvents(at: index + 1)
                // The handler may have been cancelled by an earlier handler in this iteration.
                guard !readiness.isEmpty, let live = watches[key] else { continue }
                live.handler(readiness)
            }
        }
        fireDueTimers()
        // Swap the queue with a spare of the same capacity: copying it out and clearing it in
        // place would allocate a new buffer on every wakeup (the copy shares the old one).
        posted.withLock { queue in swap(&queue, &running) }
        for item in running { item.run() }
        running.removeAll(keepingCapacity: true)
    }

    /// The `pollfd` array (the eventfd first, then active watches in registration order) is kept
    /// between iterations and rebuilt only when watches change, so a steady loop allocates nothing.
    private var pollSet = PollSet()
    private var pollKeys: [UInt64] = []
    private var pollSetIsStale = true

    private func rebuildPollSet() {
        let ordered = watches.filter { !$0.value.interest.isEmpty }.sorted { $0.key < $1.key }
        pollKeys = ordered.map(\.key)
        pollSet.removeAll()
        pollSet.reserveCapacity(ordered.count + 1)
        pollSet.append(wakeup.fileDescriptor, events: .readable)
        for (_, watch) in ordered {
            pollSet.append(watch.fd, events: watch.interest)
        }
        pollSetIsStale = false
    }

    private func fireDueTimers() {
        let now = clock.now
        let due = timers.filter { $0.value.deadline <= now }.sorted { $0.value.deadline < $1.value.deadline }
        for (key, timer) in due {
            guard timers[key] != nil else { continue }
            if let interval = timer.interval {
                // Re-arm from now, not from the old deadline, so a stalled loop does not burst.
                timers[key]?.deadline = now.advanced(by: interval)
            } else {
                timers[key] = nil
            }
            timer.handler()
        }
    }

    private func makeToken() -> Token {
        defer { nextToken += 1 }
        return Token(raw: nextToken)
    }
}
