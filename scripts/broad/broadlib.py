# SPDX-License-Identifier: Apache-2.0
"""Shared pieces of the BROAD scripts: reading BROAD's trials, reading and writing qiblad's sensor
log (issue 36), the `.truth` files and estimator outputs, and the quaternion maths of BROAD's error
metrics.

BROAD: D. Laidig, M. Caruso, A. Cereatti, T. Seel, "BROAD — A Benchmark for Robust Inertial
Orientation Estimation", Data 6(7):72, 2021, doi:10.3390/data6070072; data CC BY 4.0
(repository dlaidig/broad). The error metrics below reimplement `example_code/broad_utils.py`
of that repository (calculateErrorQuatEarth, calculateHeadingError, calculateInclinationError,
calculateRMSE; MIT OR CC-BY-4.0).

Quaternions are (w, x, y, z), Hamilton product, and rotate device-frame vectors into the earth
frame: v_earth = q ⊗ v_device ⊗ q*. The earth frame is East-North-Up with north = magnetic north
(BROAD's `opt_quat` is "wrt. ENU reference frame", aligned by the dataset's authors; VQF's 9D
quaternion is ENU with magnetic north; qiblad's replay prints device→ENU with magnetic north).
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
from pathlib import Path

import numpy as np

SCRIPT_DIR = Path(__file__).resolve().parent
REPO_ROOT = SCRIPT_DIR.parent.parent
#: Where raw trials, converted logs and estimator outputs are cached (git-ignored: `.build-*/`).
CACHE_DIR = REPO_ROOT / ".build-broad"
#: BROAD's data files (data_hdf5/*.hdf5 or data_mat/*.mat, and trials.json); $BROAD_RAW overrides.
RAW_DIR = Path(os.environ.get("BROAD_RAW", CACHE_DIR / "raw"))

#: BROAD was recorded at TU Berlin (Control Systems Group); the repository gives no date.
BERLIN_LATITUDE = 52.512
BERLIN_LONGITUDE = 13.327
#: The repository states no recording date (its .mat files were written in May 2021); the brief's
#: stand-in date.
RECORDING_TIME = "2020-06-01T12:00:00Z"


# --------------------------------------------------------------------------------------------
# BROAD trials
# --------------------------------------------------------------------------------------------

def load_trial_info(raw_dir: Path = RAW_DIR) -> dict:
    """BROAD's `trials.json` (trial names, descriptions and groups)."""
    with open(raw_dir / "trials.json") as f:
        return json.load(f)


def available_trials(raw_dir: Path = RAW_DIR) -> list[str]:
    """Names of the trials present as HDF5 or .mat (the public repository lacks some blobs)."""
    names = set()
    for p in raw_dir.iterdir():
        if p.suffix in (".hdf5", ".mat"):
            names.add(p.stem)
    return sorted(names)


def load_trial(name: str, raw_dir: Path = RAW_DIR) -> dict:
    """One BROAD trial: imu_acc (m/s²), imu_gyr (rad/s), imu_mag (µT), opt_quat (ENU, NaN where
    the optical system lost the body), movement (bool), sampling_rate (Hz). HDF5 is read when
    present, else the .mat file (BROAD's README: the two hold identical data)."""
    h5 = raw_dir / f"{name}.hdf5"
    if h5.exists():
        import h5py
        with h5py.File(h5, "r") as f:
            d = {k: np.asarray(f[k][()]) for k in ("imu_acc", "imu_gyr", "imu_mag", "opt_quat", "movement")}
            d["sampling_rate"] = float(f.attrs["sampling_rate"])
    else:
        import scipy.io as spio
        m = spio.loadmat(raw_dir / f"{name}.mat")
        d = {k: np.asarray(m[k]) for k in ("imu_acc", "imu_gyr", "imu_mag", "opt_quat")}
        d["movement"] = np.asarray(m["movement"]).squeeze()
        d["sampling_rate"] = float(np.asarray(m["sampling_rate"]).item())
    d["movement"] = d["movement"].astype(bool).reshape(-1)
    return d


# --------------------------------------------------------------------------------------------
# qiblad's sensor log (issue 36) and the .truth file
# --------------------------------------------------------------------------------------------

def time_key(t: float) -> int:
    """Instants are matched on whole microseconds (the logs print TIME with %.6f)."""
    return int(round(t * 1e6))


def read_log(path: Path) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Reads a sensor log: (header dict, times, acc, gyr, mag), one row per instant that has all
    three kinds. Raises ValueError for instants missing a kind (the scripts' logs never do)."""
    header: dict[str, str] = {}
    rows: dict[int, dict] = {}
    order: list[int] = []
    times: dict[int, float] = {}
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            if line.startswith("#"):
                body = line[1:].strip()
                if "=" in body:
                    k, v = body.split("=", 1)
                    header[k.strip()] = v.strip()
                continue
            parts = line.split()
            if len(parts) != 5:
                raise ValueError(f"{path}:{lineno}: expected 'TIME KIND X Y Z'")
            t = float(parts[0])
            key = time_key(t)
            if key not in rows:
                rows[key] = {}
                order.append(key)
                times[key] = t
            rows[key][parts[1]] = [float(parts[2]), float(parts[3]), float(parts[4])]
    n = len(order)
    acc = np.empty((n, 3)); gyr = np.empty((n, 3)); mag = np.empty((n, 3)); ts = np.empty(n)
    for i, key in enumerate(order):
        r = rows[key]
        missing = {"accel", "gyro", "magn"} - set(r)
        if missing:
            raise ValueError(f"{path}: instant {times[key]:.6f} lacks {sorted(missing)}")
        ts[i] = times[key]; acc[i] = r["accel"]; gyr[i] = r["gyro"]; mag[i] = r["magn"]
    return header, ts, acc, gyr, mag


def read_converted(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The trial NAME as benchmark.py converted it at every 6th sample (`.build-broad/logs/NAME.d6.log`
    and `.truth`): (times, acc, gyr, mag, truth quaternions, moving)."""
    base = CACHE_DIR / "logs" / f"{name}.d6"
    _, t, acc, gyr, mag = read_log(base.with_suffix(".d6.log"))
    _, truth, moving = read_truth(base.with_suffix(".d6.truth"))
    return t, acc, gyr, mag, truth, moving


def read_truth(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Reads `NAME.truth`: (times, quaternions device→ENU (NaN where invalid), moving bool)."""
    a = np.loadtxt(path, comments="#", ndmin=2)
    return a[:, 0], a[:, 1:5], a[:, 5].astype(bool)


def read_estimate(path: Path) -> dict[str, np.ndarray]:
    """Reads an estimator's output, `TIME MAGNETIC_HEADING TRUE_HEADING HEADING_ERROR FUSED QW QX
    QY QZ` (qiblad's `qibla-sim replay --offline`), `nan` where unknown; '#' lines are comments.
    FUSED may be 0/1, true/false or nan."""
    cols: list[list[float]] = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            p = s.split()
            if len(p) != 9:
                raise ValueError(f"{path}:{lineno}: expected 9 columns, got {len(p)}")
            fused = {"true": 1.0, "false": 0.0}.get(p[4].lower())
            row = [float(x) for x in p[:4]] + [fused if fused is not None else float(p[4])] + [float(x) for x in p[5:]]
            cols.append(row)
    a = np.array(cols, dtype=float).reshape(-1, 9)
    return dict(time=a[:, 0], magnetic_heading=a[:, 1], true_heading=a[:, 2], heading_error=a[:, 3],
                fused=a[:, 4], quat=a[:, 5:9])


def write_estimate(path: Path, times: np.ndarray, magnetic_heading: np.ndarray, quat: np.ndarray,
                   comment: str = "") -> None:
    """Writes an estimator output in replay's format (TRUE_HEADING, HEADING_ERROR, FUSED nan)."""
    with open(path, "w") as f:
        if comment:
            for c in comment.splitlines():
                f.write(f"# {c}\n")
        for t, h, q in zip(times, magnetic_heading, quat):
            f.write(f"{t:.6f} {h:.4f} nan nan nan {q[0]:.8f} {q[1]:.8f} {q[2]:.8f} {q[3]:.8f}\n")


# --------------------------------------------------------------------------------------------
# Quaternion maths
# --------------------------------------------------------------------------------------------

def quat_mult(q1: np.ndarray, q2: np.ndarray) -> np.ndarray:
    """Row-wise Hamilton product of (N, 4) arrays (broad_utils.quatmult)."""
    w1, x1, y1, z1 = q1[:, 0], q1[:, 1], q1[:, 2], q1[:, 3]
    w2, x2, y2, z2 = q2[:, 0], q2[:, 1], q2[:, 2], q2[:, 3]
    return np.stack([
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
    ], axis=1)


def quat_conj(q: np.ndarray) -> np.ndarray:
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def normalized(q: np.ndarray) -> np.ndarray:
    return q / np.linalg.norm(q, axis=1)[:, None]


def rotation_matrices(q: np.ndarray) -> np.ndarray:
    """The rotation matrix (N, 3, 3) of each quaternion of q (N, 4), device frame → earth frame."""
    w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=1),
    ], axis=1)


def rotate(q: np.ndarray, v) -> np.ndarray:
    """Rotates the device-frame vector v (3,) by each quaternion of q (N, 4): earth-frame (N, 3)."""
    return rotation_matrices(q) @ np.asarray(v, dtype=float)


def axis_heading_deg(q: np.ndarray, axis) -> tuple[np.ndarray, np.ndarray]:
    """Heading (degrees clockwise from north, [0, 360)) of a device axis and its elevation above
    the horizon (degrees), for each device→ENU quaternion."""
    v = rotate(normalized(q), axis)
    heading = np.degrees(np.arctan2(v[:, 0], v[:, 1])) % 360.0
    elevation = np.degrees(np.arcsin(np.clip(v[:, 2], -1.0, 1.0)))
    return heading, elevation


def tilt_deg(q: np.ndarray) -> np.ndarray:
    """Angle between the device's +z (out of the screen) and up, degrees (0 = lying screen up)."""
    v = rotate(normalized(q), (0.0, 0.0, 1.0))
    return np.degrees(np.arccos(np.clip(v[:, 2], -1.0, 1.0)))


#: Device axes a heading can refer to: the top edge and the back camera.
AXES = {"top": (0.0, 1.0, 0.0), "back": (0.0, 0.0, -1.0)}
#: HeadingAxisSelector's thresholds (QiblaCore/Heading/HeadingAxis.swift), folded tilt in degrees.
SWITCH_TO_BACK_ABOVE_DEG = 55.0
SWITCH_TO_TOP_BELOW_DEG = 45.0


def select_axes(tilt: np.ndarray) -> np.ndarray:
    """qiblad's HeadingAxisSelector (QiblaCore/Heading/HeadingAxis.swift) over a tilt series (degrees,
    `tilt_deg`): True where the back camera is used. Folded tilt f = min(t, 180 − t); from no mode,
    top when f ≤ 55°, else back; top switches to back above 55°, back to top below 45°; a
    non-finite tilt forgets the mode."""
    back = np.zeros(len(tilt), dtype=bool)
    mode = None
    for i, t in enumerate(tilt):
        if not math.isfinite(t):
            mode = None
            continue
        f = min(t, 180.0 - t)
        if mode is None:
            mode = "top" if f <= SWITCH_TO_BACK_ABOVE_DEG else "back"
        elif mode == "top" and f > SWITCH_TO_BACK_ABOVE_DEG:
            mode = "back"
        elif mode == "back" and f < SWITCH_TO_TOP_BELOW_DEG:
            mode = "top"
        back[i] = mode == "back"
    return back


def published_heading_deg(q: np.ndarray) -> np.ndarray:
    """The heading qiblad would publish for attitudes q: that of the axis `select_axes` picks."""
    back = select_axes(tilt_deg(q))
    return np.where(back, axis_heading_deg(q, AXES["back"])[0], axis_heading_deg(q, AXES["top"])[0])


def wrap180(a: np.ndarray) -> np.ndarray:
    return (a + 180.0) % 360.0 - 180.0


def error_quaternion(q_est: np.ndarray, q_true: np.ndarray) -> np.ndarray:
    """BROAD's error in the earth frame, q_est ⊗ q_true⁻¹ of the normalised inputs
    (broad_utils.calculateErrorQuatEarth)."""
    return normalized(quat_mult(normalized(q_est), quat_conj(normalized(q_true))))


def broad_errors(q_err: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """BROAD's heading and inclination errors (radians) of earth-frame error quaternions
    (broad_utils.calculateHeadingError, calculateInclinationError):
    heading 2·atan(|z/w|) in [0, π], inclination 2·acos(√(w² + z²)) in [0, π]."""
    with np.errstate(divide="ignore"):
        heading = 2 * np.arctan(np.abs(q_err[:, 3] / q_err[:, 0]))
    inclination = 2 * np.arccos(np.clip(np.sqrt(q_err[:, 0] ** 2 + q_err[:, 3] ** 2), 0, 1))
    return heading, inclination


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def nproc() -> int:
    return len(os.sched_getaffinity(0))


def is_finite_rows(a: np.ndarray) -> np.ndarray:
    return np.all(np.isfinite(a), axis=1)


def deg(x: float) -> str:
    return "—" if x is None or not math.isfinite(x) else f"{x:.2f}°"


def source_commit() -> str:
    """The repository's short HEAD, marked when the sources differ from it (the figures are then
    another tree's)."""
    try:
        commit = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        changed = subprocess.run(["git", "-C", str(REPO_ROOT), "status", "--porcelain", "--untracked-files=no",
                                  "--", "Sources", "Package.swift"], capture_output=True, text=True).stdout.strip()
        return commit + (" with uncommitted changes to the sources" if changed else "")
    except OSError:
        return "?"


def write_section(path: Path, text: str, begin: str, end: str) -> None:
    """Replaces the text between the markers `begin` and `end` in `path` (appends it when absent)."""
    doc = path.read_text() if path.exists() else ""
    block = f"{begin}\n{text}{end}\n"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end) + r"\n?", re.S)
    if pattern.search(doc):
        doc = pattern.sub(lambda _: block, doc)
    else:
        doc = doc.rstrip("\n") + "\n\n" + block
    path.write_text(doc)
