// The one place this module creates a thread: a plain pthread for blocking sysfs reads, so a slow
// attribute read (about 2 s on an LIS3MDL) never blocks the event loop. Swift concurrency's
// cooperative pool must not be blocked by I/O, and Foundation's Thread is off limits here.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import QiblaEventLoop
import Synchronization

/// A detached pthread with a stop request that also interrupts its sleeps.
final class SensorThread: Sendable {
    private let stopSignal: EventFD
    private let stopFlag = Atomic<Bool>(false)
    private let exitedFlag = Atomic<Bool>(false)

    private init(stopSignal: EventFD) { self.stopSignal = stopSignal }

    deinit { stopSignal.close() }

    /// Starts `body` on a new detached thread; `body` should return soon after ``isStopRequested``.
    static func start(_ body: @escaping @Sendable (SensorThread) -> Void) throws(SensorSetupError) -> SensorThread {
        let stopSignal: EventFD
        do { stopSignal = try EventFD() } catch { throw SensorSetupError("eventfd: \(error)") }
        let thread = SensorThread(stopSignal: stopSignal)
        let context = Unmanaged.passRetained(Context(thread: thread, body: body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(&handle, nil, { raw in
            guard let raw else { return nil }
            let context = Unmanaged<Context>.fromOpaque(raw).takeRetainedValue()
            context.body(context.thread)
            context.thread.exitedFlag.store(true, ordering: .releasing)
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Context>.fromOpaque(context).release()
            throw SensorSetupError("pthread_create failed (\(result))")
        }
        pthread_detach(handle)
        return thread
    }

    private final class Context: Sendable {
        let thread: SensorThread
        let body: @Sendable (SensorThread) -> Void
        init(thread: SensorThread, body: @escaping @Sendable (SensorThread) -> Void) {
            self.thread = thread; self.body = body
        }
    }

    /// Asks the thread to finish; wakes it from ``sleep(for:)``. Safe from any thread; does not wait.
    func requestStop() {
        stopFlag.store(true, ordering: .releasing)
        stopSignal.signal()
    }

    var isStopRequested: Bool { stopFlag.load(ordering: .acquiring) }

    /// Whether the thread body has returned.
    var hasExited: Bool { exitedFlag.load(ordering: .acquiring) }

    /// Sleeps up to `duration` in `poll` on the stop eventfd; returns `false` when stop was requested.
    func sleep(for duration: Duration) -> Bool {
        if isStopRequested { return false }
        let (seconds, attoseconds) = duration.components
        let milliseconds = Int32(clamping: max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000))
        var entry = pollfd(fd: stopSignal.rawValue, events: Int16(POLLIN), revents: 0)
        _ = poll(&entry, 1, milliseconds)
        return !isStopRequested
    }
}
