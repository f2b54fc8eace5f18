// SPDX-License-Identifier: Apache-2.0
import Synchronization
import SystemPackage

/// A plain detached POSIX thread (`pthread_create(3)` + `pthread_detach(3)`) with a stop request,
/// for work that blocks: slow sysfs reads, a blocking `connect(2)`, a simulator writing samples.
/// Swift concurrency's cooperative pool must not be blocked by I/O, and Foundation's `Thread` is
/// not used outside the tests.
///
/// The body receives the thread object: it checks ``isStopRequested`` and sleeps with
/// ``sleep(for:)`` or ``sleep(untilMonotonicNanoseconds:)``, which ``requestStop()`` interrupts (a
/// `futex(2)` wait on the stop flag: one system call per sleep, no descriptor). Nobody joins the thread; ``waitForExit(timeout:)``
/// waits for the body to return when that matters (before removing files the body writes).
/// The thread starts with the caller's signal mask.
public final class PlatformThread: Sendable {
    /// 0 while running, 1 once a stop is requested; the thread sleeps on it.
    private let stopWord = Syscalls.FutexWord(0)
    private let exitSignal: EventFD
    private let exitedFlag = Atomic<Bool>(false)

    private init(exitSignal: EventFD) {
        self.exitSignal = exitSignal
    }

    deinit {
        exitSignal.close()
    }

    /// Starts `body` on a new detached thread; `body` should return soon after ``isStopRequested``.
    /// - Throws: the `Errno` of `eventfd(2)` or `pthread_create(3)`.
    @discardableResult
    public static func start(_ body: @escaping @Sendable (PlatformThread) -> Void) throws(Errno) -> PlatformThread {
        let thread = PlatformThread(exitSignal: try EventFD())
        try Syscalls.startDetachedThread {
            body(thread)
            thread.exitedFlag.store(true, ordering: .releasing)
            thread.exitSignal.signal()
        }
        return thread
    }

    /// Asks the thread to finish and wakes it from ``sleep(for:)``. Safe from any thread; does not wait.
    public func requestStop() { stopWord.storeAndWake(1) }

    public var isStopRequested: Bool { stopWord.value != 0 }

    /// Whether the body has returned.
    public var hasExited: Bool { exitedFlag.load(ordering: .acquiring) }

    /// On the thread itself: sleeps up to `duration`. Returns false when a stop was requested
    /// (before or during the sleep).
    public func sleep(for duration: Duration) -> Bool {
        let (seconds, attoseconds) = max(.zero, duration).components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return sleep(untilMonotonicNanoseconds: .max) }
        let (deadline, overflow) = MonotonicClock.nowNanoseconds()
            .addingReportingOverflow(nanoseconds.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue)
        return sleep(untilMonotonicNanoseconds: overflow ? .max : deadline)
    }

    /// On the thread itself: sleeps until the `CLOCK_MONOTONIC` time `deadline` (nanoseconds, as
    /// ``MonotonicClock/nowNanoseconds()``), a fixed schedule that does not drift with the time
    /// the work between sleeps takes. Returns false when a stop was requested (before or during).
    public func sleep(untilMonotonicNanoseconds deadline: Int64) -> Bool {
        while !isStopRequested {
            // Woken (a stop), interrupted or raced with a stop: check again; timed out: done.
            guard stopWord.wait(whileEquals: 0, untilMonotonicNanoseconds: deadline) else { return !isStopRequested }
        }
        return false
    }

    /// From another thread: waits up to `timeout` for the body to return; true when it has.
    @discardableResult
    public func waitForExit(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while !hasExited {
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { return false }
            _ = try? exitSignal.fileDescriptor.poll(for: .readable, timeout: left)
        }
        return true
    }

    /// Identifies a running thread (`pthread_self(3)`, compared with `pthread_equal(3)`).
    public struct ID: Sendable, Equatable {
        let handle: Syscalls.ThreadHandle
    }

    /// The calling thread, for "am I on the loop thread?" checks.
    public static var currentID: ID { ID(handle: Syscalls.currentThread()) }
}
