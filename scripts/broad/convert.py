#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Converts one BROAD trial into qiblad's sensor log (issue 36) and its optical truth.

    scripts/broad/convert.py NAME [--decimate N] [--start S] [--duration D] [-o OUT.log]

NAME is a BROAD trial (e.g. 07_undisturbed_fast_rotation_B) read from .build-broad/raw/ (see
scripts/broad/README.md), or a path to its .hdf5/.mat file. Writes OUT.log (default
.build-broad/logs/NAME.d{N}.log) and, beside it, OUT.truth.

The log: `# key = value` header lines (latitude, longitude, time, source, device, ...), then
`TIME KIND X Y Z` lines in time order, at every kept IMU instant `accel`, `gyro`, `magn` with the
same TIME: accel in m/s² (the reaction to gravity, +9.8 on z lying flat), gyro in rad/s
(right-handed), magn in µT. TIME = BROAD's sample index / 285.714 Hz, seconds, printed %.6f
(the sample period is 3.5 ms, so no two instants share a TIME).

Device frame. BROAD's IMU (myon aktos-t) reports in one right-handed frame for all three sensors
(at rest lying flat its accelerometer reads ≈ (0, 0, +9.8) m/s²). That frame is used unchanged as
qiblad's device frame (x "right edge", y "top edge", z "out of the screen"): the samples and the
optical quaternion are written as BROAD gives them; no axis is swapped or negated.

The truth: `TIME QW QX QY QZ MOVING` per kept instant: BROAD's `opt_quat` (device→ENU, magnetic
north as aligned by BROAD's authors; `nan` where the optical system lost the body) and MOVING 1/0
from BROAD's `movement` mask (the motion phases its errors are computed over).

--decimate N keeps samples 0, N, 2N, … (the daemon's rate with a gyroscope is every 6th, ≈ 48 Hz).
--start/--duration cut the trial (seconds from its first sample) for the test fixtures.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import broadlib as bl  # noqa: E402

DEVICE = ("myon aktos-t IMU (BROAD; accelerometer, gyroscope, magnetometer in one right-handed "
          "frame, used as the device frame unchanged)")


def convert(name: str, decimate: int, out: Path, start: float | None = None,
            duration: float | None = None, raw_dir: Path = bl.RAW_DIR) -> tuple[Path, Path]:
    """Writes OUT (.log) and OUT with suffix .truth; returns both paths."""
    if decimate < 1:
        raise ValueError("--decimate must be ≥ 1")
    d = bl.load_trial(name, raw_dir)
    fs = d["sampling_rate"]
    n = len(d["movement"])
    idx = np.arange(0, n, decimate)
    t = idx / fs
    if start is not None:
        idx = idx[t >= start]; t = idx / fs
    if duration is not None:
        t0 = start if start is not None else 0.0
        idx = idx[t < t0 + duration]; t = idx / fs
    if len(idx) == 0:
        raise ValueError("the cut leaves no samples")
    times = [f"{x:.6f}" for x in t]
    if len(set(times)) != len(times):
        raise ValueError("two instants would share a TIME")
    acc, gyr, mag = d["imu_acc"][idx], d["imu_gyr"][idx], d["imu_mag"][idx]
    q, moving = d["opt_quat"][idx], d["movement"][idx]
    for label, a in (("accel", acc), ("gyro", gyr), ("magn", mag)):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"trial {name}: non-finite {label} samples")

    out.parent.mkdir(parents=True, exist_ok=True)
    changes = [f"every {decimate}th sample kept" if decimate > 1 else "every sample kept"]
    if start is not None or duration is not None:
        changes.append(f"cut to {t[0]:.3f}–{t[-1]:.3f} s of the trial")
    changes.append("converted to qiblad's sensor log")
    with open(out, "w") as f:
        f.write(f"# latitude = {bl.BERLIN_LATITUDE}\n")
        f.write(f"# longitude = {bl.BERLIN_LONGITUDE}\n")
        f.write(f"# time = {bl.RECORDING_TIME}\n")
        f.write(f"# source = BROAD trial {name}, Laidig et al. 2021, CC BY 4.0\n")
        f.write("# reference = D. Laidig, M. Caruso, A. Cereatti, T. Seel, BROAD - A Benchmark for Robust "
                "Inertial Orientation Estimation, Data 6(7):72, 2021, doi:10.3390/data6070072\n")
        f.write(f"# changes = {'; '.join(changes)}\n")
        f.write(f"# device = {DEVICE}\n")
        f.write(f"# rate = {fs / decimate:.4f} Hz\n")
        # The IMU's own output rate: every sample kept is one of them (qiblad's sigma reads it).
        f.write(f"# gyroscope_rate = {fs:.4f} Hz\n")
        f.write("# note = the recording date is not stated by BROAD; time is a stand-in\n")
        lines = []
        for i, ts in enumerate(times):
            a, g, m = acc[i], gyr[i], mag[i]
            lines.append(f"{ts} accel {a[0]:.6f} {a[1]:.6f} {a[2]:.6f}\n"
                         f"{ts} gyro {g[0]:.7f} {g[1]:.7f} {g[2]:.7f}\n"
                         f"{ts} magn {m[0]:.5f} {m[1]:.5f} {m[2]:.5f}\n")
        f.write("".join(lines))
    truth = out.with_suffix(".truth")
    with open(truth, "w") as f:
        f.write(f"# BROAD trial {name} optical truth (Laidig et al. 2021, CC BY 4.0): "
                "TIME QW QX QY QZ MOVING; Q device->ENU (magnetic north), nan where invalid\n")
        rows = []
        for i, ts in enumerate(times):
            qq = q[i]
            qs = " ".join("nan" if not np.isfinite(v) else f"{v:.8f}" for v in qq)
            rows.append(f"{ts} {qs} {int(moving[i])}\n")
        f.write("".join(rows))
    return out, truth


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trial", help="BROAD trial name or path to its .hdf5/.mat")
    ap.add_argument("--decimate", type=int, default=1, help="keep every Nth sample (default 1)")
    ap.add_argument("--start", type=float, help="first second of the trial to keep")
    ap.add_argument("--duration", type=float, help="seconds to keep")
    ap.add_argument("-o", "--output", type=Path, help="output .log path")
    args = ap.parse_args()
    p = Path(args.trial)
    raw_dir, name = (p.parent, p.stem) if p.suffix in (".hdf5", ".mat") else (bl.RAW_DIR, args.trial)
    out = args.output or bl.CACHE_DIR / "logs" / f"{name}.d{args.decimate}.log"
    log, truth = convert(name, args.decimate, out, args.start, args.duration, raw_dir)
    print(log)
    print(truth)


if __name__ == "__main__":
    main()
