// SPDX-License-Identifier: Apache-2.0
/// A fixed-capacity ring buffer of time-stamped values; storage is allocated once in `init`, so
/// appending never allocates. When full, appending overwrites the oldest entry.
struct TimedRing<Value: Sendable>: Sendable {
    struct Entry: Sendable {
        var time: Double
        var value: Value
    }

    private var storage: ContiguousArray<Entry>
    private var oldest = 0
    private(set) var count = 0
    var capacity: Int { storage.count }

    init(capacity: Int, filler: Value) {
        storage = ContiguousArray(repeating: Entry(time: 0, value: filler), count: max(1, capacity))
    }

    mutating func append(time: Double, value: Value) {
        if count == storage.count {
            storage[oldest] = Entry(time: time, value: value)
            oldest = (oldest + 1) % storage.count
        } else {
            storage[(oldest + count) % storage.count] = Entry(time: time, value: value)
            count += 1
        }
    }

    /// Drops entries whose time is before `time`.
    mutating func removeEntries(before time: Double) {
        while count > 0, storage[oldest].time < time {
            oldest = (oldest + 1) % storage.count
            count -= 1
        }
    }

    mutating func removeAll() { oldest = 0; count = 0 }

    var newestTime: Double? { count == 0 ? nil : storage[(oldest + count - 1) % storage.count].time }

    /// Visits entries oldest first.
    func forEach(_ body: (Entry) -> Void) {
        var i = oldest
        for _ in 0..<count {
            body(storage[i])
            i += 1
            if i == storage.count { i = 0 }
        }
    }
}

/// The circular mean of a set of angles (Mardia & Jupp, *Directional Statistics*, 2000, §2.2).
public struct CircularMean: Sendable, Equatable {
    /// Mean direction θ̄ = atan2(Σ sin θ, Σ cos θ), degrees in [0, 360).
    public var meanDegrees: Double
    /// Mean resultant length R = ‖Σ (cos θ, sin θ)‖ / n, in [0, 1]; 1 when all angles agree.
    public var resultantLength: Double
    /// Circular standard deviation √(−2 ln R) (Mardia & Jupp eq. 2.3.11), converted to degrees.
    /// For small spreads it equals the ordinary standard deviation of the angles.
    public var spreadDegrees: Double
    /// Number of samples averaged.
    public var sampleCount: Int

    /// Computes the mean of unit vectors with component sums `sumSin`, `sumCos` over `count`
    /// samples; `nil` when `count` is 0 or R < `minimumResultantLength` (mean undefined).
    public init?(sumSin: Double, sumCos: Double, count: Int, minimumResultantLength: Double) {
        guard count > 0, sumSin.isFinite, sumCos.isFinite else { return nil }
        let r = min(1, hypot(sumSin, sumCos) / Double(count))
        guard r >= minimumResultantLength, r > 0 else { return nil }
        meanDegrees = Angle.normalized360(Angle.degrees(atan2(sumSin, sumCos)))
        resultantLength = r
        spreadDegrees = Angle.degrees((-2 * log(r)).squareRoot())
        sampleCount = count
    }
}

/// A circular moving average of headings over a sliding time window.
///
/// Each sample is stored as (time, sin θ, cos θ); the output is the direction of the mean unit
/// vector, so 359° and 1° average to 0°, never 180°. When the mean resultant length R falls below
/// `minimumResultantLength` the mean is undefined and `nil` is returned instead of a number.
///
/// **Turn reset**: when a new sample differs from the current window mean by more than
/// `resetTurnDegrees` (default 30°), the window is cleared before the sample is added, so after a
/// sudden turn the output jumps to the new heading at once instead of sweeping through the lag of
/// the window. The cost is that a single outlier of more than 30° also restarts the window.
///
/// Samples older than `time − windowSeconds` are dropped. Storage is a ring buffer of fixed
/// `capacity`, allocated once; if more than `capacity` samples arrive within one window, the
/// oldest are dropped early. Time running backwards clears the window. Non-finite angles or times
/// are ignored (the current mean is returned unchanged).
public struct CircularSmoother: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// Length of the averaging window, seconds.
        public var windowSeconds: Double
        /// A sample farther than this from the current mean (degrees) clears the window.
        public var resetTurnDegrees: Double
        /// R below this makes the mean undefined.
        public var minimumResultantLength: Double
        /// Maximum number of samples kept (ring-buffer size).
        public var capacity: Int

        public init(windowSeconds: Double = 0.5, resetTurnDegrees: Double = 30,
                    minimumResultantLength: Double = 1e-3, capacity: Int = 256) {
            self.windowSeconds = windowSeconds
            self.resetTurnDegrees = resetTurnDegrees
            self.minimumResultantLength = minimumResultantLength
            self.capacity = capacity
        }
    }

    private struct Direction: Sendable { var sin: Double; var cos: Double }

    public let configuration: Configuration
    private var ring: TimedRing<Direction>
    /// The mean over the current window, `nil` when empty or undefined.
    public private(set) var mean: CircularMean?
    /// Mean resultant length R of the current window, in [0, 1] (0 when empty); available even
    /// when `mean` is `nil` because R is below the threshold.
    public private(set) var resultantLength = 0.0
    /// How many times the window has been cleared by the turn-reset rule (diagnostics).
    public private(set) var turnResetCount = 0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        ring = TimedRing(capacity: max(1, configuration.capacity), filler: Direction(sin: 0, cos: 1))
    }

    /// Adds a heading `angleDegrees` observed at `time` (seconds, any monotonic origin) and returns
    /// the mean over the window ending at `time`.
    @discardableResult
    public mutating func add(angleDegrees: Double, time: Double) -> CircularMean? {
        guard angleDegrees.isFinite, time.isFinite else { return mean }
        if let newest = ring.newestTime, time < newest { ring.removeAll() }
        ring.removeEntries(before: time - configuration.windowSeconds)
        if let current = currentMean(),
           abs(Angle.turn(from: current.meanDegrees, to: angleDegrees)) > configuration.resetTurnDegrees {
            ring.removeAll()
            turnResetCount += 1
        }
        let radians = Angle.radians(angleDegrees)
        ring.append(time: time, value: Direction(sin: sin(radians), cos: cos(radians)))
        let sums = sums()
        updateResultantLength(sumSin: sums.sin, sumCos: sums.cos)
        mean = currentMean()
        return mean
    }

    private mutating func updateResultantLength(sumSin: Double, sumCos: Double) {
        resultantLength = ring.count == 0 ? 0 : min(1, hypot(sumSin, sumCos) / Double(ring.count))
    }

    /// Clears the window.
    public mutating func reset() {
        ring.removeAll()
        mean = nil
        resultantLength = 0
    }

    /// Number of samples in the window.
    public var sampleCount: Int { ring.count }

    private func sums() -> (sin: Double, cos: Double) {
        var s = 0.0, c = 0.0
        ring.forEach { s += $0.value.sin; c += $0.value.cos }
        return (s, c)
    }

    private func currentMean() -> CircularMean? {
        let (s, c) = sums()
        return CircularMean(sumSin: s, sumCos: c, count: ring.count,
                            minimumResultantLength: configuration.minimumResultantLength)
    }
}
