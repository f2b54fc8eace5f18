// SPDX-License-Identifier: Apache-2.0

/// When the app holds a compass claim on qiblad: only while a person can see the window — mapped,
/// not minimised, the screen not locked, and on a phone shell the app in front — and qiblad is
/// there to claim from. Sensors are off when nobody looks (iio-sensor-proxy's rule, and qiblad's
/// whole cost model).
///
/// Events in, actions out; no back-references. A new qiblad (its unique name changed) needs a new
/// claim: claims die with the daemon that held them.
public struct ClaimPolicy: Sendable, Equatable {
    public enum Action: Sendable, Equatable { case claim, release }

    /// Who says the screen is locked. Each is followed on its own; the screen counts as locked
    /// while any of them says so (a desktop may run more than one).
    public enum LockSource: String, Sendable, CaseIterable {
        /// `org.gnome.ScreenSaver` `ActiveChanged`/`GetActive` on the session bus (GNOME, Phosh).
        case gnomeScreenSaver
        /// `org.freedesktop.ScreenSaver` `ActiveChanged`/`GetActive` on the session bus (KDE Plasma, Plasma Mobile).
        case freedesktopScreenSaver
        /// logind's session `LockedHint` on the system bus (any session whose locker sets it).
        case logindSession
    }

    public private(set) var windowMapped = false
    public private(set) var minimised = false
    /// Whether one of the app's windows has the keyboard focus (GTK's `is-active`).
    public private(set) var active = true
    /// On a phone shell (Phosh) one app fills the screen: an app that is not active is behind
    /// another one or under the overview, and so not seen. On a desktop, windows side by side
    /// are seen without focus, so this is false there.
    public let inactiveMeansHidden: Bool
    public private(set) var lockedBy: Set<String> = []
    /// qiblad's unique bus name, nil while it is not on the bus.
    public private(set) var daemonOwner: String?
    /// The owner the current claim was made on, nil while none is held.
    public private(set) var claimedOn: String?

    public init(inactiveMeansHidden: Bool = false) { self.inactiveMeansHidden = inactiveMeansHidden }

    public var screenLocked: Bool { !lockedBy.isEmpty }

    /// Whether a person can see the window now.
    public var isSeen: Bool { windowMapped && !minimised && !screenLocked && (active || !inactiveMeansHidden) }

    /// Whether a claim should be held now.
    public var wantsClaim: Bool { daemonOwner != nil && isSeen }

    public mutating func windowMapped(_ mapped: Bool) -> Action? { windowMapped = mapped; return reconcile() }
    public mutating func minimised(_ value: Bool) -> Action? { minimised = value; return reconcile() }
    public mutating func active(_ value: Bool) -> Action? { active = value; return reconcile() }
    public mutating func screenLocked(_ value: Bool, by source: LockSource = .gnomeScreenSaver) -> Action? {
        if value { lockedBy.insert(source.rawValue) } else { lockedBy.remove(source.rawValue) }
        return reconcile()
    }
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

    /// Whether the session is a phone shell where one app fills the screen, from
    /// `XDG_CURRENT_DESKTOP` (a colon-separated list, "Phosh:GNOME" under Phosh; sxmo sets "sxmo").
    public static func isPhoneShell(currentDesktop: String?) -> Bool {
        guard let currentDesktop else { return false }
        return currentDesktop.split(separator: ":").contains { ["phosh", "sxmo"].contains($0.lowercased()) }
    }
}

/// The page's arrangement for the window's size: the dial beside the cards when the window is
/// wide (at least 700 px and wider than tall: a desktop, a phone in landscape is too short for
/// the cards under the dial), above them otherwise.
public enum CompassLayout {
    public static func isWide(width: Int, height: Int) -> Bool { width > height && width >= 700 }
}
