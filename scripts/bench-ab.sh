#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Two qiblad builds side by side on one simulated phone, both claimed at once, for comparing the
# on-CPU cost of a change on a machine whose load moves (a shared VM): each window measures both
# daemons over the same seconds, so the machine's other load falls on both alike, and the
# per-window difference is what the change did. Prints a table; writes nothing.
#
#   scripts/bench-ab.sh BIN_A BIN_B [seconds-per-window [windows]]    (defaults 10 9)
#   BENCH_RATE=100 scripts/bench-ab.sh ...                            (simulator and sample-rate)
#   BENCH_FLOOR=1 scripts/bench-ab.sh ...                             (and the C floor, same seconds)
#
# BIN_A and BIN_B are folders holding a release `qiblad` (e.g. a copy of .build/release before and
# after a change); qibla-sim and qiblactl come from BIN_A. Each daemon runs on its own private
# session bus (they own the same name) and reads the same simulated PinePhone (qibla-sim, turning,
# on the benchmarks' scratch tmpfs); one `qiblactl monitor` per bus holds the claim. Per window:
# a new claim of both (released after the window, claimed in alternating order), 2 s of settling,
# on-CPU nanoseconds over /proc/PID/task/*/schedstat (field 1) divided by the samples the window
# holds (seconds × rate), for A and B, and B − A. The summary gives the medians and how many
# windows B was cheaper in. With BENCH_FLOOR=1, scripts/wake-floor.c (libdbus variant: wake, six
# reads, a PropertiesChanged through libdbus at most every 100 ms, on a third private bus) runs over
# the same windows: what a C daemon doing the same system calls costs under the same load.
#
# Needs: dbus-daemon, the release builds.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 2 ]] || { sed -n '3,20p' "$0" >&2; exit 2; }
bin_a=$1 bin_b=$2
seconds=${3:-10}
windows=${4:-9}
rate=${BENCH_RATE:-20}
for bin in "$bin_a" "$bin_b"; do [[ -x $bin/qiblad ]] || { echo "bench-ab: $bin/qiblad missing" >&2; exit 1; }; done

pids=()
. scripts/lib/bench-common.sh
work=$(mktemp -d "$(bench_scratch_root)/qiblad-ab.XXXXXX")
trap 'stop_all_pids; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

"$bin_a/qibla-sim" run --root "$work/sys" --dev-root "$work/dev" --phone pinephone --lat 51.5074 --lon=-0.1278 \
    --turning --rate "$rate" >"$work/sim.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [[ -d $work/sys/bus/iio/devices ]] && break; sleep 0.05; done
[[ -d $work/sys/bus/iio/devices ]] || { echo "bench-ab: qibla-sim made no devices: $(cat "$work/sim.log")" >&2; exit 1; }
printf 'sample-rate = %s\n' "$rate" >"$work/qiblad.conf"

declare -A daemon
for side in a b; do
    bin_var=bin_$side
    start_private_bus "bus-$side" session
    DBUS_SESSION_BUS_ADDRESS="unix:path=$work/bus-$side" "${!bin_var}/qiblad" --session --no-gpsd \
        --sysfs-root "$work/sys" --state-dir "$work/state-$side" --location=51.5074,-0.1278 \
        --config "$work/qiblad.conf" >"$work/qiblad-$side.log" 2>&1 &
    daemon[$side]=$!
    pids+=($!)
done
sleep 1
# Claims both (one `qiblactl monitor` each, in the order given) and waits for their first lines.
declare -A monitor
claim() {
    local side
    for side in "$@"; do
        DBUS_SESSION_BUS_ADDRESS="unix:path=$work/bus-$side" "$bin_a/qiblactl" monitor >"$work/monitor-$side.log" 2>&1 &
        monitor[$side]=$!
        pids+=($!)
    done
    sleep 2
    for side in a b; do
        kill -0 "${daemon[$side]}" 2>/dev/null || { echo "bench-ab: qiblad $side exited: $(tail -3 "$work/qiblad-$side.log")" >&2; exit 1; }
        grep -q . "$work/monitor-$side.log" || { echo "bench-ab: qiblactl monitor $side printed nothing" >&2; exit 1; }
    done
}
release() {
    local side
    for side in a b; do stop_pid "${monitor[$side]}"; forget_pid "${monitor[$side]}"; done
    sleep 0.5
}

floor_pid=
if [[ -n ${BENCH_FLOOR:-} ]]; then
    period_ms=$(awk -v r="$rate" 'BEGIN { printf "%d", 1000 / r }')
    # shellcheck disable=SC2046
    cc -O2 -Wall -DWITH_DBUS $(pkg-config --cflags dbus-1) -o "$work/wake-floor" scripts/wake-floor.c $(pkg-config --libs dbus-1)
    start_private_bus bus-floor session
    mkdir -p "$work/floor"
    WAKE_FLOOR_ONLY=wake+6reads+libdbus-signal "$work/wake-floor" "$period_ms" $(((seconds + 3) * windows * rate)) "$work/floor" \
        "unix:path=$work/bus-floor" >"$work/floor.out" 2>&1 &
    floor_pid=$!
    pids+=($!)
fi

oncpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f", s }'; }
echo "| window | A µs per sample | B µs per sample | B − A |"
echo "|---:|---:|---:|---:|"
results=()
for window in $(seq 1 "$windows"); do
    # A new claim per window starts each daemon's sampling thread afresh: the phase of its 50 ms
    # schedule against the other daemon's, the simulator's writes and the machine's other load
    # changes from window to window instead of favouring one build for the whole run.
    if ((window % 2)); then claim a b; else claim b a; fi
    a0=$(oncpu_ns "${daemon[a]}") b0=$(oncpu_ns "${daemon[b]}") t0=$(date +%s%N)
    sleep "$seconds"
    a1=$(oncpu_ns "${daemon[a]}") b1=$(oncpu_ns "${daemon[b]}") t1=$(date +%s%N)
    row=$(awk -v a=$((a1 - a0)) -v b=$((b1 - b0)) -v t=$((t1 - t0)) -v r="$rate" \
        'BEGIN { n = t / 1e9 * r; printf "%.1f %.1f %.1f", a / n / 1e3, b / n / 1e3, (b - a) / n / 1e3 }')
    release
    results+=("$row")
    read -r a b d <<<"$row"
    echo "| $window | $a | $b | $d |"
done
printf '%s\n' "${results[@]}" | awk '
    { a[NR] = $1; b[NR] = $2; d[NR] = $3; if ($3 < 0) cheaper++ }
    function median(v, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
    END { n = NR; printf "\nmedians over %d windows: A %.1f µs, B %.1f µs per sample, B − A %.1f µs; B cheaper in %d of %d windows\n",
          n, median(a, n), median(b, n), median(d, n), cheaper + 0, n }'
if [[ -n $floor_pid ]]; then
    wait "$floor_pid" || true
    forget_pid "$floor_pid"
    read -r _ floor_us _ <"$work/floor.out" || true
    echo "C floor over the same windows (scripts/wake-floor.c, wake + six reads + libdbus PropertiesChanged at most every 100 ms): ${floor_us:-?} µs per sample"
fi
echo "A = $bin_a, B = $bin_b; $seconds s windows at $rate Hz; scratch on $(bench_scratch_description)"
