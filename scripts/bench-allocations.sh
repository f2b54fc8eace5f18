#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Heap allocations per sample on the daemon's model path (issue 12: goal 0), counted by valgrind:
# memcheck's "total heap usage: N allocs" for qibla-bench's `sample-path` row at two sample
# counts; (N(2·n) − N(n)) / n cancels everything done once (set-up, argument parsing, report).
#
#   scripts/bench-allocations.sh [samples]        (default 10000)
#   BENCH_NO_BUILD=1 scripts/bench-allocations.sh (reuse .build/release)
#   BENCH_ROW=sample-path-fused scripts/bench-allocations.sh (the path with the gyroscope, issue 30)
#
# Needs: valgrind, strip (binutils).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
row=${BENCH_ROW:-sample-path}
[[ -n ${BENCH_NO_BUILD:-} ]] || swift build -c release --product qibla-bench >/dev/null
# A stripped copy: valgrind 3.19 gives up on the Swift binary's debug information.
bin=$(mktemp /tmp/qibla-bench.XXXXXX)
trap 'rm -f "$bin"' EXIT
strip -o "$bin" "$(swift build -c release --show-bin-path)/qibla-bench"
count_allocs() {
    valgrind --tool=memcheck --leak-check=no "$bin" --only "$row" --points "$1" --batches 1 --warmup 0 2>&1 >/dev/null \
        | awk '/total heap usage:/ { gsub(",", ""); for (i = 1; i <= NF; i++) if ($i == "allocs") print $(i - 1) }'
}
a=$(count_allocs "$n")
b=$(count_allocs $((2 * n)))
per=$(awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%.2f", (b - a) / n }')
echo "$row allocations: $a allocs for $n sample pairs, $b for $((2 * n)); per sample pair: $per"
echo "command: BENCH_ROW=$row scripts/bench-allocations.sh $n (valgrind $(valgrind --version | sed 's/valgrind-//'))"
