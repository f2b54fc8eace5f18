// SPDX-License-Identifier: Apache-2.0
/// The recent raw magnetometer samples, each with the attitude the gyroscope-aided filter had at
/// its time, to tell two corrections apart by what the lengths of the field cannot show.
///
/// A correction that is right turns every sample into the same field fixed in the world: seen
/// through the filter's attitude (which the gyroscope carries through the turns) the field's
/// horizontal direction stays put. A wrong hard iron b is fixed in the device, so through the
/// attitude R it becomes an error −R·b that turns with the phone, and the field's direction in
/// the world swings by up to |b_h|/H as the phone turns. Two corrections whose samples lie on
/// their spheres about equally well (BROAD trials 30 and 31: a fit of 1.7–2.8 µT of false hard
/// iron learned beside a magnet on the table, 1.04–1.32 times better than no correction by the
/// lengths) differ here: the one whose world directions gather more tightly is the right one.
/// Measured on BROAD's 30 trials (20 s before each acceptance, the replay's own attitudes): this
/// comparison and the same one through the optical truth's attitudes agree at 54 of 58
/// acceptances, and the 4 others are ties within 0.4°.
///
/// The statistic is the mean resultant length R̄ of the unit horizontal directions (Mardia &
/// Jupp, "Directional Statistics", 2000, §2.3.1): 1 when every sample points the same way.
///
/// Storage is allocated once in `init`; `add` and `meanResultantLength` allocate nothing.
public struct FieldAttitudeHistory: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// Samples kept (default 200).
        public var capacity: Int
        /// Least time between two kept samples, seconds (default 0.09: every fifth sample at
        /// 50 Hz, every one at 10 Hz; about 20 s in all).
        public var spacingSeconds: Double
        /// Only samples this recent, against the newest, count, seconds (default 30).
        public var windowSeconds: Double
        /// Fewer samples than this judge nothing (default 50: 5 s of a turning phone).
        public var minimumSampleCount: Int
        /// The attitudes must be this diverse — ‖mean Rᵢ‖²_F / 3 of their rotation matrices at most
        /// this (default 0.97: 1 for one attitude, 0.97 for turns of about ±20° about one axis) —
        /// or the phone has not turned enough for a wrong hard iron to swing.
        public var maximumAttitudeConcentration: Double

        public init(capacity: Int = 200, spacingSeconds: Double = 0.09, windowSeconds: Double = 30,
                    minimumSampleCount: Int = 50, maximumAttitudeConcentration: Double = 0.97) {
            self.capacity = max(1, capacity)
            self.spacingSeconds = spacingSeconds
            self.windowSeconds = windowSeconds
            self.minimumSampleCount = minimumSampleCount
            self.maximumAttitudeConcentration = maximumAttitudeConcentration
        }
    }

    public let configuration: Configuration
    private var raws: [Vector3]
    private var attitudes: [Quaternion]
    private var times: [Double]
    private var next = 0
    public private(set) var count = 0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        raws = Array(repeating: .zero, count: configuration.capacity)
        attitudes = Array(repeating: .identity, count: configuration.capacity)
        times = Array(repeating: 0, count: configuration.capacity)
    }

    /// Heap bytes allocated in `init`.
    public var storageBytes: Int {
        configuration.capacity * (MemoryLayout<Vector3>.stride + MemoryLayout<Quaternion>.stride + MemoryLayout<Double>.stride)
    }

    /// Keeps one raw sample (microtesla, device frame) with the filter's attitude (device → world)
    /// at its time (seconds), unless it comes within `spacingSeconds` of the last kept one. Time
    /// running backwards starts afresh; non-finite input is ignored.
    public mutating func add(raw: Vector3, attitude: Quaternion, time: Double) {
        guard raw.isFinite, time.isFinite, attitude.w.isFinite, attitude.x.isFinite, attitude.y.isFinite,
              attitude.z.isFinite else { return }
        if count > 0 {
            let last = times[(next + configuration.capacity - 1) % configuration.capacity]
            if time < last { removeAll() } else if time - last < configuration.spacingSeconds { return }
        }
        raws[next] = raw
        attitudes[next] = attitude
        times[next] = time
        next = (next + 1) % configuration.capacity
        count = min(count + 1, configuration.capacity)
    }

    public mutating func removeAll() {
        next = 0
        count = 0
    }

    /// R̄ of the world-frame horizontal directions of the kept samples corrected by `calibration`;
    /// nil when fewer than `minimumSampleCount` samples are recent enough or the phone did not
    /// turn enough under the field.
    public func meanResultantLength(of calibration: MagnetometerCalibration) -> Double? {
        guard count > 0 else { return nil }
        let newest = times[(next + configuration.capacity - 1) % configuration.capacity]
        var n = 0
        var sum = (Vector3.zero, Vector3.zero, Vector3.zero)
        var north = 0.0, east = 0.0
        for k in 0..<count {
            let i = (next + configuration.capacity - 1 - k) % configuration.capacity
            guard newest - times[i] <= configuration.windowSeconds else { continue }
            let rotation = attitudes[i].rotationMatrix
            let world = rotation * calibration.apply(raws[i])
            let h = (world.x * world.x + world.y * world.y).squareRoot()
            guard h > 0, h.isFinite else { continue }
            sum = (sum.0 + rotation.row0, sum.1 + rotation.row1, sum.2 + rotation.row2)
            north += world.x / h
            east += world.y / h
            n += 1
        }
        guard n >= configuration.minimumSampleCount else { return nil }
        let count = Double(n)
        let concentration = (sum.0.dot(sum.0) + sum.1.dot(sum.1) + sum.2.dot(sum.2)) / (3 * count * count)
        guard concentration <= configuration.maximumAttitudeConcentration else { return nil }
        return (north * north + east * east).squareRoot() / count
    }
}
