#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the Qibla Compass app costs (issue 24): CPU and wakeups while its window is open and the
# phone still, while the phone turns, and while the window is hidden (minimised); its memory. The
# app (release build) runs against a real qiblad (release) on a private session bus, reading a
# phone simulated by qibla-sim, on a headless X server (Xvfb, GTK's cairo renderer: no GPU here,
# so drawing costs the CPU what a phone's GPU would partly take). The table goes into
# BENCHMARKS.md between the bench-app markers.
#
#   scripts/bench-app.sh [seconds-per-scene]          (default 20)
#   BENCH_NO_BUILD=1 scripts/bench-app.sh             (reuse the release builds)
#   BENCH_OUTPUT=/dev/null scripts/bench-app.sh 5     (quick try, print only)
#
# Each scene starts its own phone, qiblad and app (a phone simulator restarted under a running
# qiblad would leave it reading replaced files). CPU: utime + stime of the whole process from
# /proc/PID/stat (threads that ended included; 10 ms ticks, so ±0.05 % over 20 s); wakeups: the
# voluntary context switches of the main thread (GTK's main loop); memory: VmRSS and
# smaps_rollup's Pss at the end of the open-and-still scene. Needs Xvfb, xdotool, dbus-daemon.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
output=${BENCH_OUTPUT:-BENCHMARKS.md}
. scripts/lib/bench-common.sh

for tool in Xvfb xdotool dbus-daemon; do
    command -v "$tool" >/dev/null || { echo "bench-app: $tool missing (apt install xvfb xdotool dbus-daemon)" >&2; exit 1; }
done
if [[ -z ${BENCH_NO_BUILD:-} ]]; then
    echo "== building qiblad, qibla-sim and the app (release)" >&2
    swift build -c release --product qiblad >/tmp/bench-app-build.log 2>&1 &&
        swift build -c release --product qibla-sim >>/tmp/bench-app-build.log 2>&1 &&
        swift build -c release --package-path clients/qibla-compass --product qibla-compass >>/tmp/bench-app-build.log 2>&1 ||
        { cat /tmp/bench-app-build.log >&2; exit 1; }
fi
bin=.build/release
app=clients/qibla-compass/.build/release/qibla-compass

work=$(mktemp -d "$(bench_scratch_root)/qibla-bench-app.XXXXXX")
pids=()
trap 'stop_all_pids; rm -rf "$work"' EXIT

start_private_bus bus session
export DBUS_SESSION_BUS_ADDRESS=unix:path=$work/bus
Xvfb -displayfd 3 -screen 0 1280x1024x24 -nolisten tcp 3>"$work/display" 2>"$work/xvfb.log" &
pids+=($!)
for _ in $(seq 1 100); do [[ -s $work/display ]] && break; sleep 0.05; done
export DISPLAY=:$(cat "$work/display")

# cpu_ticks PID: utime + stime so far, clock ticks (all threads, ended ones included).
cpu_ticks() { awk '{ print $14 + $15 }' /proc/"$1"/stat; }
ticks_per_second=$(getconf CLK_TCK)
# wakeups PID: voluntary context switches of the main thread so far.
wakeups() { awk '/^voluntary_ctxt_switches/ { print $2 }' /proc/"$1"/status; }

# scene NAME [qibla-sim options]: a phone (still at 100° in London, or as the options say), qiblad
# and the app, started afresh; measures the app and qiblad over $seconds with the window open,
# then (with minimise) again after unmapping the window.
rows=()
scene() {
    local name=$1 minimise=$2; shift 2
    local spids=() a0 d0 w0 a1 d1 w1
    rm -rf "$work/sys" "$work/state"; mkdir -p "$work/state"
    "$bin/qibla-sim" run --root "$work/sys" --phone pinephone --lat 51.5074 --lon=-0.1278 --heading-deg 100 \
        --rate 20 --noise-ut 0.3 "$@" >"$work/sim.log" 2>&1 &
    spids+=($!)
    for _ in $(seq 1 100); do [[ -d $work/sys/bus/iio/devices ]] && break; sleep 0.05; done
    "$bin/qiblad" --session --no-gpsd --sysfs-root "$work/sys" --state-dir "$work/state" --config "$work/state/qiblad.conf" \
        --sysconfdir "$work/state/etc" --udev-data-dir "$work/state/udev" --location=51.5074,-0.1278 >"$work/qiblad.log" 2>&1 &
    daemon=$!
    spids+=($daemon)
    sleep 1
    env GSK_RENDERER=cairo GSETTINGS_BACKEND=memory GTK_A11Y=none ${app_env:-} "$app" --size 360x720 --verbose >"$work/app.log" 2>&1 &
    appPid=$!
    spids+=($appPid)
    for _ in $(seq 1 100); do grep -q "first compass claim" "$work/qiblad.log" && break; sleep 0.1; done
    window=$(xdotool search --sync --onlyvisible --pid "$appPid" | tail -1)
    sleep 4   # the first frames, the calibration's first estimates, the rest detector's settling
    measure_window "$name"
    if [[ $name == *still* ]]; then
        rss=$(awk '/^VmRSS/ {print $2}' /proc/"$appPid"/status)
        pss=$(awk '/^Pss:/ {print $2}' /proc/"$appPid"/smaps_rollup)
        hwm=$(awk '/^VmHWM/ {print $2}' /proc/"$appPid"/status)
    fi
    if [[ $minimise == minimise ]]; then
        xdotool windowunmap --sync "$window"
        sleep 2
        measure_window "window minimised (claim released)"
        released=$(grep -c "last compass claim released" "$work/qiblad.log" || true)
    fi
    local p
    for ((p = ${#spids[@]} - 1; p >= 0; p--)); do stop_pid "${spids[p]}"; done
}

measure_window() {
    a0=$(cpu_ticks "$appPid"); d0=$(cpu_ticks "$daemon"); w0=$(wakeups "$appPid")
    sleep "$seconds"
    a1=$(cpu_ticks "$appPid"); d1=$(cpu_ticks "$daemon"); w1=$(wakeups "$appPid")
    rows+=("| $1 | $(awk -v n=$((a1 - a0)) -v s="$seconds" -v h="$ticks_per_second" 'BEGIN { printf "%.2f", n * 100 / h / s }') | $(awk -v n=$((w1 - w0)) -v s="$seconds" 'BEGIN { printf "%.1f", n / s }') | $(awk -v n=$((d1 - d0)) -v s="$seconds" -v h="$ticks_per_second" 'BEGIN { printf "%.2f", n * 100 / h / s }') |")
    echo "${rows[-1]}" >&2
}

released=0
scene "window open, phone still" minimise
scene "window open, phone turning (±20° over 20 s, 20 Hz)" keep --turning
# GDK probes OpenGL at start even with the cairo renderer; on this GPU-less machine that loads
# Mesa's llvmpipe (libLLVM). The same still scene without GL, for the memory a phone's GPU
# driver does not add in the same way:
still_rss=$rss still_pss=$pss still_hwm=$hwm
app_env=GDK_DEBUG=gl-disable scene "window open, phone still, GL disabled (GDK_DEBUG=gl-disable)" keep
nogl_rss=$rss nogl_pss=$pss
rss=$still_rss pss=$still_pss hwm=$still_hwm

table=$(cat <<TABLE
<!-- bench-app:begin (generated by scripts/bench-app.sh; edit outside the markers) -->
### The compass app (issue 24)

\`scripts/bench-app.sh $seconds\` on $(date -u +%Y-%m-%d), $(nproc) cores, $(uname -m): the app (release, static
Swift runtime) against qiblad (release, 20 Hz) reading a simulated PinePhone in London, on Xvfb
with GTK's cairo renderer (no GPU), $seconds s per scene. CPU in % of one core, from 10-ms ticks (0.00: under 0.05 %).

| scene | app CPU % | app main-loop wakeups/s | qiblad CPU % |
| --- | --- | --- | --- |
$(printf '%s\n' "${rows[@]}")

Memory of the app with the window open: VmRSS $((rss / 1024)).$(((rss % 1024) * 10 / 1024)) MB (peak $((hwm / 1024)).$(((hwm % 1024) * 10 / 1024)) MB),
Pss $((pss / 1024)).$(((pss % 1024) * 10 / 1024)) MB (GTK 4 and libadwaita's shared libraries counted once per sharer); with GL
disabled (no llvmpipe) VmRSS $((nogl_rss / 1024)).$(((nogl_rss % 1024) * 10 / 1024)) MB, Pss $((nogl_pss / 1024)).$(((nogl_pss % 1024) * 10 / 1024)) MB.
Claims released by minimising the window: $released (qiblad's log).
<!-- bench-app:end -->
TABLE
)
printf '%s\n' "$table"
write_marked_section "$output" bench-app "$table"
