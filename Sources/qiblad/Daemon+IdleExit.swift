// SPDX-License-Identifier: Apache-2.0
import QiblaDaemon
import QiblaEventLoop
import QiblaInterface

/// `idle-exit`: the one timer armed while nobody holds a claim, and leaving without losing a call.
extension Daemon {
    /// Arms, keeps or cancels the one-shot idle-exit timer as ``RunPolicy`` says: armed while
    /// nobody holds a claim, it wakes the loop once, to exit with status 0.
    func updateIdleExitTimer() {
        let policy = model.configuration.run
        switch policy.idleTimerAction(armedSeconds: idleExitTimer?.seconds, claimed: model.claims.isClaimed) {
        case .keep:
            return
        case .cancel:
            if let timer = idleExitTimer { loop.cancel(timer.token) }
            idleExitTimer = nil
        case .arm(let seconds):
            if let timer = idleExitTimer { loop.cancel(timer.token) }
            let token = loop.schedule(after: .seconds(seconds)) { [unowned self] in
                idleExitTimer = nil
                guard model.configuration.run.idleExitDelaySeconds(claimed: model.claims.isClaimed) != nil else { return }
                leaveForIdleExit(after: seconds)
            }
            idleExitTimer = (token, seconds)
        }
    }

    /// Exits for `idle-exit` without losing a call: the name is released first (a round trip, so
    /// every call sent to it before then is already queued here), the loop serves what is queued,
    /// and only then qiblad exits — unless one of those calls was a claim, in which case it takes
    /// the name back and stays (the pattern of systemd's `bus_event_loop_with_idle`).
    func leaveForIdleExit(after seconds: Double) {
        logger.info("no compass claim for \(seconds) s; releasing \(QiblaBus.name) (idle-exit)")
        do { try connection.releaseName(QiblaBus.name) } catch {
            logger.warning("cannot release \(QiblaBus.name) (\(error.message)); exiting anyway")
        }
        // A zero-delay timer runs after the loop has dispatched what is queued (before it sleeps).
        loop.schedule(after: .zero) { [unowned self] in
            guard model.claims.isClaimed else {
                logger.info("exiting (idle-exit)")
                requestExit(status: 0)
                return
            }
            switch try? connection.requestName(QiblaBus.name) {
            case .primaryOwner?, .alreadyOwner?:
                logger.info("a compass claim arrived while leaving; keeping \(QiblaBus.name) and staying (idle-exit cancelled)")
            default:
                logger.info("a compass claim arrived while leaving, but another qiblad owns \(QiblaBus.name) now; exiting (idle-exit)")
                requestExit(status: 0)
            }
        }
    }
}
