// SPDX-License-Identifier: Apache-2.0
import Foundation
@testable import QiblaCore

/// The truth for the attitude filter's sweep (issue 30): a person using a phone, and a sensor unit.
///
/// Nothing here is the filter's model. The filter assumes white Gaussian noise, a bias random walk
/// and a hand acceleration it treats as noise; the truth is:
/// - **Motion**: a timeline of segments, each a minimum-jerk move (Flash & Hogan 1985: the
///   bell-shaped velocity profile of human reaching and turning) of heading, pitch, roll and a
///   vertical lift, plus physiological tremor (sinusoids at 8–12 Hz, 0.02–0.06°), a slow sway
///   (0.2–1 Hz, up to 0.5°) and, walking, the gait's oscillations at 1 and 2 Hz. The attitude is
///   R = R_down(ψ)·R₀·R_x(pitch)·R_y(roll) in NED (R₀: flat face-up, top edge north) — an Euler
///   parametrisation the filter never sees; the gyroscope reads the log map of R(t−T)ᵀR(t) / T,
///   the mean rate over its sample period T (the driver's low-pass filter).
/// - **Hand**: linear acceleration as sums of sinusoids (0.3–3 Hz, random phases), scaled to the
///   segment's RMS (0.25 m/s² holding, 0.6 turning), plus the lift's and the gait's accelerations
///   (steps 1–2 m/s² at 2 Hz) and the centripetal/tangential acceleration of a phone 0.1 m off the
///   turning axis.
/// - **Gyroscope**: a bias uniform in the ball of 1 °/s plus a temperature drift (1 − e^(−t/τ))
///   of up to 0.5 °/s in another direction; Student-t noise (ν = 4); scale-factor errors uniform in
///   ±1 % per axis; a misalignment uniform up to 0.3°; quantised to the MPU-6050's ±500 °/s LSB.
/// - **Accelerometer**: a bias uniform in ±0.03 m/s² per axis (after the phone's own trim), uniform
///   noise (±0.1 m/s²), quantised to 0.0024 m/s² (±8 g, 16 bit).
/// - **Magnetometer** (as calibrated): Laplace noise 0.4 µT, quantised to 0.15 µT, a residual hard
///   iron uniform in ±0.1 µT per axis (the calibration is not under test here; the daemon adds its term) and a misalignment up to 0.3°; a magnet adds a field of
///   20–60 µT in a random direction, ramped in and out over 0.5 s.
/// - **Sites**: strength uniform 35–55 µT, dip |I| uniform 8–12° (low) or 65–70° (high), either sign.
enum FusionScene: String, CaseIterable, Sendable {
    /// Turns of 30–150° at up to 150 °/s, holds of 1–2 s.
    case turning
    /// Walking with the phone held in front.
    case walking
    /// Holding, a magnet near for 3 s, then turning again.
    case magnet
    /// Put down on a table (the gyroscope stops after 0.5 s of rest), picked up, turning.
    case table
    /// Turning with a gyroscope bias of exactly 1 °/s drifting with temperature (0.5 °/s over ~30 s).
    case bias
}

enum SiteDip: String, CaseIterable, Sendable {
    case low, high
}

/// Minimum-jerk position s(τ) = 10τ³ − 15τ⁴ + 6τ⁵ and its second derivative (per T²).
private func minimumJerk(_ tau: Double) -> (s: Double, acceleration: Double) {
    let t = min(1, max(0, tau))
    return (10 * t * t * t - 15 * t * t * t * t + 6 * t * t * t * t * t, 60 * t - 180 * t * t + 120 * t * t * t)
}

/// One piece of the motion: from its start values to its end values in `duration` seconds.
struct MotionSegment {
    enum Kind { case hold, turn, walk, lift, rest }
    var kind: Kind
    var start: Double
    var duration: Double
    var heading0: Double, heading1: Double   // degrees
    var pitch0: Double, pitch1: Double       // degrees
    var roll0: Double, roll1: Double         // degrees
    var lift: Double = 0                      // metres, upwards
    var handRMS: Double                       // m/s²
    var tremor0: Double, tremor1: Double      // 0 (on a table) … 1
    var end: Double { start + duration }
}

/// Sum of sinusoids, each (amplitude, angular frequency, phase).
struct Sinusoids {
    var terms: [(Double, Double, Double)]
    init(count: Int, frequencies: ClosedRange<Double>, rms: Double, _ rng: inout SeededGenerator) {
        // RMS of a sum of independent sinusoids: √(Σ aᵢ²/2).
        let a = rms * (2.0 / Double(count)).squareRoot()
        terms = (0..<count).map { _ in
            (a, 2 * .pi * Double.random(in: frequencies, using: &rng), Double.random(in: 0..<(2 * .pi), using: &rng))
        }
    }
    func value(_ t: Double) -> Double { terms.reduce(0) { $0 + $1.0 * sin($1.1 * t + $1.2) } }
}

/// A person's motion over a scene, a deterministic function of time.
struct PersonTimeline {
    var segments: [MotionSegment] = []
    var tremor: [Sinusoids]       // heading, pitch, roll (degrees)
    var sway: [Sinusoids]         // heading, pitch, roll (degrees)
    var hand: [Sinusoids]         // north, east, down (m/s² per unit RMS)
    var gaitAmplitudes: (vertical: Double, forward: Double, lateral: Double)
    var magnet: (start: Double, end: Double, field: Vector3)?
    var leverArmMetres = 0.1
    /// When the walk begins, seconds: the gait fades in over a second (a minimum-jerk ramp).
    var walkStart = Double.infinity

    func gaitEnvelope(_ t: Double) -> Double { minimumJerk(t - walkStart).s }

    init(_ rng: inout SeededGenerator) {
        tremor = (0..<3).map { _ in Sinusoids(count: 3, frequencies: 8...12, rms: Double.random(in: 0.02...0.06, using: &rng), &rng) }
        sway = (0..<3).map { _ in Sinusoids(count: 3, frequencies: 0.2...1, rms: Double.random(in: 0.1...0.4, using: &rng), &rng) }
        hand = (0..<3).map { _ in Sinusoids(count: 6, frequencies: 0.3...3, rms: 1 / 3.0.squareRoot(), &rng) }
        gaitAmplitudes = (Double.random(in: 1...2, using: &rng), Double.random(in: 0.7...1.4, using: &rng),
                          Double.random(in: 0.3...0.7, using: &rng))
    }

    var duration: Double { segments.last?.end ?? 0 }

    func segment(at t: Double) -> MotionSegment {
        var low = 0, high = segments.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if segments[mid].start <= t { low = mid } else { high = mid - 1 }
        }
        return segments[low]
    }

    /// Heading, pitch, roll (degrees) at t, without the linear acceleration.
    func angles(_ t: Double) -> (Double, Double, Double) {
        let s = segment(at: t)
        let (p, _) = minimumJerk((t - s.start) / s.duration)
        var heading = s.heading0 + (s.heading1 - s.heading0) * p
        var pitch = s.pitch0 + (s.pitch1 - s.pitch0) * p
        var roll = s.roll0 + (s.roll1 - s.roll0) * p
        let shake = s.tremor0 + (s.tremor1 - s.tremor0) * p
        heading += shake * (tremor[0].value(t) + sway[0].value(t))
        pitch += shake * (tremor[1].value(t) + sway[1].value(t))
        roll += shake * (tremor[2].value(t) + sway[2].value(t))
        if s.kind == .walk {
            let g = 2 * Double.pi * t
            let e = gaitEnvelope(t)
            heading += e * 1.5 * sin(g + 0.3)
            roll += e * 2 * sin(g)
            pitch += e * 1 * sin(2 * g + 1)
        }
        return (heading, pitch, roll)
    }

    /// Device → NED rotation at t.
    func attitude(_ t: Double) -> Matrix3 {
        let (h, p, r) = angles(t)
        let base = Matrix3(0, 1, 0, 1, 0, 0, 0, 0, -1)
        return Matrix3.rotationZ(degrees: h) * base * Matrix3.rotationX(degrees: p) * Matrix3.rotationY(degrees: r)
    }

    /// Body angular velocity (rad/s, device frame) at t: log map of R(t−h)ᵀR(t+h) over 2h.
    func angularVelocity(_ t: Double) -> Vector3 {
        let h = 1e-4
        return rotationVector(attitude(t - h).transposed * attitude(t + h)) / (2 * h)
    }

    /// Linear acceleration of the phone, m/s², NED.
    func linearAcceleration(_ t: Double) -> Vector3 {
        let s = segment(at: t)
        var a = Vector3(hand[0].value(t), hand[1].value(t), hand[2].value(t)) * s.handRMS
        let (_, acc) = minimumJerk((t - s.start) / s.duration)
        // The lift (NED: up is −z).
        a.z -= s.lift * acc / (s.duration * s.duration)
        if s.kind == .walk {
            let g = 2 * Double.pi * t
            let heading = Angle.radians(s.heading0)
            let forward = Vector3(cos(heading), sin(heading), 0), right = Vector3(-sin(heading), cos(heading), 0)
            let e = gaitEnvelope(t)
            a += Vector3(0, 0, -gaitAmplitudes.vertical * sin(2 * g)) * e
            a += (forward * (gaitAmplitudes.forward * sin(2 * g + 0.8)) + right * (gaitAmplitudes.lateral * sin(g))) * e
        }
        if s.kind == .turn {
            // A phone a lever arm off the turning axis: centripetal ω²r and tangential αr.
            let span = Angle.radians(s.heading1 - s.heading0)
            let tau = (t - s.start) / s.duration
            let rate = span * (30 * tau * tau - 60 * tau * tau * tau + 30 * tau * tau * tau * tau) / s.duration
            let (_, angular) = minimumJerk(tau)
            let heading = Angle.radians(angles(t).0)
            let forward = Vector3(cos(heading), sin(heading), 0), right = Vector3(-sin(heading), cos(heading), 0)
            a += forward * (-rate * rate * leverArmMetres) + right * (span * angular / (s.duration * s.duration) * leverArmMetres)
        }
        return a
    }

    /// The magnet's field at t, microtesla, device frame.
    func magnetField(_ t: Double) -> Vector3 {
        guard let m = magnet, t > m.start - 0.5, t < m.end + 0.5 else { return .zero }
        let ramp = min(1, max(0, (t - (m.start - 0.5)) / 0.5), max(0, ((m.end + 0.5) - t) / 0.5))
        return m.field * ramp
    }

    func magnetNear(_ t: Double) -> Bool { magnetField(t).length > 0.5 }

    /// The phone lies still (no tremor, no hand): the rest detector would stop the gyroscope.
    func resting(_ t: Double) -> Bool { segment(at: t).kind == .rest }
}

/// Rotation vector (axis × angle) of a rotation matrix.
func rotationVector(_ m: Matrix3) -> Vector3 {
    let c = max(-1, min(1, (m.row0.x + m.row1.y + m.row2.z - 1) / 2))
    let angle = acos(c)
    let v = Vector3(m.row2.y - m.row1.z, m.row0.z - m.row2.x, m.row1.x - m.row0.y)
    let s = sin(angle)
    return abs(s) < 1e-9 ? v * 0.5 : v * (angle / (2 * s))
}

/// A simulated phone's sensors, with errors from other distributions than the filter assumes.
struct FusionUnit {
    var gyroBias: Vector3            // rad/s
    var gyroDrift: Vector3           // rad/s, reached with time constant driftTau
    var driftTau: Double
    var gyroScale: Vector3
    var gyroMisalignment: Matrix3
    var gyroNoise: Double            // rad/s per sample, Student-t scale
    var gyroLSB = Angle.radians(1 / 65.5)
    var accelBias: Vector3
    var accelLSB = 0.0024
    var magneticResidual: Vector3
    var magneticMisalignment: Matrix3
    var magneticLSB = 0.15

    init(_ rng: inout SeededGenerator, exactBiasDegreesPerSecond: Double? = nil) {
        func ball(_ r: Double, _ rng: inout SeededGenerator) -> Vector3 {
            rng.unitVector() * (r * pow(Double.random(in: 0...1, using: &rng), 1.0 / 3))
        }
        func smallRotation(_ degrees: Double, _ rng: inout SeededGenerator) -> Matrix3 {
            let v = rng.unitVector() * Angle.radians(Double.random(in: 0...degrees, using: &rng))
            return Quaternion(rotationVector: v).rotationMatrix
        }
        if let b = exactBiasDegreesPerSecond {
            gyroBias = rng.unitVector() * Angle.radians(b)
            gyroDrift = rng.unitVector() * Angle.radians(0.5)
        } else {
            gyroBias = ball(Angle.radians(1), &rng)
            gyroDrift = rng.unitVector() * Angle.radians(Double.random(in: 0...0.3, using: &rng))
        }
        driftTau = Double.random(in: 20...40, using: &rng)
        gyroScale = Vector3(1 + Double.random(in: -0.01...0.01, using: &rng), 1 + Double.random(in: -0.01...0.01, using: &rng),
                            1 + Double.random(in: -0.01...0.01, using: &rng))
        gyroMisalignment = smallRotation(0.3, &rng)
        gyroNoise = Angle.radians(0.04)
        accelBias = Vector3(Double.random(in: -0.03...0.03, using: &rng), Double.random(in: -0.03...0.03, using: &rng),
                            Double.random(in: -0.03...0.03, using: &rng))
        magneticResidual = Vector3(Double.random(in: -0.1...0.1, using: &rng), Double.random(in: -0.1...0.1, using: &rng),
                                   Double.random(in: -0.1...0.1, using: &rng))
        magneticMisalignment = smallRotation(0.3, &rng)
    }

    static func quantised(_ v: Vector3, _ lsb: Double) -> Vector3 {
        Vector3((v.x / lsb).rounded() * lsb, (v.y / lsb).rounded() * lsb, (v.z / lsb).rounded() * lsb)
    }

    /// Student-t variate with ν = 4, scaled to unit variance (variance ν/(ν−2) = 2).
    static func studentT(_ rng: inout SeededGenerator) -> Double {
        let z = rng.gaussian()
        var chi2 = 0.0
        for _ in 0..<4 { let g = rng.gaussian(); chi2 += g * g }
        return z / (chi2 / 4).squareRoot() / 2.0.squareRoot()
    }

    func gyroscope(_ omega: Vector3, time: Double, _ rng: inout SeededGenerator) -> Vector3 {
        let scaled = Vector3(omega.x * gyroScale.x, omega.y * gyroScale.y, omega.z * gyroScale.z)
        let bias = gyroBias + gyroDrift * (1 - exp(-time / driftTau))
        let noise = Vector3(Self.studentT(&rng), Self.studentT(&rng), Self.studentT(&rng)) * gyroNoise
        return Self.quantised(gyroMisalignment * scaled + bias + noise, gyroLSB)
    }

    func accelerometer(_ specificForce: Vector3, _ rng: inout SeededGenerator) -> Vector3 {
        let noise = Vector3(Double.random(in: -0.1...0.1, using: &rng), Double.random(in: -0.1...0.1, using: &rng),
                            Double.random(in: -0.1...0.1, using: &rng))
        return Self.quantised(specificForce + accelBias + noise, accelLSB)
    }

    func magnetometer(_ field: Vector3, _ rng: inout SeededGenerator) -> Vector3 {
        let noise = Vector3(rng.laplace(sigma: 0.4), rng.laplace(sigma: 0.4), rng.laplace(sigma: 0.4))
        return Self.quantised(magneticMisalignment * field + magneticResidual + noise, magneticLSB)
    }
}

/// One scene built for a seed: a timeline, a unit and a site.
struct FusionRun {
    var scene: FusionScene
    var timeline: PersonTimeline
    var unit: FusionUnit
    /// The Earth's field in NED, microtesla (magnetic north: no east component).
    var earthField: Vector3
    var inclinationDegrees: Double
    /// Turn end times, seconds.
    var turnEnds: [Double] = []

    init(scene: FusionScene, dip: SiteDip, seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        self.scene = scene
        timeline = PersonTimeline(&rng)
        unit = FusionUnit(&rng, exactBiasDegreesPerSecond: scene == .bias ? 1 : nil)
        let strength = Double.random(in: 35...55, using: &rng)
        let magnitude = dip == .low ? Double.random(in: 8...12, using: &rng) : Double.random(in: 65...70, using: &rng)
        inclinationDegrees = Bool.random(using: &rng) ? magnitude : -magnitude
        let i = Angle.radians(inclinationDegrees)
        earthField = Vector3(strength * cos(i), 0, strength * sin(i))

        // Held flat-ish (top edge) or upright (back camera) in one third of the runs.
        let upright = Double.random(in: 0...1, using: &rng) < 1.0 / 3
        var pitch = upright ? Double.random(in: 70...85, using: &rng) : Double.random(in: -15...25, using: &rng)
        var roll = Double.random(in: -10...10, using: &rng)
        var heading = Double.random(in: 0..<360, using: &rng)
        var t = 0.0
        var shake = 1.0
        var segments: [MotionSegment] = []
        func add(_ kind: MotionSegment.Kind, _ duration: Double, heading h: Double? = nil, pitch p: Double? = nil,
                 roll r: Double? = nil, lift: Double = 0, hand: Double, tremor: Double = 1) {
            let s = MotionSegment(kind: kind, start: t, duration: duration, heading0: heading, heading1: h ?? heading,
                                  pitch0: pitch, pitch1: p ?? pitch, roll0: roll, roll1: r ?? roll, lift: lift,
                                  handRMS: hand, tremor0: shake, tremor1: tremor)
            segments.append(s)
            t += duration
            heading = s.heading1; pitch = s.pitch1; roll = s.roll1; shake = tremor
        }
        func turns(_ count: Int) {
            for _ in 0..<count {
                add(.hold, Double.random(in: 1...2, using: &rng), hand: 0.25)
                let span = Double.random(in: 30...150, using: &rng) * (Bool.random(using: &rng) ? 1 : -1)
                let peak = Double.random(in: 60...150, using: &rng)
                add(.turn, max(0.4, 1.875 * abs(span) / peak), heading: heading + span,
                    pitch: pitch + Double.random(in: -5...5, using: &rng), roll: Double.random(in: -10...10, using: &rng), hand: 0.6)
                turnEnds.append(t)
            }
            add(.hold, Double.random(in: 1...2, using: &rng), hand: 0.25)
        }
        // Settling in the hand first: the filter converges (bias, tilt) before the scene's measure.
        add(.hold, 4, hand: 0.25)
        switch scene {
        case .turning, .bias:
            turns(12)
        case .walking:
            timeline.walkStart = t
            for _ in 0..<4 {
                add(.walk, Double.random(in: 3...5, using: &rng), hand: 0.1)
                let span = Double.random(in: 20...40, using: &rng) * (Bool.random(using: &rng) ? 1 : -1)
                add(.walk, 1.2, heading: heading + span, hand: 0.1)
            }
            add(.walk, 3, hand: 0.1)
        case .magnet:
            turns(3)
            add(.hold, 1, hand: 0.25)
            let start = t
            add(.hold, 3, hand: 0.25)
            timeline.magnet = (start, start + 3, rng.unitVector() * Double.random(in: 20...60, using: &rng))
            add(.hold, 2, hand: 0.25)
            turns(4)
        case .table:
            turns(2)
            let handPitch = pitch, handRoll = roll
            add(.lift, 1.0, pitch: 0, roll: 0, lift: -0.3, hand: 0.2, tremor: 0.5)
            add(.rest, 6, hand: 0, tremor: 0)
            add(.lift, 0.9, pitch: handPitch, roll: handRoll, lift: 0.3, hand: 0.3, tremor: 0.7)
            turns(4)
        }
        timeline.segments = segments
    }

    /// The true heading of `axis` at t, degrees, or nil for a (nearly) vertical axis.
    func trueHeading(_ axis: HeadingAxis, at t: Double) -> Double? {
        let r = timeline.attitude(t)
        let d: Vector3
        switch axis {
        case .top: d = Vector3(0, 1, 0)
        case .back: d = Vector3(0, 0, -1)
        case .none: return nil
        }
        let v = r * d
        guard hypot(v.x, v.y) > 0.05 else { return nil }
        return Angle.normalized360(Angle.degrees(atan2(v.y, v.x)))
    }

    /// The three sensors' samples in time order at `rateHertz`, each sensor at its own phase; no
    /// gyroscope sample while the phone rests for more than 0.5 s (the rest detector), and for
    /// 60 ms after it moves again (the gyroscope's start-up).
    func samples(rateHertz: Double, seed: UInt64, _ body: (FusionSample) -> Void) {
        var rng = SeededGenerator(seed: seed ^ 0x5EED)
        let period = 1 / rateHertz
        var k = 0
        let end = timeline.duration
        var restStart: Double?
        var moveStart: Double?
        while true {
            let base = Double(k) * period
            if base > end { break }
            let tg = base, ta = base + period / 3, tm = base + 2 * period / 3
            // Gyroscope.
            if timeline.resting(tg) { restStart = restStart ?? tg; moveStart = nil } else {
                if restStart != nil { moveStart = moveStart ?? tg }
                if let m = moveStart, tg - m >= 0.06 { restStart = nil; moveStart = nil }
            }
            let gyroOff = (restStart.map { tg - $0 >= 0.5 } ?? false) || (moveStart != nil)
            if !gyroOff {
                // The driver's low-pass filter (inv_mpu6050 sets it near half the sample rate):
                // the mean rate over the last period, so a 10 Hz tremor does not alias at 20 Hz.
                let mean = rotationVector(timeline.attitude(tg - period).transposed * timeline.attitude(tg)) / period
                body(.gyroscope(unit.gyroscope(mean, time: tg, &rng), tg))
            }
            // Accelerometer: specific force Rᵀ(a − g), g = (0, 0, g₀) in NED.
            let r = timeline.attitude(ta)
            let f = r.transposed * (timeline.linearAcceleration(ta) - Vector3(0, 0, TiltCompensation.standardGravity))
            body(.acceleration(unit.accelerometer(f, &rng), ta))
            let rm = timeline.attitude(tm)
            let field = rm.transposed * earthField + timeline.magnetField(tm)
            body(.magneticField(unit.magnetometer(field, &rng), tm))
            k += 1
        }
    }
}

enum FusionSample {
    case gyroscope(Vector3, Double)
    case acceleration(Vector3, Double)
    case magneticField(Vector3, Double)

    var time: Double {
        switch self {
        case .gyroscope(_, let t), .acceleration(_, let t), .magneticField(_, let t): t
        }
    }
}
