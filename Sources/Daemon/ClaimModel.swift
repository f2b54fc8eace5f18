// SPDX-License-Identifier: Apache-2.0
/// Who holds a compass claim: unique bus names, one claim each (a second claim by the same client
/// is a no-op). The first claim starts the live sources, the last release — or the claimant
/// leaving the bus — stops them; like iio-sensor-proxy's ClaimAccelerometer/ReleaseAccelerometer.
public struct ClaimModel: Sendable, Equatable {
    public private(set) var holders: Set<String> = []

    public init() {}

    public var isClaimed: Bool { !holders.isEmpty }

    /// What a claim or release did to the live sources.
    public enum Transition: Sendable, Equatable {
        /// Nothing to start or stop.
        case none
        /// The count went from 0 to 1: start the sensors and the position source.
        case firstClaim
        /// The count went from 1 to 0: stop them.
        case lastRelease
    }

    /// Adds `client`; `.firstClaim` when the count went from 0 to 1.
    public mutating func claim(by client: String) -> Transition {
        let wasClaimed = isClaimed
        holders.insert(client)
        return !wasClaimed && isClaimed ? .firstClaim : .none
    }

    /// Removes `client`; `.lastRelease` when the count went from 1 to 0. Releasing without a claim
    /// is a no-op.
    public mutating func release(by client: String) -> Transition {
        guard holders.remove(client) != nil else { return .none }
        return isClaimed ? .none : .lastRelease
    }
}
