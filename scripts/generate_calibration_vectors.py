#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generate independent reference vectors for the QiblaCore magnetometer ellipsoid fit.

Output (committed; the tests need no Python):
    Tests/QiblaCoreTests/Vectors/calibration-points.csv   raw samples per case
    Tests/QiblaCoreTests/Vectors/calibration-fits.csv     truth and numpy's fit per case

Setup (pinned): numpy==2.4.6 (nothing else)
    python3 -m venv /tmp/cal-venv && /tmp/cal-venv/bin/pip install 'numpy==2.4.6'
    /tmp/cal-venv/bin/python scripts/generate_calibration_vectors.py

Model (as QiblaCore's MagnetometerCalibration): corrected = S (raw - b), S symmetric positive
definite with det S = 1, corrected on a sphere of radius R. Raw samples are made from the truth:
raw = b + S^-1 (R u) + noise, u uniform on the unit sphere (or on a cap for the partial case),
noise N(0, sigma^2) per axis, numpy.random.default_rng(seed).

Independent fit (numpy only, written from the textbook, not from the Swift code):
  1. normalise: q = (raw - mean) / s, s = RMS distance from the mean;
  2. ordinary least squares for the 9-parameter quadric
        A x^2 + B y^2 + C z^2 + 2D xy + 2E xz + 2F yz + 2G x + 2H y + 2I z = 1
     with numpy.linalg.lstsq (SVD based: a different solver from the Swift Cholesky);
  3. Q = [[A, D, E], [D, B, F], [E, F, C]], g = (G, H, I): centre c = -Q^-1 g,
     M = Q / (1 + c' Q c), eigen-decomposition by numpy.linalg.eigh, L = V sqrt(Lambda) V';
  4. back to sensor units: b = mean + s c, L <- L / s, R = det(L)^(-1/3), S = R L.
The Swift algebraic stage (EllipsoidFitter.algebraicEllipsoid) must reproduce b, S and R to 1e-9
relative; the refined Swift fit is compared with the truth (noise-limited tolerances).

Numbers are written with repr(), which round-trips doubles exactly.
"""

import os

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "QiblaCoreTests", "Vectors")


def rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def soft_iron(rng, spread):
    """Symmetric S with det 1 and eigenvalue ratio max/min = spread, random axes."""
    r = rotation(rng)
    e = np.array([1.0, np.sqrt(spread), spread])
    e /= np.prod(e) ** (1 / 3)
    return r @ np.diag(e) @ r.T


def directions(rng, n, cap_min_z=None):
    out = []
    while len(out) < n:
        v = rng.normal(size=3)
        v /= np.linalg.norm(v)
        if cap_min_z is None or v[2] >= cap_min_z:
            out.append(v)
    return np.array(out)


def numpy_fit(raw):
    mean = raw.mean(axis=0)
    s = np.sqrt(((raw - mean) ** 2).sum(axis=1).mean())
    q = (raw - mean) / s
    x, y, z = q[:, 0], q[:, 1], q[:, 2]
    design = np.column_stack([x * x, y * y, z * z, 2 * x * y, 2 * x * z, 2 * y * z, 2 * x, 2 * y, 2 * z])
    coef, *_ = np.linalg.lstsq(design, np.ones(len(q)), rcond=None)
    a, b_, c, d, e, f, g, h, i = coef
    quadric = np.array([[a, d, e], [d, b_, f], [e, f, c]])
    linear = np.array([g, h, i])
    centre = -np.linalg.solve(quadric, linear)
    k = 1 + centre @ quadric @ centre
    m = quadric / k
    w, v = np.linalg.eigh(m)
    assert (w > 0).all(), "not an ellipsoid"
    l_norm = v @ np.diag(np.sqrt(w)) @ v.T
    offset = mean + s * centre
    l_raw = l_norm / s
    radius = np.linalg.det(l_raw) ** (-1 / 3)
    return offset, radius * l_raw, radius


CASES = [
    # name, seed, count, radius uT, hard-iron magnitude uT, soft-iron spread, noise uT, cap
    ("exact-librem", 1, 240, 49.0, 87.0, 1.08, 0.0, None),
    ("noisy-librem", 2, 180, 49.0, 87.0, 1.08, 0.4, None),
    ("strong-soft-iron", 3, 300, 35.0, 40.0, 1.3, 0.5, None),
    ("sphere-reykjavik", 4, 200, 51.9, 20.0, 1.0, 0.3, None),
    ("upper-cap", 5, 150, 45.0, 60.0, 1.1, 0.2, 0.3),
]


def main():
    points_rows = ["case,x,y,z"]
    fit_rows = ["case,noise,count,"
                "true_bx,true_by,true_bz,true_s00,true_s01,true_s02,true_s11,true_s12,true_s22,true_r,"
                "np_bx,np_by,np_bz,np_s00,np_s01,np_s02,np_s11,np_s12,np_s22,np_r"]
    for name, seed, count, radius, hard, spread, sigma, cap in CASES:
        rng = np.random.default_rng(seed)
        b = rng.normal(size=3)
        b = b / np.linalg.norm(b) * hard
        s_true = soft_iron(rng, spread)
        u = directions(rng, count, cap)
        raw = b + (np.linalg.inv(s_true) @ (radius * u).T).T + rng.normal(scale=sigma, size=(count, 3)) * (sigma > 0)
        for p in raw:
            points_rows.append(",".join([name] + [repr(float(c)) for c in p]))
        offset, s_fit, r_fit = numpy_fit(raw)

        def sym(m):
            return [m[0, 0], m[0, 1], m[0, 2], m[1, 1], m[1, 2], m[2, 2]]

        values = [sigma, count] + list(b) + sym(s_true) + [radius] + list(offset) + sym(s_fit) + [r_fit]
        fit_rows.append(",".join([name] + [repr(float(v)) if not isinstance(v, int) else str(v) for v in values]))
    os.makedirs(ROOT, exist_ok=True)
    with open(os.path.join(ROOT, "calibration-points.csv"), "w") as fh:
        fh.write("# generated by scripts/generate_calibration_vectors.py (numpy " + np.__version__ + ")\n")
        fh.write("\n".join(points_rows) + "\n")
    with open(os.path.join(ROOT, "calibration-fits.csv"), "w") as fh:
        fh.write("# generated by scripts/generate_calibration_vectors.py (numpy " + np.__version__ + ")\n")
        fh.write("\n".join(fit_rows) + "\n")


if __name__ == "__main__":
    main()
