// SPDX-License-Identifier: Apache-2.0
/// Which parts of the sphere of directions a set of field samples has visited, as a fraction of
/// 32 equal-area bins: 4 bands of equal height in z (by Archimedes' hat-box theorem, bands of equal
/// height on a sphere have equal area) × 8 sectors of 45° in azimuth atan2(y, x).
///
/// A hard-iron fit is only trustworthy when the samples cover many directions; points confined to
/// a circle (phone turned only about one axis) leave the sphere centre undetermined.
public struct OrientationCoverage: Sendable, Equatable {
    /// Number of bands in z.
    public static let bandCount = 4
    /// Number of azimuth sectors.
    public static let sectorCount = 8
    /// Total number of bins (32).
    public static let binCount = bandCount * sectorCount
    private static let cells = DirectionCells(bandCount: bandCount, sectorCount: sectorCount)

    private var visited: UInt64 = 0

    public init() {}

    /// Marks the bin of `direction` (any non-zero finite vector; it is normalised) as visited.
    /// Zero or non-finite vectors are ignored.
    public mutating func insert(direction: Vector3) {
        guard let cell = Self.cells.index(of: direction) else { return }
        visited |= 1 << UInt64(cell)
    }

    /// Number of bins visited.
    public var visitedBinCount: Int { visited.nonzeroBitCount }

    /// Fraction of bins visited, in [0, 1].
    public var fraction: Double { Double(visitedBinCount) / Double(Self.binCount) }
}

/// Result of a least-squares sphere fit to magnetometer samples.
public struct SphereFit: Sendable, Equatable {
    /// The sphere centre: the hard-iron offset, microtesla (device frame).
    public var hardIronOffset: Vector3
    /// The sphere radius: the local field strength seen by the sensor, microtesla.
    public var radiusMicrotesla: Double
    /// Root-mean-square radial residual √(mean (|mᵢ − c| − r)²), microtesla.
    public var residualRMSMicrotesla: Double
    /// Fraction of `OrientationCoverage` bins visited by the directions mᵢ − c, in [0, 1].
    public var coverage: Double
    /// Number of samples fitted.
    public var sampleCount: Int

    /// The calibration this fit implies: its offset and an identity soft-iron matrix.
    public var calibration: MagnetometerCalibration {
        MagnetometerCalibration(hardIronOffset: hardIronOffset, softIronMatrix: .identity)
    }
}

/// Collects raw magnetometer samples and fits a sphere to them to estimate the hard-iron offset —
/// the hook for online calibration (a full ellipsoid fit for soft iron can replace `fit()` later
/// with the same sample store).
///
/// Method: the linear 4-parameter sphere fit. Every sample on a sphere of centre c and radius r
/// satisfies |m|² = 2 m·c + k with k = r² − |c|², which is linear in (c, k); the least-squares
/// solution comes from the 4×4 normal equations (e.g. Kåsa, IEEE Trans. Instrum. Meas. IM-25,
/// 1976; NXP AN4246 "Calibrating an eCompass in the Presence of Hard- and Soft-Iron Interference",
/// eq. 20–28). Samples are centred on their mean before forming the equations, for conditioning.
///
/// Storage is a fixed-capacity ring buffer (the newest `capacity` samples are kept).
public struct HardIronEstimator: Sendable {
    /// Default ring-buffer size.
    public static let defaultCapacity = 1024
    /// Fewest samples `fit()` accepts.
    public var minimumSampleCount: Int

    private var ring: TimedRing<Vector3>

    public init(capacity: Int = defaultCapacity, minimumSampleCount: Int = 20) {
        ring = TimedRing(capacity: max(4, capacity), filler: .zero)
        self.minimumSampleCount = max(4, minimumSampleCount)
    }

    /// Number of samples held.
    public var sampleCount: Int { ring.count }

    /// Adds a raw (uncalibrated) field sample, microtesla. Non-finite samples are ignored.
    public mutating func add(_ rawField: Vector3) {
        guard rawField.isFinite else { return }
        ring.append(time: 0, value: rawField)
    }

    /// Drops all samples.
    public mutating func reset() { ring.removeAll() }

    /// Fits a sphere to the stored samples; `nil` with too few samples, degenerate geometry
    /// (samples coplanar or collinear: singular normal equations) or a non-positive r².
    public func fit() -> SphereFit? {
        let n = ring.count
        guard n >= minimumSampleCount else { return nil }
        var mean = Vector3.zero
        ring.forEach { mean += $0.value }
        mean = mean / Double(n)

        // Normal equations AᵀA x = Aᵀb, rows of A = (2p, 1), b = |p|², p = m − mean.
        var ata = [[Double]](repeating: [Double](repeating: 0, count: 4), count: 4)
        var atb = [Double](repeating: 0, count: 4)
        ring.forEach { entry in
            let p = entry.value - mean
            let row = [2 * p.x, 2 * p.y, 2 * p.z, 1.0]
            let b = p.dot(p)
            for i in 0..<4 {
                atb[i] += row[i] * b
                for j in 0..<4 { ata[i][j] += row[i] * row[j] }
            }
        }
        guard let x = Self.solve(ata, atb) else { return nil }
        let centre = Vector3(x[0], x[1], x[2])
        let r2 = x[3] + centre.dot(centre)
        guard r2.isFinite, r2 > 0 else { return nil }
        let radius = r2.squareRoot()
        let offset = centre + mean

        var sumSquares = 0.0
        var coverage = OrientationCoverage()
        ring.forEach { entry in
            let d = entry.value - offset
            let e = d.length - radius
            sumSquares += e * e
            coverage.insert(direction: d)
        }
        let rms = (sumSquares / Double(n)).squareRoot()
        guard offset.isFinite, rms.isFinite else { return nil }
        return SphereFit(hardIronOffset: offset, radiusMicrotesla: radius, residualRMSMicrotesla: rms,
                         coverage: coverage.fraction, sampleCount: n)
    }

    /// Gaussian elimination with partial pivoting on a small dense system; `nil` when a pivot is
    /// below 1e-12 of the largest diagonal entry (numerically singular).
    static func solve(_ matrix: [[Double]], _ rhs: [Double]) -> [Double]? {
        var a = matrix, b = rhs
        let n = b.count
        let scale = (0..<n).map { abs(a[$0][$0]) }.max() ?? 0
        guard scale > 0, scale.isFinite else { return nil }
        for col in 0..<n {
            var pivot = col
            for row in (col + 1)..<n where abs(a[row][col]) > abs(a[pivot][col]) { pivot = row }
            guard abs(a[pivot][col]) > 1e-12 * scale else { return nil }
            if pivot != col { a.swapAt(pivot, col); b.swapAt(pivot, col) }
            for row in (col + 1)..<n {
                let f = a[row][col] / a[col][col]
                for k in col..<n { a[row][k] -= f * a[col][k] }
                b[row] -= f * b[col]
            }
        }
        var x = [Double](repeating: 0, count: n)
        for row in stride(from: n - 1, through: 0, by: -1) {
            var s = b[row]
            for k in (row + 1)..<n { s -= a[row][k] * x[k] }
            x[row] = s / a[row][row]
        }
        return x.allSatisfy(\.isFinite) ? x : nil
    }
}
