// SPDX-License-Identifier: Apache-2.0
/// An equal-area split of the sphere of directions into `bandCount × sectorCount` cells: bands of
/// equal height in z (Archimedes' hat-box theorem: equal heights cut equal areas from a sphere)
/// times sectors of equal width in azimuth atan2(y, x). Exact equal areas, O(1) lookup (one
/// `atan2`); cells near the poles are slimmer than those at the equator.
public struct DirectionCells: Sendable, Equatable {
    /// Number of bands in z.
    public let bandCount: Int
    /// Number of azimuth sectors per band.
    public let sectorCount: Int

    /// Both counts are clamped to at least 1.
    public init(bandCount: Int, sectorCount: Int) {
        self.bandCount = max(1, bandCount)
        self.sectorCount = max(1, sectorCount)
    }

    /// Total number of cells.
    public var cellCount: Int { bandCount * sectorCount }

    /// The cell of `direction` (any non-zero finite vector; it is normalised) in 0..<cellCount,
    /// band-major; `nil` for a zero or non-finite vector.
    @inlinable public func index(of direction: Vector3) -> Int? {
        guard let u = direction.normalized else { return nil }
        let band = min(bandCount - 1, max(0, Int((u.z + 1) / 2 * Double(bandCount))))
        let fraction = (atan2(u.y, u.x) + .pi) / (2 * .pi)
        let sector = min(sectorCount - 1, max(0, Int(fraction * Double(sectorCount))))
        return band * sectorCount + sector
    }
}

/// A bounded, orientation-bucketed set of raw magnetometer samples for the calibration fit (the
/// scheme of Android's and NXP's online calibrators, NXP AN5019 "Magnetic Calibration Algorithms"
/// §"measurement buffer": one slot group per direction so the fit sees the whole sphere, not the
/// direction the phone happened to rest in).
///
/// The direction of a sample is that of `raw − centreMicrotesla` (the running hard-iron estimate);
/// it selects one of `DirectionCells` cells, each holding up to `samplesPerCell` samples. A sample
/// closer than `minimumSeparationMicrotesla` to its cell's newest sample does not take a slot of
/// its own (a phone lying still cannot flood the set). When both came with an attitude filter's
/// vertical (`verticalSigmaRadians`) within `mergeAngleDegrees` of each other, it is **averaged
/// into** that sample, a running mean over the last `samplesAveraged` such samples, so that the
/// magnetometer noise of the samples a slow hand leaves close together is averaged instead of
/// thrown away; otherwise it **replaces** it (newest wins: a turn about the field, or an
/// accelerometer's vertical, whose sample-to-sample noise cannot tell). A sample farther away
/// takes the cell's next slot, overwriting the oldest when the cell is full.
///
/// Cost: storage is allocated once in `init` (`cellCount × samplesPerCell` samples); `add` is O(1)
/// and never allocates. `recentre` re-buckets every stored sample (O(capacity), no allocation).
public struct CalibrationSampleSet: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// Bands of equal height in z (default 10).
        public var bandCount: Int
        /// Azimuth sectors per band (default 16; 160 cells in all, each ≈ 0.079 sr, about 16°
        /// across: a hand's motion within ±45° of tilt at a dip of 73° still reaches some 40 of them).
        public var sectorCount: Int
        /// Samples kept per cell (default 8: 1280 samples in all).
        public var samplesPerCell: Int
        /// A sample within this distance of its cell's newest replaces it or is averaged into it,
        /// microtesla (default 2 µT, about 4× a typical phone magnetometer's noise of 0.3–0.5 µT).
        public var minimumSeparationMicrotesla: Double
        /// A close sample is averaged into its cell's newest when their down directions are within
        /// this angle, degrees (default 3: a slow hand's consecutive samples at 50 Hz; the dip
        /// constraint m·down = R sin I holds for the mean only if the vertical barely moved; 0
        /// averages nothing). Measured (BENCHMARKS.md, sixteenth session): the first use with
        /// 500 µT of hard iron at London holds 0.74° instead of 1.26° over ten seeds.
        public var mergeAngleDegrees: Double = 3
        /// The running mean is over about this many samples (default 8: √8 less noise; a still
        /// phone's slow drift is still followed within a few tenths of a second).
        public var samplesAveraged: Int = 8
        /// The bounding-box centre is used only once the box spans this much on some axis,
        /// microtesla (default 20); before, the centre stays at zero, so the noise of a phone lying
        /// still cannot scatter over many cells.
        public var minimumBoxExtentMicrotesla: Double

        public init(bandCount: Int = 10, sectorCount: Int = 16, samplesPerCell: Int = 8,
                    minimumSeparationMicrotesla: Double = 2, minimumBoxExtentMicrotesla: Double = 20) {
            self.minimumBoxExtentMicrotesla = minimumBoxExtentMicrotesla
            self.bandCount = bandCount
            self.sectorCount = sectorCount
            self.samplesPerCell = samplesPerCell
            self.minimumSeparationMicrotesla = minimumSeparationMicrotesla
        }
    }

    public let configuration: Configuration
    /// The cell layout.
    public let cells: DirectionCells
    private let slots: Int
    private var samples: ContiguousArray<Vector3>
    /// Per sample, the down direction in the device frame (unit), or zero when unknown.
    private var downs: ContiguousArray<Vector3>
    private var times: ContiguousArray<Double>
    /// Per sample, how many raw samples its running mean holds (1 for a single one).
    private var weights: ContiguousArray<Int32>
    /// Per sample, its vertical's persistent error, radians (0: an accelerometer's, or none).
    private var verticalSigmas: ContiguousArray<Double>
    /// Per cell: number of filled slots, and the slot of the newest sample.
    private var filled: ContiguousArray<Int32>
    private var newest: ContiguousArray<Int32>
    /// Scratch space for `recentre` (allocated once).
    private var spareSamples: ContiguousArray<Vector3>
    private var spareDowns: ContiguousArray<Vector3>
    private var spareTimes: ContiguousArray<Double>
    private var spareWeights: ContiguousArray<Int32>
    private var spareVerticalSigmas: ContiguousArray<Double>
    private var boxMinimum = Vector3.zero, boxMaximum = Vector3.zero

    /// The centre directions are taken from, microtesla (the running hard-iron estimate).
    public private(set) var centreMicrotesla = Vector3.zero
    /// True while the centre follows the midpoint of the samples' bounding box (per axis
    /// (min + max)/2, the classic first hard-iron guess; zero while the box is smaller than
    /// `minimumBoxExtentMicrotesla`); false once `recentre` set it.
    public private(set) var centreFollowsBoundingBox = true
    /// Number of cells holding at least one sample.
    public private(set) var filledCellCount = 0
    /// Number of samples held (at most `capacity`).
    public private(set) var sampleCount = 0
    /// Number of samples stored in a slot of their own (not replacing their cell's newest, as a
    /// still phone's do) since `init`: it changes only when the set learns something new.
    public private(set) var distinctCount = 0
    /// Number of finite samples offered to `add` since the last `removeAll`.
    public private(set) var acceptedCount = 0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        cells = DirectionCells(bandCount: configuration.bandCount, sectorCount: configuration.sectorCount)
        slots = max(1, min(configuration.samplesPerCell, 1 << 20))
        let capacity = cells.cellCount * slots
        samples = ContiguousArray(repeating: .zero, count: capacity)
        downs = ContiguousArray(repeating: .zero, count: capacity)
        times = ContiguousArray(repeating: 0, count: capacity)
        weights = ContiguousArray(repeating: 1, count: capacity)
        verticalSigmas = ContiguousArray(repeating: 0, count: capacity)
        filled = ContiguousArray(repeating: 0, count: cells.cellCount)
        newest = ContiguousArray(repeating: 0, count: cells.cellCount)
        // Separate buffers now (not copies sharing storage, which would be copied on first write).
        spareSamples = ContiguousArray(repeating: .zero, count: capacity)
        spareDowns = ContiguousArray(repeating: .zero, count: capacity)
        spareTimes = ContiguousArray(repeating: 0, count: capacity)
        spareWeights = ContiguousArray(repeating: 1, count: capacity)
        spareVerticalSigmas = ContiguousArray(repeating: 0, count: capacity)
        mergeCosine = cos(max(0, configuration.mergeAngleDegrees) * .pi / 180)
    }

    /// cos(`mergeAngleDegrees`).
    private let mergeCosine: Double

    /// Maximum number of samples held.
    public var capacity: Int { samples.count }

    /// Fraction of cells holding a sample, in [0, 1].
    public var coverage: Double { Double(filledCellCount) / Double(cells.cellCount) }

    /// Heap bytes owned by the set (its arrays), for the memory bound.
    public var storageBytes: Int {
        (samples.count + spareSamples.count + downs.count + spareDowns.count) * MemoryLayout<Vector3>.stride
            + (times.count + spareTimes.count + verticalSigmas.count + spareVerticalSigmas.count) * MemoryLayout<Double>.stride
            + (filled.count + newest.count + weights.count + spareWeights.count) * MemoryLayout<Int32>.stride
    }

    /// The cell of a raw sample relative to the current centre, `nil` for a sample at the centre.
    @inlinable public func cell(ofRaw raw: Vector3) -> Int? { cells.index(of: raw - centreMicrotesla) }

    /// Stores a raw sample (microtesla) taken at `time` (seconds), with the device's down direction
    /// then (device frame, any length; `.zero` when unknown) and, when that direction is an
    /// attitude filter's, its one-sigma error in radians (`verticalSigmaRadians`, errors that
    /// persist from sample to sample; nil for an accelerometer's). Returns its cell, or `nil` when
    /// the sample was not finite or sits exactly at the centre. O(1), no allocation.
    @discardableResult
    public mutating func add(_ raw: Vector3, down: Vector3 = .zero, verticalSigmaRadians: Double? = nil, time: Double) -> Int? {
        guard raw.isFinite, time.isFinite else { return nil }
        let down = down.isFinite ? (down.normalized ?? .zero) : .zero
        let sigma = down == .zero ? 0 : max(0, verticalSigmaRadians.flatMap { $0.isFinite ? $0 : nil } ?? 0)
        acceptedCount += 1
        if centreFollowsBoundingBox {
            if acceptedCount == 1 {
                boxMinimum = raw; boxMaximum = raw
            } else {
                boxMinimum = Vector3(min(boxMinimum.x, raw.x), min(boxMinimum.y, raw.y), min(boxMinimum.z, raw.z))
                boxMaximum = Vector3(max(boxMaximum.x, raw.x), max(boxMaximum.y, raw.y), max(boxMaximum.z, raw.z))
            }
            let extent = boxMaximum - boxMinimum
            if max(extent.x, extent.y, extent.z) >= configuration.minimumBoxExtentMicrotesla {
                centreMicrotesla = (boxMinimum + boxMaximum) * 0.5
            }
        }
        guard let cell = cell(ofRaw: raw) else { return nil }
        store(raw, down: down, verticalSigma: sigma, time: time, cell: cell)
        return cell
    }

    private mutating func store(_ raw: Vector3, down: Vector3, verticalSigma: Double, time: Double, cell: Int, weight: Int32 = 1) {
        let base = cell * slots
        let count = Int(filled[cell])
        if count == 0 {
            filled[cell] = 1
            newest[cell] = 0
            samples[base] = raw; downs[base] = down; times[base] = time; weights[base] = weight
            verticalSigmas[base] = verticalSigma
            filledCellCount += 1
            sampleCount += 1
            distinctCount &+= 1
            return
        }
        let latest = Int(newest[cell])
        let separation = configuration.minimumSeparationMicrotesla
        let i = base + latest
        if (samples[i] - raw).dot(samples[i] - raw) < separation * separation {
            let stored = downs[i]
            let filters = verticalSigma > 0 && verticalSigmas[i] > 0
            let limit = Int32(max(1, configuration.samplesAveraged))
            if filters, configuration.mergeAngleDegrees > 0, stored.dot(down) >= mergeCosine, limit > 1 {
                // Running mean, weight 1/n up to the limit, then an exponential one over it.
                let n = min(weights[i], limit - 1) + weight
                let share = Double(weight) / Double(n)
                samples[i] = samples[i] + (raw - samples[i]) * share
                downs[i] = (stored + (down - stored) * share).normalized ?? down
                verticalSigmas[i] += (verticalSigma - verticalSigmas[i]) * share
                weights[i] = min(n, limit)
            } else {
                samples[i] = raw; downs[i] = down; weights[i] = weight; verticalSigmas[i] = verticalSigma
            }
            times[i] = time
            return
        }
        let slot = (latest + 1) % slots
        distinctCount &+= 1
        if count < slots { filled[cell] = Int32(count + 1); sampleCount += 1 }
        newest[cell] = Int32(slot)
        samples[base + slot] = raw; downs[base + slot] = down; times[base + slot] = time; weights[base + slot] = weight
        verticalSigmas[base + slot] = verticalSigma
    }

    /// Sets the centre (e.g. to a fitted hard-iron offset) and re-buckets every stored sample by
    /// its direction from the new centre, oldest first so the newest still win. O(capacity), no
    /// allocation.
    public mutating func recentre(_ centre: Vector3) {
        guard centre.isFinite else { return }
        centreFollowsBoundingBox = false
        centreMicrotesla = centre
        // Gather the stored samples into the spare arrays, oldest first.
        var n = 0
        for cell in 0..<cells.cellCount {
            let count = Int(filled[cell]), base = cell * slots
            for k in 0..<count {
                let slot = (Int(newest[cell]) + slots - count + 1 + k) % slots
                spareSamples[n] = samples[base + slot]; spareDowns[n] = downs[base + slot]
                spareTimes[n] = times[base + slot]; spareWeights[n] = weights[base + slot]
                spareVerticalSigmas[n] = verticalSigmas[base + slot]
                n += 1
            }
        }
        sortSpareByTime(n)
        for cell in 0..<cells.cellCount { filled[cell] = 0; newest[cell] = 0 }
        filledCellCount = 0
        sampleCount = 0
        for k in 0..<n {
            if let cell = cell(ofRaw: spareSamples[k]) {
                store(spareSamples[k], down: spareDowns[k], verticalSigma: spareVerticalSigmas[k], time: spareTimes[k], cell: cell,
                      weight: spareWeights[k])
            }
        }
    }

    /// Insertion sort of the first `n` spare entries by time (n ≤ capacity, runs at most once per
    /// fit attempt; the input is nearly sorted per cell).
    private mutating func sortSpareByTime(_ n: Int) {
        guard n > 1 else { return }
        for i in 1..<n {
            let t = spareTimes[i], v = spareSamples[i], d = spareDowns[i], w = spareWeights[i], e = spareVerticalSigmas[i]
            var j = i - 1
            while j >= 0, spareTimes[j] > t {
                spareTimes[j + 1] = spareTimes[j]; spareSamples[j + 1] = spareSamples[j]; spareDowns[j + 1] = spareDowns[j]
                spareWeights[j + 1] = spareWeights[j]; spareVerticalSigmas[j + 1] = spareVerticalSigmas[j]
                j -= 1
            }
            spareTimes[j + 1] = t; spareSamples[j + 1] = v; spareDowns[j + 1] = d; spareWeights[j + 1] = w
            spareVerticalSigmas[j + 1] = e
        }
    }

    /// Forgets every sample and lets the centre follow the bounding box again.
    public mutating func removeAll() {
        for cell in 0..<cells.cellCount { filled[cell] = 0; newest[cell] = 0 }
        filledCellCount = 0
        sampleCount = 0
        acceptedCount = 0
        centreFollowsBoundingBox = true
        centreMicrotesla = .zero
    }

    /// Visits every stored sample (raw microtesla, time seconds), cell by cell.
    public func forEachSample(_ body: (Vector3, Double) -> Void) {
        for cell in 0..<cells.cellCount {
            let base = cell * slots
            for k in 0..<Int(filled[cell]) { body(samples[base + k], times[base + k]) }
        }
    }

    /// Calls `body` with the stored samples packed contiguously (in the spare storage; valid only
    /// inside `body`). No allocation.
    public mutating func withPackedSamples<R>(_ body: (UnsafeBufferPointer<Vector3>) -> R) -> R {
        var n = 0
        for cell in 0..<cells.cellCount {
            let base = cell * slots
            for k in 0..<Int(filled[cell]) { spareSamples[n] = samples[base + k]; n += 1 }
        }
        return spareSamples.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[0..<n])) }
    }

    /// Calls `body` with the stored samples and their down directions (`.zero` where unknown)
    /// packed contiguously, in the same order (in the spare storage; valid only inside `body`).
    /// No allocation.
    public mutating func withPackedSamplesAndDowns<R>(
        _ body: (UnsafeBufferPointer<Vector3>, UnsafeBufferPointer<Vector3>) -> R) -> R {
        withPackedSamplesDownsAndVerticalSigmas { raw, down, _ in body(raw, down) }
    }

    /// Calls `body` with the stored samples, their down directions and their verticals' persistent
    /// errors (radians, 0 for an accelerometer's) packed contiguously, in the same order (in the
    /// spare storage; valid only inside `body`). No allocation.
    public mutating func withPackedSamplesDownsAndVerticalSigmas<R>(
        _ body: (UnsafeBufferPointer<Vector3>, UnsafeBufferPointer<Vector3>, UnsafeBufferPointer<Double>) -> R) -> R {
        var n = 0
        for cell in 0..<cells.cellCount {
            let base = cell * slots
            for k in 0..<Int(filled[cell]) {
                spareSamples[n] = samples[base + k]; spareDowns[n] = downs[base + k]
                spareVerticalSigmas[n] = verticalSigmas[base + k]
                n += 1
            }
        }
        return spareSamples.withUnsafeBufferPointer { s in
            spareDowns.withUnsafeBufferPointer { d in
                spareVerticalSigmas.withUnsafeBufferPointer { v in
                    body(UnsafeBufferPointer(rebasing: s[0..<n]), UnsafeBufferPointer(rebasing: d[0..<n]),
                         UnsafeBufferPointer(rebasing: v[0..<n]))
                }
            }
        }
    }

    /// Summary of where the stored samples point from `centre`: per axis, whether some sample
    /// direction has a component ≥ `threshold` and some ≤ −`threshold`, and the time span of the
    /// stored samples (newest − oldest, seconds).
    public func spread(from centre: Vector3, threshold: Double) -> (axesWithBothHemispheres: Int, timeSpanSeconds: Double) {
        var positive = (false, false, false), negative = (false, false, false)
        var oldest = Double.infinity, latest = -Double.infinity
        for cell in 0..<cells.cellCount {
            let base = cell * slots
            for k in 0..<Int(filled[cell]) {
                oldest = min(oldest, times[base + k]); latest = max(latest, times[base + k])
                guard let u = (samples[base + k] - centre).normalized else { continue }
                if u.x >= threshold { positive.0 = true } else if u.x <= -threshold { negative.0 = true }
                if u.y >= threshold { positive.1 = true } else if u.y <= -threshold { negative.1 = true }
                if u.z >= threshold { positive.2 = true } else if u.z <= -threshold { negative.2 = true }
            }
        }
        let axes = (positive.0 && negative.0 ? 1 : 0) + (positive.1 && negative.1 ? 1 : 0)
            + (positive.2 && negative.2 ? 1 : 0)
        return (axes, latest >= oldest ? latest - oldest : 0)
    }
}
