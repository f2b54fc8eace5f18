// SPDX-License-Identifier: Apache-2.0
// Small dense symmetric linear algebra for the calibration fits: the cyclic Jacobi eigenvalue
// method and a Cholesky solve, both in place on caller-provided row-major storage, so a caller that
// owns its buffers runs them without heap allocation.

/// Eigenvalues and eigenvectors of a real symmetric n×n matrix by the cyclic Jacobi method
/// (Golub & Van Loan, *Matrix Computations*, 4th ed., 2013, §8.5.2–8.5.3; the rotation formulas of
/// Rutishauser, Numer. Math. 9, 1966). Accuracy: eigenvalues to a few ulps of the largest one;
/// convergence is quadratic, so 10 sweeps are far more than n ≤ 10 needs.
enum SymmetricEigenSolver {
    /// Diagonalises `a` (n×n, row-major, symmetric; destroyed: its diagonal holds the eigenvalues on
    /// return) and writes the eigenvectors as the **columns** of `v` (n×n, row-major).
    /// Returns false if the input is not finite.
    @discardableResult
    static func decompose(_ a: UnsafeMutablePointer<Double>, vectors v: UnsafeMutablePointer<Double>, n: Int) -> Bool {
        for i in 0..<(n * n) where !a[i].isFinite { return false }
        for i in 0..<n { for j in 0..<n { v[i * n + j] = i == j ? 1 : 0 } }
        for _ in 0..<16 {
            var offDiagonal = 0.0, diagonal = 0.0
            for i in 0..<n {
                diagonal += a[i * n + i] * a[i * n + i]
                for j in (i + 1)..<max(i + 1, n) { offDiagonal += a[i * n + j] * a[i * n + j] }
            }
            if offDiagonal <= 1e-30 * max(diagonal, .leastNormalMagnitude) { break }
            for p in 0..<(n - 1) {
                for q in (p + 1)..<n {
                    let apq = a[p * n + q]
                    if apq == 0 { continue }
                    // Rotation angle: θ = (a_qq − a_pp) / (2 a_pq), t = sgn θ / (|θ| + √(θ² + 1)).
                    let theta = (a[q * n + q] - a[p * n + p]) / (2 * apq)
                    let t = (theta >= 0 ? 1.0 : -1.0) / (abs(theta) + (theta * theta + 1).squareRoot())
                    let c = 1 / (t * t + 1).squareRoot(), s = t * c
                    for k in 0..<n {
                        let akp = a[k * n + p], akq = a[k * n + q]
                        a[k * n + p] = c * akp - s * akq
                        a[k * n + q] = s * akp + c * akq
                    }
                    for k in 0..<n {
                        let apk = a[p * n + k], aqk = a[q * n + k]
                        a[p * n + k] = c * apk - s * aqk
                        a[q * n + k] = s * apk + c * aqk
                    }
                    for k in 0..<n {
                        let vkp = v[k * n + p], vkq = v[k * n + q]
                        v[k * n + p] = c * vkp - s * vkq
                        v[k * n + q] = s * vkp + c * vkq
                    }
                }
            }
        }
        return true
    }

    /// Solves A x = b for a symmetric positive definite A (n×n, row-major; overwritten by its
    /// Cholesky factor) by A = L Lᵀ (Golub & Van Loan §4.2.5). `b` is overwritten by x. Returns
    /// false when a pivot is not positive or below `relativePivot` × the largest diagonal entry:
    /// the matrix is (numerically) not positive definite.
    static func choleskySolve(_ a: UnsafeMutablePointer<Double>, _ b: UnsafeMutablePointer<Double>, n: Int,
                              relativePivot: Double = 1e-14) -> Bool {
        var largest = 0.0
        for i in 0..<n { largest = max(largest, abs(a[i * n + i])) }
        guard largest > 0, largest.isFinite else { return false }
        for j in 0..<n {
            var d = a[j * n + j]
            for k in 0..<j { d -= a[j * n + k] * a[j * n + k] }
            guard d.isFinite, d > relativePivot * largest else { return false }
            let l = d.squareRoot()
            a[j * n + j] = l
            for i in (j + 1)..<max(j + 1, n) {
                var s = a[i * n + j]
                for k in 0..<j { s -= a[i * n + k] * a[j * n + k] }
                a[i * n + j] = s / l
            }
        }
        for i in 0..<n {  // L y = b
            var s = b[i]
            for k in 0..<i { s -= a[i * n + k] * b[k] }
            b[i] = s / a[i * n + i]
        }
        for i in stride(from: n - 1, through: 0, by: -1) {  // Lᵀ x = y
            var s = b[i]
            for k in (i + 1)..<max(i + 1, n) { s -= a[k * n + i] * b[k] }
            b[i] = s / a[i * n + i]
        }
        for i in 0..<n where !b[i].isFinite { return false }
        return true
    }
}

/// The eigen-decomposition A = V diag(λ) Vᵀ of a symmetric 3×3 matrix (cyclic Jacobi method,
/// Golub & Van Loan §8.5; eigenvalues accurate to a few ulps of the largest).
public struct SymmetricEigen3: Sendable, Equatable {
    /// Eigenvalues in ascending order.
    public var values: Vector3
    /// Orthonormal eigenvectors as the columns, in the order of `values`.
    public var vectors: Matrix3

    /// Decomposes the symmetric part ½(A + Aᵀ) of `matrix`; `nil` if it is not finite.
    public init?(_ matrix: Matrix3) {
        let t = matrix.transposed
        var a: (Double, Double, Double, Double, Double, Double, Double, Double, Double) = (
            matrix.row0.x, (matrix.row0.y + t.row0.y) / 2, (matrix.row0.z + t.row0.z) / 2,
            (matrix.row1.x + t.row1.x) / 2, matrix.row1.y, (matrix.row1.z + t.row1.z) / 2,
            (matrix.row2.x + t.row2.x) / 2, (matrix.row2.y + t.row2.y) / 2, matrix.row2.z)
        var v: (Double, Double, Double, Double, Double, Double, Double, Double, Double) = (0, 0, 0, 0, 0, 0, 0, 0, 0)
        let ok = withUnsafeMutablePointer(to: &a) { ap in
            withUnsafeMutablePointer(to: &v) { vp in
                ap.withMemoryRebound(to: Double.self, capacity: 9) { a in
                    vp.withMemoryRebound(to: Double.self, capacity: 9) { v in
                        SymmetricEigenSolver.decompose(a, vectors: v, n: 3)
                    }
                }
            }
        }
        guard ok else { return nil }
        // Sort ascending, permuting the eigenvector columns alike (no array: no allocation).
        var l0 = a.0, l1 = a.4, l2 = a.8
        var e0 = Vector3(v.0, v.3, v.6), e1 = Vector3(v.1, v.4, v.7), e2 = Vector3(v.2, v.5, v.8)
        if l0 > l1 { swap(&l0, &l1); swap(&e0, &e1) }
        if l1 > l2 { swap(&l1, &l2); swap(&e1, &e2) }
        if l0 > l1 { swap(&l0, &l1); swap(&e0, &e1) }
        values = Vector3(l0, l1, l2)
        vectors = Matrix3(rows: e0, e1, e2).transposed
    }

    /// V diag(f(λ)) Vᵀ: a function applied to the eigenvalues (e.g. the square root for the
    /// symmetric square root of a positive definite matrix).
    public func reassembled(_ f: (Double) -> Double) -> Matrix3 {
        let d = Vector3(f(values.x), f(values.y), f(values.z))
        let (c0, c1, c2) = vectors.columns
        func outer(_ c: Vector3, _ s: Double) -> Matrix3 {
            Matrix3(rows: c * (c.x * s), c * (c.y * s), c * (c.z * s))
        }
        return outer(c0, d.x) + outer(c1, d.y) + outer(c2, d.z)
    }
}

extension Matrix3 {
    /// Entry-wise sum.
    @inlinable public static func + (a: Matrix3, b: Matrix3) -> Matrix3 {
        Matrix3(rows: a.row0 + b.row0, a.row1 + b.row1, a.row2 + b.row2)
    }
}
