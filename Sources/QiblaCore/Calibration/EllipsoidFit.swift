// SPDX-License-Identifier: Apache-2.0
/// Which model a calibration fit used.
public enum CalibrationFitKind: String, Sendable, Equatable {
    /// Hard iron b and a symmetric soft-iron matrix S (9 parameters).
    case ellipsoid
    /// `CalibrationEstimator` with the hard iron determined and the soft iron still near its prior.
    case hardIron = "hard-iron"
    /// `CalibrationEstimator` with the hard iron and the soft iron's diagonal determined.
    case diagonalSoftIron = "diagonal-soft-iron"
    /// Hard iron b only, S = identity (4 parameters with the radius): the fallback when the
    /// ellipsoid is ill-conditioned.
    case sphere
}

/// A fitted magnetometer calibration `corrected = S · (raw − b)` with its quality figures.
///
/// Normalisation: S is symmetric positive definite with det S = 1 (volume preserving, the
/// convention of NXP AN4246 §"soft-iron" and AN5019, where the inverse soft-iron matrix W⁻¹ has unit
/// determinant), so the corrected samples lie on a sphere of radius `fieldMicrotesla` equal to the
/// geometric mean of the raw ellipsoid's semi-axes.
public struct CalibrationFit: Sendable, Equatable {
    /// The model used.
    public var kind: CalibrationFitKind
    /// Hard-iron offset b, microtesla, device frame.
    public var hardIronOffsetMicrotesla: Vector3
    /// Soft-iron correction S: symmetric, det 1 (identity for a sphere fit).
    public var softIronMatrix: Matrix3
    /// Radius of the corrected-field sphere: the field strength the sensor sees, microtesla.
    public var fieldMicrotesla: Double
    /// RMS geometric residual √(mean (|S(mᵢ − b)| − R)²), microtesla.
    public var residualRMSMicrotesla: Double
    /// λmax / λmin of S (1 for a sphere): how far the raw samples are from a sphere.
    public var eigenvalueSpread: Double
    /// Number of samples fitted.
    public var sampleCount: Int

    public init(kind: CalibrationFitKind, hardIronOffsetMicrotesla: Vector3, softIronMatrix: Matrix3,
                fieldMicrotesla: Double, residualRMSMicrotesla: Double, eigenvalueSpread: Double, sampleCount: Int) {
        self.kind = kind
        self.hardIronOffsetMicrotesla = hardIronOffsetMicrotesla
        self.softIronMatrix = softIronMatrix
        self.fieldMicrotesla = fieldMicrotesla
        self.residualRMSMicrotesla = residualRMSMicrotesla
        self.eigenvalueSpread = eigenvalueSpread
        self.sampleCount = sampleCount
    }

    /// The correction to apply to raw samples.
    public var calibration: MagnetometerCalibration {
        MagnetometerCalibration(hardIronOffset: hardIronOffsetMicrotesla, softIronMatrix: softIronMatrix)
    }
}

/// Fits `corrected = S · (raw − b)` to raw magnetometer samples, in three stages:
///
/// 1. **Normalise**: subtract the mean μ and divide by the RMS distance s from it, so every
///    quantity below is O(1) whatever the units and offset (Hartley's normalisation; the
///    conditioning argument of Li & Griffiths 2004, §4).
/// 2. **Algebraic quadric fit** (9 parameters, ordinary least squares): every point q on an
///    ellipsoid satisfies Ax² + By² + Cz² + 2Dxy + 2Exz + 2Fyz + 2Gx + 2Hy + 2Iz = 1, linear in the
///    coefficients; the 9×9 normal equations are solved by Cholesky. (Li & Griffiths, "Least
///    squares ellipsoid specific fitting", GMAP 2004, use 10 parameters with an ellipsoid
///    constraint; this unconstrained form is enough because data that is not an ellipsoid is
///    rejected below.) With the 3×3 matrix Q and vector g of the coefficients, the centre is
///    c = −Q⁻¹g and the ellipsoid (q − c)ᵀ M (q − c) = 1 with M = Q / (1 + cᵀQc).
///    The fit falls back to a sphere when the normal matrix's condition number exceeds
///    `maximumConditionNumber`, M is not positive definite, or the spread of √M exceeds
///    `maximumEllipsoidSpread`; the sphere comes from the linear 4-parameter fit
///    |q|² = 2q·c + k (Kåsa 1976; NXP AN4246 eq. for the hard-iron-only case).
/// 3. **Levenberg–Marquardt** on the geometric residual eᵢ = |L(qᵢ − c)| − 1 (L = √M, symmetric, 9
///    parameters; or L = l·I, 4 parameters, for the sphere), Marquardt's diagonal damping
///    (Marquardt 1963; Madsen, Nielsen & Tingleff, "Methods for non-linear least squares problems",
///    2004, §3.2). The geometric residual is what heading error depends on; the algebraic one is
///    biased for partial or noisy data.
///
/// Finally b = μ + s·c, L ← L/s, R = det(L)^(−1/3), S = R·L (det S = 1).
///
/// Accuracy (tests against numpy, `scripts/generate_calibration_vectors.py`): the algebraic stage
/// reproduces numpy's `lstsq` quadric fit to 1e-9 relative; the refined fit recovers a simulated
/// offset to ≈ σ/√(n/9) for noise σ.
///
/// Storage: scratch space is allocated once in `init`; `fit(_:)` on an `UnsafeBufferPointer` then
/// runs without heap allocation (the calibrator calls it at most once a second).
public struct EllipsoidFitter: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// Largest condition number λmax/λmin of the normalised 9×9 normal matrix for which the
        /// ellipsoid is trusted (default 1e8; a full sphere of directions gives ≈ 1e2, a cap of
        /// half a hemisphere ≈ 1e6–1e9).
        public var maximumConditionNumber: Double
        /// Largest λmax/λmin of S for which the algebraic ellipsoid is used as the starting point
        /// (default 3: more soft iron than that is not a phone's; the sphere is used instead).
        public var maximumEllipsoidSpread: Double
        /// Levenberg–Marquardt iterations at most (default 12).
        public var maximumIterations: Int
        /// Fewest samples to fit an ellipsoid (default 12; a sphere needs 4).
        public var minimumEllipsoidSampleCount: Int

        public init(maximumConditionNumber: Double = 1e8, maximumEllipsoidSpread: Double = 3,
                    maximumIterations: Int = 12, minimumEllipsoidSampleCount: Int = 12) {
            self.maximumConditionNumber = maximumConditionNumber
            self.maximumEllipsoidSpread = maximumEllipsoidSpread
            self.maximumIterations = maximumIterations
            self.minimumEllipsoidSampleCount = minimumEllipsoidSampleCount
        }
    }

    public var configuration: Configuration
    /// Scratch: 9×9 matrices and vectors (layout in `Scratch`).
    private var scratch: ContiguousArray<Double>

    private enum Scratch {
        static let normal = 0          // 81: normal matrix
        static let copy = 81           // 81: copy for the eigen-solver / damped system
        static let vectors = 162       // 81: eigenvectors
        static let rhs = 243           // 9
        static let step = 252          // 9
        static let row = 261           // 9
        static let count = 270
    }

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        scratch = ContiguousArray(repeating: 0, count: Scratch.count)
    }

    /// A fitter without scratch space (allocates nothing), to swap a real one out of a struct.
    static var unallocated: EllipsoidFitter {
        EllipsoidFitter(unallocated: ())
    }

    private init(unallocated: Void) {
        configuration = Configuration()
        scratch = ContiguousArray()
    }

    /// Heap bytes owned by the fitter.
    public var storageBytes: Int { scratch.count * MemoryLayout<Double>.stride }

    /// Convenience: fits an array of raw samples (microtesla). See `fit(_:)`.
    public mutating func fit(_ samples: [Vector3]) -> CalibrationFit? {
        samples.withUnsafeBufferPointer { fit($0) }
    }

    /// Fits the samples (microtesla); `nil` when there are fewer than 4 finite samples, or even
    /// the sphere is degenerate (samples coplanar). Samples must be finite.
    public mutating func fit(_ samples: UnsafeBufferPointer<Vector3>) -> CalibrationFit? {
        var work = ContiguousArray<Double>()
        swap(&work, &scratch)
        defer { swap(&work, &scratch) }
        if work.count < Scratch.count { work = ContiguousArray(repeating: 0, count: Scratch.count) }
        return work.withUnsafeMutableBufferPointer { buffer in
            Self.fit(samples, scratch: buffer.baseAddress!, configuration: configuration, refine: true)
        }
    }

    /// Stage 1–2 only (normalise + algebraic 9-parameter quadric, no sphere fallback, no
    /// refinement), with the same output conventions; for checking against an independent
    /// implementation. `nil` when the quadric is not an ellipsoid or the system is singular.
    public mutating func algebraicEllipsoid(_ samples: [Vector3]) -> CalibrationFit? {
        var work = ContiguousArray<Double>()
        swap(&work, &scratch)
        defer { swap(&work, &scratch) }
        if work.count < Scratch.count { work = ContiguousArray(repeating: 0, count: Scratch.count) }
        var configuration = self.configuration
        configuration.maximumConditionNumber = .infinity
        configuration.maximumEllipsoidSpread = .infinity
        return samples.withUnsafeBufferPointer { points in
            work.withUnsafeMutableBufferPointer { buffer in
                Self.fit(points, scratch: buffer.baseAddress!, configuration: configuration, refine: false)
            }
        }
    }

    // MARK: Implementation

    /// Parameters in normalised coordinates: centre c and L (symmetric) as
    /// (c₀, c₁, c₂, L₀₀, L₁₁, L₂₂, L₀₁, L₀₂, L₁₂).
    private struct Parameters {
        var centre: Vector3
        var l: Matrix3
        static func from(_ p: UnsafePointer<Double>) -> Parameters {
            Parameters(centre: Vector3(p[0], p[1], p[2]),
                       l: Matrix3(p[3], p[6], p[7], p[6], p[4], p[8], p[7], p[8], p[5]))
        }
        func write(_ p: UnsafeMutablePointer<Double>) {
            p[0] = centre.x; p[1] = centre.y; p[2] = centre.z
            p[3] = l.row0.x; p[4] = l.row1.y; p[5] = l.row2.z
            p[6] = l.row0.y; p[7] = l.row0.z; p[8] = l.row1.z
        }
    }

    private static func fit(_ points: UnsafeBufferPointer<Vector3>, scratch: UnsafeMutablePointer<Double>,
                            configuration: Configuration, refine: Bool) -> CalibrationFit? {
        let n = points.count
        guard n >= 4 else { return nil }
        var mean = Vector3.zero
        for p in points { mean += p }
        mean = mean / Double(n)
        var sumSquares = 0.0
        for p in points { sumSquares += (p - mean).dot(p - mean) }
        let scale = (sumSquares / Double(n)).squareRoot()
        guard scale.isFinite, scale > 0 else { return nil }
        let inverseScale = 1 / scale

        var start: (Parameters, CalibrationFitKind)?
        if n >= configuration.minimumEllipsoidSampleCount,
           let ellipsoid = algebraic(points, mean: mean, inverseScale: inverseScale, scratch: scratch,
                                     configuration: configuration) {
            start = (ellipsoid, .ellipsoid)
        } else if !refine {
            return nil
        }
        if start == nil, let sphere = kasaSphere(points, mean: mean, inverseScale: inverseScale, scratch: scratch) {
            start = (sphere, .sphere)
        }
        guard var (parameters, kind) = start else { return nil }
        if refine {
            if let refined = levenbergMarquardt(points, mean: mean, inverseScale: inverseScale, start: parameters,
                                                sphere: kind == .sphere, scratch: scratch,
                                                maximumIterations: configuration.maximumIterations) {
                parameters = refined
            } else if kind == .ellipsoid,
                      let sphere = kasaSphere(points, mean: mean, inverseScale: inverseScale, scratch: scratch),
                      let refined = levenbergMarquardt(points, mean: mean, inverseScale: inverseScale, start: sphere,
                                                       sphere: true, scratch: scratch,
                                                       maximumIterations: configuration.maximumIterations) {
                (parameters, kind) = (refined, .sphere)
            } else {
                return nil
            }
        }
        return finish(points, mean: mean, scale: scale, parameters: parameters, kind: kind)
    }

    /// Stage 2: the 9-parameter algebraic fit; `nil` when ill-conditioned or not an ellipsoid.
    private static func algebraic(_ points: UnsafeBufferPointer<Vector3>, mean: Vector3, inverseScale: Double,
                                  scratch s: UnsafeMutablePointer<Double>, configuration: Configuration) -> Parameters? {
        let a = s + Scratch.normal, b = s + Scratch.rhs, row = s + Scratch.row
        for i in 0..<81 { a[i] = 0 }
        for i in 0..<9 { b[i] = 0 }
        for p in points {
            let q = (p - mean) * inverseScale
            row[0] = q.x * q.x; row[1] = q.y * q.y; row[2] = q.z * q.z
            row[3] = 2 * q.x * q.y; row[4] = 2 * q.x * q.z; row[5] = 2 * q.y * q.z
            row[6] = 2 * q.x; row[7] = 2 * q.y; row[8] = 2 * q.z
            for i in 0..<9 {
                b[i] += row[i]
                for j in i..<9 { a[i * 9 + j] += row[i] * row[j] }
            }
        }
        for i in 0..<9 { for j in 0..<i { a[i * 9 + j] = a[j * 9 + i] } }

        // Condition number of the normal matrix from its eigenvalues.
        if configuration.maximumConditionNumber.isFinite {
            let copy = s + Scratch.copy
            for i in 0..<81 { copy[i] = a[i] }
            guard SymmetricEigenSolver.decompose(copy, vectors: s + Scratch.vectors, n: 9) else { return nil }
            var smallest = Double.infinity, largest = 0.0
            for i in 0..<9 { smallest = min(smallest, copy[i * 9 + i]); largest = max(largest, copy[i * 9 + i]) }
            guard smallest > 0, largest / smallest <= configuration.maximumConditionNumber else { return nil }
        }
        guard SymmetricEigenSolver.choleskySolve(a, b, n: 9) else { return nil }
        let quadric = Matrix3(b[0], b[3], b[4], b[3], b[1], b[5], b[4], b[5], b[2])
        let linear = Vector3(b[6], b[7], b[8])
        guard let inverse = quadric.inverse else { return nil }
        let centre = -(inverse * linear)
        let k = 1 + centre.dot(quadric * centre)
        guard k.isFinite, k > 0, let eigen = SymmetricEigen3(quadric * (1 / k)), eigen.values.x > 0 else { return nil }
        guard (eigen.values.z / eigen.values.x).squareRoot() <= configuration.maximumEllipsoidSpread else { return nil }
        return Parameters(centre: centre, l: eigen.reassembled { $0.squareRoot() })
    }

    /// The linear sphere fit |q|² = 2q·c + k in normalised coordinates (Kåsa 1976).
    private static func kasaSphere(_ points: UnsafeBufferPointer<Vector3>, mean: Vector3, inverseScale: Double,
                                   scratch s: UnsafeMutablePointer<Double>) -> Parameters? {
        let a = s + Scratch.normal, b = s + Scratch.rhs
        for i in 0..<16 { a[i] = 0 }
        for i in 0..<4 { b[i] = 0 }
        for p in points {
            let q = (p - mean) * inverseScale
            let r0 = 2 * q.x, r1 = 2 * q.y, r2 = 2 * q.z, rhs = q.dot(q)
            let row = (r0, r1, r2, 1.0)
            withUnsafeBytes(of: row) { raw in
                let r = raw.bindMemory(to: Double.self)
                for i in 0..<4 {
                    b[i] += r[i] * rhs
                    for j in 0..<4 { a[i * 4 + j] += r[i] * r[j] }
                }
            }
        }
        guard SymmetricEigenSolver.choleskySolve(a, b, n: 4, relativePivot: 1e-12) else { return nil }
        let centre = Vector3(b[0], b[1], b[2])
        let r2 = b[3] + centre.dot(centre)
        guard r2.isFinite, r2 > 0 else { return nil }
        return Parameters(centre: centre, l: Matrix3.identity * (1 / r2.squareRoot()))
    }

    /// Sum of squared geometric residuals Σ(|L(qᵢ − c)| − 1)².
    private static func cost(_ points: UnsafeBufferPointer<Vector3>, mean: Vector3, inverseScale: Double,
                             _ p: Parameters) -> Double {
        var sum = 0.0
        for point in points {
            let e = (p.l * ((point - mean) * inverseScale - p.centre)).length - 1
            sum += e * e
        }
        return sum
    }

    /// Stage 3: Levenberg–Marquardt on the geometric residual; `nil` if it produced nothing finite.
    private static func levenbergMarquardt(_ points: UnsafeBufferPointer<Vector3>, mean: Vector3, inverseScale: Double,
                                           start: Parameters, sphere: Bool, scratch s: UnsafeMutablePointer<Double>,
                                           maximumIterations: Int) -> Parameters? {
        let m = sphere ? 4 : 9
        let jtj = s + Scratch.normal, damped = s + Scratch.copy, jte = s + Scratch.rhs
        let step = s + Scratch.step, row = s + Scratch.row
        var current = start
        var currentCost = cost(points, mean: mean, inverseScale: inverseScale, current)
        guard currentCost.isFinite else { return nil }
        var lambda = 1e-3
        for _ in 0..<max(0, maximumIterations) {
            for i in 0..<(m * m) { jtj[i] = 0 }
            for i in 0..<m { jte[i] = 0 }
            for point in points {
                let v = (point - mean) * inverseScale - current.centre
                let w = current.l * v
                let length = w.length
                guard length > 0 else { continue }
                let u = w / length
                let e = length - 1
                let dc = -(current.l * u)  // ∂e/∂c = −Lᵀu, L symmetric
                row[0] = dc.x; row[1] = dc.y; row[2] = dc.z
                if sphere {
                    row[3] = u.dot(v)
                } else {
                    row[3] = u.x * v.x; row[4] = u.y * v.y; row[5] = u.z * v.z
                    row[6] = u.x * v.y + u.y * v.x; row[7] = u.x * v.z + u.z * v.x; row[8] = u.y * v.z + u.z * v.y
                }
                for i in 0..<m {
                    jte[i] += row[i] * e
                    for j in i..<m { jtj[i * m + j] += row[i] * row[j] }
                }
            }
            for i in 0..<m { for j in 0..<i { jtj[i * m + j] = jtj[j * m + i] } }
            var improved = false
            for _ in 0..<8 {
                for i in 0..<(m * m) { damped[i] = jtj[i] }
                for i in 0..<m {
                    damped[i * m + i] += lambda * max(jtj[i * m + i], 1e-12)
                    step[i] = -jte[i]
                }
                guard SymmetricEigenSolver.choleskySolve(damped, step, n: m, relativePivot: 1e-15) else {
                    lambda *= 10
                    continue
                }
                var trial = current
                trial.centre += Vector3(step[0], step[1], step[2])
                if sphere {
                    trial.l = trial.l + Matrix3.identity * step[3]
                } else {
                    trial.l = trial.l + Matrix3(step[3], step[6], step[7], step[6], step[4], step[8],
                                                step[7], step[8], step[5])
                }
                let trialCost = cost(points, mean: mean, inverseScale: inverseScale, trial)
                if trialCost.isFinite, trialCost < currentCost {
                    let relative = (currentCost - trialCost) / max(currentCost, .leastNormalMagnitude)
                    current = trial
                    currentCost = trialCost
                    lambda = max(lambda / 3, 1e-9)
                    improved = relative > 1e-12
                    break
                }
                lambda *= 4
            }
            if !improved { break }
        }
        return current.centre.isFinite && current.l.isFinite ? current : nil
    }

    /// Back to sensor units: b = μ + s·c, L/s, R = det(L)^(−1/3), S = R·L.
    private static func finish(_ points: UnsafeBufferPointer<Vector3>, mean: Vector3, scale: Double,
                               parameters p: Parameters, kind: CalibrationFitKind) -> CalibrationFit? {
        let offset = mean + p.centre * scale
        let l = p.l * (1 / scale)
        let determinant = l.determinant
        guard determinant.isFinite, determinant > 0, let eigen = SymmetricEigen3(l), eigen.values.x > 0 else { return nil }
        let radius = pow(determinant, -1.0 / 3)
        let softIron = kind == .sphere ? Matrix3.identity : l * radius
        var sum = 0.0
        for point in points {
            let e = (softIron * (point - offset)).length - radius
            sum += e * e
        }
        let rms = (sum / Double(points.count)).squareRoot()
        let spread = kind == .sphere ? 1 : eigen.values.z / eigen.values.x
        guard offset.isFinite, softIron.isFinite, radius.isFinite, rms.isFinite else { return nil }
        return CalibrationFit(kind: kind, hardIronOffsetMicrotesla: offset, softIronMatrix: softIron,
                              fieldMicrotesla: radius, residualRMSMicrotesla: rms, eigenvalueSpread: spread,
                              sampleCount: points.count)
    }
}
