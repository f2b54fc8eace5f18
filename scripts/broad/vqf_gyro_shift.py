#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""VQF on a BROAD log with its gyroscope shifted by whole samples: how much a one-sample lag of the
gyroscope costs the best open filter (issue 36).

    .build-broad/venv/bin/python scripts/broad/vqf_gyro_shift.py NAME [NAME…]

NAME is a trial as converted by benchmark.py (`.build-broad/logs/NAME.d6.log` and `.truth`). Prints
BROAD's heading and inclination RMSE over the motion phases for shifts −1, 0 and +1 (+1: each
gyroscope sample used one instant late)."""
import sys

import numpy as np
import vqf

import broadlib as bl


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    for name in sys.argv[1:]:
        t, acc, gyr, mag, truth, moving = bl.read_converted(name)
        ts = float(np.median(np.diff(t)))
        for shift in (-1, 0, 1):
            g = np.ascontiguousarray(np.roll(gyr, shift, axis=0))
            q = vqf.VQF(ts).updateBatch(g, np.ascontiguousarray(acc), np.ascontiguousarray(mag))["quat9D"]
            m = moving & bl.is_finite_rows(truth)
            h, i = bl.broad_errors(bl.error_quaternion(q[m], truth[m]))
            print(f"{name} gyroscope shift {shift:+d}: heading {np.degrees(np.sqrt(np.mean(h ** 2))):.2f}°, "
                  f"inclination {np.degrees(np.sqrt(np.mean(i ** 2))):.2f}°")
    return 0


if __name__ == "__main__":
    sys.exit(main())
