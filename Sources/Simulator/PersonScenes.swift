// SPDX-License-Identifier: Apache-2.0
// Scenes of a person using the phone (issue 30): turning to find the Qibla, walking with the phone
// held in front, a magnet passing, the phone put down on a table and picked up, a gyroscope whose
// bias drifts with temperature. Seedable and deterministic: every quantity is a closed-form
// function of scene time (no stepping, no state), so the truth can be asked at any instant.
//
// What the motion is made of (none of it is an estimator's assumption):
// - Turns: a minimum-jerk profile (Flash & Hogan, "The coordination of arm movements", J. Neurosci.
//   5(7), 1985): s(τ) = 10τ³ − 15τ⁴ + 6τ⁵, peak rate 1.875·Δ/T; 30–150° at peaks of 80–150 °/s.
// - Holds of 1–2 s with physiological hand tremor (8–12 Hz, about 0.1° RMS; Elble & Koller,
//   "Tremor", 1990) and a slow postural sway (0.1–0.6 Hz, about 0.5°).
// - Hand acceleration: a sum of sinusoids with seeded frequencies (0.5–6 Hz) and phases, which
//   approximates a Gaussian process (Rice, "Mathematical analysis of random noise", 1944), scaled
//   to 0.6 m/s² RMS while turning and 0.25 while holding, with 0.15 s ramps between.
// - Walking: step accelerations of 1–2 m/s² at the step rate (1.8–2.2 Hz) up and down and fore and
//   aft, sideways at half the step rate, and the body's yaw sway of 3–6° at half the step rate.
import QiblaCore

/// The person-motion scenes `qibla-sim run --scene` offers.
public enum PersonScene: String, Sendable, CaseIterable {
    /// Turning to find the Qibla: turns of 30–150° towards it, with over- and undershoots, and holds
    /// of 1–2 s; after finding it, the person looks away and searches again.
    case seekQibla = "seek-qibla"
    /// Walking with the phone held in front (pitch about 30°), the path turning by 90° now and then.
    case walk
    /// The phone held still towards the target; a magnet comes near it for 3 s every 15 s, from 4 s.
    case magnet
    /// Held, put down flat on a table, left there 8 s, picked up again; a 20 s cycle.
    case table
    /// ``seekQibla`` with a gyroscope whose bias is 1 °/s per axis and drifts by 0.5 °/s per axis
    /// as it warms up (τ = 60 s).
    case gyroscopeDrift = "gyro-drift"
    /// A new user with an uncalibrated phone (issue 36): ``PersonSceneMotion/firstUseCalibrationSeconds``
    /// of waving the phone (headings over ±150°, tilts within ±45°), then ``seekQibla``'s turns
    /// and holds, and at the end the phone held still while a magnet comes near it for 3 s.
    case firstUse = "first-use"
}

/// What the person does at an instant.
public enum PersonActivity: String, Sendable, Equatable {
    /// Turning the phone (a turn segment, or a walking path's turn).
    case turning
    /// Holding it still in the hand (tremor, sway).
    case holding
    /// Walking straight on, the phone in front.
    case walking
    /// Putting it down or picking it up.
    case moving
    /// Lying on the table.
    case lying
}

/// One seeded run of a ``PersonScene``: the motion as closed-form functions of scene time, and
/// what the person does when (for tests that score holds and turns separately).
public struct PersonSceneMotion: Sendable {
    /// A heading change from `fromDegrees` to `toDegrees` (unwrapped) over [start, start + duration).
    public struct Turn: Sendable, Equatable {
        public var startSeconds: Double
        public var durationSeconds: Double
        public var fromDegrees: Double
        public var toDegrees: Double
        /// The peak rate of the minimum-jerk profile, °/s: 1.875·|Δ| / T.
        public var peakDegreesPerSecond: Double { 1.875 * abs(toDegrees - fromDegrees) / max(durationSeconds, 1e-9) }
        public var endSeconds: Double { startSeconds + durationSeconds }
    }

    public let kind: PersonScene
    /// The true heading the person looks for, degrees (the Qibla's bearing in the demo).
    public let targetHeadingDegrees: Double
    /// The turns in time order (the heading holds between them).
    public let turns: [Turn]
    /// Magnets near the phone (device frame).
    public let interferences: [Interference]
    /// How long motion was generated for, seconds; after it the phone holds still.
    public let durationSeconds: Double

    private let startHeadingDegrees: Double
    private let basePitchDegrees: Double
    private let baseRollDegrees: Double
    /// Tremor: (frequency Hz, amplitude °, phase rad) per component, for heading, pitch, roll.
    private let tremor: [[(Double, Double, Double)]]
    /// Postural sway, same shape.
    private let sway: [[(Double, Double, Double)]]
    /// Hand acceleration per NED axis: (frequency Hz, amplitude, phase), normalised so that the
    /// three axes together have an RMS of 1 m/s².
    private let hand: [[(Double, Double, Double)]]
    /// Walking: step frequency Hz, vertical amplitude m/s², yaw sway amplitude °, phases.
    private let step: (hertz: Double, vertical: Double, yaw: Double, phase: Double)

    /// ``PersonScene/firstUse``: how long the phone is waved before the search begins, seconds.
    public static let firstUseCalibrationSeconds = 20.0
    /// ``PersonScene/firstUse``: the magnet comes this long before the scene's end, for 3 s, seconds.
    public static let firstUseMagnetBeforeEndSeconds = 7.0

    /// Table cycle, seconds: held 0–4, put down 4–5, lying 5–13, picked up 13–14, held 14–20.
    public static let tableCycleSeconds = 20.0
    /// Hand acceleration while turning and while holding, m/s² RMS (issue 30's person).
    public static let turningHandRMS = 0.6
    public static let holdingHandRMS = 0.25

    /// - Parameters:
    ///   - targetHeadingDegrees: the true heading looked for (and walked towards, and held).
    ///   - seed: same seed, same motion.
    ///   - durationSeconds: how long to generate turns for (the scene is defined at any time; after
    ///     this the phone holds still).
    public init(_ kind: PersonScene, targetHeadingDegrees: Double, seed: UInt64, durationSeconds: Double = 600) {
        self.kind = kind
        self.targetHeadingDegrees = targetHeadingDegrees.isFinite ? targetHeadingDegrees : 0
        let duration = durationSeconds.isFinite ? min(max(durationSeconds, 1), 86_400) : 600
        self.durationSeconds = duration
        var random = SplitMix64(seed: seed ^ 0x9E15_0A11_5CE9_E000)
        func uniform(_ range: ClosedRange<Double>) -> Double {
            range.lowerBound + (range.upperBound - range.lowerBound) * (random.nextUnitInterval())
        }
        func sign() -> Double { random.next() & 1 == 0 ? 1 : -1 }
        func components(_ count: Int, _ hertz: ClosedRange<Double>, rms: Double) -> [(Double, Double, Double)] {
            // Equal amplitudes a: RMS of a sum of n sinusoids is a·√(n/2).
            let amplitude = rms / (Double(count) / 2).squareRoot()
            return (0..<count).map { _ in (uniform(hertz), amplitude, uniform(0...(2 * .pi))) }
        }
        tremor = (0..<3).map { _ in components(3, 8...12, rms: 0.1) }
        sway = (0..<3).map { axis in components(4, 0.1...0.6, rms: axis == 0 ? 0.5 : 0.4) }
        hand = (0..<3).map { _ in components(12, 0.5...6, rms: 1 / 3.0.squareRoot()) }
        step = (uniform(1.8...2.2), uniform(1...2), uniform(3...6), uniform(0...(2 * .pi)))
        basePitchDegrees = kind == .walk ? uniform(25...35) : uniform(15...25)
        baseRollDegrees = uniform(-3...3)

        let target = self.targetHeadingDegrees
        var turns: [Turn] = []
        var interferences: [Interference] = []
        var start = target
        switch kind {
        case .seekQibla, .gyroscopeDrift, .firstUse:
            // Start looking away, then search: each turn heads for the target, over- or
            // undershooting it; within 30° one slower correction lands on it; hold; look away again.
            start = target + sign() * uniform(60...150)
            var heading = start
            let firstUse = kind == .firstUse
            var t = (firstUse ? Self.firstUseCalibrationSeconds : 0) + uniform(1...2)
            let end = firstUse ? duration - Self.firstUseMagnetBeforeEndSeconds - 3 : duration
            if firstUse {
                var direction = Vector3(uniform(-1...1), uniform(-1...1), uniform(-1...1))
                direction = direction.normalized ?? Vector3(1, 0, 0)
                interferences.append(Interference(startSeconds: duration - Self.firstUseMagnetBeforeEndSeconds, durationSeconds: 3,
                                                  fieldMicrotesla: direction * uniform(30...80)))
            }
            while t < end {
                let remaining = target - heading
                var change: Double
                var peak: Double
                if abs(remaining) < 0.5 {
                    change = sign() * uniform(40...150)  // found: look away and search again
                    peak = uniform(80...150)
                } else if abs(remaining) < 30 {
                    change = remaining  // the last correction
                    peak = uniform(30...60)
                } else {
                    change = remaining * uniform(0.7...1.3)
                    change = (change < 0 ? -1 : 1) * min(150, max(30, abs(change)))
                    peak = uniform(80...150)
                }
                let turnDuration = max(0.3, 1.875 * abs(change) / peak)
                turns.append(Turn(startSeconds: t, durationSeconds: turnDuration, fromDegrees: heading, toDegrees: heading + change))
                heading += change
                t += turnDuration + uniform(1...2)
            }
        case .walk:
            // Straight for 8–12 s, then the path turns by ±90° over 2–3 s.
            var heading = target
            var t = uniform(8...12)
            while t < duration {
                let change = sign() * 90
                let turnDuration = uniform(2...3)
                turns.append(Turn(startSeconds: t, durationSeconds: turnDuration, fromDegrees: heading, toDegrees: heading + change))
                heading += change
                t += turnDuration + uniform(8...12)
            }
        case .magnet:
            var t = 4.0
            while t < duration {
                // 30–80 µT in a random direction of the device frame: a small magnet a few cm away.
                var direction = Vector3(uniform(-1...1), uniform(-1...1), uniform(-1...1))
                direction = direction.normalized ?? Vector3(1, 0, 0)
                interferences.append(Interference(startSeconds: t, durationSeconds: 3,
                                                  fieldMicrotesla: direction * uniform(30...80)))
                t += 15
            }
        case .table:
            // Each cycle's put-down turns the phone a little on its way to the table.
            var heading = target
            var cycle = 0.0
            while cycle < duration {
                let change = uniform(-15...15)
                turns.append(Turn(startSeconds: cycle + 4, durationSeconds: 1, fromDegrees: heading, toDegrees: heading + change))
                heading += change
                turns.append(Turn(startSeconds: cycle + 13, durationSeconds: 1, fromDegrees: heading, toDegrees: heading - change))
                heading -= change
                cycle += Self.tableCycleSeconds
            }
        }
        startHeadingDegrees = start
        self.turns = turns
        self.interferences = interferences
    }

    // MARK: Time functions

    /// The index of the last turn that starts at or before `t`, nil before the first.
    private func turnIndex(at t: Double) -> Int? {
        var low = 0, high = turns.count
        while low < high {
            let middle = (low + high) / 2
            if turns[middle].startSeconds <= t { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? nil : low - 1
    }

    /// Minimum-jerk position s(τ) = 10τ³ − 15τ⁴ + 6τ⁵ for τ ∈ [0, 1].
    private static func minimumJerk(_ tau: Double) -> Double {
        let x = min(1, max(0, tau))
        return x * x * x * (10 + x * (-15 + 6 * x))
    }

    /// The planned heading (turns only, no tremor or sway), degrees, unwrapped.
    public func plannedHeadingDegrees(at t: Double) -> Double {
        guard let index = turnIndex(at: t) else { return startHeadingDegrees }
        let turn = turns[index]
        return turn.fromDegrees + (turn.toDegrees - turn.fromDegrees) * Self.minimumJerk((t - turn.startSeconds) / turn.durationSeconds)
    }

    /// The table cycle's phase, seconds in [0, 20), or nil for other scenes.
    private func tablePhase(_ t: Double) -> Double? {
        guard kind == .table else { return nil }
        let phase = t.truncatingRemainder(dividingBy: Self.tableCycleSeconds)
        return phase < 0 ? phase + Self.tableCycleSeconds : phase
    }

    /// What the person does at scene time `t`.
    public func activity(at t: Double) -> PersonActivity {
        if let phase = tablePhase(t) {
            switch phase {
            case 4..<5, 13..<14: return .moving
            case 5..<13: return .lying
            default: return .holding
            }
        }
        if kind == .firstUse, t < Self.firstUseCalibrationSeconds { return .moving }
        if let index = turnIndex(at: t), t < turns[index].endSeconds { return .turning }
        return kind == .walk ? .walking : .holding
    }

    /// How much of the hand is in the motion: 1 held, 0 lying on the table, a smooth ramp between.
    private func handPresence(_ t: Double) -> Double {
        guard let phase = tablePhase(t) else { return 1 }
        switch phase {
        case 4..<5: return 1 - Self.minimumJerk(phase - 4)
        case 5..<13: return 0
        case 13..<14: return Self.minimumJerk(phase - 13)
        default: return 1
        }
    }

    /// 1 while turning (or putting down / picking up), 0 while holding, with 0.15 s ramps.
    private func turningWeight(_ t: Double) -> Double {
        let ramp = 0.15
        if kind == .firstUse, t < Self.firstUseCalibrationSeconds + ramp {
            return min(1, max(0, (Self.firstUseCalibrationSeconds + ramp - t) / ramp))
        }
        var weight = 0.0
        guard let index = turnIndex(at: t + ramp) else { return 0 }
        for candidate in max(0, index - 1)...index {
            let turn = turns[candidate]
            let inside: Double
            if t < turn.startSeconds { inside = 1 - (turn.startSeconds - t) / ramp
            } else if t > turn.endSeconds { inside = 1 - (t - turn.endSeconds) / ramp
            } else { inside = 1 }
            weight = max(weight, min(1, max(0, inside)))
        }
        return weight
    }

    private static func sum(_ parts: [(Double, Double, Double)], _ t: Double) -> Double {
        var total = 0.0
        for (hertz, amplitude, phase) in parts { total += amplitude * sin(2 * .pi * hertz * t + phase) }
        return total
    }

    /// The device's attitude at scene time `t`.
    public func orientation(at t: Double) -> DeviceOrientation {
        let presence = handPresence(t)
        var heading = plannedHeadingDegrees(at: t)
        var pitch = basePitchDegrees * presence
        var roll = baseRollDegrees * presence
        heading += presence * (Self.sum(tremor[0], t) + Self.sum(sway[0], t))
        pitch += presence * (Self.sum(tremor[1], t) + Self.sum(sway[1], t))
        roll += presence * (Self.sum(tremor[2], t) + Self.sum(sway[2], t))
        if kind == .firstUse, t < Self.firstUseCalibrationSeconds {
            // Waving the phone to calibrate: a window that is 0 at both ends, so the search starts
            // where the waving ends.
            let window = sin(.pi * max(0, t) / Self.firstUseCalibrationSeconds)
            heading += window * 150 * sin(2 * .pi * max(0, t) / 10)
            pitch += window * 40 * sin(2 * .pi * 0.27 * t)
            roll += window * 40 * sin(2 * .pi * 0.37 * t + 1)
        }
        if kind == .walk {
            // The body's yaw sway at half the step rate, a nod at the step rate, a roll at half.
            heading += step.yaw * sin(.pi * step.hertz * t + step.phase)
            pitch += 1.5 * sin(2 * .pi * step.hertz * t + step.phase)
            roll += 2 * sin(.pi * step.hertz * t + step.phase + 1)
        }
        return DeviceOrientation(headingDegrees: Angle.normalized360(heading), pitchDegrees: pitch, rollDegrees: roll)
    }

    /// The device's own acceleration, NED, m/s², at scene time `t`: the hand's (0.6 m/s² RMS while
    /// turning, 0.25 while holding, none on the table), the steps' while walking, and a short
    /// bump (a 25 Hz ring of 3 m/s², 30 ms decay) when the phone lands on the table.
    public func linearAccelerationNED(at t: Double) -> Vector3 {
        let presence = handPresence(t)
        let weight = turningWeight(t)
        let level = presence * (Self.holdingHandRMS + (Self.turningHandRMS - Self.holdingHandRMS) * weight)
        var a = Vector3(Self.sum(hand[0], t), Self.sum(hand[1], t), Self.sum(hand[2], t)) * level
        if kind == .walk {
            let path = Angle.radians(plannedHeadingDegrees(at: t))
            let forward = 0.6 * step.vertical * sin(2 * .pi * step.hertz * t + step.phase + .pi / 2)
            let sideways = 0.4 * sin(.pi * step.hertz * t + step.phase)
            a += Vector3(forward * cos(path) - sideways * sin(path), forward * sin(path) + sideways * cos(path),
                         -step.vertical * sin(2 * .pi * step.hertz * t + step.phase))
        }
        if let phase = tablePhase(t), phase >= 5, phase < 5.2 {
            let since = phase - 5
            a += Vector3(0, 0, -3 * exp(-since / 0.03) * sin(2 * .pi * 25 * since))
        }
        return a
    }

    /// `base` with this motion: the trajectory, the linear acceleration, the magnets (added to the
    /// base's), and for ``PersonScene/gyroscopeDrift`` a gyroscope bias of 1 °/s per axis that
    /// drifts by 0.5 °/s per axis with τ = 60 s (``PersonSceneMotion/drifting(biasDegreesPerSecond:)``).
    public func scene(from base: Scene) -> Scene {
        var scene = base
        let motion = self
        scene.trajectory = .custom { motion.orientation(at: $0) }
        scene.linearAccelerationNED = { motion.linearAccelerationNED(at: $0) }
        scene.interferences += interferences
        if kind == .gyroscopeDrift { scene.gyroscope = Self.drifting(biasDegreesPerSecond: 1) }
        return scene
    }

    /// A gyroscope bias of `biasDegreesPerSecond` on each axis (signs +, −, +) that drifts by half
    /// as much again (signs +, +, −) as the chip warms up, τ = 60 s; noise 0.05 °/s.
    public static func drifting(biasDegreesPerSecond: Double) -> GyroscopeErrors {
        let b = biasDegreesPerSecond.isFinite ? biasDegreesPerSecond : 1
        return GyroscopeErrors(biasDegreesPerSecond: Vector3(b, -b, b), biasDriftDegreesPerSecond: Vector3(b, b, -b) * 0.5,
                               biasDriftTimeConstantSeconds: 60, noiseDegreesPerSecond: 0.05)
    }
}

extension Scene {
    /// The magnetic heading of `axis` at scene time `t` (``expectedMagneticHeading(at:)`` for the top
    /// edge, ``expectedBackCameraHeading(at:)`` for the back camera), degrees in [0, 360); nil for
    /// ``QiblaCore/HeadingAxis/none`` or when undefined.
    public func expectedMagneticHeading(of axis: HeadingAxis, at t: Double) -> Double? {
        switch axis {
        case .top: expectedMagneticHeading(at: t)
        case .back: expectedBackCameraHeading(at: t)
        case .none: nil
        }
    }

    /// The true heading of `axis` at scene time `t`, degrees in [0, 360); nil for
    /// ``QiblaCore/HeadingAxis/none`` or when undefined.
    public func expectedTrueHeading(of axis: HeadingAxis, at t: Double) -> Double? {
        switch axis {
        case .top: expectedTrueHeading(at: t)
        case .back: expectedBackCameraTrueHeading(at: t)
        case .none: nil
        }
    }

    /// Whether an ``Interference`` (a magnet) is near the phone at scene time `t`.
    public func isDisturbed(at t: Double) -> Bool { interferences.contains { $0.isActive(at: t) } }
}
