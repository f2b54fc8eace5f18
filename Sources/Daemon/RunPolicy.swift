// SPDX-License-Identifier: Apache-2.0
/// When the live sources (sensors, GeoClue2 or gpsd) run and when an unneeded daemon leaves: the
/// `always-on` and `idle-exit` keys of the configuration. Pure: the claims come in as a flag, and
/// the wiring turns the answers into starting, stopping and one timer.
public struct RunPolicy: Sendable, Equatable {
    /// `always-on`: keep the live sources running with no claim, so `HasCompass`, `Heading` and a
    /// live position are published to clients that cannot claim (kiosks, panel widgets that only
    /// read properties or listen to signals). Off by default: without a claim nothing runs.
    public var alwaysOn = false
    /// `idle-exit`: seconds without any claim after which the daemon exits with status 0 (D-Bus
    /// activation starts it again on the next call); nil (the default) never exits. Ignored with
    /// `always-on`, which keeps the daemon busy for clients that do not claim.
    public var idleExitSeconds: Double?

    public init(alwaysOn: Bool = false, idleExitSeconds: Double? = nil) {
        self.alwaysOn = alwaysOn
        self.idleExitSeconds = idleExitSeconds
    }

    /// Whether the live sources should run now.
    public func liveSourcesRun(claimed: Bool) -> Bool { alwaysOn || claimed }

    /// How long an idle daemon waits before it exits, counted from the moment it became idle (its
    /// start, or the last release): nil while a claim is held, with `always-on`, or with no
    /// `idle-exit`.
    public func idleExitDelaySeconds(claimed: Bool) -> Double? {
        guard !claimed, !alwaysOn, let idleExitSeconds, idleExitSeconds > 0 else { return nil }
        return idleExitSeconds
    }

    /// What to do with the one idle-exit timer.
    public enum TimerAction: Sendable, Equatable {
        /// Leave it as it is (armed for the same delay, or not armed and not wanted).
        case keep
        /// Cancel it: a claim arrived, or `idle-exit` was turned off.
        case cancel
        /// Arm it (cancelling any other first) to fire once after this many seconds.
        case arm(seconds: Double)
    }

    /// The timer action that takes the daemon from `armedSeconds` (the delay the timer in place was
    /// armed with; nil: none) to ``idleExitDelaySeconds(claimed:)``. A timer in place is kept while
    /// the daemon stays idle with the same delay, so the count is not restarted by unrelated
    /// events; one changed by a reload starts over. It is a one-shot timer: an idle daemon wakes up
    /// once, to exit, and not before.
    public func idleTimerAction(armedSeconds: Double?, claimed: Bool) -> TimerAction {
        switch (armedSeconds, idleExitDelaySeconds(claimed: claimed)) {
        case (nil, nil): .keep
        case (_?, nil): .cancel
        case (let armed?, let wanted?) where armed == wanted: .keep
        case (_, let wanted?): .arm(seconds: wanted)
        }
    }
}
