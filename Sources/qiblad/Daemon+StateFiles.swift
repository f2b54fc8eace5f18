// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaDaemon
import QiblaIIO
import QiblaInterface
import QiblaPlatform
import QiblaState

/// What persists, and when: the state files (manual and last known location, each magnetometer's
/// calibration and sun-check correction) read at start and written on the writer's thread as the
/// models say (``LocationModel/lastKnownIsUnsaved``, ``CompassModel/fitToPersist``).
extension Daemon {
    func loadState() {
        do { try store.prepare() } catch {
            logger.warning("state directory \(store.directory) is not usable (\(error)); changes will not persist")
        }
        func load(_ file: String) -> Location? {
            switch store.loadLocation(file) {
            case .success(let location): return location
            case .failure(let problem):
                logger.error("state file rejected: \(problem); starting without it")
                return nil
            }
        }
        var manual = load(StateStore.manualLocationFile)
        let lastKnown = load(StateStore.lastKnownLocationFile)
        let now = WallClock.nowUnixSeconds()
        if let runLocation = options.runLocation {
            manual = Location(position: runLocation, timestampUnixSeconds: now)
            logger.info("manual location for this run: \(runLocation)")
        }
        model.apply(.restored(manual: manual, lastKnown: lastKnown), nowUnixSeconds: now)
        publish()
    }

    /// Persists the last known location at most once a minute while fixes arrive, and on exit.
    func scheduleLastKnownWrite() {
        guard lastKnownTimer == nil, model.location.lastKnownIsUnsaved else { return }
        lastKnownTimer = loop.schedule(after: .seconds(60)) { [unowned self] in
            lastKnownTimer = nil
            guard model.location.lastKnownIsUnsaved, let location = model.location.lastKnown else { return }
            writer.saveLocation(location, as: StateStore.lastKnownLocationFile) { [unowned self] result in
                switch result {
                case .success: model.apply(.lastKnownSaved(location), nowUnixSeconds: WallClock.nowUnixSeconds())
                case .failure(let error):
                    logger.error("cannot write the last known location to \(store.directory): \(error)")
                }
            }
        }
    }

    /// Writes the last known location now, on this thread (at stop and exit).
    func flushLastKnownNow() {
        if let token = lastKnownTimer { loop.cancel(token); lastKnownTimer = nil }
        guard model.location.lastKnownIsUnsaved, let location = model.location.lastKnown else { return }
        do {
            try store.saveLocation(location, as: StateStore.lastKnownLocationFile)
            model.apply(.lastKnownSaved(location), nowUnixSeconds: WallClock.nowUnixSeconds())
        } catch {
            logger.error("cannot write the last known location to \(store.directory): \(error)")
        }
    }

    /// Writes the manual location file on the writer's thread; the model changes and the caller is
    /// answered only once the file is safely written.
    func saveManual(_ location: Location?, reply: PendingReply, then log: @escaping @Sendable () -> Void) {
        writer.saveLocation(location, as: StateStore.manualLocationFile) { [unowned self] result in
            switch result {
            case .success:
                log()
                model.apply(.manualSet(location), nowUnixSeconds: WallClock.nowUnixSeconds())
                publish()
                reply.succeed()
            case .failure(let error):
                reply.fail(.failed("cannot save the manual location in \(store.directory): \(error)"))
            }
        }
    }

    /// Forgets the calibration of the magnetometer in use (or, unclaimed, of the one discovery finds
    /// now) and its file; answered once the file is gone.
    func resetCalibration(reply: PendingReply) {
        let device = calibratedDevice ?? discoverMagnetometer().map { (name: $0.name, path: $0.stableLocation) }
        guard let device else {
            reply.fail(ServiceError(.notSupported, "there is no magnetometer to calibrate"))
            return
        }
        writer.removeCalibration(deviceName: device.name, devicePath: device.path) { [unowned self] result in
            switch result {
            case .success:
                logger.info("calibration of \(device.name) reset; learning it again")
                model.apply(.resetCalibration, nowUnixSeconds: WallClock.nowUnixSeconds())
                forgetHeadingCorrection(of: device)
                publish()
                reply.succeed()
            case .failure(let error):
                reply.fail(.failed("cannot remove the calibration file in \(store.directory): \(error)"))
            }
        }
    }

    func discoverMagnetometer() -> IIODevice? {
        let sensors = options.configuration.sensors
        return discoverSensors(sysfsRoot: sensors.sysfsRoot, preferredMagnetometerName: sensors.preferredMagnetometerName,
                               preferredAccelerometerName: sensors.preferredAccelerometerName).magnetometer.device
    }

    /// A magnetometer appeared: when it is not the one the model's calibration belongs to, start
    /// over and restore its own stored calibration, if any.
    func magnetometerAppeared(_ device: IIODevice, now: Double) {
        let identity = (name: device.name, path: device.stableLocation)
        if let current = calibratedDevice, current == identity { return }
        calibratedDevice = identity
        model.apply(.resetCalibration, nowUnixSeconds: now)
        restoreHeadingCorrection(of: identity, now: now)
        switch store.loadCalibration(deviceName: identity.name, devicePath: identity.path) {
        case .success(let stored?):
            let b = stored.fit.hardIronOffsetMicrotesla.length
            logger.info("restored the calibration of \(device) (|b| \(b) µT, residual \(stored.fit.residualRMSMicrotesla) µT); trusted once live data confirms it")
            model.apply(.restoreCalibration(stored.fit), nowUnixSeconds: now)
        case .success(nil):
            logger.info("no stored calibration for \(device); learning it while the compass is used")
        case .failure(let problem):
            logger.error("calibration file rejected: \(problem); learning it again")
        }
    }

    /// Logs what a batch of samples changed in the compass (``DaemonLog``) and writes a newly
    /// accepted fit.
    func noteCalibrationChanges(from before: CompassState) {
        write(log.compassChanges(from: before, to: model.compass, nowSeconds: monotonicSeconds))
        if let (fit, generation) = model.compass.fitToPersist, let device = calibratedDevice {
            model.apply(.calibrationPersisted(generation: generation), nowUnixSeconds: WallClock.nowUnixSeconds())
            let stored = StoredCalibration(deviceName: device.name, devicePath: device.path, fit: fit,
                                           timestampUnixSeconds: WallClock.nowUnixSeconds())
            writer.saveCalibration(stored) { [logger, store] result in
                if case .failure(let error) = result {
                    logger.error("cannot save the calibration in \(store.directory): \(error)")
                }
            }
        }
    }

    /// A magnetometer appeared: use its stored heading correction, if any.
    func restoreHeadingCorrection(of device: (name: String, path: String), now: Double) {
        switch store.loadHeadingCorrection(deviceName: device.name, devicePath: device.path) {
        case .success(let stored?):
            logger.info("restored the sun-check heading correction of \(device.name): \(stored.correctionDegrees)°")
            model.apply(.headingCorrection(stored.correctionDegrees), nowUnixSeconds: now)
        case .success(nil):
            model.apply(.headingCorrection(nil), nowUnixSeconds: now)
        case .failure(let problem):
            logger.error("heading correction file rejected: \(problem)")
            model.apply(.headingCorrection(nil), nowUnixSeconds: now)
        }
    }

    /// `ResetCalibration`: the sun-check correction goes with the calibration.
    func forgetHeadingCorrection(of device: (name: String, path: String)) {
        model.apply(.headingCorrection(nil), nowUnixSeconds: WallClock.nowUnixSeconds())
        writer.removeHeadingCorrection(deviceName: device.name, devicePath: device.path) { [logger, store] result in
            if case .failure(let error) = result {
                logger.error("cannot remove the heading correction file in \(store.directory): \(error)")
            }
        }
    }

    /// `CheckHeadingWithSun` with `store`: the correction that makes the heading agree with the
    /// check is written for the magnetometer in use, then applied; the caller hears `error` once
    /// the file is written.
    func storeHeadingCorrection(afterCheckFound error: Double, reply: PendingReply) {
        guard let device = calibratedDevice else {
            reply.fail(ServiceError(.notAvailable, "no magnetometer to keep a correction for"))
            return
        }
        let correction = model.headingCorrection(afterStoring: error)
        let stored = StoredHeadingCorrection(deviceName: device.name, devicePath: device.path,
                                             correctionDegrees: correction, timestampUnixSeconds: WallClock.nowUnixSeconds())
        writer.saveHeadingCorrection(stored) { [unowned self] result in
            switch result {
            case .success:
                model.apply(.headingCorrection(correction), nowUnixSeconds: WallClock.nowUnixSeconds())
                publish()
                reply.succeed(.double(error))
            case .failure(let problem):
                reply.fail(.failed("cannot save the heading correction in \(store.directory): \(problem)"))
            }
        }
    }
}
