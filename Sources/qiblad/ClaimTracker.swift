/// Who holds a compass claim: unique bus names, one claim each (a second claim by the same
/// client is a no-op). The first claim starts the live sources, the last release — or the
/// claimant leaving the bus (NameOwnerChanged) — stops them; like iio-sensor-proxy's
/// ClaimAccelerometer/ReleaseAccelerometer.
struct ClaimTracker {
    private(set) var holders: Set<String> = []

    var isClaimed: Bool { !holders.isEmpty }

    enum Transition { case none, firstClaim, lastRelease }

    /// Adds `client`; `.firstClaim` when the count went from 0 to 1.
    mutating func claim(by client: String) -> Transition {
        let wasClaimed = isClaimed
        holders.insert(client)
        return !wasClaimed && isClaimed ? .firstClaim : .none
    }

    /// Removes `client`; `.lastRelease` when the count went from 1 to 0.
    mutating func release(by client: String) -> Transition {
        guard holders.remove(client) != nil else { return .none }
        return isClaimed ? .none : .lastRelease
    }
}
