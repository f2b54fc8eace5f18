#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs VQF — the peer qiblad is measured against, never part of qiblad — on a sensor log.

    scripts/broad/vqf_run.py LOG [-o OUT] [--offline]

VQF: D. Laidig, T. Seel, "VQF: Highly accurate IMU orientation estimation with bias estimation and
magnetic disturbance rejection", Information Fusion 91:187–204, 2023, doi:10.1016/j.inffus.2022.10.014;
the `vqf` package 2.1.2 (pinned in requirements.txt). Default parameters (the paper's).

The log itself is parsed (broadlib.read_log), so VQF sees exactly the samples `qibla-sim replay
--offline LOG` sees. By default the causal, real-time `vqf.VQF` class runs (the daemon's
situation); `--offline` runs `vqf.offlineVQF` (acausal, for reference only). The sample period is
the median step of the log's TIME column.

Output (default: LOG with suffix .vqf.out, or .vqf-offline.out), replay's format:
`TIME MAGNETIC_HEADING TRUE_HEADING HEADING_ERROR FUSED QW QX QY QZ` for every instant, Q = VQF's
9D quaternion (device→ENU, north = the magnetometer's north), MAGNETIC_HEADING = the heading from Q
of the axis qiblad would publish (broadlib.published_heading_deg: the top edge +y, or the back
camera −z when tilted, by qiblad's HeadingAxisSelector on VQF's tilt), TRUE_HEADING/HEADING_ERROR/
FUSED nan (VQF gives no uncertainty).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import broadlib as bl  # noqa: E402


def vqf_version() -> str:
    from importlib.metadata import version
    return version("vqf")


def run_vqf(log: Path, out: Path, offline: bool = False) -> Path:
    import vqf
    _, t, acc, gyr, mag = bl.read_log(log)
    ts = float(np.median(np.diff(t)))
    gyr, acc, mag = (np.ascontiguousarray(a, dtype=float) for a in (gyr, acc, mag))
    if offline:
        quat = vqf.offlineVQF(gyr, acc, mag, ts)["quat9D"]
        which = "vqf.offlineVQF"
    else:
        quat = vqf.VQF(ts).updateBatch(gyr, acc, mag)["quat9D"]
        which = "vqf.VQF (online)"
    heading = bl.published_heading_deg(quat)
    bl.write_estimate(out, t, heading, quat,
                      comment=f"{which} {vqf_version()}, default parameters, Ts = {ts:.6f} s, on {log.name}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", type=Path)
    ap.add_argument("-o", "--output", type=Path)
    ap.add_argument("--offline", action="store_true", help="run vqf.offlineVQF (acausal)")
    args = ap.parse_args()
    out = args.output or args.log.with_suffix(".vqf-offline.out" if args.offline else ".vqf.out")
    print(run_vqf(args.log, out, args.offline))


if __name__ == "__main__":
    main()
