#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Measures the real qiblad (release build) on a private dbus-daemon, fed by qibla-sim, and writes
# a markdown table into BENCHMARKS.md between the bench-daemon markers (the qibla-bench table has
# its own markers, so the two update independently).
#
#   scripts/bench-daemon.sh [seconds-per-phase [startup-runs]]     (defaults 20 5)
#   BENCH_NO_BUILD=1 scripts/bench-daemon.sh                       (reuse .build/release)
#   BENCH_OUTPUT=/dev/null scripts/bench-daemon.sh 5 1             (quick try, print only)
#   BENCH_KEEP=1 scripts/bench-daemon.sh                           (keep the logs: bus, qiblad, monitors)
#   BENCH_RATE=100 BENCH_OUTPUT=/dev/null scripts/bench-daemon.sh  (simulator and `sample-rate` at 100 Hz)
#   BENCH_MODE=buffered ...                                        (`--sensor-mode buffered`: scans through
#                                                                    qibla-sim's /dev/iio:deviceN FIFOs)
#   BENCH_GYROSCOPE=off ...                                        (`gyroscope = off` in qiblad.conf; default
#                                                                    auto: the MPU-6050's gyroscope is read)
#   BENCH_MOTION=still ...                                         (the simulated phone lies still instead of
#                                                                    turning: the rest, `rest-sample-rate`)
#   BENCH_PHONE=pinephone-pro ...                                  (qibla-sim's phone; default pinephone)
#   BENCH_MOTION_EVENTS=1 ...                                      (issue 37: the accelerometer's wake-on-motion
#                                                                    event, events/in_accel_x|y|z_roc_rising_*, and
#                                                                    the simulator's event-descriptor stand-in, a FIFO
#                                                                    <dev-root>/iio:deviceN-event-fd; for an MPU-6500,
#                                                                    i.e. BENCH_PHONE=pinephone-pro)
#
# Measured (all from /proc of the qiblad process; no instrumentation inside the daemon):
#   - startup: launch → the bus name is owned (polling NameHasOwner on the bus), median of N runs;
#   - VmRSS / VmHWM (/proc/PID/status), Pss and Private_Dirty (/proc/PID/smaps_rollup), and the same
#     per mapping (/proc/PID/smaps: file and permissions), idle, claimed and released;
#   - CPU: utime+stime (/proc/PID/stat) over the phase, scaled to seconds of CPU per minute;
#   - wakeups: voluntary + involuntary context switches summed over /proc/PID/task/*/status, per s;
#   - PropertiesChanged signals per second seen by `busctl monitor` on the private bus;
#   - size of .build/release/qiblad (as built and stripped) and its shared libraries (ldd).
# "Idle" = the simulator writes 20 Hz samples into the fake sysfs but nobody claims the compass;
# "claimed" = one `qiblactl monitor` holds the claim; "released" = after it released the claim.
#
# Needs: the Swift toolchain, dbus-daemon, busctl (systemd), binutils (strip, optional).
set -euo pipefail
cd "$(dirname "$0")/.."

phase_seconds=${1:-20}
startup_runs=${2:-5}
output=${BENCH_OUTPUT:-BENCHMARKS.md}
latitude=51.5074
longitude=-0.1278
rate=${BENCH_RATE:-20}
mode=${BENCH_MODE:-polling}
gyroscope=${BENCH_GYROSCOPE:-auto}
motion=${BENCH_MOTION:-turning}
motion_flag=--turning; [[ $motion == still ]] && motion_flag=
sim_buffered=; [[ $mode == buffered ]] && sim_buffered=1
bus_name=io.github.qiblad.Qibla1

pids=()
. scripts/lib/bench-common.sh  # the working directory is the repository (cd above)
work=$(mktemp -d "$(bench_scratch_root)/qiblad-bench.XXXXXX")
cleanup() {
    stop_all_pids
    if [[ -n ${BENCH_KEEP:-} ]]; then echo "bench-daemon: logs kept in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM


now_ns() { date +%s%N; }

build_note="\`swift build -c release\` (Swift runtime linked statically, see Package.swift)"
if [[ -z ${BENCH_NO_BUILD:-} ]]; then
    echo "== building qiblad, qiblactl, qibla-sim (release)" >&2
    for product in qiblad qiblactl qibla-sim; do
        swift build -c release --product "$product" >"$work/build-$product.log" 2>&1 \
            || { cat "$work/build-$product.log" >&2; exit 1; }
    done
else
    build_note="prebuilt (BENCH_NO_BUILD)"
fi
bin="${BENCH_BIN:-$(swift build -c release --show-bin-path)}"   # BENCH_BIN: another build to compare
for product in qiblad qiblactl qibla-sim; do
    [[ -x $bin/$product ]] || { echo "bench-daemon: $bin/$product missing (build it first)" >&2; exit 1; }
done
# A binary linked a moment ago is dirty in the page cache until written back, and smaps counts its
# mapped text as Private_Dirty (8.7 MB instead of 1.2 MB idle): write it back before measuring.
sync "$bin/qiblad"

# --- private bus (same configuration as Tests/TestSupport PrivateBus) -------------------------
start_private_bus bus session
address="unix:path=$work/bus"
export DBUS_SESSION_BUS_ADDRESS=$address

name_owned() {
    busctl --address="$address" call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
        NameHasOwner s "$bus_name" 2>/dev/null | grep -q true
}

# --- simulator ------------------------------------------------------------------------------
phone=${BENCH_PHONE:-pinephone}
echo "== qibla-sim: $phone at $latitude,$longitude $motion, $rate Hz" >&2
"$bin/qibla-sim" run --root "$work/sys" --dev-root "$work/dev" --phone "$phone" \
    --lat "$latitude" --lon="$longitude" $motion_flag --rate "$rate" ${sim_buffered:+--buffered} >"$work/sim.log" 2>&1 &
sim_pid=$!
pids+=("$sim_pid")
for _ in $(seq 1 100); do [[ -d $work/sys/bus/iio/devices ]] && break; sleep 0.05; done
[[ -d $work/sys/bus/iio/devices ]] || { echo "bench-daemon: qibla-sim made no devices: $(cat "$work/sim.log")" >&2; exit 1; }
sleep 0.5

printf 'sample-rate = %s\ngyroscope = %s\n' "$rate" "$gyroscope" >"$work/qiblad.conf"
qiblad_args=(--session --no-gpsd --sysfs-root "$work/sys" --state-dir "$work/state" --location="$latitude,$longitude"
             --config "$work/qiblad.conf")
[[ $mode == polling ]] || qiblad_args+=(--sensor-mode "$mode" --dev-root "$work/dev")
if [[ -n ${BENCH_MOTION_EVENTS:-} ]]; then
    # The event interface as the kernel shows it (inv_mpu6050 from the MPU-6500 on); the simulator
    # process writes no records into the FIFO here: a phone lying still raises none.
    accel_dir=$(dirname "$(ls -d "$work"/sys/bus/iio/devices/*/in_accel_x_raw | head -1)")
    mkdir -p "$accel_dir/events" "$work/dev"
    echo 0 >"$accel_dir/events/in_accel_x|y|z_roc_rising_en"
    echo 0.000000 >"$accel_dir/events/in_accel_x|y|z_roc_rising_value"
    mkfifo "$work/dev/$(basename "$accel_dir")-event-fd"
    exec {event_fifo}<>"$work/dev/$(basename "$accel_dir")-event-fd"
    [[ $mode == polling ]] && qiblad_args+=(--dev-root "$work/dev")
fi

# --- startup time ---------------------------------------------------------------------------
# Launch → NameHasOwner true. Each poll is one busctl call (a few ms), which bounds the resolution.
start_daemon() {
    local t0 t1
    t0=$(now_ns)
    "$bin/qiblad" "${qiblad_args[@]}" >>"$work/qiblad.log" 2>&1 &
    daemon_pid=$!
    pids+=("$daemon_pid")
    until name_owned; do
        kill -0 "$daemon_pid" 2>/dev/null || { echo "bench-daemon: qiblad exited: $(tail -5 "$work/qiblad.log")" >&2; exit 1; }
        (( $(now_ns) - t0 < 10000000000 )) || { echo "bench-daemon: qiblad did not own $bus_name in 10 s" >&2; exit 1; }
    done
    t1=$(now_ns)
    startup_ms=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.1f", d / 1e6 }')
}
startups=()
for run in $(seq 1 "$startup_runs"); do
    start_daemon
    startups+=("$startup_ms")
    echo "   startup run $run: $startup_ms ms" >&2
    if ((run < startup_runs)); then
        stop_pid "$daemon_pid"; forget_pid "$daemon_pid"
        for _ in $(seq 1 100); do name_owned || break; sleep 0.02; done
    fi
done
startup_stats=$(printf '%s\n' "${startups[@]}" | sort -g | awk '{ v[NR] = $1 } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.1f ms median (min %.1f, max %.1f; %d runs)", m, v[1], v[NR], NR }')

# --- /proc readers --------------------------------------------------------------------------
clock_ticks=$(getconf CLK_TCK)
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }   # utime + stime (fields 14, 15)
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^(non)?voluntary_ctxt_switches:/ { s += $2 } END { print s + 0 }'; }
threads() { ls /proc/"$1"/task | wc -l; }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
smaps_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/smaps_rollup"; }     # Pss, Private_Dirty, ...
# On-CPU nanoseconds of all threads (first field of /proc/PID/task/*/schedstat; threads that have
# exited are not counted, so phases compare threads that lived through them).
oncpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f", s }'; }
# Resident memory by mapping (/proc/PID/smaps), largest first: "file perms Rss/Pss/Private_Dirty"
# in kB for every file and permission pair (anonymous mappings as [anon]) with Rss of 16 kB or more.
smaps_breakdown() {
    awk '/^[0-9a-f]+-[0-9a-f]+ / { n = $6; sub(/.*\//, "", n); key = (n == "" ? "[anon]" : n) " " $2; next }
         $1 == "Rss:" { r[key] += $2 } $1 == "Pss:" { p[key] += $2 } $1 == "Private_Dirty:" { d[key] += $2 }
         END { for (k in r) if (r[k] >= 16) printf "%d\t%s %d/%d/%d\n", r[k], k, r[k], p[k], d[k] }' "/proc/$1/smaps" |
        sort -rn | cut -f2 | paste -sd ';' - | sed 's/;/; /g'
}
signals_seen() { local n; n=$(grep -c 'PropertiesChanged' "$work/monitor-$1.log" 2>/dev/null) || true; echo "${n:-0}"; }

# "name(tid): voluntary+involuntary; ..." for every thread (counts since the thread started).
per_thread_switches() {
    local t
    for t in /proc/"$1"/task/*; do
        printf '%s(%s): %s+%s; ' "$(cat "$t/comm")" "${t##*/}" \
            "$(awk '/^voluntary_ctxt_switches:/ { print $2 }' "$t/status")" \
            "$(awk '/^nonvoluntary_ctxt_switches:/ { print $2 }' "$t/status")"
    done
}

# busctl monitor, one JSON line per message (flushed per message), for the whole run of a phase.
start_bus_monitor() {
    busctl --address="$address" monitor --json=short \
        --match "type='signal',member='PropertiesChanged'" >"$work/monitor-$1.log" 2>"$work/monitor-$1.err" &
    bus_monitor_pid=$!
    pids+=("$bus_monitor_pid")
    sleep 0.5
}

# One phase: counters before and after `phase_seconds`; sets phase_* variables.
measure_phase() {
    local name=$1 t0 t1 c0 c1 w0 w1 s0 s1 seconds
    start_bus_monitor "$name"
    c0=$(cpu_ticks "$daemon_pid"); w0=$(switches "$daemon_pid"); s0=$(signals_seen "$name"); n0=$(oncpu_ns "$daemon_pid"); t0=$(now_ns)
    sleep "$phase_seconds"
    c1=$(cpu_ticks "$daemon_pid"); w1=$(switches "$daemon_pid"); s1=$(signals_seen "$name"); n1=$(oncpu_ns "$daemon_pid"); t1=$(now_ns)
    seconds=$(awk -v d=$((t1 - t0)) 'BEGIN { print d / 1e9 }')
    phase_cpu=$(awk -v t=$((c1 - c0)) -v hz="$clock_ticks" -v s="$seconds" 'BEGIN { printf "%.2f s/min (%.2f %% of one core)", t / hz * 60 / s, t / hz / s * 100 }')
    phase_wakeups=$(awk -v n=$((w1 - w0)) -v s="$seconds" 'BEGIN { printf "%.1f", n / s }')
    # Per sample at the simulator's rate (one sample = one magnetometer + one accelerometer reading).
    phase_per_sample=$(awk -v n=$((w1 - w0)) -v c=$((n1 - n0)) -v s="$seconds" -v r="$rate" \
        'BEGIN { printf "%.2f switches, %.1f µs on-CPU", n / s / r, c / s / r / 1000 }')
    phase_pss=$(smaps_kb "$daemon_pid" Pss); phase_dirty=$(smaps_kb "$daemon_pid" Private_Dirty)
    phase_mappings=$(smaps_breakdown "$daemon_pid")
    phase_signals=$(awk -v n=$((s1 - s0)) -v s="$seconds" 'BEGIN { printf "%.1f", n / s }')
    phase_rss=$(status_kb "$daemon_pid" VmRSS); phase_hwm=$(status_kb "$daemon_pid" VmHWM)
    phase_threads=$(threads "$daemon_pid")
    phase_raw="cpu ticks $((c1 - c0)) @${clock_ticks} Hz, switches $((w1 - w0)), signals $((s1 - s0)) in ${seconds} s"
    echo "   $name: CPU $phase_cpu, wakeups $phase_wakeups/s, per sample $phase_per_sample, Pss $phase_pss kB, Private_Dirty $phase_dirty kB, PropertiesChanged $phase_signals/s, VmRSS $phase_rss kB, VmHWM $phase_hwm kB, threads $phase_threads ($phase_raw)" >&2
    echo "   $name by mapping (Rss/Pss/Private_Dirty kB): $phase_mappings" >&2
    stop_pid "$bus_monitor_pid"; forget_pid "$bus_monitor_pid"
}

# --- idle -----------------------------------------------------------------------------------
echo "== idle: ${phase_seconds} s, nobody claims the compass" >&2
sleep 3
measure_phase idle
idle_cpu=$phase_cpu idle_wakeups=$phase_wakeups idle_signals=$phase_signals
idle_rss=$phase_rss idle_hwm=$phase_hwm idle_pss=$phase_pss idle_dirty=$phase_dirty idle_mappings=$phase_mappings idle_per_sample=$phase_per_sample idle_threads=$phase_threads idle_raw=$phase_raw
idle_switch_detail=$(per_thread_switches "$daemon_pid")

# --- claimed --------------------------------------------------------------------------------
echo "== claimed: ${phase_seconds} s, one qiblactl monitor holds the claim" >&2
"$bin/qiblactl" monitor >"$work/qiblactl.log" 2>&1 &
ctl_pid=$!
pids+=("$ctl_pid")
sleep 3
kill -0 "$ctl_pid" 2>/dev/null || { echo "bench-daemon: qiblactl monitor exited: $(cat "$work/qiblactl.log")" >&2; exit 1; }
measure_phase claimed
claimed_cpu=$phase_cpu claimed_wakeups=$phase_wakeups claimed_signals=$phase_signals
claimed_rss=$phase_rss claimed_hwm=$phase_hwm claimed_pss=$phase_pss claimed_dirty=$phase_dirty claimed_mappings=$phase_mappings claimed_per_sample=$phase_per_sample claimed_threads=$phase_threads claimed_raw=$phase_raw
monitor_lines=$(wc -l <"$work/qiblactl.log")
claimed_switch_detail=$(per_thread_switches "$daemon_pid")
stop_pid "$ctl_pid"; forget_pid "$ctl_pid"

# --- released: back to idle? ----------------------------------------------------------------
# qiblactl monitor releases the claim on SIGTERM; the daemon should stop its sensor threads.
echo "== released: ${phase_seconds} s after qiblactl monitor released the claim" >&2
sleep 3
measure_phase released
released_cpu=$phase_cpu released_wakeups=$phase_wakeups released_signals=$phase_signals
released_rss=$phase_rss released_hwm=$phase_hwm released_pss=$phase_pss released_dirty=$phase_dirty released_mappings=$phase_mappings released_per_sample=$phase_per_sample released_threads=$phase_threads released_raw=$phase_raw

# --- binary ---------------------------------------------------------------------------------
size_kib() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.0f KiB", b / 1024 }'; }
binary_size=$(size_kib "$bin/qiblad")
if command -v strip >/dev/null; then
    strip -o "$work/qiblad.stripped" "$bin/qiblad"
    binary_size="$binary_size ($(size_kib "$work/qiblad.stripped") stripped)"
fi
libraries=$(ldd "$bin/qiblad" | awk '{ print $1 }' | sed 's|.*/||' | grep -v '^linux-vdso' | sort | paste -sd ' ' -)
if grep -q 'libswiftCore' <<<"$libraries"; then stdlib="dynamic (libswiftCore.so needed)"; else stdlib="static (no libswift*.so in ldd)"; fi

# --- report ---------------------------------------------------------------------------------
machine="$(awk -F': ' '/^model name/ { m = $2; n++ } END { printf "%s (%d logical CPUs)", m, n }' /proc/cpuinfo)"
date_utc=$(date -u '+%Y-%m-%d %H:%M UTC')
swift_version=$(swift --version 2>/dev/null | head -n 1)
command="scripts/bench-daemon.sh${*:+ $*}"
section=$(cat <<EOF
<!-- bench-daemon:begin (generated by scripts/bench-daemon.sh; edit outside the markers) -->
## Daemon (qiblad release build, simulated PinePhone)

- Date: $date_utc
- Machine: $machine, $(uname -sr)
- Swift: $swift_version
- Command: \`$command\`
- Setup: private dbus-daemon; \`qibla-sim run --phone $phone${BENCH_MOTION_EVENTS:+ (motion events)} --lat $latitude --lon=$longitude $motion_flag --rate $rate${sim_buffered:+ --buffered}\`;
  \`qiblad ${qiblad_args[*]//$work/TMP}\` (TMP/qiblad.conf: \`sample-rate = $rate\`, \`gyroscope = $gyroscope\`); claimed = one \`qiblactl monitor\`; released = after that monitor got SIGTERM (it calls ReleaseCompass); $phase_seconds s per phase, each after 3 s of settling; TMP is under $(bench_scratch_description "${work%/*}").

| Metric | idle | claimed ($rate Hz, $mode) | released again |
|---|---:|---:|---:|
| Resident memory VmRSS | $idle_rss kB | $claimed_rss kB | $released_rss kB |
| Peak resident memory VmHWM | $idle_hwm kB | $claimed_hwm kB | $released_hwm kB |
| Pss (smaps_rollup) | $idle_pss kB | $claimed_pss kB | $released_pss kB |
| Private_Dirty (smaps_rollup) | $idle_dirty kB | $claimed_dirty kB | $released_dirty kB |
| CPU time (utime + stime) | $idle_cpu | $claimed_cpu | $released_cpu |
| Wakeups (context switches, all threads) | $idle_wakeups /s | $claimed_wakeups /s | $released_wakeups /s |
| Per sample (÷ $rate Hz): context switches, on-CPU time (schedstat) | — | $claimed_per_sample | — |
| PropertiesChanged signals | $idle_signals /s | $claimed_signals /s | $released_signals /s |
| Threads | $idle_threads | $claimed_threads | $released_threads |

- Startup (launch → \`$bus_name\` owned): $startup_stats.
- Binary \`.build/release/qiblad\`: $binary_size; Swift stdlib linked $stdlib. Build: $build_note.
- Shared libraries: $libraries.
- Resident by mapping (Rss/Pss/Private_Dirty kB from smaps, mappings of 16 kB or more; the libraries' pages are shared, so their Pss is a share) — idle: $idle_mappings;
  claimed: $claimed_mappings;
  released: $released_mappings.
- Raw counters — idle: $idle_raw; claimed: $claimed_raw; released: $released_raw; \`qiblactl monitor\` printed $monitor_lines lines.
- Context switches per thread (voluntary+involuntary, since the thread started) at the end of the idle phase: ${idle_switch_detail%; };
  at the end of the claimed phase: ${claimed_switch_detail%; }.
<!-- bench-daemon:end -->
EOF
)
printf '%s\n' "$section"

write_marked_section "$output" bench-daemon "$section"
