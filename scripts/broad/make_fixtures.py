#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Builds the BROAD test fixtures under Tests/Recordings/BROAD/ (issue 36).

    scripts/broad/make_fixtures.py

Four trials, every 6th sample (≈ 48 Hz, the daemon's rate with a gyroscope), cut from the
trial's first sample to 80 s after the start of its first motion phase (trial 36: 95 s, so that
the magnet is attached, taken off, and the calibration refitted for the changed field): the rest
before the motion stays in (calibration and rest detection need it; the errors are scored over
the motion phases only). For each: NAME.log, NAME.truth, and in reference.json VQF's figures on exactly that
fixture (online vqf.VQF 2.1.2, default parameters, evaluate.py's metrics) so the Swift tests
compare with VQF without Python. metric-vectors.csv holds test vectors of the error metric
itself (random attitude pairs and evaluate.py's values), for the Swift reimplementation.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import broadlib as bl  # noqa: E402
from convert import convert  # noqa: E402
from evaluate import evaluate  # noqa: E402
from vqf_run import run_vqf, vqf_version  # noqa: E402

OUT_DIR = bl.REPO_ROOT / "Tests" / "Recordings" / "BROAD"
DECIMATION = 6
MOTION_SECONDS = 80.0
FIXTURES = [
    ("09_undisturbed_fast_rotation_with_breaks_B", "undisturbed, rotation-rich: fast rotations with breaks"),
    ("21_undisturbed_fast_combined", "undisturbed, fast combined rotation and translation"),
    ("30_disturbed_stationary_magnet_C", "magnetically disturbed: a magnet in a fixed place, motion with breaks"),
    ("36_disturbed_attached_magnet_5cm", "magnetically disturbed: a magnet attached 5 cm from the sensor while "
     "the phone rests, then taken off", 95.0),
]


def metric_vectors(path: Path, count: int = 200, seed: int = 36) -> None:
    """Random truth attitudes and estimates a few degrees to 180° off, with BROAD's errors and the
    top/back axis headings and elevations of the truth."""
    rng = np.random.default_rng(seed)
    q_true = bl.normalized(rng.normal(size=(count, 4)))
    # Perturbations: rotation vectors of growing size (0.1° … 180°), random axes.
    angles = np.radians(np.concatenate([np.geomspace(0.1, 20, count - 20), np.linspace(30, 180, 20)]))
    axes = rng.normal(size=(count, 3)); axes /= np.linalg.norm(axes, axis=1)[:, None]
    dq = np.concatenate([np.cos(angles / 2)[:, None], axes * np.sin(angles / 2)[:, None]], axis=1)
    q_est = bl.quat_mult(dq, q_true)
    q_est *= np.where(rng.random(count) < 0.5, -1.0, 1.0)[:, None]  # the sign must not matter
    e_h, e_i = bl.broad_errors(bl.error_quaternion(q_est, q_true))
    h_top, el_top = bl.axis_heading_deg(q_true, (0.0, 1.0, 0.0))
    h_back, el_back = bl.axis_heading_deg(q_true, (0.0, 0.0, -1.0))
    with open(path, "w") as f:
        f.write("# BROAD's error metric on random attitude pairs (scripts/broad/make_fixtures.py); degrees.\n")
        f.write("# q = (w x y z), device->ENU; heading_err = 2 atan(|z/w|), inclination_err = "
                "2 acos(sqrt(w^2+z^2)) of q_est * conj(q_true); top = +y, back = -z axis of q_true.\n")
        f.write("true_w,true_x,true_y,true_z,est_w,est_x,est_y,est_z,heading_err,inclination_err,"
                "top_heading,top_elevation,back_heading,back_elevation\n")
        for i in range(count):
            vals = list(q_true[i]) + list(q_est[i])
            f.write(",".join(f"{v:.12f}" for v in vals) + "," + ",".join(
                f"{v:.9f}" for v in (np.degrees(e_h[i]), np.degrees(e_i[i]), h_top[i], el_top[i], h_back[i], el_back[i]))
                + "\n")


def main() -> None:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    reference = {
        "about": "VQF (online vqf.VQF, default parameters) on exactly these fixtures, scored by "
                 "scripts/broad/evaluate.py (BROAD's metrics, motion phases, no offset removed); degrees",
        "vqf_version": vqf_version(),
        "command": "scripts/broad/make_fixtures.py",
        "decimation": DECIMATION,
        "trials": {},
    }
    for name, what, *seconds in FIXTURES:
        d = bl.load_trial(name)
        fs = d["sampling_rate"]
        first_motion = np.flatnonzero(d["movement"])[0] / fs
        duration = first_motion + (seconds[0] if seconds else MOTION_SECONDS)
        log, truth = convert(name, DECIMATION, OUT_DIR / f"{name}.log", start=0.0, duration=duration)
        vqf_out = bl.CACHE_DIR / "fixtures" / f"{name}.vqf.out"
        vqf_out.parent.mkdir(parents=True, exist_ok=True)
        run_vqf(log, vqf_out)
        r = evaluate(truth, vqf_out)
        reference["trials"][name] = {
            "description": what,
            "seconds": round(duration, 3),
            "first_motion_seconds": round(first_motion, 3),
            "instants": sum(1 for _ in open(truth)) - 1,
            "motion_instants_with_truth": r["motion_instants"],
            "vqf_heading_rmse_deg": round(r["heading_rmse_deg"], 4),
            "vqf_inclination_rmse_deg": round(r["inclination_rmse_deg"], 4),
            "vqf_total_rmse_deg": round(r["total_rmse_deg"], 4),
            "vqf_axis_heading_rmse_motion_deg": round(r["axis_heading_rmse_motion_deg"], 4),
            "axis_near_vertical_skipped": r["axis_near_vertical_skipped"],
        }
        print(name, f"{log.stat().st_size / 1e6:.2f} MB + {truth.stat().st_size / 1e6:.2f} MB",
              reference["trials"][name])
    with open(OUT_DIR / "reference.json", "w") as f:
        json.dump(reference, f, indent=2)
        f.write("\n")
    metric_vectors(OUT_DIR / "metric-vectors.csv")


if __name__ == "__main__":
    main()
