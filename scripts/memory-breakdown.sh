#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 33: qiblad's resident set as installed (default configuration: gpsd and GeoClue2 enabled,
# neither present), claimed while moving and while still, beside iio-sensor-proxy on the same
# umockdev sensors in the same run, and where each one's memory is (smaps by mapping). Writes the
# section between the memory-breakdown markers of BENCHMARKS.md.
#
#   scripts/memory-breakdown.sh [seconds-claimed [rounds]]     (defaults 20 3)
#   BENCH_NO_BUILD=1 ...                                       (reuse .build/release)
#   BENCH_BREAKDOWN_OUTPUT=/dev/null ...                       (print only)
#
# Runs scripts/bench-vs-iio-sensor-proxy.sh with its two as-installed settings (default: moving,
# defaultstill: still) and its own side-by-side section left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_SETTINGS="default defaultstill" BENCH_OUTPUT=/dev/null BENCH_BREAKDOWN=1 \
    BENCH_BREAKDOWN_OUTPUT=${BENCH_BREAKDOWN_OUTPUT:-BENCHMARKS.md} \
    exec scripts/bench-vs-iio-sensor-proxy.sh "${1:-20}" "${2:-3}"
