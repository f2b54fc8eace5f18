#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How BROAD's three sensors line up in time with its optical truth, at the rate the daemon reads
(issue 36): for each instant shift of a sensor against the truth, how well it agrees.

    .build-broad/venv/bin/python scripts/broad/sensor_alignment.py NAME [NAME…]
    .build-broad/venv/bin/python scripts/broad/sensor_alignment.py --ideal-log OUT NAME


NAME is a trial as converted by benchmark.py (`.build-broad/logs/NAME.d6.log` and `.truth`). Over
the motion phases, per shift s (the sample of instant i + s set beside the truth of instant i):

- gyroscope: RMS of the sample minus the optical rate over the period that ends at its instant;
- accelerometer: RMS angle between the sample and the optical vertical (the hand's acceleration
  adds to every shift alike; the smallest is where they line up);
- magnetometer: the field turned into the earth frame by the optical attitude; its azimuth's mean
  and RMS deviation from the first rest's, and its dip's spread (a field sample that lags shows the
  turn since as an azimuth error);
- VQF (`vqf` from PyPI) given the magnetometer shifted by s: BROAD's heading and inclination RMSE.

With `--ideal-log OUT` it writes NAME's log with ideal inputs instead, for `qibla-sim replay
--offline OUT`: the accelerometer replaced by the optical vertical (9.81 m/s² along it, no hand
acceleration), the magnetometer's samples one instant earlier (the one that lines up), the gyroscope
as recorded. What a filter still gets wrong on it is its own.

What it found is in BENCHMARKS.md, "Real recordings"."""
import sys

import numpy as np
import vqf

import broadlib as bl


def shifted(a: np.ndarray, s: int) -> np.ndarray:
    """a[i + s] at row i, the ends repeated."""
    return a[np.clip(np.arange(len(a)) + s, 0, len(a) - 1)]


def write_ideal_log(name: str, out: str) -> int:
    header = [line.rstrip("\n") for line in open(bl.CACHE_DIR / "logs" / f"{name}.d6.log") if line.startswith("#")]
    t, acc, gyr, mag, truth, _ = bl.read_converted(name)
    valid = bl.is_finite_rows(truth)
    r = bl.rotation_matrices(np.where(valid[:, None], truth, [1.0, 0, 0, 0]))
    gravity = np.where(valid[:, None], np.einsum("nji,j->ni", r, np.array([0.0, 0.0, 9.81])), acc)
    field = shifted(mag, 1)
    lines = header + ["# ideal = accel is the optical vertical, magn one instant earlier (scripts/broad/sensor_alignment.py)"]
    for i, time in enumerate(t):
        a, g, m = gravity[i], gyr[i], field[i]
        lines += [f"{time:.6f} accel {a[0]:.6f} {a[1]:.6f} {a[2]:.6f}", f"{time:.6f} gyro {g[0]:.7f} {g[1]:.7f} {g[2]:.7f}",
                  f"{time:.6f} magn {m[0]:.4f} {m[1]:.4f} {m[2]:.4f}"]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--ideal-log":
        return write_ideal_log(sys.argv[3], sys.argv[2])
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    for name in sys.argv[1:]:
        t, acc, gyr, mag, truth, moving = bl.read_converted(name)
        if len(truth) != len(t):
            print(f"{name}: the truth's instants differ from the log's", file=sys.stderr)
            return 1
        valid = bl.is_finite_rows(truth)
        motion = moving & valid
        rest = ~moving & valid
        r = np.where(valid[:, None, None], bl.rotation_matrices(np.where(valid[:, None], truth, [1.0, 0, 0, 0])), np.nan)
        # The optical rate over the period ending at instant i (device frame): q(i−1)⁻¹ ⊗ q(i).
        dq = bl.quat_mult(bl.quat_conj(shifted(truth, -1)), truth)
        angle = 2 * np.arctan2(np.linalg.norm(dq[:, 1:], axis=1), dq[:, 0])
        dt = np.maximum(t - shifted(t, -1), 1e-9)
        rate = dq[:, 1:] / np.maximum(np.linalg.norm(dq[:, 1:], axis=1), 1e-12)[:, None] * (angle / dt)[:, None]
        rate_ok = motion & shifted(valid, -1)
        up_device = np.einsum("nji,j->ni", r, np.array([0.0, 0.0, 1.0]))
        print(f"{name}: optical rate RMS {np.degrees(np.sqrt(np.mean(np.sum(rate[rate_ok] ** 2, 1)))):.0f}°/s over the motion")
        for s in (-1, 0, 1):
            g = shifted(gyr, s)
            gyro_rms = np.degrees(np.sqrt(np.mean(np.sum((g[rate_ok] - rate[rate_ok]) ** 2, 1))))
            a = shifted(acc, s)
            cosine = np.sum(a * up_device, 1) / np.linalg.norm(a, axis=1)
            accel_rms = np.degrees(np.sqrt(np.mean(np.arccos(np.clip(cosine[motion], -1, 1)) ** 2)))
            m_earth = np.einsum("nij,nj->ni", r, shifted(mag, s))
            azimuth = np.degrees(np.arctan2(m_earth[:, 0], m_earth[:, 1]))
            dip = np.degrees(np.arctan2(-m_earth[:, 2], np.hypot(m_earth[:, 0], m_earth[:, 1])))
            reference = np.degrees(np.angle(np.mean(np.exp(1j * np.radians(azimuth[rest])))))
            deviation = bl.wrap180(azimuth - reference)
            m = np.ascontiguousarray(shifted(mag, s))
            q = vqf.VQF(float(np.median(np.diff(t)))).updateBatch(np.ascontiguousarray(gyr), np.ascontiguousarray(acc), m)["quat9D"]
            h, i = bl.broad_errors(bl.error_quaternion(q[motion], truth[motion]))
            print(f"  shift {s:+d}: gyroscope {gyro_rms:6.1f}°/s | accelerometer {accel_rms:5.2f}° | field azimuth "
                  f"mean {np.mean(deviation[motion]):+6.2f}° RMS {np.sqrt(np.mean(deviation[motion] ** 2)):5.2f}°, dip ±"
                  f"{np.std(dip[motion]):4.1f}° | VQF with this magnetometer: heading {np.degrees(np.sqrt(np.mean(h ** 2))):.2f}°, "
                  f"inclination {np.degrees(np.sqrt(np.mean(i ** 2))):.2f}°")
    return 0


if __name__ == "__main__":
    sys.exit(main())
