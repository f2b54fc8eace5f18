// SPDX-License-Identifier: Apache-2.0

/// When the app holds a compass claim on qiblad: only while a person can see the window — mapped,
/// not minimised, the screen not locked — and qiblad is there to claim from. Sensors are off when
/// nobody looks (iio-sensor-proxy's rule, and qiblad's whole cost model).
///
/// Events in, actions out; no back-references. A new qiblad (its unique name changed) needs a new
/// claim: claims die with the daemon that held them.
public struct ClaimPolicy: Sendable, Equatable {
    public enum Action: Sendable, Equatable { case claim, release }

    public private(set) var windowMapped = false
    public private(set) var minimised = false
    public private(set) var screenLocked = false
    /// qiblad's unique bus name, nil while it is not on the bus.
    public private(set) var daemonOwner: String?
    /// The owner the current claim was made on, nil while none is held.
    public private(set) var claimedOn: String?

    public init() {}

    /// Whether a claim should be held now.
    public var wantsClaim: Bool { daemonOwner != nil && windowMapped && !minimised && !screenLocked }

    public mutating func windowMapped(_ mapped: Bool) -> Action? { windowMapped = mapped; return reconcile() }
    public mutating func minimised(_ value: Bool) -> Action? { minimised = value; return reconcile() }
    public mutating func screenLocked(_ value: Bool) -> Action? { screenLocked = value; return reconcile() }
    public mutating func daemonOwner(_ owner: String?) -> Action? {
        if owner != daemonOwner { claimedOn = nil }  // a vanished or new daemon holds no claim of ours
        daemonOwner = owner
        return reconcile()
    }

    private mutating func reconcile() -> Action? {
        if wantsClaim, claimedOn != daemonOwner {
            claimedOn = daemonOwner
            return .claim
        }
        if !wantsClaim, claimedOn != nil {
            claimedOn = nil
            return daemonOwner == nil ? nil : .release
        }
        return nil
    }
}
