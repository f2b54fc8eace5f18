#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How much of an estimator's heading error on BROAD is its tilt's leak through the dip (issue 36).

    .build-broad/venv/bin/python scripts/broad/tilt_leak.py                 # every trial, and the means
    .build-broad/venv/bin/python scripts/broad/tilt_leak.py NAME [--segment S] [--from T0] [--to T1]

Reads what `benchmark.py --rates 6` left in `.build-broad/logs/` (NAME.d6.log, .truth,
.qiblad.out and .vqf.out: run it first; `--no-write` is enough). For each instant of the motion
phases, the error rotation q_err = q_est ⊗ q_true⁻¹ (BROAD's, in the earth frame) as a rotation
vector (E, N, U), degrees: U is the heading error, E and N the tilt's error about the east and the
north axes. A yaw corrected by the magnetometer through a tilt that is wrong by N about the north
axis settles where the field's horizontal part points through that tilt, U ≈ N·Z/H (Z the field's
vertical and H its horizontal part in the earth frame, from the optical truth and the raw field;
Z/H ≈ −2.5 at Berlin's dip of 68°) — the leak `AttitudeFilter`'s magnetometer noise models with
`correlatedTiltErrorRadians`.

Without NAME: per trial, for qiblad and VQF, the RMS of U, of U − N·Z/H (the heading error with
the leak taken out) and of N·Z/H, then the means per group. If the leak explained an estimator's
heading error, the second column would be the smaller. With NAME: the means of E, N, U and N·Z/H
per segment of S seconds (default 2), qiblad beside VQF.

What it found is in BENCHMARKS.md (the twelfth session's bullet)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import broadlib as bl  # noqa: E402

LOGS = bl.CACHE_DIR / "logs"


def estimate_quaternions(times: np.ndarray, path: Path) -> np.ndarray:
    """The estimate's quaternion at each truth instant (NaN where it has none)."""
    est = bl.read_estimate(path)
    index = {bl.time_key(t): i for i, t in enumerate(est["time"])}
    rows = np.array([index.get(bl.time_key(t), -1) for t in times])
    return np.where((rows >= 0)[:, None], est["quat"][np.maximum(rows, 0)], np.nan)


def error_rotation_deg(q_est: np.ndarray, q_true: np.ndarray) -> np.ndarray:
    """q_est ⊗ q_true⁻¹ as a rotation vector in the earth frame (E, N, U), degrees."""
    e = bl.normalized(bl.quat_mult(q_est, bl.quat_conj(q_true)))
    e = e * np.where(e[:, :1] < 0, -1.0, 1.0)
    angle = 2 * np.arccos(np.clip(e[:, 0], -1.0, 1.0))
    s = np.sin(angle / 2)
    scale = np.where(s > 1e-9, angle / np.where(s > 1e-9, s, 1.0), 2.0)
    return np.degrees(e[:, 1:] * scale[:, None])


def field_dip_ratio(q_true: np.ndarray, mag: np.ndarray) -> np.ndarray:
    """Z/H of the raw field turned into the earth frame by the optical attitude (NaN without truth)."""
    ok = bl.is_finite_rows(q_true)
    world = np.full_like(mag, np.nan)
    if ok.any():
        r = bl.rotation_matrices(bl.normalized(q_true[ok]))
        world[ok] = np.einsum("nij,nj->ni", r, mag[ok])
    return world[:, 2] / np.hypot(world[:, 0], world[:, 1])


def trial(name: str) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """(times, motion-phase mask with a finite Z/H, {estimator: error rotation}) of a trial."""
    t, _, _, mag, q_true, moving = bl.read_converted(name)
    ratio = field_dip_ratio(q_true, mag)
    errors = {est: error_rotation_deg(estimate_quaternions(t, LOGS / f"{name}.d6.{est}.out"), q_true)
              for est in ("qiblad", "vqf")}
    return t, ratio, moving & np.isfinite(ratio), errors


def summary() -> int:
    names = sorted(p.name[: -len(".d6.truth")] for p in LOGS.glob("*.d6.truth"))
    if not names:
        print(f"tilt_leak.py: nothing in {LOGS}: run scripts/broad/benchmark.py --rates 6 first", file=sys.stderr)
        return 1
    groups: dict[str, list[list[float]]] = {}
    print("| trial | qiblad U | U − N·Z/H | N·Z/H | VQF U | U − N·Z/H | N·Z/H |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in names:
        _, ratio, mask, errors = trial(name)
        row: list[float] = []
        for est in ("qiblad", "vqf"):
            r = errors[est]
            m = mask & bl.is_finite_rows(r)
            u, leak = r[m, 2], r[m, 1] * ratio[m]
            row += [float(np.sqrt(np.mean(u ** 2))), float(np.sqrt(np.mean((u - leak) ** 2))),
                    float(np.sqrt(np.mean(leak ** 2)))]
        groups.setdefault("disturbed" if "_disturbed_" in name else "undisturbed", []).append(row)
        print(f"| {name} | " + " | ".join(f"{v:.2f}" for v in row) + " |")
    for group, rows in groups.items():
        mean = np.mean(np.array(rows), axis=0)
        print(f"| mean, {group} ({len(rows)}) | " + " | ".join(f"{v:.2f}" for v in mean) + " |")
    return 0


def segments(name: str, seconds: float, start: float, end: float) -> int:
    t, ratio, mask, errors = trial(name)
    for a in np.arange(max(start, float(np.floor(t.min()))), min(end, float(t.max())), seconds):
        m = mask & (t >= a) & (t < a + seconds)
        parts = []
        for est in ("qiblad", "vqf"):
            r = errors[est]
            mm = m & bl.is_finite_rows(r)
            if mm.sum() < 5:
                break
            e, n, u = r[mm].mean(axis=0)
            parts.append(f"{est} E {e:6.2f} N {n:6.2f} U {u:6.2f} N·Z/H {float(np.mean(r[mm, 1] * ratio[mm])):6.2f}")
        if len(parts) == 2:
            print(f"{a:7.1f} s  Z/H {float(np.mean(ratio[m])):5.2f}  " + "   ".join(parts))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("name", nargs="?", help="a trial (without NAME: every trial and the means)")
    ap.add_argument("--segment", type=float, default=2.0, help="seconds per line with NAME (default 2)")
    ap.add_argument("--from", dest="start", type=float, default=0.0, help="first second with NAME")
    ap.add_argument("--to", dest="end", type=float, default=float("inf"), help="last second with NAME")
    args = ap.parse_args()
    if args.segment <= 0:
        ap.error("--segment must be > 0")
    return segments(args.name, args.segment, args.start, args.end) if args.name else summary()


if __name__ == "__main__":
    sys.exit(main())
