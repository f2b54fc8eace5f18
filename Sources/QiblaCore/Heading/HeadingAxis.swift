// SPDX-License-Identifier: Apache-2.0
/// Which device direction the published heading refers to.
public enum HeadingAxis: String, Sendable, Equatable, CaseIterable {
    /// The top edge (+y): the phone is held roughly flat, like a compass.
    case top
    /// The back camera's viewing direction (−z): the phone is held upright, like a viewfinder.
    case back
    /// No heading (no valid sample yet, or the last sample was rejected).
    case none
}

/// Chooses the heading axis from the tilt with hysteresis, so the published heading does not flip
/// between the top edge and the back camera when the phone is held near the switching angle.
///
/// Rule (angles on the *folded* tilt t = min(tilt, 180° − tilt), so a face-down phone behaves
/// like a face-up one and the top edge is used when it is horizontal):
/// - in `top` mode, stay in `top` while t ≤ `switchToBackAboveTiltDegrees` (55°), switch to `back`
///   above it;
/// - in `back` mode, stay in `back` while t ≥ `switchToTopBelowTiltDegrees` (45°), switch to `top`
///   below it;
/// - from `none` (start, or after a non-finite tilt), pick `top` when t ≤ 55°, else `back`.
public struct HeadingAxisSelector: Sendable, Equatable {
    /// Folded tilt (degrees) above which `top` switches to `back`.
    public var switchToBackAboveTiltDegrees: Double
    /// Folded tilt (degrees) below which `back` switches to `top`.
    public var switchToTopBelowTiltDegrees: Double
    /// The axis chosen by the last `update`.
    public private(set) var axis: HeadingAxis = .none

    /// - Precondition (checked, not trapped): `switchToTopBelowTiltDegrees` ≤
    ///   `switchToBackAboveTiltDegrees`; if given the wrong way round the two are swapped.
    public init(switchToBackAboveTiltDegrees: Double = 55, switchToTopBelowTiltDegrees: Double = 45) {
        self.switchToBackAboveTiltDegrees = max(switchToBackAboveTiltDegrees, switchToTopBelowTiltDegrees)
        self.switchToTopBelowTiltDegrees = min(switchToBackAboveTiltDegrees, switchToTopBelowTiltDegrees)
    }

    /// Feeds the tilt from flat (degrees, 0…180, see `DeviceOrientation.tiltDegrees`) and returns
    /// the axis to publish. A non-finite tilt returns `.none` and forgets the mode.
    @discardableResult
    public mutating func update(tiltDegrees: Double) -> HeadingAxis {
        guard tiltDegrees.isFinite else { axis = .none; return axis }
        let t = min(abs(tiltDegrees), abs(180 - tiltDegrees))
        switch axis {
        case .top: if t > switchToBackAboveTiltDegrees { axis = .back }
        case .back: if t < switchToTopBelowTiltDegrees { axis = .top }
        case .none: axis = t > switchToBackAboveTiltDegrees ? .back : .top
        }
        return axis
    }

    /// Forgets the current mode (next `update` starts from `.none`).
    public mutating func reset() { axis = .none }
}
