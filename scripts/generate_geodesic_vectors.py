#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generate WGS84 geodesic inverse test vectors for QiblaCore's `Geodesic`.

Reference implementation: GeographicLib for Python, pinned:

    pip install 'geographiclib==2.1'
    python3 scripts/generate_geodesic_vectors.py

Writes Tests/QiblaCoreTests/Vectors/geodesic-wgs84.csv (committed; the Swift tests need no
Python).  The point pairs are deterministic (seeded PRNG) and cover: random global pairs, poles,
the antimeridian, equatorial pairs (including the non-equatorial geodesics between nearly
antipodal equatorial points), meridional pairs, short lines, pairs ending at the Kaaba (from near
and far), and nearly antipodal pairs.

Columns: lat1,lon1,lat2,lon2,azi1,azi2,s12,antipodal,case
  lat/lon degrees (longitudes in [-180, 180)), azi1/azi2 degrees clockwise from north as returned
  by GeographicLib (forward azimuths, in [-180, 180]), s12 metres; all written with repr() so
  they round-trip exactly.  `antipodal` is 1 when the pair lies in the nearly antipodal band
  defined below, where the azimuth of the shortest geodesic is not unique or is ill-conditioned;
  tests check only the distance on those rows.

Nearly antipodal band (Karney 2013, Sect. 5, eqs. (53)-(54): the cut locus of a point at reduced
latitude beta1 is, to first order in f, the segment of the parallel beta2 = -beta1 with
|lambda12 - pi| <= f*pi*cos(beta1)):
    a*|beta1 + beta2| <= BAND_M  and  a*cos(beta1)*(pi - |lambda12|) <= f*pi*a*cos(beta1)**2 + BAND_M
with beta1 the endpoint of larger |latitude| and BAND_M = 2000 m.
"""
import math
import os
import random
import sys

import geographiclib
from geographiclib.geodesic import Geodesic

assert geographiclib.__version__ == "2.1", geographiclib.__version__

G = Geodesic.WGS84
A = G.a
F = G.f
KAABA = (21.4225241, 39.8261818)
BAND_M = 2000.0
SEED = 20260122
COUNT_RANDOM = 1800

rng = random.Random(SEED)


def norm_lon(lon):
    lon = math.fmod(lon, 360.0)
    if lon < -180.0:
        lon += 360.0
    if lon >= 180.0:
        lon -= 360.0
    return lon


def clamp_lat(lat):
    return max(-90.0, min(90.0, lat))


def random_lat():
    return math.degrees(math.asin(2.0 * rng.random() - 1.0))


def random_lon():
    return norm_lon(360.0 * rng.random() - 180.0)


def reduced(lat):
    return math.atan2((1 - F) * math.sin(math.radians(lat)), math.cos(math.radians(lat)))


def in_antipodal_band(lat1, lon1, lat2, lon2):
    if abs(lat1) < abs(lat2):
        lat1, lat2 = lat2, lat1
    b1, b2 = reduced(lat1), reduced(lat2)
    lam = abs(math.radians(math.remainder(lon2 - lon1, 360.0)))
    cb1 = math.cos(b1)
    return (A * abs(b1 + b2) <= BAND_M
            and A * cb1 * (math.pi - lam) <= F * math.pi * A * cb1 * cb1 + BAND_M)


rows = []


def add(case, lat1, lon1, lat2, lon2):
    lat1, lat2 = clamp_lat(lat1), clamp_lat(lat2)
    lon1, lon2 = norm_lon(lon1), norm_lon(lon2)
    r = G.Inverse(lat1, lon1, lat2, lon2)
    mark = 1 if in_antipodal_band(lat1, lon1, lat2, lon2) else 0
    rows.append((lat1, lon1, lat2, lon2, r["azi1"], r["azi2"], r["s12"], mark, case))


# Random global pairs.
for _ in range(COUNT_RANDOM):
    add("random", random_lat(), random_lon(), random_lat(), random_lon())

# Poles (either end, both ends, pole to pole).
for _ in range(120):
    p = rng.choice([90.0, -90.0])
    if rng.random() < 0.5:
        add("pole", p, random_lon(), random_lat(), random_lon())
    else:
        add("pole", random_lat(), random_lon(), p, random_lon())
add("pole", 90.0, 0.0, -90.0, 0.0)
add("pole", 90.0, 10.0, 90.0, -170.0)
add("pole", -90.0, 45.0, 0.0, 45.0)
add("pole", 89.999999, 0.0, -89.999999, 180.0 - 1e-9)

# Antimeridian crossings and longitudes exactly at -180.
for _ in range(150):
    lat1, lat2 = random_lat(), random_lat()
    lon1 = 180.0 - 10.0 ** rng.uniform(-5, 1)
    lon2 = -180.0 + 10.0 ** rng.uniform(-5, 1)
    add("antimeridian", lat1, lon1, lat2, lon2)
for _ in range(20):
    add("antimeridian", random_lat(), -180.0, random_lat(), random_lon())

# Equatorial pairs, including lambda12 beyond (1 - f) * 180 (non-equatorial shortest path).
for _ in range(120):
    add("equatorial", 0.0, random_lon(), 0.0, random_lon())
for _ in range(40):
    lon1 = random_lon()
    add("equatorial", 0.0, lon1, 0.0, lon1 + 180.0 - rng.uniform(0.0, 1.5))
for _ in range(40):
    add("equatorial", rng.uniform(-1e-3, 1e-3), random_lon(), rng.uniform(-1e-3, 1e-3), random_lon())

# Meridional pairs (lambda12 = 0 or 180).
for _ in range(80):
    lon1 = random_lon()
    add("meridional", random_lat(), lon1, random_lat(), lon1 + rng.choice([0.0, 180.0]))

# Short lines, about 1 m to 100 km.  (Below ~0.1 m the azimuth of a pair of double-precision
# coordinates is itself uncertain at the 1e-6 degree level: sin/cos round-off of ~1e-16 against
# an angular separation of ~1e-8 rad.)
for _ in range(200):
    lat1, lon1 = random_lat(), random_lon()
    d = 10.0 ** rng.uniform(-5, 0)
    add("short", lat1, lon1, lat1 + d * rng.uniform(-1, 1), lon1 + d * rng.uniform(-1, 1))

# To the Kaaba, from near (about 1 m to 50 km) and from far.
for _ in range(300):
    d = 10.0 ** rng.uniform(-5, -0.3)
    ang = rng.uniform(0, 2 * math.pi)
    add("kaaba-near", KAABA[0] + d * math.sin(ang), KAABA[1] + d * math.cos(ang), KAABA[0], KAABA[1])
for _ in range(300):
    add("kaaba-far", random_lat(), random_lon(), KAABA[0], KAABA[1])

# Nearly antipodal pairs: offsets of up to ~2 degrees from the antipode, many inside the band.
for _ in range(300):
    lat1, lon1 = random_lat() * 0.99, random_lon()
    d = 10.0 ** rng.uniform(-6, 0.3)
    add("antipodal", lat1, lon1, -lat1 + d * rng.uniform(-1, 1), lon1 + 180.0 + d * rng.uniform(-1, 1))
for _ in range(200):
    d = 10.0 ** rng.uniform(-6, 0.3)
    add("kaaba-antipodal", -KAABA[0] + d * rng.uniform(-1, 1), KAABA[1] - 180.0 + d * rng.uniform(-1, 1),
        KAABA[0], KAABA[1])

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "QiblaCoreTests",
                   "Vectors", "geodesic-wgs84.csv")
with open(out, "w") as fh:
    fh.write("lat1,lon1,lat2,lon2,azi1,azi2,s12,antipodal,case\n")
    for r in rows:
        fh.write(",".join(repr(float(x)) for x in r[:7]) + ",%d,%s\n" % (r[7], r[8]))
print("wrote %d rows (%d marked antipodal) to %s" % (len(rows), sum(r[7] for r in rows), out),
      file=sys.stderr)
