// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaPlatform
import Synchronization
import SystemPackage

/// Writes state files away from the thread that answers D-Bus: jobs run in order on a worker
/// thread, and each completion is handed to `deliver` (the daemon posts it back to its event loop),
/// so a call like `SetManualLocation` is answered only after its file is safely on disk
/// (temporary file, fsync, rename, fsync of the directory).
///
/// The worker exists only while there is something to write: the first job starts it, it exits
/// when the queue is empty. An idle daemon has no writer thread and no wakeups.
public final class StateWriter: Sendable {
    public typealias Completion = @Sendable (Result<Void, Errno>) -> Void
    private typealias Job = (work: @Sendable (StateStore) throws(Errno) -> Void, completion: Completion)

    private struct Queue {
        var jobs: [Job] = []
        /// The worker thread while it runs.
        var worker: PlatformThread?
        var isRunning = false
    }

    private let store: StateStore
    private let deliver: @Sendable (@escaping @Sendable () -> Void) -> Void
    private let queue = Mutex(Queue())

    /// - Parameters:
    ///   - store: where the files go.
    ///   - deliver: runs a completion on the caller's thread (e.g. `loop.post`).
    public init(store: StateStore, deliver: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        self.store = store
        self.deliver = deliver
    }

    /// Writes (or, for nil, removes) a location file, then calls `completion` through `deliver`.
    public func saveLocation(_ location: Location?, as name: String, completion: @escaping Completion) {
        submit({ (store: StateStore) throws(Errno) in try store.saveLocation(location, as: name) }, completion: completion)
    }

    /// Writes a magnetometer calibration, then calls `completion` through `deliver`.
    public func saveCalibration(_ calibration: StoredCalibration, completion: @escaping Completion) {
        submit({ (store: StateStore) throws(Errno) in try store.saveCalibration(calibration) }, completion: completion)
    }

    /// Removes a magnetometer's calibration file, then calls `completion` through `deliver`.
    public func removeCalibration(deviceName: String, devicePath: String, completion: @escaping Completion) {
        submit({ (store: StateStore) throws(Errno) in try store.removeCalibration(deviceName: deviceName, devicePath: devicePath) },
               completion: completion)
    }

    /// Queues one write; the worker starts if none runs.
    func submit(_ work: @escaping @Sendable (StateStore) throws(Errno) -> Void, completion: @escaping Completion) {
        let startWorker = queue.withLock { q -> Bool in
            q.jobs.append((work, completion))
            guard !q.isRunning else { return false }
            q.isRunning = true
            return true
        }
        guard startWorker else { return }
        do {
            let thread = try PlatformThread.start { [self] _ in runJobs() }
            queue.withLock { q in if q.isRunning { q.worker = thread } }
        } catch {
            // No thread to be had: write here rather than lose the data.
            runJobs()
        }
    }

    /// Runs queued jobs until the queue is empty (on the worker).
    private func runJobs() {
        while let job = queue.withLock({ q -> Job? in
            guard !q.jobs.isEmpty else {
                q.isRunning = false
                q.worker = nil
                return nil
            }
            return q.jobs.removeFirst()
        }) {
            let result: Result<Void, Errno>
            do { try job.work(store); result = .success(()) } catch { result = .failure(error) }
            let completion = job.completion
            deliver { completion(result) }
        }
    }

    /// Waits (up to `timeout`) until every submitted write has finished, e.g. at shutdown.
    /// Returns false when writes were still running.
    @discardableResult
    public func drain(timeout: Duration = .seconds(10)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (running, worker) = queue.withLock { ($0.isRunning, $0.worker) }
            guard running else { return true }
            if let worker {
                _ = worker.waitForExit(timeout: max(.zero, ContinuousClock.now.duration(to: deadline)))
            } else {
                MonotonicClock.sleep(for: .milliseconds(1))
            }
            if ContinuousClock.now >= deadline { return !queue.withLock { $0.isRunning } }
        }
    }
}
