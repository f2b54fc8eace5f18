#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs qibla-bench (release build) and the GeographicLib C++ baseline on the same points, and
# writes the combined table into BENCHMARKS.md.
#
#   scripts/benchmark.sh [points batches warmup [qibla-bench options...]]   (defaults 1000 300 20)
#   e.g. scripts/benchmark.sh 1000 300 20 --only geodesic-inverse wmm
#
# Needs: the Swift toolchain, g++, libgeographiclib-dev (Debian: apt-get install libgeographiclib-dev).
set -euo pipefail
cd "$(dirname "$0")/.."

[[ $# -ge 3 || $# -eq 0 ]] || { echo "usage: $0 [points batches warmup [qibla-bench options]]" >&2; exit 2; }
points=${1:-1000}
batches=${2:-300}
warmup=${3:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== building qibla-bench (release)" >&2
swift build -c release --product qibla-bench >&2
bench="$(swift build -c release --show-bin-path)/qibla-bench"

echo "== building the GeographicLib driver (g++ -O2)" >&2
g++ -O2 -std=c++17 scripts/geographiclib_bench.cpp -lGeographicLib -o "$work/geographiclib_bench"

echo "== running the C++ baseline" >&2
cpp=$("$work/geographiclib_bench" "$points" "$batches" "$warmup")
echo "$cpp" >&2
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" <<<"$cpp"; }

echo "== running qibla-bench" >&2
"$bench" --points "$points" --batches "$batches" --warmup "$warmup" \
    --cpp-median-ns "$(field median_ns)" --cpp-p90-ns "$(field p90_ns)" \
    --cpp-points-checksum "$(field checksum)" --cpp-library "GeographicLib $(field version)" \
    --swift-version "$(swift --version 2>/dev/null | head -n 1)" \
    --command "scripts/benchmark.sh${*:+ $*}" \
    --output BENCHMARKS.md "${@:4}"
