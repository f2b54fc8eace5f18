#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generate independent reference vectors for the QiblaCore tilt-compensated compass.

Output: Tests/QiblaCoreTests/Vectors/heading-orientations.csv (committed; tests need no Python).

Setup (pinned):
    python3 -m venv /tmp/heading-venv
    /tmp/heading-venv/bin/pip install 'ahrs==0.4.0' 'numpy==2.2.6'
    /tmp/heading-venv/bin/python scripts/generate_heading_vectors.py

Method. Each row starts from a known orientation, a rotation matrix R whose columns are the
device axes expressed in the local magnetic East-North-Up frame (so v_world = R @ v_device). R is
built with the `ahrs` package (ahrs.Quaternion(...).to_DCM()) from seeded random quaternions:
  * rows 0..1999: orientations uniform on SO(3) (normalised 4-D Gaussian quaternions);
  * rows 2000..3999: "hand-held" orientations: heading about the vertical, uniform in [0, 360),
    then a tilt uniform in [0, 100] degrees about a random horizontal device axis.
The world vectors are
  * reaction to gravity   a_world = g * (0, 0, 1), g uniform in [0.8, 1.2] * 9.80665 m/s^2,
  * geomagnetic field     m_world = F * (0, cos I, -sin I), F uniform in [20, 70] uT, inclination
                          I uniform in [-80, 80] degrees (positive down),
and the device-frame readings are a = R.T @ a_world, m = R.T @ m_world (Android / IIO frame:
x right edge, y top edge, z out of the screen).

The expected values come from R directly, NOT from the cross-product formula being tested:
  * top-edge heading   = atan2(E, N) of R @ (0, 1, 0)  (written only when tilt < 50 degrees),
  * back-camera heading = atan2(E, N) of R @ (0, 0, -1) (written only when 30 < tilt < 150),
  * tilt = angle between device +z and up, pitch = asin(R[2,1]), roll = atan2(R[2,0], R[2,2]).
As a cross-check, ahrs.common.orientation.ecompass(a, m, frame='ENU') (ahrs' own implementation
of the accelerometer+magnetometer solution) must reproduce the headings to 1e-9 degrees.

Numbers are written with repr(), which round-trips doubles exactly.
"""

import math
import os
import sys

import ahrs
import numpy as np
from ahrs.common.orientation import ecompass

assert ahrs.__version__ == "0.4.0", ahrs.__version__
assert np.__version__.startswith("2."), np.__version__

SEED = 20251122
ROWS_UNIFORM = 2000
ROWS_HANDHELD = 2000
G0 = 9.80665

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                   "Tests", "QiblaCoreTests", "Vectors", "heading-orientations.csv")


def dcm(q):
    r = np.asarray(ahrs.Quaternion(np.asarray(q, dtype=float)).to_DCM(), dtype=float)
    assert np.allclose(r @ r.T, np.eye(3), atol=1e-12) and abs(np.linalg.det(r) - 1) < 1e-12
    return r


def axis_angle_quaternion(axis, angle):
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    return np.concatenate(([math.cos(angle / 2)], math.sin(angle / 2) * axis))


def heading_of(v):
    """Heading (degrees clockwise from north, [0, 360)) of a world ENU vector."""
    h = math.degrees(math.atan2(v[0], v[1])) % 360.0
    return 0.0 if h >= 360.0 else h


def angle_diff(a, b):
    return abs((a - b + 180.0) % 360.0 - 180.0)


def main():
    rng = np.random.default_rng(SEED)
    rows = []
    for i in range(ROWS_UNIFORM + ROWS_HANDHELD):
        if i < ROWS_UNIFORM:
            q = rng.normal(size=4)
            q /= np.linalg.norm(q)
            kind = "uniform"
            r = dcm(q)
        else:
            heading = rng.uniform(0.0, 2 * math.pi)
            tilt = math.radians(rng.uniform(0.0, 100.0))
            phi = rng.uniform(0.0, 2 * math.pi)
            # Yaw: rotation about world up by -heading (clockwise seen from above).
            r_yaw = dcm(axis_angle_quaternion([0, 0, 1], -heading))
            # Tilt about a horizontal device axis.
            r_tilt = dcm(axis_angle_quaternion([math.cos(phi), math.sin(phi), 0], tilt))
            r = r_yaw @ r_tilt
            kind = "handheld"

        g = G0 * rng.uniform(0.8, 1.2)
        field = rng.uniform(20.0, 70.0)
        incl = rng.uniform(-80.0, 80.0)
        a_world = np.array([0.0, 0.0, g])
        m_world = field * np.array([0.0, math.cos(math.radians(incl)), -math.sin(math.radians(incl))])
        a_dev = r.T @ a_world
        m_dev = r.T @ m_world

        top_world = r @ np.array([0.0, 1.0, 0.0])
        back_world = r @ np.array([0.0, 0.0, -1.0])
        tilt_deg = math.degrees(math.atan2(math.hypot(r[0, 2], r[1, 2]), r[2, 2]))
        pitch_deg = math.degrees(math.asin(max(-1.0, min(1.0, r[2, 1]))))
        roll_deg = math.degrees(math.atan2(r[2, 0], r[2, 2]))
        top = heading_of(top_world) if tilt_deg < 50.0 else None
        back = heading_of(back_world) if 30.0 < tilt_deg < 150.0 else None

        # Cross-check with ahrs' e-compass (rows of its matrix: E, N, U in device coordinates).
        re = np.asarray(ecompass(a_dev.copy(), m_dev.copy(), frame="ENU", representation="rotmat"))
        if top is not None:
            check = heading_of([re[0, 1], re[1, 1]])
            assert angle_diff(check, top) < 1e-9, (i, check, top)
        if back is not None:
            check = heading_of([-re[0, 2], -re[1, 2]])
            assert angle_diff(check, back) < 1e-9, (i, check, back)

        rows.append([kind, g, field, incl, *a_dev, *m_dev, tilt_deg, pitch_deg, roll_deg, top, back])

    header = ("kind,gravity_ms2,field_ut,inclination_deg,ax,ay,az,mx,my,mz,"
              "tilt_deg,pitch_deg,roll_deg,top_heading_deg,back_heading_deg")
    with open(OUT, "w", encoding="utf-8", newline="\n") as f:
        f.write(f"# generated by scripts/generate_heading_vectors.py (ahrs {ahrs.__version__}, "
                f"numpy {np.__version__}, seed {SEED}); do not edit\n")
        f.write(header + "\n")
        for row in rows:
            f.write(",".join("" if v is None else (v if isinstance(v, str) else repr(float(v)))
                             for v in row) + "\n")
    tops = sum(1 for r in rows if r[-2] is not None)
    backs = sum(1 for r in rows if r[-1] is not None)
    print(f"wrote {len(rows)} rows ({tops} top-edge headings, {backs} back-camera headings) to {OUT}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
