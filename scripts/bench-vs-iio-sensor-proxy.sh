#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# qiblad side by side with iio-sensor-proxy (issue 12) on one umockdev testbed, and the table into
# BENCHMARKS.md between the vs-iio-sensor-proxy markers.
#
#   scripts/bench-vs-iio-sensor-proxy.sh [seconds-claimed [rounds]]     (defaults 30 3)
#   BENCH_NO_BUILD=1 scripts/bench-vs-iio-sensor-proxy.sh              (reuse .build/release)
#   BENCH_OUTPUT=/dev/null scripts/bench-vs-iio-sensor-proxy.sh 10 1   (quick try, print only)
#   BENCH_KEEP=1 ...                                                   (keep the logs)
#   BENCH_SETTINGS="still stillfull" BENCH_OUTPUT=/dev/null ...        (only those settings; print only)
#   BENCH_SETTINGS="defaultstill defaultfirst" ...                     (as installed, still: from 5 s after the claim,
#                                                                       and from the claim's reply: issue 37)
#   BENCH_TRACE=1 BENCH_KEEP=1 ...                                    (each thread's on-CPU time every 0.1 s,
#                                                                       trace-SETTING-ROUND.txt in the kept logs)
#   BENCH_REST_RATE=4 ...                                              (the still setting's rest-sample-rate;
#                                                                       default: qiblad's default)
#
# The testbed (umockdev-run --device, LD_PRELOAD of libumockdev-preload): an accelerometer
# `iio:device0` (mxc4005-like, in_accel_{x,y,z}_raw + in_accel_scale, with the udev property
# IIO_SENSOR_PROXY_TYPE=iio-poll-accel that iio-sensor-proxy's udev rule would set) and a
# magnetometer `iio:device1` (lis3mdl-like, in_magn_{x,y,z}_raw + in_magn_scale). Both daemons run
# in it at the same time and see the same files under /sys:
#   - iio-sensor-proxy on a private "system" dbus-daemon (DBUS_SYSTEM_BUS_ADDRESS), where it may own
#     net.hadess.SensorProxy; it has no raw-magnetometer driver (its compass needs an
#     in_rot_from_north_magnetic_tilt_comp buffer), so it drives the accelerometer only;
#   - qiblad --session on a private session dbus-daemon, discovering /sys/bus/iio/devices through
#     the preload (no --sysfs-root), reading both sensors.
# A feeder turns the magnetometer (rewrites in_magn_{x,y}_raw in place, fixed width, at 20 Hz), so
# qiblad's publisher has headings to signal; the accelerometer stays level (iio-sensor-proxy's
# orientation does not change, as on a phone lying on a table).
# Each round: both claimed at the same moment by the same client code (python3 Gio: one
# ClaimAccelerometer on net.hadess.SensorProxy, one ClaimCompass on io.github.qiblad.Qibla1, each
# holding its connection), 2 s of settling, then the window: on-CPU nanoseconds summed over
# /proc/PID/task/*/schedstat (field 1), voluntary + involuntary context switches, VmRSS and
# smaps_rollup (Pss, Private_Dirty) at the end. Processed samples: iio-sensor-proxy polls every
# 700 ms (drv-iio-poll-accel.c; checked once with -v in the debug log: "Accel read from IIO"),
# one accelerometer reading each; qiblad's sample = one magnetometer + one accelerometer reading at
# its sample-rate, counted from its sampling thread's voluntary switches (one sleep per period).
# Four qiblad settings: 20 Hz and sample-rate = 1.4286 Hz (700 ms, equal to iio-sensor-proxy's
# poll) while the feeder turns the magnetometer (rest-sample-rate = off, as before issue 25); then,
# the feeder stopped (a phone lying on a table), 20 Hz with the default rest-sample-rate (2 Hz; BENCH_REST_RATE) and
# 20 Hz without it. The last two give the day's model (issue 25).
#
# Needs: iio-sensor-proxy, umockdev (umockdev-run), python3-gi with gir1.2-glib (Gio), dbus-daemon.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ ${1:-} == --inner ]]; then inner=1; shift; else inner=; fi
seconds=${1:-30}
rounds=${2:-3}
output=${BENCH_OUTPUT:-BENCHMARKS.md}
proxy=${IIO_SENSOR_PROXY:-/usr/sbin/iio-sensor-proxy}
# The distribution's Python: python3-gi is installed for it, not for a pyenv or venv one on PATH.
python=${BENCH_PYTHON:-/usr/bin/python3}

if [[ -z $inner ]]; then
    for tool in umockdev-run dbus-daemon "$python" "$proxy"; do
        command -v "$tool" >/dev/null || { echo "bench-vs-iio-sensor-proxy: $tool missing (apt install iio-sensor-proxy umockdev python3-gi dbus-daemon)" >&2; exit 1; }
    done
    "$python" -c 'from gi.repository import Gio' 2>/dev/null || { echo "bench-vs-iio-sensor-proxy: $python cannot import gi (apt install python3-gi)" >&2; exit 1; }
    if [[ -z ${BENCH_NO_BUILD:-} ]]; then
        echo "== building qiblad (release)" >&2
        swift build -c release --product qiblad >/tmp/bench-vs-isp-build.log 2>&1 || { cat /tmp/bench-vs-isp-build.log >&2; exit 1; }
    fi
    . scripts/lib/bench-common.sh
    # umockdev-run makes its testbed (the sysfs tree both daemons read) under $TMPDIR.
    export TMPDIR=$(bench_scratch_root)
    work=$(mktemp -d "$TMPDIR/qiblad-vs-isp.XXXXXX")
    export BENCH_WORK=$work BENCH_BIN="$(swift build -c release --show-bin-path)"
    [[ -x $BENCH_BIN/qiblad ]] || { echo "bench-vs-iio-sensor-proxy: $BENCH_BIN/qiblad missing" >&2; exit 1; }
    # The C floor beside both (scripts/wake-floor.c, libdbus variant), when libdbus's headers are here.
    if pkg-config --exists dbus-1 2>/dev/null; then
        # shellcheck disable=SC2046
        cc -O2 -Wall -DWITH_DBUS $(pkg-config --cflags dbus-1) -o "$work/wake-floor" scripts/wake-floor.c $(pkg-config --libs dbus-1)
    else
        echo "bench-vs-iio-sensor-proxy: no libdbus headers (libdbus-1-dev): the C floor column is left out" >&2
    fi
    # BENCH_GYROSCOPE=1 (issue 30): the accelerometer's device also carries an MPU-6050-style
    # gyroscope (in_anglvel_*, 0.001064724 rad/s per count), reading the feeder's constant turn
    # (one turn in 36 s about z: −0.1745 rad/s, −164 counts), so qiblad reads three sensors and fuses
    # them; iio-sensor-proxy reads what it read before.
    gyro_attributes=
    if [[ -n ${BENCH_GYROSCOPE:-} ]]; then
        gyro_attributes=$'A: in_anglvel_x_raw=        0\nA: in_anglvel_y_raw=        0\nA: in_anglvel_z_raw=     -164\nA: in_anglvel_scale=0.001064724\n'
    fi
    cat >"$work/testbed.umockdev" <<EOF
P: /devices/platform/accel/iio:device0
N: iio:device0
E: DEVNAME=/dev/iio:device0
E: DEVTYPE=iio_device
E: SUBSYSTEM=iio
E: IIO_SENSOR_PROXY_TYPE=iio-poll-accel
A: name=mxc4005
A: in_accel_x_raw=        0
A: in_accel_y_raw=        0
A: in_accel_z_raw=     1024
A: in_accel_scale=0.009580
A: sampling_frequency=50
${gyro_attributes}
P: /devices/platform/magn/iio:device1
N: iio:device1
E: DEVNAME=/dev/iio:device1
E: DEVTYPE=iio_device
E: SUBSYSTEM=iio
A: name=lis3mdl
A: in_magn_x_raw=     1343
A: in_magn_y_raw=        0
A: in_magn_z_raw=    -3082
A: in_magn_scale=0.000146
A: sampling_frequency=80
EOF
    status=0
    umockdev-run --device "$work/testbed.umockdev" -- "$0" --inner "$seconds" "$rounds" || status=$?
    if [[ -n ${BENCH_KEEP:-} ]]; then echo "bench-vs-iio-sensor-proxy: logs kept in $work" >&2; else rm -rf "$work"; fi
    exit "$status"
fi

# ---- inside the testbed (LD_PRELOAD=libumockdev-preload.so, UMOCKDEV_DIR set) -----------------
work=$BENCH_WORK
bin=$BENCH_BIN
pids=()
. scripts/lib/bench-common.sh  # the working directory is the repository (cd above)
. scripts/lib/smaps-breakdown.sh
cleanup() { stop_all_pids; }
trap cleanup EXIT
trap 'exit 130' INT TERM

start_private_bus system-bus system
start_private_bus session-bus session
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$work/system-bus" DBUS_SESSION_BUS_ADDRESS="unix:path=$work/session-bus"

# Python helpers: the feeder and the claim holder (same code for both daemons).
cat >"$work/feeder.py" <<'EOF'
import math, os, sys, time
# Turns the magnetometer about z (one turn in 36 s) by rewriting in_magn_{x,y}_raw in place at a
# fixed width (pwrite at offset 0, same length, no truncation): a reader keeping the file open
# (qiblad) and one reopening it (iio-sensor-proxy) both always read a whole number.
base = os.environ["UMOCKDEV_DIR"] + "/sys/devices/platform/magn/iio:device1/"
fx = os.open(base + "in_magn_x_raw", os.O_WRONLY)
fy = os.open(base + "in_magn_y_raw", os.O_WRONLY)
t0 = time.monotonic()
while True:
    a = (time.monotonic() - t0) / 36 * 2 * math.pi
    os.pwrite(fx, b"%9d\n" % round(1343 * math.cos(a)), 0)
    os.pwrite(fy, b"%9d\n" % round(1343 * math.sin(a)), 0)
    time.sleep(0.05)
EOF
cat >"$work/claim.py" <<'EOF'
import sys, time
from gi.repository import Gio
# claim.py system|session DEST PATH INTERFACE METHOD: claims, prints "claimed", holds the
# connection until stdin closes or SIGTERM (the daemon then sees the name vanish and releases).
bus = Gio.bus_get_sync(Gio.BusType.SYSTEM if sys.argv[1] == "system" else Gio.BusType.SESSION, None)
bus.call_sync(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], None, None, Gio.DBusCallFlags.NONE, 5000, None)
print("claimed", flush=True)
sys.stdin.read()
EOF

"$python" "$work/feeder.py" >"$work/feeder.log" 2>&1 &
feeder_pid=$!
pids+=("$feeder_pid")

# ---- /proc readers ----------------------------------------------------------------------------
oncpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f", s }'; }
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^(non)?voluntary_ctxt_switches:/ { s += $2 } END { print s + 0 }'; }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
smaps_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/smaps_rollup"; }
threads() { ls /proc/"$1"/task | wc -l; }
# Voluntary switches of the thread of $1 that is not the main thread and switches the most
# (qiblad's sampling thread: one sleep per sampling period).
sampler_voluntary() {
    local t best=0 v
    for t in /proc/"$1"/task/*; do
        [[ ${t##*/} == "$1" ]] && continue
        v=$(awk '/^voluntary_ctxt_switches:/ { print $2 }' "$t/status" 2>/dev/null || echo 0)
        ((v > best)) && best=$v
    done
    echo "$best"
}

# ---- iio-sensor-proxy ------------------------------------------------------------------------
"$proxy" >"$work/iio-sensor-proxy.log" 2>&1 &
proxy_pid=$!
pids+=("$proxy_pid")
for _ in $(seq 1 100); do
    gdbus introspect --system -d net.hadess.SensorProxy -o /net/hadess/SensorProxy >/dev/null 2>&1 && break
    kill -0 "$proxy_pid" 2>/dev/null || { echo "iio-sensor-proxy exited: $(cat "$work/iio-sensor-proxy.log")" >&2; exit 1; }
    sleep 0.1
done
has_accel=$(gdbus call --system -d net.hadess.SensorProxy -o /net/hadess/SensorProxy \
    -m org.freedesktop.DBus.Properties.Get net.hadess.SensorProxy HasAccelerometer)
[[ $has_accel == *true* ]] || { echo "iio-sensor-proxy sees no accelerometer ($has_accel): $(cat "$work/iio-sensor-proxy.log")" >&2; exit 1; }

# ---- one qiblad setting ----------------------------------------------------------------------
results=()   # one line per round: setting isp_ns isp_samples q_ns q_samples isp_sw q_sw isp_rss q_rss isp_pss q_pss isp_dirty q_dirty q_threads isp_threads seconds floor_us
# The C floor's six files: the testbed's attributes, read through the preload as qiblad reads them.
floor_files=/sys/bus/iio/devices/iio:device1/in_magn_x_raw,/sys/bus/iio/devices/iio:device1/in_magn_y_raw,/sys/bus/iio/devices/iio:device1/in_magn_z_raw
floor_files+=,/sys/bus/iio/devices/iio:device0/in_accel_x_raw,/sys/bus/iio/devices/iio:device0/in_accel_y_raw,/sys/bus/iio/devices/iio:device0/in_accel_z_raw
run_setting() {  # name sample-rate rest-sample-rate [settling seconds after the claim, default 2 [as-installed]]
    # as-installed: qiblad's default configuration (issue 33), as `make install` runs it: an empty
    # configuration (sample-rate and rest-sample-rate ignored), gpsd and GeoClue2 enabled, neither
    # present here (nothing listens on localhost:2947; the private system bus has no GeoClue2).
    local name=$1 rate=$2 rest=$3 settle=${4:-2} as_installed=${5:-} round sources=(--no-gpsd)
    printf 'sample-rate = %s\nrest-sample-rate = %s\n' "$rate" "$rest" >"$work/qiblad-$name.conf"
    # BENCH_AS_INSTALLED_ARGS: more qiblad arguments for the as-installed settings (to try one lever).
    # shellcheck disable=SC2206
    if [[ -n $as_installed ]]; then : >"$work/qiblad-$name.conf"; sources=(${BENCH_AS_INSTALLED_ARGS:-}); fi
    mkdir -p "$work/etc-$name"
    "$bin/qiblad" --session "${sources[@]}" --config "$work/qiblad-$name.conf" --sysconfdir "$work/etc-$name" \
        --state-dir "$work/state-$name" --location=51.5074,-0.1278 >"$work/qiblad-$name.log" 2>&1 &
    qiblad_pid=$!
    pids+=("$qiblad_pid")
    for _ in $(seq 1 100); do
        busctl --address="$DBUS_SESSION_BUS_ADDRESS" call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
            NameHasOwner s io.github.qiblad.Qibla1 2>/dev/null | grep -q true && break
        kill -0 "$qiblad_pid" 2>/dev/null || { echo "qiblad exited: $(cat "$work/qiblad-$name.log")" >&2; exit 1; }
        sleep 0.1
    done
    sleep 2
    for round in $(seq 1 "$rounds"); do
        # Both claimed at once by the same client code.
        exec {isp_in}> >(exec "$python" "$work/claim.py" system net.hadess.SensorProxy /net/hadess/SensorProxy \
            net.hadess.SensorProxy ClaimAccelerometer >"$work/claim-isp.log" 2>&1)
        exec {q_in}> >(exec "$python" "$work/claim.py" session io.github.qiblad.Qibla1 /io/github/qiblad/Qibla1 \
            io.github.qiblad.Qibla1 ClaimCompass >"$work/claim-qiblad.log" 2>&1)
        for _ in $(seq 1 50); do
            grep -q claimed "$work/claim-isp.log" 2>/dev/null && grep -q claimed "$work/claim-qiblad.log" 2>/dev/null && break
            sleep 0.1
        done
        grep -q claimed "$work/claim-isp.log" || { echo "ClaimAccelerometer failed: $(cat "$work/claim-isp.log")" >&2; exit 1; }
        grep -q claimed "$work/claim-qiblad.log" || { echo "ClaimCompass failed: $(cat "$work/claim-qiblad.log")" >&2; exit 1; }
        sleep "$settle"
        local pn0 qn0 pw0 qw0 qs0 t0 pn1 qn1 pw1 qw1 qs1 t1 s floor_pid= floor_us=0 period_ms
        if [[ -x $work/wake-floor ]]; then
            # Over the same window: wake at qiblad's period, read the six attributes, send a libdbus
            # PropertiesChanged at most every 100 ms (every period at 700 ms), on qiblad's bus.
            period_ms=$(awk -v r="$rate" 'BEGIN { printf "%d", 1000 / r + 0.5 }')
            WAKE_FLOOR_ONLY=wake+6reads+libdbus-signal WAKE_FLOOR_FILES=$floor_files "$work/wake-floor" "$period_ms" \
                $((seconds * 1000 / period_ms)) "$work" "$DBUS_SESSION_BUS_ADDRESS" >"$work/floor-$name-$round.out" 2>&1 &
            floor_pid=$!
            pids+=("$floor_pid")
        fi
        pn0=$(oncpu_ns "$proxy_pid"); qn0=$(oncpu_ns "$qiblad_pid"); pw0=$(switches "$proxy_pid"); qw0=$(switches "$qiblad_pid")
        qs0=$(sampler_voluntary "$qiblad_pid"); t0=$(date +%s%N)
        local trace_pid=
        if [[ -n ${BENCH_TRACE:-} ]]; then
            # Where the window's CPU goes: every 0.1 s, each thread of both daemons (name, on-CPU ns,
            # voluntary switches), for BENCH_KEEP's logs (scripts/lib/bench-common.sh: trace_threads).
            trace_threads "$work/trace-$name-$round.txt" "$seconds" "$qiblad_pid" "$proxy_pid" &
            trace_pid=$!
        fi
        sleep "$seconds"
        [[ -n $trace_pid ]] && wait "$trace_pid"
        pn1=$(oncpu_ns "$proxy_pid"); qn1=$(oncpu_ns "$qiblad_pid"); pw1=$(switches "$proxy_pid"); qw1=$(switches "$qiblad_pid")
        qs1=$(sampler_voluntary "$qiblad_pid"); t1=$(date +%s%N)
        s=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e9 }')
        if [[ -n $floor_pid ]]; then
            wait "$floor_pid" || true
            forget_pid "$floor_pid"
            read -r _ floor_us _ <"$work/floor-$name-$round.out" || floor_us=0
            [[ $floor_us =~ ^[0-9.]+$ ]] || { echo "   the C floor failed: $(cat "$work/floor-$name-$round.out")" >&2; floor_us=0; }
        fi
        results+=("$name $((pn1 - pn0)) $(awk -v s="$s" 'BEGIN { printf "%.1f", s / 0.7 }') $((qn1 - qn0)) $((qs1 - qs0)) \
$((pw1 - pw0)) $((qw1 - qw0)) $(status_kb "$proxy_pid" VmRSS) $(status_kb "$qiblad_pid" VmRSS) \
$(smaps_kb "$proxy_pid" Pss) $(smaps_kb "$qiblad_pid" Pss) $(smaps_kb "$proxy_pid" Private_Dirty) $(smaps_kb "$qiblad_pid" Private_Dirty) \
$(threads "$qiblad_pid") $(threads "$proxy_pid") $s $floor_us")
        echo "   $name round $round: ${results[-1]}" >&2
        if [[ -n ${BENCH_BREAKDOWN:-} ]]; then
            smaps_breakdown "$qiblad_pid" >"$work/breakdown-$name-$round-qiblad.txt"
            smaps_breakdown "$proxy_pid" >"$work/breakdown-$name-$round-isp.txt"
        fi
        exec {isp_in}>&- {q_in}>&-
        sleep 2
    done
    stop_pid "$qiblad_pid"; forget_pid "$qiblad_pid"
}

# qiblad's default rest-sample-rate (SensorConfiguration.restSampleRateHertz).
rest_default=$(sed -n 's/.*var restSampleRateHertz: Double? = \([0-9.]*\).*/\1/p' Sources/Adapters/IIO/SensorTypes.swift)
settings=${BENCH_SETTINGS:-20hz 700ms still stillfull}
# The still settings measure the steady state of a phone lying on a table: their window starts 5 s
# after the claim, past the 2 s that make a rest and the page trim 3 s after a claim
# (CodePageTrimmer.settleAfterClaim), both once per claim, not per hour on the table.
still_settle=5
wanted() { [[ " $settings " == *" $1 "* ]]; }
# qiblad's default rest-sample-rate unless BENCH_REST_RATE says otherwise.
rest_rate=${BENCH_REST_RATE:-$rest_default}
if wanted 20hz; then
    echo "== both claimed ${seconds} s × $rounds rounds: qiblad at 20 Hz" >&2
    run_setting 20hz 20 off
fi
if wanted 700ms; then
    echo "== both claimed ${seconds} s × $rounds rounds: qiblad at 1/0.7 s" >&2
    run_setting 700ms 1.4286 off
fi
if wanted default; then
    # The feeder turns the magnetometer: moving, qiblad as installed.
    echo "== as installed, moving, both claimed ${seconds} s × $rounds rounds" >&2
    run_setting default 20 off 2 as-installed
fi
stop_pid "$feeder_pid"; forget_pid "$feeder_pid"
if wanted defaultstill; then
    echo "== as installed, the phone still, both claimed ${seconds} s × $rounds rounds" >&2
    run_setting defaultstill 20 off "$still_settle" as-installed
fi
if wanted defaultfirst; then
    # Issue 37: a short look: the claim's first seconds as installed, the window from the claim's reply.
    echo "== as installed, the phone still, the claim's first ${seconds} s × $rounds rounds" >&2
    run_setting defaultfirst 20 off 0 as-installed
fi
if wanted still; then
    echo "== the phone still, both claimed ${seconds} s × $rounds rounds: qiblad at 20 Hz, rest-sample-rate $rest_rate" >&2
    run_setting still 20 "$rest_rate" "$still_settle"
fi
if wanted stillfull; then
    echo "== the phone still, both claimed ${seconds} s × $rounds rounds: qiblad at 20 Hz, rest-sample-rate off" >&2
    run_setting stillfull 20 off "$still_settle"
fi

# ---- report ----------------------------------------------------------------------------------
# Medians over the rounds of each setting.
summary() {  # setting → "isp_ns_per q_ns_per ratio isp_rss q_rss isp_pss q_pss isp_dirty q_dirty isp_sw/s q_sw/s q_samples/s isp_threads q_threads"
    printf '%s\n' "${results[@]}" | awk -v want="$1" '
        function median(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                          return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
        $1 == want { n++; p[n] = $2 / $3; q[n] = $4 / $5; r[n] = q[n] / p[n]; prss[n] = $8; qrss[n] = $9; ppss[n] = $10; qpss[n] = $11
                     pd[n] = $12; qd[n] = $13; psw[n] = $6 / $16; qsw[n] = $7 / $16; qrate[n] = $5 / $16; qt = $14; pt = $15
                     pcpu[n] = $2 / $16 / 1e7; qcpu[n] = $4 / $16 / 1e7; f[n] = $17 * 1000; fr[n] = f[n] / p[n] }
        END { printf "%.0f %.0f %.2f %d %d %d %d %d %d %.1f %.1f %.2f %d %d %.3f %.3f %d %.0f %.2f\n", median(p, n), median(q, n), median(r, n),
                     median(prss, n), median(qrss, n), median(ppss, n), median(qpss, n), median(pd, n), median(qd, n),
                     median(psw, n), median(qsw, n), median(qrate, n), pt, qt, median(pcpu, n), median(qcpu, n), n, median(f, n), median(fr, n) }'
}
read -r a_p a_q a_r a_prss a_qrss a_ppss a_qpss a_pd a_qd a_psw a_qsw a_qrate a_pt a_qt a_pcpu a_qcpu a_n a_f a_fr <<<"$(summary 20hz)"
read -r b_p b_q b_r b_prss b_qrss b_ppss b_qpss b_pd b_qd b_psw b_qsw b_qrate b_pt b_qt b_pcpu b_qcpu b_n b_f b_fr <<<"$(summary 700ms)"
read -r c_p c_q c_r c_prss c_qrss c_ppss c_qpss c_pd c_qd c_psw c_qsw c_qrate c_pt c_qt c_pcpu c_qcpu c_n c_f c_fr <<<"$(summary still)"
read -r d_p d_q d_r d_prss d_qrss d_ppss d_qpss d_pd d_qd d_psw d_qsw d_qrate d_pt d_qt d_pcpu d_qcpu d_n d_f d_fr <<<"$(summary stillfull)"
# The day's model: 5 minutes an hour in the hand (the turning 20 Hz run), 55 on a table, claimed
# throughout; CPU-seconds per hour.
day() { awk -v moving="$1" -v still="$2" 'BEGIN { printf "%.2f", (moving * 300 + still * 3300) / 100 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) printf "—"; else printf "%.2f", a / b }'; }
us() { awk -v n="$1" 'BEGIN { printf "%.1f µs", n / 1000 }'; }

machine="$(awk -F': ' '/^model name/ { m = $2; n++ } END { printf "%s (%d logical CPUs)", m, n }' /proc/cpuinfo)"
proxy_version=$(dpkg-query -W -f '${Version}' iio-sensor-proxy 2>/dev/null || echo unknown)
umockdev_version=$(dpkg-query -W -f '${Version}' umockdev 2>/dev/null || echo unknown)
raw=$(printf '  - %s\n' "${results[@]}")
section=$(cat <<EOF
<!-- vs-iio-sensor-proxy:begin (generated by scripts/bench-vs-iio-sensor-proxy.sh; edit outside the markers) -->
## Side by side with iio-sensor-proxy (one umockdev testbed)

- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $machine, $(uname -sr); iio-sensor-proxy $proxy_version, umockdev $umockdev_version.
- Command: \`scripts/bench-vs-iio-sensor-proxy.sh $seconds $rounds\` ($seconds s claimed per round, medians of $rounds rounds per setting;
  both daemons on the machine at the same time, which is shared with other builds: noisy, repeat before quoting).
- Testbed: \`umockdev-run\` with an accelerometer (\`iio:device0\`, udev \`IIO_SENSOR_PROXY_TYPE=iio-poll-accel\`) and a magnetometer
  (\`iio:device1\`) that a feeder turns at 20 Hz. iio-sensor-proxy (private system bus, \`ClaimAccelerometer\`) drives the
  accelerometer only: it has no raw-magnetometer driver. qiblad (\`--session\`, no \`--sysfs-root\`: discovery through the preload,
  \`ClaimCompass\`) reads both and runs the whole compass pipeline. The testbed's files are under
  $(bench_scratch_description "$TMPDIR").
- A *sample* is one poll: iio-sensor-proxy reads one accelerometer vector every 700 ms (3 attributes, orientation); qiblad reads one
  magnetometer and one accelerometer vector per period (6 attributes, calibration, tilt compensation, smoothing, accuracy,
  \`PropertiesChanged\`), counted from its sampling thread's sleeps. On-CPU time from \`/proc/PID/task/*/schedstat\`, all threads.

| measure | qiblad 20 Hz | qiblad 1/0.7 s (\`sample-rate = 1.4286\`) | iio-sensor-proxy (700 ms) |
|---|---:|---:|---:|
| on-CPU per processed sample | $(us "$a_q") | $(us "$b_q") | $(us "$a_p") (with the 20 Hz run), $(us "$b_p") (with the 1/0.7 s run) |
| ratio qiblad / iio-sensor-proxy per sample (goal ≤ 0.5) | **$a_r** | **$b_r** | 1 |
| the C floor beside them at qiblad's period (\`wake-floor.c\`: wake, six reads, a libdbus \`PropertiesChanged\` at most every 100 ms) | $(us "$a_f") | $(us "$b_f") | — |
| ratio C floor / iio-sensor-proxy per sample | $a_fr | $b_fr | 1 |
| CPU while claimed | $(awk -v c="$a_qcpu" 'BEGIN { printf "%.3f", c }') % of one core | $(awk -v c="$b_qcpu" 'BEGIN { printf "%.3f", c }') % | $(awk -v c="$a_pcpu" 'BEGIN { printf "%.3f", c }') % / $(awk -v c="$b_pcpu" 'BEGIN { printf "%.3f", c }') % |
| samples per second (measured) | $a_qrate | $b_qrate | 1.43 |
| context switches per second | $a_qsw | $b_qsw | $a_psw / $b_psw |
| VmRSS | $a_qrss kB | $b_qrss kB | $a_prss kB |
| ratio VmRSS qiblad / iio-sensor-proxy | $(ratio "$a_qrss" "$a_prss") | $(ratio "$b_qrss" "$b_prss") | 1 |
| Pss / Private_Dirty (smaps_rollup) | $a_qpss / $a_qd kB | $b_qpss / $b_qd kB | $a_ppss / $a_pd kB |
| threads while claimed | $a_qt | $b_qt | $a_pt |

### The phone lying still (issue 25: motion-aware sampling)

The feeder stopped: neither sensor changes. qiblad at 20 Hz with \`rest-sample-rate = $rest_rate\` ($([[ $rest_rate == "$rest_default" ]] && echo "the default: ")after 2 s without motion
it reads at $rest_rate Hz, hands a period's samples to the heading only when they drifted from the last ones handed over,
and the first sample that moves brings 20 Hz back), and with \`rest-sample-rate = off\`, each beside
iio-sensor-proxy in the same run. Each window starts ${still_settle} s after the claim (the 20 Hz ones 2 s after): past the 2 s that
make a rest and the page trim 3 s after a claim, both once per claim — the steady state of a phone on a table.

| measure | qiblad, rest $rest_rate Hz | qiblad, rest off | iio-sensor-proxy (700 ms) |
|---|---:|---:|---:|
| CPU while claimed and still | **$(awk -v c="$c_qcpu" 'BEGIN { printf "%.3f", c }') %** of one core | $(awk -v c="$d_qcpu" 'BEGIN { printf "%.3f", c }') % | $(awk -v c="$c_pcpu" 'BEGIN { printf "%.3f", c }') % / $(awk -v c="$d_pcpu" 'BEGIN { printf "%.3f", c }') % |
| samples per second (measured) | $c_qrate | $d_qrate | 1.43 |
| context switches per second | $c_qsw | $d_qsw | $c_psw / $d_psw |
| VmRSS | $c_qrss kB | $d_qrss kB | $c_prss kB |

A day's model, claimed throughout, 5 minutes an hour in the hand (the turning 20 Hz run above) and 55 on a table: qiblad with
motion-aware sampling **$(day "$a_qcpu" "$c_qcpu") CPU-seconds an hour**, without it $(day "$a_qcpu" "$d_qcpu"),
iio-sensor-proxy $(day "$a_pcpu" "$c_pcpu").

- Raw rounds (setting, iio-sensor-proxy on-CPU ns, its samples, qiblad on-CPU ns, its samples, switches isp / qiblad, VmRSS isp / qiblad,
  Pss isp / qiblad, Private_Dirty isp / qiblad, threads qiblad / isp, seconds, C floor µs per sample):
$raw
<!-- vs-iio-sensor-proxy:end -->
EOF
)
printf '%s\n' "$section"
write_marked_section "$output" vs-iio-sensor-proxy "$section"

# ---- as installed: the resident sets side by side and where they are (issue 33) ----------------
# BENCH_BREAKDOWN=1 records smaps by category at the end of every round's window;
# BENCH_BREAKDOWN_OUTPUT names the file for the section (scripts/memory-breakdown.sh sets both).
if [[ -n ${BENCH_BREAKDOWN_OUTPUT:-} ]] && { wanted default || wanted defaultstill; }; then
    rss_rows() {  # setting → one row per round: round, VmRSS isp, VmRSS qiblad, ratio, Pss isp, Pss qiblad
        printf '%s\n' "${results[@]}" | awk -v want="$1" '$1 == want { n++; printf "| %d | %d | %d | %.2f | %d | %d |\n", n, $8, $9, $9 / $8, $10, $11 }'
    }
    median_round() {  # setting → the round whose qiblad/iio-sensor-proxy VmRSS ratio is the median
        printf '%s\n' "${results[@]}" | awk -v want="$1" '$1 == want { n++; print $9 / $8, n }' | sort -g | awk '{ r[NR] = $2 } END { print r[int((NR + 1) / 2)] }'
    }
    breakdown_part() {  # setting title
        local r
        r=$(median_round "$1")
        printf '### %s\n\n| round | iio-sensor-proxy VmRSS kB | qiblad VmRSS kB | ratio | iio-sensor-proxy Pss kB | qiblad Pss kB |\n|---:|---:|---:|---:|---:|---:|\n' "$2"
        rss_rows "$1"
        printf '\nBy mapping, round %s (the median ratio), at the end of its window:\n\n' "$r"
        smaps_breakdown_table qiblad "$work/breakdown-$1-$r-qiblad.txt" iio-sensor-proxy "$work/breakdown-$1-$r-isp.txt"
        printf '\n'
    }
    parts=""
    wanted default && parts+=$(breakdown_part default "Claimed and moving (the feeder turns the magnetometer at 20 Hz)")$'\n\n'
    wanted defaultstill && parts+=$(breakdown_part defaultstill "Claimed and still (the feeder stopped; window from ${still_settle} s after the claim)")$'\n'
    breakdown=$(cat <<EOS
<!-- memory-breakdown:begin (generated by scripts/memory-breakdown.sh; edit outside the markers) -->
## Memory as installed, side by side with iio-sensor-proxy (issue 33)

- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $machine, $(uname -sr); iio-sensor-proxy $proxy_version, umockdev $umockdev_version.
- Command: \`scripts/memory-breakdown.sh $seconds $rounds\` ($seconds s claimed per round, $rounds rounds per setting; the testbed and
  claims of \`scripts/bench-vs-iio-sensor-proxy.sh\`, both daemons claimed at the same moment in the same run).
- qiblad as \`make install\` runs it: \`qiblad --session\`, an empty configuration (defaults: 20 Hz, rest-sample-rate 2 Hz,
  location-source auto), gpsd and GeoClue2 enabled and neither present (nothing on localhost:2947, no GeoClue2 on the system bus);
  \`--location\` gives the position. Release build.
- Categories from \`/proc/PID/smaps\` (\`scripts/lib/smaps-breakdown.sh\`): the executable's mappings by permission, libraries by
  name, \`[heap]\`, the main stack, the other threads' stacks (the anonymous mappings holding their stack pointers), the rest
  of the anonymous memory.

$parts
<!-- memory-breakdown:end -->
EOS
)
    printf '%s\n' "$breakdown"
    write_marked_section "$BENCH_BREAKDOWN_OUTPUT" memory-breakdown "$breakdown"
fi
