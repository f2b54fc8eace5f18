// SPDX-License-Identifier: Apache-2.0
import QiblaCore

/// The dial's drawn rotation following the published one, frame by frame: a critically damped
/// spring (no overshoot) on the circle, always the short way round (350° → 10° turns 20°, not
/// 340°). Stepped by the frame clock's time; ``isSettled`` tells the view to stop asking for
/// frames, so nothing is redrawn while nothing changes.
public struct DialAnimation: Sendable, Equatable {
    /// The angle drawn now, degrees in [0, 360).
    public private(set) var shownDegrees: Double
    /// Degrees per second.
    public private(set) var velocity: Double = 0
    /// Where it is heading, degrees.
    public private(set) var targetDegrees: Double
    /// The spring's time constant, seconds: about 95 % of a step is covered in 4.7 τ.
    public var timeConstantSeconds: Double

    public init(at degrees: Double, timeConstantSeconds: Double = 0.08) {
        shownDegrees = Angle.normalized360(degrees)
        targetDegrees = shownDegrees
        self.timeConstantSeconds = timeConstantSeconds
    }

    /// A new target, degrees; the spring turns towards it the short way round.
    public mutating func setTarget(_ degrees: Double) {
        targetDegrees = Angle.normalized360(degrees)
    }

    /// Jumps to `degrees` (the first heading after a page change: no swing in from 0°).
    public mutating func jump(to degrees: Double) {
        shownDegrees = Angle.normalized360(degrees)
        targetDegrees = shownDegrees
        velocity = 0
    }

    /// Within 0.05° of the target and nearly still.
    public var isSettled: Bool {
        abs(Angle.normalized180(targetDegrees - shownDegrees)) < 0.05 && abs(velocity) < 0.5
    }

    /// Advances by `seconds` (the time since the previous frame; a long gap, as after the window
    /// was hidden, is clamped to 0.1 s per step and stepped through).
    public mutating func advance(by seconds: Double) {
        guard seconds > 0, seconds.isFinite else { return }
        var remaining = min(seconds, 1.0)
        while remaining > 0 {
            let dt = min(remaining, 0.01)
            remaining -= dt
            // x'' = −ω²x − 2ωx' with x the signed offset from the target (critical damping).
            let omega = 1 / timeConstantSeconds
            let offset = Angle.normalized180(shownDegrees - targetDegrees)
            let acceleration = -omega * omega * offset - 2 * omega * velocity
            velocity += acceleration * dt
            shownDegrees = Angle.normalized360(shownDegrees + velocity * dt)
        }
        if isSettled { shownDegrees = targetDegrees; velocity = 0 }
    }
}
