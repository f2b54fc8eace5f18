// SPDX-License-Identifier: Apache-2.0
/// The gyroscope's bias measured directly while the phone lies still (issue 36): the mean rate of a
/// still phone *is* the bias, to the rate noise over √n — far better than what the magnetometer's
/// yaw teaches through the filter, where every tilt error leaks through the dip (BROAD's slow
/// translation trials: the filter learned −3°/s about the vertical for a true −0.25°/s).
///
/// The idea is VQF's rest detection and rest bias estimation (D. Laidig and T. Seel, "VQF: Highly
/// accurate IMU orientation estimation with bias estimation and magnetic disturbance rejection",
/// Information Fusion 91:187–204, 2023, §3.4, implemented from the paper): the gyroscope and the
/// accelerometer steady (small deviations from their means), the mean rate below a bound. That
/// test alone takes a smooth constant turn for a bias; here the accelerometer and the magnetometer
/// decide: a turn at the mean rate ω̄ would move each of them by |ω̄ × v|·T between the window's
/// halves (T the time between the halves' centres), and a window where such a move is large
/// enough to be seen above the sensors' noise, and is seen, is a turn, not a rest.
///
/// Windows of ``Configuration/windowSeconds``; each still window yields one measurement of the bias
/// (its mean rate, device frame, rad/s). A gap in the gyroscope's samples (the daemon stops reading
/// it at rest) or time running backwards starts a new window. Pure: no clock, no I/O.
public struct StillBiasWindow: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// Length of one window, seconds (default 1: the daemon reads the gyroscope for 2 s of a
        /// still phone before it declares a rest and stops it).
        public var windowSeconds = 1.0
        /// RMS deviation of the rate samples from their mean, rad/s (default 0.012 ≈ 0.7°/s: a
        /// phone's rate noise at 50 Hz is 0.05–0.2°/s; a hand's tremor is several °/s).
        public var maximumRateDeviationRadiansPerSecond = 0.012
        /// RMS deviation of the accelerometer samples (a vector's length) from their mean, m/s²
        /// (default 0.2: BROAD's still IMU shows 0.09; the gyroscope's test tells a hand's tremor).
        public var maximumAccelerationDeviationMetresPerSecondSquared = 0.2
        /// Largest mean rate taken for a bias, rad/s (default 0.05 ≈ 3°/s; VQF clips at 2°/s, a
        /// trimmed consumer gyroscope stays within a few °/s).
        public var maximumMeanRateRadiansPerSecond = 0.05
        /// Accelerometer noise per axis used for the turn test, m/s² (default 0.05).
        public var accelerometerNoiseMetresPerSecondSquared = 0.05
        /// Magnetometer noise per axis used for the turn test, µT (default 0.6).
        public var magnetometerNoiseMicrotesla = 0.6
        /// A sensor sees a turn when the move a turn at ω̄ would cause exceeds this many sigmas of
        /// the halves' difference, and at least half of that move is seen (default 3).
        public var turnTestSigmas = 3.0
        /// Samples farther apart than this are a gap, seconds (default 0.25).
        public var maximumGapSeconds = 0.25

        public init() {}
    }

    public let configuration: Configuration
    private var start: Double?
    private var lastRateTime: Double?
    private var rateSum = Vector3.zero
    private var rateSquares = 0.0
    private var rateCount = 0
    private var accelerationSums = (Vector3.zero, Vector3.zero)
    private var accelerationCounts = (0, 0)
    private var accelerationSquares = 0.0
    private var fieldSums = (Vector3.zero, Vector3.zero)
    private var fieldCounts = (0, 0)
    /// Windows that measured the bias, and windows rejected as a turn by the other sensors (for
    /// tests and logs).
    public private(set) var measurementCount = 0
    public private(set) var turnRejectionCount = 0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Forgets the current window.
    public mutating func reset() {
        start = nil; lastRateTime = nil
        rateSum = .zero; rateSquares = 0; rateCount = 0
        accelerationSums = (.zero, .zero); accelerationCounts = (0, 0); accelerationSquares = 0
        fieldSums = (.zero, .zero); fieldCounts = (0, 0)
    }

    private func half(at time: Double) -> Int? {
        guard let start, time >= start else { return nil }
        return time - start < configuration.windowSeconds / 2 ? 0 : 1
    }

    public mutating func addAcceleration(_ a: Vector3, time: Double) {
        guard a.isFinite, let h = half(at: time) else { return }
        if h == 0 { accelerationSums.0 += a; accelerationCounts.0 += 1 } else { accelerationSums.1 += a; accelerationCounts.1 += 1 }
        accelerationSquares += a.dot(a)
    }

    public mutating func addField(_ m: Vector3, time: Double) {
        guard m.isFinite, let h = half(at: time) else { return }
        if h == 0 { fieldSums.0 += m; fieldCounts.0 += 1 } else { fieldSums.1 += m; fieldCounts.1 += 1 }
    }

    /// A rate sample (rad/s, device frame). Returns the bias measured by the window it closes —
    /// its mean rate and that mean's variance per axis (rad²/s²) — when the window was still.
    public mutating func addRate(_ omega: Vector3, time: Double) -> (bias: Vector3, variance: Double)? {
        guard omega.isFinite, time.isFinite else { return nil }
        if let last = lastRateTime, time < last || time - last > configuration.maximumGapSeconds { reset() }
        lastRateTime = time
        guard let start else {
            self.start = time
            rateSum = omega; rateSquares = omega.dot(omega); rateCount = 1
            return nil
        }
        guard time - start >= configuration.windowSeconds else {
            rateSum += omega; rateSquares += omega.dot(omega); rateCount += 1
            return nil
        }
        let result = evaluate()
        reset()
        self.start = time; lastRateTime = time
        rateSum = omega; rateSquares = omega.dot(omega); rateCount = 1
        return result
    }

    private mutating func evaluate() -> (bias: Vector3, variance: Double)? {
        let c = configuration
        guard rateCount >= 10, accelerationCounts.0 >= 3, accelerationCounts.1 >= 3,
              fieldCounts.0 >= 2, fieldCounts.1 >= 2 else { return nil }
        let n = Double(rateCount)
        let mean = rateSum * (1 / n)
        let rateDeviation = max(0, rateSquares / n - mean.dot(mean)).squareRoot()
        guard rateDeviation <= c.maximumRateDeviationRadiansPerSecond, mean.length <= c.maximumMeanRateRadiansPerSecond
        else { return nil }
        let na = Double(accelerationCounts.0 + accelerationCounts.1)
        let a = (accelerationSums.0 + accelerationSums.1) * (1 / na)
        let accelerationDeviation = max(0, accelerationSquares / na - a.dot(a)).squareRoot()
        guard accelerationDeviation <= c.maximumAccelerationDeviationMetresPerSecondSquared,
              abs(a.length - TiltCompensation.standardGravity) <= 1 else { return nil }
        let halfTime = c.windowSeconds / 2
        let a0 = accelerationSums.0 * (1 / Double(accelerationCounts.0)), a1 = accelerationSums.1 * (1 / Double(accelerationCounts.1))
        let m0 = fieldSums.0 * (1 / Double(fieldCounts.0)), m1 = fieldSums.1 * (1 / Double(fieldCounts.1))
        let m = (m0 + m1) * 0.5
        func seesTurn(predicted: Double, observed: Double, noise: Double, counts: (Int, Int)) -> Bool {
            // The difference of two means of 3-vectors: per-axis σ·√(1/n₀ + 1/n₁), length √3 times.
            let sigma = noise * (3 * (1 / Double(counts.0) + 1 / Double(counts.1))).squareRoot()
            return predicted > c.turnTestSigmas * sigma && observed > predicted / 2
        }
        if seesTurn(predicted: mean.cross(a).length * halfTime, observed: (a1 - a0).length,
                    noise: c.accelerometerNoiseMetresPerSecondSquared, counts: accelerationCounts)
            || seesTurn(predicted: mean.cross(m).length * halfTime, observed: (m1 - m0).length,
                        noise: c.magnetometerNoiseMicrotesla, counts: fieldCounts) {
            turnRejectionCount += 1
            return nil
        }
        measurementCount += 1
        return (mean, rateDeviation * rateDeviation / n)
    }
}
