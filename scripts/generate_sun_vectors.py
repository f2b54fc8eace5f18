#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generate solar-position test vectors for QiblaCore's `SolarPositionAlgorithm` (NREL SPA).

Reference implementation: pvlib's `spa_python` (the NREL SPA of Reda & Andreas 2004/2008 in
numpy), pinned:

    pip install 'pvlib==0.16.1' 'numpy==2.4.6'
    python3 scripts/generate_sun_vectors.py

Writes Tests/QiblaCoreTests/Vectors/sun-spa-pvlib.csv (committed; the Swift tests need no Python).
Rows are deterministic (seeded PRNG): 1200 random instants from 1990 to 2060 (whole seconds, UTC)
at random places over the whole globe (so both hemispheres, polar day and polar night), heights
from -100 m to 5000 m, and an atmosphere of random pressure (500-1050 mbar) and temperature
(-40 to 45 C); one row in four has pressure 0 (refraction off). 200 of the places are polar
(|latitude| > 66.6).

Delta T (TT - UT) is passed to pvlib explicitly and written to the file, so both sides use the same
value: it is Espenak & Meeus's polynomial (pvlib.spa.calculate_deltat, evaluated at the month's
middle as they publish it). The Swift test passes this column to its SPA and checks its own Delta T
model against it separately.

Columns: unix_s,lat,lon,height_m,pressure_mbar,temp_c,delta_t_s,azimuth,apparent_elevation,elevation
  azimuth degrees clockwise from north in [0, 360); apparent_elevation with refraction (pvlib's
  apparent_elevation, atmos_refract 0.5667); elevation is the geometric elevation (no refraction).
  Values written with repr() so they round-trip exactly.
"""
import math
import os
import random
import sys

import numpy as np
import pandas as pd
import pvlib
from pvlib import solarposition, spa

assert pvlib.__version__ == "0.16.1", pvlib.__version__
assert np.__version__ == "2.4.6", np.__version__

SEED = 20260315
COUNT = 1200
POLAR = 200
START = pd.Timestamp("1990-01-01T00:00:00Z").value // 10**9
END = pd.Timestamp("2060-12-31T23:59:59Z").value // 10**9

rng = random.Random(SEED)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "QiblaCoreTests", "Vectors",
                   "sun-spa-pvlib.csv")


def row(unix_s, lat, lon, height, pressure, temp):
    t = pd.DatetimeIndex([pd.Timestamp(unix_s, unit="s", tz="UTC")])
    delta_t = float(spa.calculate_deltat(t.year[0], t.month[0]))
    # spa_python takes the pressure in pascals.
    result = solarposition.spa_python(t, lat, lon, altitude=height, pressure=pressure * 100.0, temperature=temp,
                                      delta_t=delta_t, atmos_refract=0.5667, how="numpy")
    r = result.iloc[0]
    return [unix_s, lat, lon, height, pressure, temp, delta_t,
            float(r["azimuth"]), float(r["apparent_elevation"]), float(r["elevation"])]


def main():
    rows = []
    for i in range(COUNT):
        unix_s = rng.randint(START, END)
        if i < POLAR:
            lat = rng.uniform(66.6, 90.0) * rng.choice([-1, 1])
        else:
            # uniform over the sphere
            lat = math.degrees(math.asin(rng.uniform(-1.0, 1.0)))
        lon = rng.uniform(-180.0, 180.0)
        height = rng.uniform(-100.0, 5000.0)
        pressure = 0.0 if rng.random() < 0.25 else rng.uniform(500.0, 1050.0)
        temp = rng.uniform(-40.0, 45.0)
        rows.append(row(unix_s, lat, lon, height, pressure, temp))
    with open(OUT, "w") as f:
        f.write("unix_s,lat,lon,height_m,pressure_mbar,temp_c,delta_t_s,azimuth,apparent_elevation,elevation\n")
        for r in rows:
            f.write(",".join(repr(v) for v in r) + "\n")
    print(f"wrote {len(rows)} rows to {os.path.normpath(OUT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
