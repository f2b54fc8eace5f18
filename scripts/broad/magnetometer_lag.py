#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How far BROAD's magnetometer lags its gyroscope (issue 36), measured against the optical truth.

    .build-broad/venv/bin/python scripts/broad/magnetometer_lag.py [PATTERN]

For each converted trial (`.build-broad/logs/NAME.d6.log` and `.truth`, made by benchmark.py;
PATTERN a shell pattern on NAME, default the undisturbed ones) the magnetometer's samples are moved
in time by τ — a field fixed in the world turns in the device frame as dm/dt = m × ω, so
m(t) ≈ m(t − τ) + τ·(m × ω) — turned into the earth frame with the truth's attitude, and the spread
(standard deviation over the motion phases) of the field's dip and horizontal direction printed for
each τ. A field fixed in the world has no spread but the sensor's noise, its calibration's residual
and the truth's own error; the τ that minimises the spread is the magnetometer's lag behind the
gyroscope (the truth is aligned in time with the gyroscope by BROAD). The last column is the τ
with the smallest spread of the direction, found on a 1 ms grid."""
import fnmatch
import sys

import numpy as np

import broadlib as bl

GRID_MS = (-10, 0, 10, 15, 20, 30, 40)


def earth_frame(truth, moving):
    """The motion instants with a truth, and their device → ENU matrices."""
    ok = np.all(np.isfinite(truth), axis=1) & moving
    q = bl.normalized(truth[ok])
    return ok, np.stack([bl.rotate(q, e) for e in np.eye(3)], axis=2)


def spreads(gyr, mag, ok, r, lag):
    """Standard deviations (degrees) of the field's dip and direction with the magnetometer moved by `lag` s."""
    m = mag[ok] + lag * np.cross(mag[ok], gyr[ok])
    w = np.einsum("nij,nj->ni", r, m)
    dip = np.degrees(np.arctan2(-w[:, 2], np.hypot(w[:, 0], w[:, 1])))
    direction = np.degrees(np.arctan2(w[:, 0], w[:, 1]))
    direction = (direction - np.degrees(np.angle(np.mean(np.exp(1j * np.radians(direction))))) + 180) % 360 - 180
    return float(np.std(dip)), float(np.std(direction))


def main() -> int:
    pattern = sys.argv[1] if len(sys.argv) > 1 else "*undisturbed*"
    logs = sorted((bl.REPO_ROOT / ".build-broad" / "logs").glob("*.d6.log"))
    names = [p.name[: -len(".d6.log")] for p in logs if fnmatch.fnmatch(p.name[: -len(".d6.log")], pattern)]
    if not names:
        print(f"no converted trial matches {pattern!r}: run scripts/broad/benchmark.py first", file=sys.stderr)
        return 2
    print("| trial | " + " | ".join(f"{ms} ms" for ms in GRID_MS) + " | best |")
    print("|---|" + "---:|" * (len(GRID_MS) + 1))
    for name in names:
        base = bl.REPO_ROOT / ".build-broad" / "logs" / f"{name}.d6"
        _, _, _, gyr, mag = bl.read_log(base.with_suffix(".d6.log"))
        _, truth, moving = bl.read_truth(base.with_suffix(".d6.truth"))
        ok, r = earth_frame(truth, moving)
        cells = []
        for ms in GRID_MS:
            dip, direction = spreads(gyr, mag, ok, r, ms / 1000)
            cells.append(f"{dip:.1f}° / {direction:.1f}°")
        best = min(range(-20, 61), key=lambda ms: spreads(gyr, mag, ok, r, ms / 1000)[1])
        print(f"| {name} | " + " | ".join(cells) + f" | {best} ms |")
    print("\n(each cell: the spread of the field's dip / of its horizontal direction over the motion phases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
