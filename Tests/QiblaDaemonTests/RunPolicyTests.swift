// SPDX-License-Identifier: Apache-2.0
// always-on and idle-exit: when the live sources run, when an idle daemon leaves, and what the one
// idle-exit timer does as claims come and go.
import Testing
@testable import QiblaDaemon

@Suite struct RunPolicyTests {
    @Test func byDefaultTheSourcesRunOnlyWhileClaimedAndTheDaemonNeverExits() {
        let policy = RunPolicy()
        #expect(!policy.liveSourcesRun(claimed: false))
        #expect(policy.liveSourcesRun(claimed: true))
        #expect(policy.idleExitDelaySeconds(claimed: false) == nil)
        #expect(policy.idleExitDelaySeconds(claimed: true) == nil)
    }

    @Test func alwaysOnRunsTheSourcesWithoutAClaimAndNeverExits() {
        let policy = RunPolicy(alwaysOn: true, idleExitSeconds: 5)
        #expect(policy.liveSourcesRun(claimed: false) && policy.liveSourcesRun(claimed: true))
        #expect(policy.idleExitDelaySeconds(claimed: false) == nil, "always-on wins over idle-exit")
    }

    @Test func idleExitCountsOnlyWhileNobodyClaims() {
        let policy = RunPolicy(idleExitSeconds: 1)
        #expect(policy.idleExitDelaySeconds(claimed: false) == 1)
        #expect(policy.idleExitDelaySeconds(claimed: true) == nil, "never exits while a claim is held")
        #expect(RunPolicy(idleExitSeconds: 0).idleExitDelaySeconds(claimed: false) == nil)
    }

    /// Start idle → armed; a claim → cancelled; still claimed → nothing; the last release → armed
    /// again from that moment; other events while idle → kept (the count is not restarted); a
    /// reload with another value → re-armed; idle-exit turned off → cancelled.
    @Test func theOneTimerFollowsTheClaims() {
        let policy = RunPolicy(idleExitSeconds: 2)
        #expect(policy.idleTimerAction(armedSeconds: nil, claimed: false) == .arm(seconds: 2))
        #expect(policy.idleTimerAction(armedSeconds: 2, claimed: true) == .cancel)
        #expect(policy.idleTimerAction(armedSeconds: nil, claimed: true) == .keep)
        #expect(policy.idleTimerAction(armedSeconds: nil, claimed: false) == .arm(seconds: 2))
        #expect(policy.idleTimerAction(armedSeconds: 2, claimed: false) == .keep)
        #expect(RunPolicy(idleExitSeconds: 5).idleTimerAction(armedSeconds: 2, claimed: false) == .arm(seconds: 5))
        #expect(RunPolicy().idleTimerAction(armedSeconds: 2, claimed: false) == .cancel)
        #expect(RunPolicy(alwaysOn: true, idleExitSeconds: 2).idleTimerAction(armedSeconds: 2, claimed: false) == .cancel)
        #expect(RunPolicy().idleTimerAction(armedSeconds: nil, claimed: false) == .keep)
    }

    /// The model answers from its claims and its configuration (a reload changes it).
    @Test func theModelRunsTheSourcesWhenClaimedOrAlwaysOn() {
        var model = DaemonModel()
        #expect(!model.liveSourcesRun)
        _ = model.claim(by: ":1.1")
        #expect(model.liveSourcesRun)
        _ = model.release(by: ":1.1")
        #expect(!model.liveSourcesRun)
        var configuration = DaemonModel.Configuration()
        configuration.run.alwaysOn = true
        model.reconfigure(configuration, nowUnixSeconds: newYear2026)
        #expect(model.liveSourcesRun)
    }

    /// The sun check needs the sensors running: with always-on that is so without a claim.
    @Test func theSunCheckIsAllowedWithoutAClaimWhenAlwaysOn() {
        var model = DaemonModel()
        #expect(model.checkHeadingWithSun(alignment: .sun, nowUnixSeconds: newYear2026) == .failure(.notClaimed))
        var configuration = DaemonModel.Configuration()
        configuration.run.alwaysOn = true
        model.reconfigure(configuration, nowUnixSeconds: newYear2026)
        #expect(model.checkHeadingWithSun(alignment: .sun, nowUnixSeconds: newYear2026) == .failure(.noLocation))
    }
}
