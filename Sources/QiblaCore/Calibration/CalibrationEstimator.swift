// SPDX-License-Identifier: Apache-2.0
/// The parameters of `CalibrationEstimator`'s model, in the order of its covariance matrix.
///
/// The model is `m = (I + E)·(raw − b)` with E symmetric (the soft iron), plus the field's
/// strength R and dip I seen by the sensor.
public enum CalibrationParameter: Int, Sendable, CaseIterable {
    case hardIronX, hardIronY, hardIronZ
    case softIronXX, softIronYY, softIronZZ, softIronXY, softIronXZ, softIronYZ
    case field, inclination
    /// The accelerometer's bias, m/s², device frame: a nuisance the vertical-component rows need
    /// (a bias tilts the measured down direction), with a prior of zero.
    case accelerometerBiasX, accelerometerBiasY, accelerometerBiasZ

    /// Number of parameters (14).
    public static let count = 14
}

/// What the samples have determined so far, the staged models of NXP AN5019 (4-, 7- and
/// 10-element fits) read off the posterior: a parameter counts as determined when the samples
/// shrank its prior standard deviation to `CalibrationPriors.determinedFraction` or less.
public enum CalibrationStage: String, Sendable, Equatable, Comparable, CaseIterable {
    /// The hard iron is not determined yet.
    case none
    /// Hard iron b (the soft iron still near its prior): 4 elements with the radius.
    case hardIron = "hard-iron"
    /// b and the diagonal of the soft iron: 7 elements.
    case diagonalSoftIron = "diagonal-soft-iron"
    /// b and the whole symmetric soft-iron matrix: the 10-element ellipsoid.
    case ellipsoid

    private var rank: Int {
        switch self {
        case .none: 0
        case .hardIron: 1
        case .diagonalSoftIron: 2
        case .ellipsoid: 3
        }
    }

    public static func < (a: CalibrationStage, b: CalibrationStage) -> Bool { a.rank < b.rank }
}

/// The priors and noise floors of `CalibrationEstimator`.
public struct CalibrationPriors: Sendable, Equatable {
    /// One-sigma prior of each entry of E in S = I + E (default 0.1: a phone's soft iron and axis
    /// gain errors are a few per cent, rarely 15 %).
    public var softIronSigma: Double
    /// One-sigma prior of the field strength R around the WMM2025 total intensity F, as a fraction of
    /// F (default 0.05: crustal anomalies of 1–2 % plus the sensor's gain error).
    public var fieldSigmaFraction: Double
    /// One-sigma prior of the dip around the WMM2025 inclination, degrees (default 3: WMM's own
    /// 0.2°, local anomalies, building steel and the accelerometer's bias).
    public var inclinationSigmaDegrees: Double
    /// The field strength prior without a location, microtesla (default 45 ± 15: the Earth's
    /// surface field is 22–67 µT).
    public var fieldWithoutLocationMicrotesla: Double
    public var fieldWithoutLocationSigmaMicrotesla: Double
    /// Floors of the residuals' standard deviations, microtesla (defaults 0.2 for |m| − R and 0.5
    /// for the vertical component, which also carries the accelerometer's error).
    public var fieldNoiseFloorMicrotesla: Double
    public var dipNoiseFloorMicrotesla: Double
    /// One-sigma prior of the accelerometer's bias per axis, m/s² (default 0.1: a phone
    /// accelerometer's zero-g offset after factory trim, as
    /// `HeadingErrorModel.accelerometerErrorMetresPerSecondSquared`). The bias tilts every down
    /// direction the same way in the device frame; left out, it pulls the hard iron by several
    /// microtesla at high dips.
    public var accelerometerBiasMetresPerSecondSquared: Double
    /// The covariance is multiplied by this (default 1.5): consecutive samples of a hand's motion
    /// are not independent, and the residuals carry model error as well as noise.
    public var covarianceInflation: Double
    /// A parameter is determined once its posterior sigma is at most this fraction of its prior's
    /// (default 0.4).
    public var determinedFraction: Double

    public init(softIronSigma: Double = 0.1, fieldSigmaFraction: Double = 0.05, inclinationSigmaDegrees: Double = 3,
                fieldWithoutLocationMicrotesla: Double = 45, fieldWithoutLocationSigmaMicrotesla: Double = 15,
                fieldNoiseFloorMicrotesla: Double = 0.2, dipNoiseFloorMicrotesla: Double = 0.5,
                accelerometerBiasMetresPerSecondSquared: Double = 0.1,
                covarianceInflation: Double = 1.5, determinedFraction: Double = 0.4) {
        self.accelerometerBiasMetresPerSecondSquared = accelerometerBiasMetresPerSecondSquared
        self.softIronSigma = softIronSigma
        self.fieldSigmaFraction = fieldSigmaFraction
        self.inclinationSigmaDegrees = inclinationSigmaDegrees
        self.fieldWithoutLocationMicrotesla = fieldWithoutLocationMicrotesla
        self.fieldWithoutLocationSigmaMicrotesla = fieldWithoutLocationSigmaMicrotesla
        self.fieldNoiseFloorMicrotesla = fieldNoiseFloorMicrotesla
        self.dipNoiseFloorMicrotesla = dipNoiseFloorMicrotesla
        self.covarianceInflation = covarianceInflation
        self.determinedFraction = determinedFraction
    }
}

/// A calibration estimate with its uncertainty: the posterior mean and covariance of
/// `CalibrationEstimator`'s model.
public struct CalibrationEstimate: Sendable, Equatable {
    /// Hard-iron offset b, microtesla, device frame.
    public var hardIronOffsetMicrotesla: Vector3
    /// S = I + E as fitted (symmetric; not normalised).
    public var softIronMatrix: Matrix3
    /// R: the field strength |S·(raw − b)| the fit sees, microtesla.
    public var fieldMicrotesla: Double
    /// The dip the fit sees, degrees, positive down (NaN when no sample had an accelerometer
    /// reading).
    public var inclinationDegrees: Double
    /// RMS of |S·(raw − b)| − R over the samples, microtesla, each residual divided by the gain
    /// |S u| its raw noise sees (so in the raw sensor's units).
    public var fieldResidualRMSMicrotesla: Double
    /// RMS of the vertical component's residual S·(raw − b)·down − R·sin I, microtesla (0 without
    /// accelerometer readings).
    public var dipResidualRMSMicrotesla: Double
    /// Samples fitted, and how many of them had a usable accelerometer reading.
    public var sampleCount: Int
    public var dipSampleCount: Int
    /// The prior the estimate started from (its standard deviations), for `stage`.
    public var priors: CalibrationPriors
    /// Posterior covariance, row-major `CalibrationParameter.count`², inflated.
    var covariance: InlineDoubles196
    /// The accelerometer bias the fit sees, m/s², device frame (a nuisance parameter).
    public var accelerometerBiasMetresPerSecondSquared: Vector3

    public static func == (a: CalibrationEstimate, b: CalibrationEstimate) -> Bool {
        guard a.hardIronOffsetMicrotesla == b.hardIronOffsetMicrotesla, a.softIronMatrix == b.softIronMatrix,
              a.fieldMicrotesla == b.fieldMicrotesla, a.inclinationDegrees.bitPattern == b.inclinationDegrees.bitPattern,
              a.fieldResidualRMSMicrotesla == b.fieldResidualRMSMicrotesla,
              a.dipResidualRMSMicrotesla == b.dipResidualRMSMicrotesla, a.sampleCount == b.sampleCount,
              a.dipSampleCount == b.dipSampleCount, a.priors == b.priors else { return false }
        guard a.accelerometerBiasMetresPerSecondSquared == b.accelerometerBiasMetresPerSecondSquared else { return false }
        for i in 0..<196 where a.covariance[i] != b.covariance[i] { return false }
        return true
    }

    /// The posterior standard deviation of one parameter (microtesla for b and R, dimensionless for
    /// E, radians for the dip).
    public func sigma(_ parameter: CalibrationParameter) -> Double {
        let i = parameter.rawValue
        return max(0, covariance[i * CalibrationParameter.count + i]).squareRoot()
    }

    /// What the samples determined (see `CalibrationStage`).
    public var stage: CalibrationStage {
        let limit = priors.determinedFraction * priors.softIronSigma
        let hardIron = max(sigma(.hardIronX), sigma(.hardIronY), sigma(.hardIronZ))
        guard hardIron <= max(2, 0.05 * fieldMicrotesla) else { return .none }
        let diagonal = max(sigma(.softIronXX), sigma(.softIronYY), sigma(.softIronZZ))
        let offDiagonal = max(sigma(.softIronXY), sigma(.softIronXZ), sigma(.softIronYZ))
        if diagonal <= limit, offDiagonal <= limit { return .ellipsoid }
        if diagonal <= limit { return .diagonalSoftIron }
        return .hardIron
    }

    /// The fit in the persisted convention (S normalised to det 1, R scaled with it), with `kind`
    /// from `stage` and the field residual as its RMS residual.
    public var fit: CalibrationFit {
        let determinant = softIronMatrix.determinant
        let scale = determinant > 0 ? pow(determinant, -1.0 / 3) : 1
        let kind: CalibrationFitKind
        switch stage {
        case .none, .hardIron: kind = .hardIron
        case .diagonalSoftIron: kind = .diagonalSoftIron
        case .ellipsoid: kind = .ellipsoid
        }
        let s = softIronMatrix * scale
        let spread = SymmetricEigen3(s).map { $0.values.x > 0 ? $0.values.z / $0.values.x : .infinity } ?? .infinity
        return CalibrationFit(kind: kind, hardIronOffsetMicrotesla: hardIronOffsetMicrotesla, softIronMatrix: s,
                              fieldMicrotesla: fieldMicrotesla * scale, residualRMSMicrotesla: fieldResidualRMSMicrotesla * scale,
                              eigenvalueSpread: spread, sampleCount: sampleCount)
    }

    /// The one-sigma heading error, degrees, that the parameters' uncertainty causes for a raw
    /// sample seen with the device's `down` direction (device frame; any length): the heading turns
    /// by δψ = (δm · e)/H, where δm = −S δb + δE (raw − b) is the corrected field's change, H the
    /// horizontal field and e the horizontal unit vector across it; its variance is gᵀ C g / H²
    /// (first-order propagation, e.g. JCGM 100:2008 "GUM" §5.1.2). 180 when the field is vertical.
    public func headingSigmaDegrees(raw: Vector3, down: Vector3) -> Double {
        let w = raw - hardIronOffsetMicrotesla
        return headingSigmaDegrees(offsetFree: w, corrected: softIronMatrix * w, down: down)
    }

    /// The same at the attitude `down` (device frame) with magnetic north along the horizontal unit
    /// vector `north`, for the field this estimate expects (R, I).
    public func headingSigmaDegrees(down: Vector3, north: Vector3) -> Double {
        let inclination = inclinationDegrees.isFinite ? Angle.radians(inclinationDegrees) : 0
        let corrected = north * (fieldMicrotesla * cos(inclination)) + down * (fieldMicrotesla * sin(inclination))
        guard let inverse = softIronMatrix.inverse else { return 180 }
        return headingSigmaDegrees(offsetFree: inverse * corrected, corrected: corrected, down: down)
    }

    private func headingSigmaDegrees(offsetFree w: Vector3, corrected m: Vector3, down: Vector3) -> Double {
        guard let u = down.normalized else { return 180 }
        let horizontal = m - u * m.dot(u)
        let h = horizontal.length
        guard h > 1e-6, h.isFinite else { return 180 }
        let e = u.cross(horizontal) / h
        let se = softIronMatrix * e
        var g = InlineDoubles11(repeating: 0)
        g[0] = -se.x; g[1] = -se.y; g[2] = -se.z
        g[3] = w.x * e.x; g[4] = w.y * e.y; g[5] = w.z * e.z
        g[6] = w.y * e.x + w.x * e.y; g[7] = w.z * e.x + w.x * e.z; g[8] = w.z * e.y + w.y * e.z
        var variance = 0.0
        for i in 0..<9 {
            var row = 0.0
            for j in 0..<9 { row += covariance[i * CalibrationParameter.count + j] * g[j] }
            variance += g[i] * row
        }
        guard variance.isFinite else { return 180 }
        let radians = max(0, variance).squareRoot() / h
        return radians >= .pi ? 180 : Angle.degrees(radians)
    }

    /// The heading sigma at a tilt of `tiltDegrees`, degrees: for each of `tiltAzimuths` directions
    /// of the tilt (one attitude when flat), the RMS over `headings` evenly spaced magnetic headings
    /// (the error a user sees on average while turning round); the worst direction, with its
    /// azimuth in the device's xy plane (0 = the right edge down, 90° = the top edge down), degrees.
    public func worstHeadingSigma(tiltDegrees: Double, tiltAzimuths: Int = 8, headings: Int = 12)
        -> (sigmaDegrees: Double, tiltAzimuthDegrees: Double) {
        var worst = (sigmaDegrees: 0.0, tiltAzimuthDegrees: 0.0)
        let tilt = Angle.radians(tiltDegrees)
        let azimuths = tiltDegrees == 0 ? 1 : max(1, tiltAzimuths)
        let count = max(1, headings)
        for a in 0..<azimuths {
            let azimuth = 2 * Double.pi * Double(a) / Double(azimuths)
            // Device frame: flat face-up, down is −z; tilting towards `azimuth` lowers that edge.
            let down = Vector3(sin(tilt) * cos(azimuth), sin(tilt) * sin(azimuth), -cos(tilt))
            // An orthonormal basis of the horizontal plane.
            let reference = abs(down.x) < 0.9 ? Vector3(1, 0, 0) : Vector3(0, 1, 0)
            guard let e1 = (reference - down * reference.dot(down)).normalized else { continue }
            let e2 = down.cross(e1)
            var sum = 0.0
            for k in 0..<count {
                let psi = 2 * Double.pi * Double(k) / Double(count)
                let sigma = min(180, headingSigmaDegrees(down: down, north: e1 * cos(psi) + e2 * sin(psi)))
                sum += sigma.isFinite ? sigma * sigma : 180 * 180
            }
            let rms = (sum / Double(count)).squareRoot()
            if rms > worst.sigmaDegrees { worst = (rms, Angle.degrees(azimuth)) }
        }
        return worst
    }
}

/// Estimates the magnetometer calibration **with its uncertainty** from samples that need not
/// cover the sphere: a maximum-a-posteriori fit of
///
///     m = (I + E)·(raw − b),   |m| = R,   m · down = R sin I
///
/// to the stored samples, with Gaussian priors on the soft iron (E ≈ 0), the field strength
/// (R ≈ WMM2025 F) and the dip (I ≈ WMM2025 I), solved by Levenberg–Marquardt (Marquardt 1963;
/// Madsen, Nielsen & Tingleff 2004, §3.2) with Huber weights (Huber 1964) against outliers.
///
/// Why this and not a plain ellipsoid fit: a person's hand motion (tilts within ±45°, never upside
/// down) sweeps only a cap of field directions — at London's dip of 67° a cap of about 68° around
/// the screen's normal. On a cap the ellipsoid's algebraic fit is ill-conditioned and a sphere fit
/// trades the centre along the cap's axis against the radius. Two constraints every sample obeys
/// fix that: the known field strength (the 4-element hard-iron fit of NXP AN5019 with the radius
/// given by WMM, as Android's context-hub `mag_cal` and ArduPilot's `CompassCalibrator` check it),
/// and the **dot-product invariance** of gravity and the field (the angle between them is 90° + I
/// in any attitude; Li & Li, "Calibration of a three-axis magnetometer using the dot product
/// invariance", IEEE Sensors J. 2012): with the accelerometer's down vector it gives the hard iron
/// along the vertical even from a phone turned flat on a table.
///
/// The stages of AN5019 (hard iron; diagonal soft iron; the full ellipsoid) are the same model
/// with the soft iron's prior: what the samples do not determine stays near E = 0 and keeps its
/// prior's uncertainty, and `CalibrationEstimate.stage` says what they did determine. The
/// covariance (Gauss–Newton's (JᵀWJ + P)⁻¹, inflated by `CalibrationPriors.covarianceInflation`)
/// becomes the heading error the parameters cause at any attitude
/// (`CalibrationEstimate.headingSigmaDegrees`): small where the samples were, growing away from
/// them, which is what acceptance and the published `HeadingError` use.
///
/// Vertical: the dip residual carries any error of `down` through the field's horizontal part
/// R|cos I|. An accelerometer's errors change from sample to sample and average out; an attitude
/// filter's last for seconds and would pull the hard iron with them, so a sample may carry its
/// vertical's persistent error ε (`verticalSigmaRadians`), and its dip residual's sigma becomes
/// √(σ² + (R|cos I|·ε)²).
///
/// Cost: scratch allocated in `init`; an estimate over n samples is O(n · 11²) per iteration and
/// allocates nothing.
public struct CalibrationEstimator: Sendable {
    public var priors: CalibrationPriors
    /// Levenberg–Marquardt iterations at most (default 20).
    public var maximumIterations: Int

    private var scratch: ContiguousArray<Double>
    private enum Scratch {
        static let normal = 0       // 196
        static let damped = 196     // 196
        static let covariance = 392 // 196
        static let rhs = 588        // 14
        static let step = 602       // 14
        static let row = 616        // 14
        static let column = 630     // 14
        static let count = 644
    }

    public init(priors: CalibrationPriors = CalibrationPriors(), maximumIterations: Int = 20) {
        self.priors = priors
        self.maximumIterations = maximumIterations
        scratch = ContiguousArray(repeating: 0, count: Scratch.count)
    }

    /// Heap bytes owned.
    public var storageBytes: Int { scratch.count * MemoryLayout<Double>.stride }

    /// A fitter without scratch space, to swap a real one out of a struct.
    static var unallocated: CalibrationEstimator { CalibrationEstimator(unallocated: ()) }
    private init(unallocated: Void) {
        priors = CalibrationPriors()
        maximumIterations = 20
        scratch = ContiguousArray()
    }

    /// Estimates from arrays (convenience for tests and benchmarks; `down` of any length). See
    /// `estimate(raw:down:…)`.
    public mutating func estimate(raw: [Vector3], down: [Vector3], verticalSigmaRadians: [Double]? = nil,
                                  expectedField: MagneticField?, start: CalibrationEstimate? = nil) -> CalibrationEstimate? {
        let down = down.map { $0.isFinite ? ($0.normalized ?? .zero) : .zero }
        return raw.withUnsafeBufferPointer { r in
            down.withUnsafeBufferPointer { d in
                guard let verticalSigmaRadians, verticalSigmaRadians.count == raw.count else {
                    return estimate(raw: r, down: d, expectedField: expectedField, start: start)
                }
                return verticalSigmaRadians.withUnsafeBufferPointer { v in
                    estimate(raw: r, down: d, verticalSigmaRadians: v, expectedField: expectedField, start: start)
                }
            }
        }
    }

    /// The posterior estimate; `nil` with fewer than 8 samples or when the system is singular.
    /// - Parameters:
    ///   - raw: raw samples, microtesla, device frame (finite).
    ///   - down: for each sample, the down direction in the device frame as a unit vector (the
    ///     accelerometer's reading negated and normalised), or `.zero` when unknown or accelerated.
    ///   - verticalSigmaRadians: for each sample, the one-sigma error of its `down` that persists
    ///     from sample to sample (an attitude filter's tilt), radians, 0 where the errors are taken as
    ///     independent (a raw accelerometer's); `nil` for 0 everywhere. See "Vertical" above.
    ///   - expectedField: WMM2025 at the location, or `nil`.
    ///   - start: a previous estimate to start from (else a linear first guess).
    public mutating func estimate(raw: UnsafeBufferPointer<Vector3>, down: UnsafeBufferPointer<Vector3>,
                                  verticalSigmaRadians: UnsafeBufferPointer<Double>? = nil,
                                  expectedField: MagneticField?, start: CalibrationEstimate? = nil) -> CalibrationEstimate? {
        guard raw.count >= 8, down.count == raw.count else { return nil }
        let vertical = verticalSigmaRadians.flatMap { $0.count == raw.count ? $0 : nil }
        if scratch.count < Scratch.count { scratch = ContiguousArray(repeating: 0, count: Scratch.count) }
        let priors = self.priors, iterations = maximumIterations
        return scratch.withUnsafeMutableBufferPointer { buffer in
            Self.solve(raw: raw, down: down, vertical: vertical, expectedField: expectedField, start: start, priors: priors,
                       maximumIterations: iterations, scratch: buffer.baseAddress!)
        }
    }

    // MARK: Implementation

    private struct Parameters {
        var b: Vector3
        var e: (Double, Double, Double, Double, Double, Double)  // xx, yy, zz, xy, xz, yz
        var field: Double
        var inclination: Double  // radians
        var accelerometerBias: Vector3  // m/s²

        var s: Matrix3 {
            Matrix3(1 + e.0, e.3, e.4, e.3, 1 + e.1, e.5, e.4, e.5, 1 + e.2)
        }

        mutating func add(_ step: UnsafePointer<Double>) {
            b += Vector3(step[0], step[1], step[2])
            e = (e.0 + step[3], e.1 + step[4], e.2 + step[5], e.3 + step[6], e.4 + step[7], e.5 + step[8])
            field += step[9]
            inclination += step[10]
            accelerometerBias += Vector3(step[11], step[12], step[13])
        }

        /// The down direction corrected for the accelerometer bias (unit), from a measured one.
        @inline(__always) func down(_ measured: Vector3) -> Vector3 {
            (measured + accelerometerBias / TiltCompensation.standardGravity).normalized ?? measured
        }

        var isFinite: Bool {
            b.isFinite && e.0.isFinite && e.1.isFinite && e.2.isFinite && e.3.isFinite && e.4.isFinite
                && e.5.isFinite && field.isFinite && inclination.isFinite && accelerometerBias.isFinite
        }
    }

    private struct Prior {
        var field: Double, fieldSigma: Double
        var inclination: Double?, inclinationSigma: Double
        var softIronSigma: Double
        var accelerometerBiasSigma: Double
    }

    private static let huber = 2.5
    /// The pseudo-observation tr E = 0 (see `normalEquations`), one sigma.
    private static let traceSigma = 1e-4

    /// Residual weights: 1/σ², Huber-damped beyond `huber`·σ.
    @inline(__always) private static func weight(_ r: Double, sigma: Double) -> Double {
        let a = abs(r) / sigma
        return (a <= huber ? 1 : huber / a) / (sigma * sigma)
    }

    /// The weighted cost (robust) of a parameter set, with the priors.
    private static func cost(_ p: Parameters, raw: UnsafeBufferPointer<Vector3>, down: UnsafeBufferPointer<Vector3>,
                             tilt: UnsafeBufferPointer<Double>?, prior: Prior, fieldSigma: Double, dipSigma: Double) -> Double {
        let s = p.s
        let vertical = p.field * sin(p.inclination)
        let horizontal = p.field * abs(cos(p.inclination))
        var sum = 0.0
        for i in 0..<raw.count {
            let m = s * (raw[i] - p.b)
            let length = m.length
            if length > 0 { sum += huberCost((length - p.field) / (s * (m / length)).length, sigma: fieldSigma) }
            if down[i] != .zero {
                let u = p.down(down[i])
                sum += huberCost((m.dot(u) - vertical) / (s * u).length,
                                 sigma: Self.dipSigma(dipSigma, horizontal: horizontal, tilt: tilt?[i] ?? 0))
            }
        }
        return sum + priorCost(p, prior)
    }

    /// A sample's dip residual sigma, microtesla: the residuals' scale and, in quadrature, its
    /// vertical's persistent error (radians) through the field's horizontal part R|cos I|.
    @inline(__always) private static func dipSigma(_ sigma: Double, horizontal: Double, tilt: Double) -> Double {
        guard tilt > 0 else { return sigma }
        let e = horizontal * tilt
        return (sigma * sigma + e * e).squareRoot()
    }

    @inline(__always) private static func huberCost(_ r: Double, sigma: Double) -> Double {
        let a = abs(r) / sigma
        return a <= huber ? a * a : 2 * huber * a - huber * huber
    }

    private static func priorCost(_ p: Parameters, _ prior: Prior) -> Double {
        let k = 1 / (prior.softIronSigma * prior.softIronSigma)
        var sum = (p.e.0 * p.e.0 + p.e.1 * p.e.1 + p.e.2 * p.e.2 + p.e.3 * p.e.3 + p.e.4 * p.e.4 + p.e.5 * p.e.5) * k
        let trace = (p.e.0 + p.e.1 + p.e.2) / traceSigma
        sum += trace * trace
        let df = (p.field - prior.field) / prior.fieldSigma
        sum += df * df
        if let i0 = prior.inclination {
            let di = (p.inclination - i0) / prior.inclinationSigma
            sum += di * di
        }
        let beta = p.accelerometerBias / prior.accelerometerBiasSigma
        return sum + beta.dot(beta)
    }

    /// Builds JᵀWJ (upper triangle mirrored) and JᵀWr at `p`; returns the two residuals' weighted
    /// RMS (field, dip).
    private static func normalEquations(_ p: Parameters, raw: UnsafeBufferPointer<Vector3>, down: UnsafeBufferPointer<Vector3>,
                                        tilt: UnsafeBufferPointer<Double>?, prior: Prior, fieldSigma: Double, dipSigma: Double,
                                        normal a: UnsafeMutablePointer<Double>, rhs: UnsafeMutablePointer<Double>,
                                        row: UnsafeMutablePointer<Double>) {
        let n = CalibrationParameter.count
        for i in 0..<(n * n) { a[i] = 0 }
        for i in 0..<n { rhs[i] = 0 }
        let s = p.s
        let sinI = sin(p.inclination), cosI = cos(p.inclination)
        let vertical = p.field * sinI
        let horizontal = p.field * abs(cosI)
        @inline(__always) func accumulate(_ r: Double, _ w: Double) {
            for i in 0..<n where row[i] != 0 {
                rhs[i] += w * row[i] * r
                for j in i..<n { a[i * n + j] += w * row[i] * row[j] }
            }
        }
        for k in 0..<raw.count {
            let w = raw[k] - p.b
            let m = s * w
            let length = m.length
            if length > 0 {
                let u = m / length
                let su = s * u
                // Residual in raw units: divided by the gain |S u| the raw noise sees (held constant in
                // the Jacobian, as in iteratively reweighted least squares).
                let scale = 1 / su.length
                projectionRow(u, su, w, scale, into: row)
                row[9] = -scale; row[10] = 0; row[11] = 0; row[12] = 0; row[13] = 0
                let r = (length - p.field) * scale
                accumulate(r, weight(r, sigma: fieldSigma))
            }
            if down[k] != .zero {
                let d = p.down(down[k])
                let sd = s * d
                let scale = 1 / sd.length
                projectionRow(d, sd, w, scale, into: row)
                row[9] = -sinI * scale; row[10] = -p.field * cosI * scale
                // d = normalise(d_measured + β/g): ∂(m·d)/∂β = (m − (m·d) d)/g.
                let across = (m - d * m.dot(d)) * (scale / TiltCompensation.standardGravity)
                row[11] = across.x; row[12] = across.y; row[13] = across.z
                let r = (m.dot(d) - vertical) * scale
                accumulate(r, weight(r, sigma: Self.dipSigma(dipSigma, horizontal: horizontal, tilt: tilt?[k] ?? 0)))
            }
        }
        // Priors: residual (θ − θ₀)/σ, Jacobian 1/σ.
        let ke = 1 / (prior.softIronSigma * prior.softIronSigma)
        let es = (p.e.0, p.e.1, p.e.2, p.e.3, p.e.4, p.e.5)
        withUnsafeBytes(of: es) { bytes in
            let e = bytes.bindMemory(to: Double.self)
            for i in 0..<6 {
                a[(3 + i) * n + 3 + i] += ke
                rhs[3 + i] += ke * e[i]
            }
        }
        // tr E = 0: an overall gain is indistinguishable from the field's strength and is carried by
        // R. Without this the fit shrinks S and R together towards 0, where every residual (in the
        // corrected frame) is small.
        let kt = 1 / (traceSigma * traceSigma)
        let trace = p.e.0 + p.e.1 + p.e.2
        for i in 3..<6 {
            rhs[i] += kt * trace
            for j in 3..<6 { a[i * n + j] += kt }
        }
        let kf = 1 / (prior.fieldSigma * prior.fieldSigma)
        a[9 * n + 9] += kf
        rhs[9] += kf * (p.field - prior.field)
        if let i0 = prior.inclination {
            let ki = 1 / (prior.inclinationSigma * prior.inclinationSigma)
            a[10 * n + 10] += ki
            rhs[10] += ki * (p.inclination - i0)
        } else {
            // Without a location the dip is free; a vanishing prior keeps the system regular when no
            // sample had an accelerometer reading.
            a[10 * n + 10] += 1e-6
        }
        let kb = 1 / (prior.accelerometerBiasSigma * prior.accelerometerBiasSigma)
        let beta = p.accelerometerBias
        for (i, value) in [beta.x, beta.y, beta.z].enumerated() {
            a[(11 + i) * n + 11 + i] += kb
            rhs[11 + i] += kb * value
        }
        for i in 0..<n { for j in 0..<i { a[i * n + j] = a[j * n + i] } }
    }

    /// The first nine Jacobian entries of a projection (S·w)·v (w = raw − b, v a fixed unit vector,
    /// `sv` = S·v), times `scale`: ∂/∂b = −S v, ∂/∂E for E's six entries (symmetric).
    @inline(__always) private static func projectionRow(_ v: Vector3, _ sv: Vector3, _ w: Vector3, _ scale: Double,
                                                        into row: UnsafeMutablePointer<Double>) {
        row[0] = -sv.x * scale; row[1] = -sv.y * scale; row[2] = -sv.z * scale
        row[3] = v.x * w.x * scale; row[4] = v.y * w.y * scale; row[5] = v.z * w.z * scale
        row[6] = (v.x * w.y + v.y * w.x) * scale; row[7] = (v.x * w.z + v.z * w.x) * scale
        row[8] = (v.y * w.z + v.z * w.y) * scale
    }

    /// RMS of the two residuals at `p`, in raw units.
    private static func residuals(_ p: Parameters, raw: UnsafeBufferPointer<Vector3>,
                                  down: UnsafeBufferPointer<Vector3>) -> (field: Double, dip: Double, dipCount: Int) {
        let s = p.s
        let vertical = p.field * sin(p.inclination)
        var field = 0.0, dip = 0.0, count = 0
        for i in 0..<raw.count {
            let m = s * (raw[i] - p.b)
            let length = m.length
            let r = length > 0 ? (length - p.field) / (s * (m / length)).length : p.field
            field += r * r
            if down[i] != .zero {
                let u = p.down(down[i])
                let d = (m.dot(u) - vertical) / (s * u).length
                dip += d * d
                count += 1
            }
        }
        return ((field / Double(raw.count)).squareRoot(), count > 0 ? (dip / Double(count)).squareRoot() : 0, count)
    }

    /// A linear first guess of b: the centred Kåsa rows |rawᵢ|² − mean|raw|² = 2(rawᵢ − mean raw)·b
    /// and the dot-product rows rawᵢ·dᵢ − R₀ sin I₀ = b·dᵢ, with a small ridge towards the
    /// bounding-box centre for what neither determines.
    private static func firstGuess(raw: UnsafeBufferPointer<Vector3>, down: UnsafeBufferPointer<Vector3>,
                                   prior: Prior, scratch a: UnsafeMutablePointer<Double>,
                                   rhs: UnsafeMutablePointer<Double>) -> Vector3 {
        var mean = Vector3.zero, meanSquare = 0.0
        var lower = raw[0], upper = raw[0]
        for r in raw {
            mean += r
            meanSquare += r.dot(r)
            lower = Vector3(min(lower.x, r.x), min(lower.y, r.y), min(lower.z, r.z))
            upper = Vector3(max(upper.x, r.x), max(upper.y, r.y), max(upper.z, r.z))
        }
        let count = Double(raw.count)
        mean = mean / count
        meanSquare /= count
        let box = (lower + upper) * 0.5
        for i in 0..<9 { a[i] = 0 }
        for i in 0..<3 { rhs[i] = 0 }
        @inline(__always) func add(_ g: Vector3, _ value: Double, _ w: Double) {
            a[0] += w * g.x * g.x; a[1] += w * g.x * g.y; a[2] += w * g.x * g.z
            a[4] += w * g.y * g.y; a[5] += w * g.y * g.z; a[8] += w * g.z * g.z
            rhs[0] += w * g.x * value; rhs[1] += w * g.y * value; rhs[2] += w * g.z * value
        }
        // Kåsa rows are in µT² with a residual of about 2R times the radial one: weigh them by
        // 1/(2R)² so both kinds of row count in microtesla.
        let kasaWeight = 1 / max(1, 4 * prior.field * prior.field)
        let vertical = prior.inclination.map { prior.field * sin($0) }
        for i in 0..<raw.count {
            add((raw[i] - mean) * 2, raw[i].dot(raw[i]) - meanSquare, kasaWeight)
            if let vertical, down[i] != .zero { add(down[i], raw[i].dot(down[i]) - vertical, 1) }
        }
        a[3] = a[1]; a[6] = a[2]; a[7] = a[5]
        let ridge = 1e-4
        for i in 0..<3 { a[i * 3 + i] += ridge }
        rhs[0] += ridge * box.x; rhs[1] += ridge * box.y; rhs[2] += ridge * box.z
        guard SymmetricEigenSolver.choleskySolve(a, rhs, n: 3, relativePivot: 1e-15) else { return box }
        let b = Vector3(rhs[0], rhs[1], rhs[2])
        return b.isFinite ? b : box
    }

    private static func solve(raw: UnsafeBufferPointer<Vector3>, down: UnsafeBufferPointer<Vector3>,
                              vertical tilt: UnsafeBufferPointer<Double>?,
                              expectedField: MagneticField?, start: CalibrationEstimate?, priors: CalibrationPriors,
                              maximumIterations: Int, scratch: UnsafeMutablePointer<Double>) -> CalibrationEstimate? {
        let n = CalibrationParameter.count
        let a = scratch + Scratch.normal, damped = scratch + Scratch.damped, covariance = scratch + Scratch.covariance
        let rhs = scratch + Scratch.rhs, step = scratch + Scratch.step, row = scratch + Scratch.row
        let column = scratch + Scratch.column
        let prior: Prior
        if let field = expectedField, field.totalNanotesla > 0 {
            let f = field.totalNanotesla / 1000
            prior = Prior(field: f, fieldSigma: priors.fieldSigmaFraction * f,
                          inclination: Angle.radians(field.inclinationDegrees),
                          inclinationSigma: Angle.radians(priors.inclinationSigmaDegrees), softIronSigma: priors.softIronSigma,
                          accelerometerBiasSigma: max(1e-6, priors.accelerometerBiasMetresPerSecondSquared))
        } else {
            prior = Prior(field: priors.fieldWithoutLocationMicrotesla, fieldSigma: priors.fieldWithoutLocationSigmaMicrotesla,
                          inclination: nil, inclinationSigma: .infinity, softIronSigma: priors.softIronSigma,
                          accelerometerBiasSigma: max(1e-6, priors.accelerometerBiasMetresPerSecondSquared))
        }

        var p: Parameters
        if let start, start.hardIronOffsetMicrotesla.isFinite, start.softIronMatrix.isFinite {
            let s = start.softIronMatrix
            p = Parameters(b: start.hardIronOffsetMicrotesla,
                           e: (s.row0.x - 1, s.row1.y - 1, s.row2.z - 1, s.row0.y, s.row0.z, s.row1.z),
                           field: start.fieldMicrotesla,
                           inclination: start.inclinationDegrees.isFinite ? Angle.radians(start.inclinationDegrees)
                               : (prior.inclination ?? 0),
                           accelerometerBias: start.accelerometerBiasMetresPerSecondSquared.isFinite
                               ? start.accelerometerBiasMetresPerSecondSquared : .zero)
        } else {
            let b = firstGuess(raw: raw, down: down, prior: prior, scratch: damped, rhs: step)
            var field = 0.0
            for r in raw { field += (r - b).length }
            field /= Double(raw.count)
            var inclination = prior.inclination ?? 0
            if prior.inclination == nil {
                var sum = 0.0, count = 0
                for i in 0..<raw.count where down[i] != .zero {
                    sum += (raw[i] - b).dot(down[i]) / max(1e-9, (raw[i] - b).length)
                    count += 1
                }
                if count > 0 { inclination = asin(max(-1, min(1, sum / Double(count)))) }
            }
            p = Parameters(b: b, e: (0, 0, 0, 0, 0, 0), field: field > 0 ? field : prior.field, inclination: inclination,
                           accelerometerBias: .zero)
        }

        // Residual scales: start from the floors and the first guess, re-estimated as it converges.
        var sigmas = residuals(p, raw: raw, down: down)
        var fieldSigma = max(priors.fieldNoiseFloorMicrotesla, sigmas.field)
        var dipSigma = max(priors.dipNoiseFloorMicrotesla, sigmas.dip)
        var currentCost = cost(p, raw: raw, down: down, tilt: tilt, prior: prior, fieldSigma: fieldSigma, dipSigma: dipSigma)
        guard currentCost.isFinite else { return nil }
        var lambda = 1e-3
        for iteration in 0..<max(1, maximumIterations) {
            normalEquations(p, raw: raw, down: down, tilt: tilt, prior: prior, fieldSigma: fieldSigma, dipSigma: dipSigma,
                            normal: a, rhs: rhs, row: row)
            var improved = false
            for _ in 0..<10 {
                for i in 0..<(n * n) { damped[i] = a[i] }
                for i in 0..<n {
                    damped[i * n + i] += lambda * max(a[i * n + i], 1e-12)
                    step[i] = -rhs[i]
                }
                guard SymmetricEigenSolver.choleskySolve(damped, step, n: n, relativePivot: 1e-15) else {
                    lambda *= 10
                    continue
                }
                var trial = p
                trial.add(step)
                guard trial.isFinite, trial.field > 0 else { lambda *= 10; continue }
                let trialCost = cost(trial, raw: raw, down: down, tilt: tilt, prior: prior, fieldSigma: fieldSigma, dipSigma: dipSigma)
                if trialCost.isFinite, trialCost <= currentCost {
                    let relative = (currentCost - trialCost) / max(currentCost, .leastNormalMagnitude)
                    p = trial
                    currentCost = trialCost
                    lambda = max(lambda / 5, 1e-9)
                    improved = relative > 1e-10
                    break
                }
                lambda *= 4
            }
            // Re-estimate the residual scales a few times as the fit settles.
            if iteration == 2 || iteration == 5 || !improved {
                sigmas = residuals(p, raw: raw, down: down)
                let newField = max(priors.fieldNoiseFloorMicrotesla, sigmas.field)
                let newDip = max(priors.dipNoiseFloorMicrotesla, sigmas.dip)
                if abs(newField - fieldSigma) > 0.05 * fieldSigma || abs(newDip - dipSigma) > 0.05 * dipSigma {
                    fieldSigma = newField
                    dipSigma = newDip
                    currentCost = cost(p, raw: raw, down: down, tilt: tilt, prior: prior, fieldSigma: fieldSigma, dipSigma: dipSigma)
                    improved = true
                }
            }
            if !improved { break }
        }

        // Posterior covariance at the solution: (JᵀWJ + P)⁻¹, column by column.
        normalEquations(p, raw: raw, down: down, tilt: tilt, prior: prior, fieldSigma: fieldSigma, dipSigma: dipSigma,
                        normal: a, rhs: rhs, row: row)
        var result = InlineDoubles196(repeating: 0)
        for c in 0..<n {
            for i in 0..<(n * n) { damped[i] = a[i] }
            for i in 0..<n { column[i] = i == c ? 1 : 0 }
            guard SymmetricEigenSolver.choleskySolve(damped, column, n: n, relativePivot: 1e-18) else { return nil }
            for i in 0..<n { covariance[i * n + c] = column[i] * priors.covarianceInflation }
        }
        for i in 0..<(n * n) {
            guard covariance[i].isFinite else { return nil }
            result[i] = covariance[i]
        }
        let final = residuals(p, raw: raw, down: down)
        return CalibrationEstimate(hardIronOffsetMicrotesla: p.b, softIronMatrix: p.s, fieldMicrotesla: p.field,
                                   inclinationDegrees: final.dipCount > 0 || prior.inclination != nil
                                       ? Angle.degrees(p.inclination) : .nan,
                                   fieldResidualRMSMicrotesla: final.field, dipResidualRMSMicrotesla: final.dip,
                                   sampleCount: raw.count, dipSampleCount: final.dipCount, priors: priors,
                                   covariance: result, accelerometerBiasMetresPerSecondSquared: p.accelerometerBias)
    }
}
