// SPDX-License-Identifier: Apache-2.0
// Deterministic pseudo-random numbers for sensor noise.
import QiblaCore

/// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014;
/// constants as in Vigna's reference implementation). Same seed → same sequence on every platform.
public struct SplitMix64: RandomNumberGenerator, Sendable, Equatable {
    public private(set) var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform double in (0, 1] (53 random bits; never 0, so log is finite).
    public mutating func nextUnitInterval() -> Double {
        (Double(next() >> 11) + 1) * 0x1p-53
    }
}

/// Standard normal deviates by the Box–Muller transform (Box & Muller, Ann. Math. Statist. 29(2), 1958):
/// z₀ = √(−2 ln u₁) cos(2π u₂), z₁ = √(−2 ln u₁) sin(2π u₂); the second value is kept for the next call.
public struct GaussianNoise: Sendable, Equatable {
    public private(set) var generator: SplitMix64
    private var spare: Double?

    public init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    /// The next N(0, 1) deviate.
    public mutating func next() -> Double {
        if let s = spare { spare = nil; return s }
        let u1 = generator.nextUnitInterval(), u2 = generator.nextUnitInterval()
        let r = (-2 * log(u1)).squareRoot()
        spare = r * sin(2 * .pi * u2)
        return r * cos(2 * .pi * u2)
    }

    /// A vector of three independent N(0, σ²) deviates; `standardDeviation` ≤ 0 or non-finite gives zero
    /// (and consumes nothing).
    public mutating func nextVector(standardDeviation: Double) -> Vector3 {
        guard standardDeviation > 0, standardDeviation.isFinite else { return .zero }
        return Vector3(next(), next(), next()) * standardDeviation
    }
}
