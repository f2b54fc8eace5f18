// SPDX-License-Identifier: Apache-2.0
import Synchronization
import SystemPackage

/// A plain detached POSIX thread (`pthread_create(3)` + `pthread_detach(3)`) with a stop request,
/// for work that blocks: slow sysfs reads, a blocking `connect(2)`, a simulator writing samples.
/// Swift concurrency's cooperative pool must not be blocked by I/O, and Foundation's `Thread` is
/// not used outside the tests.
///
/// The body receives the thread object: it checks ``isStopRequested`` and sleeps with
/// ``sleep(for:)``, which ``requestStop()`` interrupts. Nobody joins the thread; ``waitForExit(timeout:)``
/// waits for the body to return when that matters (before removing files the body writes).
/// The thread starts with the caller's signal mask.
public final class PlatformThread: Sendable {
    private let stopSignal: EventFD
    private let exitSignal: EventFD
    private let stopFlag = Atomic<Bool>(false)
    private let exitedFlag = Atomic<Bool>(false)

    private init(stopSignal: EventFD, exitSignal: EventFD) {
        self.stopSignal = stopSignal
        self.exitSignal = exitSignal
    }

    deinit {
        stopSignal.close()
        exitSignal.close()
    }

    /// Starts `body` on a new detached thread; `body` should return soon after ``isStopRequested``.
    /// - Throws: the `Errno` of `eventfd(2)` or `pthread_create(3)`.
    @discardableResult
    public static func start(_ body: @escaping @Sendable (PlatformThread) -> Void) throws(Errno) -> PlatformThread {
        let stopSignal = try EventFD()
        let exitSignal: EventFD
        do { exitSignal = try EventFD() } catch { stopSignal.close(); throw error }
        let thread = PlatformThread(stopSignal: stopSignal, exitSignal: exitSignal)
        try Syscalls.startDetachedThread {
            body(thread)
            thread.exitedFlag.store(true, ordering: .releasing)
            thread.exitSignal.signal()
        }
        return thread
    }

    /// Asks the thread to finish and wakes it from ``sleep(for:)``. Safe from any thread; does not wait.
    public func requestStop() {
        stopFlag.store(true, ordering: .releasing)
        stopSignal.signal()
    }

    public var isStopRequested: Bool { stopFlag.load(ordering: .acquiring) }

    /// Whether the body has returned.
    public var hasExited: Bool { exitedFlag.load(ordering: .acquiring) }

    /// On the thread itself: sleeps up to `duration` in `poll(2)` on the stop eventfd.
    /// Returns false when a stop was requested (before or during the sleep).
    public func sleep(for duration: Duration) -> Bool {
        if isStopRequested { return false }
        _ = try? stopSignal.fileDescriptor.poll(for: .readable, timeout: max(.zero, duration))
        return !isStopRequested
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
