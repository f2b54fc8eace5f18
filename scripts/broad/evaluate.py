#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Scores an estimator's output against a BROAD log's optical truth with BROAD's error metrics.

    scripts/broad/evaluate.py TRUTH ESTIMATE [--axis top|back|auto] [--heading-offset none|mean] [--json]

TRUTH: `NAME.truth` from convert.py (TIME QW QX QY QZ MOVING). ESTIMATE: `TIME MAGNETIC_HEADING
TRUE_HEADING HEADING_ERROR FUSED QW QX QY QZ` (`qibla-sim replay --offline`, vqf_run.py), Q
device→ENU with north = magnetic north, `nan` where unknown. Rows are matched on TIME (whole
microseconds); truth instants without an estimate row (before the first heading) are not scored
and the coverage says how many.

BROAD's metrics (reimplemented from dlaidig/broad example_code/broad_utils.py, calculateRMSE):
  q_err = q_est ⊗ q_true⁻¹                      (the error in the earth frame, both normalised)
  heading error     e_h = 2·atan(|q_err,z / q_err,w|)
  inclination error e_i = 2·acos(√(q_err,w² + q_err,z²))
  RMSE = √(mean(e²)) over the motion phases (MOVING = 1) where truth and estimate are finite.
Constant heading offset: BROAD's optical quaternions are already given in the IMU's ENU frame
(magnetic north; "synchronized and aligned optical reference data", BROAD's file description),
and BROAD's code compares the estimate with them directly: `--heading-offset none` (default)
does the same. `--heading-offset mean` (a diagnostic) first turns the estimate about the vertical
by the circular mean over the motion phases of ψ = 2·atan2(q_err,z, q_err,w).

HeadingError honesty (qiblad's published uncertainty): at every instant with a finite truth, a
finite MAGNETIC_HEADING and a finite HEADING_ERROR (σ, degrees), the heading error of the axis is
  d = wrap₁₈₀(MAGNETIC_HEADING − heading of the same device axis from the truth (+ ψ̄ if removed))
with heading(axis) = atan2(E, N) of q_true ⊗ axis ⊗ q_true*, degrees clockwise from north. The
axis is, with `--axis auto` (default), the one qiblad's HeadingAxisSelector picks (top edge +y while
the folded tilt ≤ 55°, back camera −z above it, top again below 45°) applied to the estimate's own
tilt (the truth's where Q is nan) — qiblad publishes the heading of that axis, and vqf_run.py
writes VQF's the same way. The daemon's selector runs on its own tilt, so at a switch it can turn
an instant before or after the estimate's Q: where MAGNETIC_HEADING is within 1° of the heading
of one of Q's two axes, that axis is taken as the published one. `--axis top` or `back` fixes the
axis. A warning is printed when MAGNETIC_HEADING is not the evaluated axis's heading of the
estimate's own Q (> 5° apart at more than 5 % of instants). Instants where that axis is within
30° of vertical in the truth (elevation > 60°) are skipped: a near-vertical axis has no usable
heading. Reported: the fraction with |d| ≤ σ and |d| ≤ 3σ, and the
instants "confidently wrong": |d| > 3σ while σ < 10°.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import broadlib as bl  # noqa: E402

#: Axis elevation (degrees) above which an instant is skipped in the honesty figures.
MAX_AXIS_ELEVATION_DEG = 60.0
AXES = bl.AXES


def rot_z(angle_rad: float) -> np.ndarray:
    return np.array([[math.cos(angle_rad / 2), 0.0, 0.0, math.sin(angle_rad / 2)]])


def evaluate(truth_path: Path, estimate_path: Path, axis: str = "auto", heading_offset: str = "none",
             keep_instants: bool = False) -> dict:
    """The metrics of the module's doc as a dict; with `keep_instants`, also "instants": the honesty
    instants' TIME, signed heading error d and HEADING_ERROR σ (arrays, for honesty.py)."""
    t_true, q_true, moving = bl.read_truth(truth_path)
    est = bl.read_estimate(estimate_path)
    index = {bl.time_key(t): i for i, t in enumerate(est["time"])}
    if len(index) != len(est["time"]):
        raise ValueError(f"{estimate_path}: a TIME appears twice")
    rows = np.array([index.get(bl.time_key(t), -1) for t in t_true])
    unknown = set(index) - {bl.time_key(t) for t in t_true}
    if unknown:
        raise ValueError(f"{estimate_path}: {len(unknown)} TIMEs are not in the truth file")
    has_row = rows >= 0
    r = np.where(has_row, rows, 0)
    q_est = np.where(has_row[:, None], est["quat"][r], np.nan)
    mag_heading = np.where(has_row, est["magnetic_heading"][r], np.nan)
    sigma = np.where(has_row, est["heading_error"][r], np.nan)

    truth_ok = bl.is_finite_rows(q_true)
    est_ok = bl.is_finite_rows(q_est)
    motion_truth = moving & truth_ok
    scored = motion_truth & est_ok

    out: dict = dict(truth=str(truth_path), estimate=str(estimate_path), axis=axis,
                     heading_offset=heading_offset,
                     motion_instants=int(motion_truth.sum()), scored_instants=int(scored.sum()))
    out["coverage"] = out["scored_instants"] / out["motion_instants"] if out["motion_instants"] else float("nan")

    psi_mean = 0.0
    if scored.any():
        qe = bl.normalized(q_est[scored]); qt = bl.normalized(q_true[scored])
        q_err = bl.error_quaternion(qe, qt)
        if heading_offset == "mean":
            psi = 2 * np.arctan2(q_err[:, 3], q_err[:, 0])
            psi_mean = math.atan2(np.mean(np.sin(psi)), np.mean(np.cos(psi)))
            qe = bl.quat_mult(np.repeat(rot_z(-psi_mean), len(qe), axis=0), qe)
            q_err = bl.error_quaternion(qe, qt)
        e_h, e_i = bl.broad_errors(q_err)
        out["heading_rmse_deg"] = float(np.degrees(np.sqrt(np.nanmean(e_h ** 2))))
        out["inclination_rmse_deg"] = float(np.degrees(np.sqrt(np.nanmean(e_i ** 2))))
        e_tot = 2 * np.arccos(np.clip(np.abs(q_err[:, 0]), 0, 1))
        out["total_rmse_deg"] = float(np.degrees(np.sqrt(np.nanmean(e_tot ** 2))))
    else:
        out["heading_rmse_deg"] = out["inclination_rmse_deg"] = out["total_rmse_deg"] = float("nan")
    out["removed_heading_offset_deg"] = math.degrees(psi_mean)

    # The axis whose heading MAGNETIC_HEADING is.
    if axis == "auto":
        tilt = np.where(est_ok, bl.tilt_deg(np.where(est_ok[:, None], q_est, [1, 0, 0, 0])),
                        np.where(truth_ok, bl.tilt_deg(np.where(truth_ok[:, None], q_true, [1, 0, 0, 0])), np.nan))
        use_back = bl.select_axes(tilt)
        # The selector's hysteresis runs on the daemon's own tilt, which can cross a threshold an
        # instant before or after the estimate's Q does: where the published heading is one of Q's
        # two axis headings, that axis is the one published (BROAD trial 32 at 112.56 s: the
        # daemon turned to the back camera one instant early, a 118° "error" of an axis it did
        # not publish, with Q within 0.7° of the truth).
        q_e = np.where(est_ok[:, None], q_est, [1, 0, 0, 0])
        off_top = np.abs(bl.wrap180(mag_heading - bl.axis_heading_deg(q_e, AXES["top"])[0]))
        off_back = np.abs(bl.wrap180(mag_heading - bl.axis_heading_deg(q_e, AXES["back"])[0]))
        published = est_ok & np.isfinite(mag_heading) & (np.minimum(off_top, off_back) <= 1.0)
        use_back = np.where(published, off_back < off_top, use_back)
    else:
        use_back = np.full(len(t_true), axis == "back")
    q_t = np.where(truth_ok[:, None], q_true, [1, 0, 0, 0])
    h_top, el_top = bl.axis_heading_deg(q_t, AXES["top"])
    h_back, el_back = bl.axis_heading_deg(q_t, AXES["back"])
    h_true = np.where(use_back, h_back, h_top)
    el_true = np.where(use_back, el_back, el_top)
    d = bl.wrap180(mag_heading - h_true + math.degrees(psi_mean))
    near_vertical = truth_ok & np.isfinite(mag_heading) & (np.abs(el_true) > MAX_AXIS_ELEVATION_DEG)
    usable = truth_ok & np.isfinite(mag_heading) & ~near_vertical
    out["axis_heading_instants"] = int(usable.sum())
    out["axis_near_vertical_skipped"] = int(near_vertical.sum())
    m = usable & moving
    out["axis_heading_rmse_motion_deg"] = float(np.sqrt(np.mean(d[m] ** 2))) if m.any() else float("nan")
    # The same over the instants BROAD marks still (MOVING = 0) where both have a heading: BROAD's
    # metric leaves them out, but a phone lying still is most of a compass's use. Not the
    # error quaternion's heading: the published axis's, the one a user reads.
    rest = usable & ~moving
    out["axis_heading_rest_instants"] = int(rest.sum())
    out["axis_heading_rmse_rest_deg"] = float(np.sqrt(np.mean(d[rest] ** 2))) if rest.any() else float("nan")

    # Whether MAGNETIC_HEADING is the heading of the axis evaluated: compare with the estimate's own Q.
    both = usable & est_ok
    if both.any():
        q_e = np.where(est_ok[:, None], q_est, [1, 0, 0, 0])
        h_q = np.where(use_back, bl.axis_heading_deg(q_e, AXES["back"])[0], bl.axis_heading_deg(q_e, AXES["top"])[0])
        out["heading_not_from_q_fraction"] = float(np.mean(np.abs(bl.wrap180(mag_heading - h_q))[both] > 5.0))

    honest = usable & np.isfinite(sigma)
    out["honesty_instants"] = int(honest.sum())
    if honest.any():
        ad, s = np.abs(d[honest]), sigma[honest]
        out["within_1sigma"] = float(np.mean(ad <= s))
        out["within_3sigma"] = float(np.mean(ad <= 3 * s))
        out["confidently_wrong"] = int(np.sum((ad > 3 * s) & (s < 10.0)))
        if keep_instants:
            out["instants"] = dict(time=t_true[honest], error=d[honest], sigma=s)
    else:
        out["within_1sigma"] = out["within_3sigma"] = float("nan")
        out["confidently_wrong"] = None
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("truth", type=Path)
    ap.add_argument("estimate", type=Path)
    ap.add_argument("--axis", choices=("top", "back", "auto"), default="auto",
                    help="device axis MAGNETIC_HEADING refers to (default auto: qiblad's HeadingAxisSelector "
                         "on the estimate's tilt; top: +y; back: -z)")
    ap.add_argument("--heading-offset", choices=("none", "mean"), default="none",
                    help="none: BROAD's (truth already in magnetic ENU); mean: remove the mean offset")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    res = evaluate(args.truth, args.estimate, args.axis, args.heading_offset)
    if args.json:
        print(json.dumps(res, indent=2))
        return
    print(f"motion instants with truth: {res['motion_instants']}, scored: {res['scored_instants']} "
          f"({100 * res['coverage']:.1f} %)")
    print(f"heading RMSE     {res['heading_rmse_deg']:.3f}°")
    print(f"inclination RMSE {res['inclination_rmse_deg']:.3f}°")
    print(f"total RMSE       {res['total_rmse_deg']:.3f}°")
    if args.heading_offset == "mean":
        print(f"removed heading offset {res['removed_heading_offset_deg']:.3f}°")
    print(f"{args.axis} axis heading RMSE over motion {res['axis_heading_rmse_motion_deg']:.3f}° "
          f"({res['axis_heading_instants']} instants, {res['axis_near_vertical_skipped']} skipped: axis "
          f"more than {MAX_AXIS_ELEVATION_DEG:.0f}° from horizontal)")
    if res.get("heading_not_from_q_fraction", 0) > 0.05:
        print(f"warning: MAGNETIC_HEADING differs by > 5° from the {args.axis} axis of Q at "
              f"{100 * res['heading_not_from_q_fraction']:.1f} % of instants (another --axis?)")
    if res["honesty_instants"]:
        print(f"HeadingError honesty over {res['honesty_instants']} instants: "
              f"{100 * res['within_1sigma']:.1f} % within 1σ, {100 * res['within_3sigma']:.1f} % within 3σ, "
              f"{res['confidently_wrong']} confidently wrong (> 3σ with σ < 10°)")
    else:
        print("HeadingError honesty: no instants with a finite HEADING_ERROR")


if __name__ == "__main__":
    main()
