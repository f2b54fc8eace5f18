# SPDX-License-Identifier: Apache-2.0
# Shared by the benchmark scripts (sourced, not run): the processes they start, and private
# dbus-daemons with the same open policy as Tests/TestSupport's PrivateBus.
# Expects: $work (a scratch folder) and the array pids=() in the sourcing script.

# Where scratch folders go: a tmpfs mounted `noatime` when there is one, else /dev/shm, else /tmp.
# Sysfs lives in memory and never updates access times (kernfs has no atime; `stat` a sysfs file
# before and after reading it). A simulated tree on ext4 cost each sample an atime update and its
# journal work (14 % of the claimed daemon's on-CPU time under perf); on /dev/shm (relatime) a read
# after the simulator's rewrite still updates atime and dirties the inode (touch_atime,
# __mark_inode_dirty: 4.5 % under perf, ≈ 7 µs per sample pair), which no real sensor costs. So, as
# root (CI, the benchmark machine), the first benchmark mounts a small tmpfs with `noatime` on
# /run/qiblad-bench and leaves it there for the next runs (`umount /run/qiblad-bench` removes it).
# BENCH_TMPDIR overrides all of this.
bench_noatime_root=/run/qiblad-bench
bench_scratch_root() {
    if [[ -n ${BENCH_TMPDIR:-} ]]; then echo "$BENCH_TMPDIR"; return; fi
    if ! findmnt -rn -o OPTIONS "$bench_noatime_root" 2>/dev/null | grep -qw noatime && [[ $(id -u) == 0 ]]; then
        mkdir -p "$bench_noatime_root" &&
            mount -t tmpfs -o noatime,mode=1777,size=256m qiblad-bench "$bench_noatime_root" 2>/dev/null || true
    fi
    if findmnt -rn -o OPTIONS "$bench_noatime_root" 2>/dev/null | grep -qw noatime; then echo "$bench_noatime_root"
    elif [[ -d /dev/shm && -w /dev/shm ]]; then echo /dev/shm
    else echo /tmp; fi
}

# What the scratch root is, for the tables: "a noatime tmpfs (/run/qiblad-bench)" and the like.
bench_scratch_description() {
    local root=${1:-$(bench_scratch_root)} fstype options
    fstype=$(findmnt -rn -T "$root" -o FSTYPE 2>/dev/null | head -1)
    options=$(findmnt -rn -T "$root" -o OPTIONS 2>/dev/null | head -1)
    if [[ ,$options, == *,noatime,* ]]; then echo "$root (${fstype:-?}, noatime, as sysfs)"
    else echo "$root (${fstype:-?}, $(grep -ow 'relatime\|strictatime' <<<"$options" | head -1 || echo atime): each read after a rewrite updates atime, which sysfs does not)"; fi
}

# Stops one process this script started: SIGTERM, up to 3 s of grace, then SIGKILL.
stop_pid() {
    local pid=$1 i
    kill "$pid" 2>/dev/null || return 0
    for i in $(seq 1 30); do
        kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
        sleep 0.1
    done
    echo "$(basename "$0"): pid $pid ignored SIGTERM for 3 s, sending SIGKILL" >&2
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

# Stops every process in pids, newest first.
stop_all_pids() { local i; for ((i = ${#pids[@]} - 1; i >= 0; i--)); do stop_pid "${pids[i]}"; done; pids=(); }

# Removes one pid from pids (after stopping it by hand).
forget_pid() { local keep=() p; for p in "${pids[@]}"; do [[ $p == "$1" ]] || keep+=("$p"); done; pids=("${keep[@]}"); }

# start_private_bus NAME TYPE: a dbus-daemon listening on $work/NAME (TYPE session or system),
# its configuration, address and log beside it; returns once it accepts connections.
start_private_bus() {
    cat >"$work/$1.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>$2</type>
  <listen>unix:path=$work/$1</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
CONF
    dbus-daemon --config-file="$work/$1.conf" --nofork --print-address=1 >"$work/$1.address" 2>"$work/$1.log" &
    pids+=($!)
    for _ in $(seq 1 100); do grep -q unix: "$work/$1.address" 2>/dev/null && break; sleep 0.05; done
    grep -q unix: "$work/$1.address" || { echo "$(basename "$0"): dbus-daemon ($1) did not start: $(cat "$work/$1.log")" >&2; exit 1; }
}

# write_marked_section OUTPUT MARKER TEXT: replaces what lies between "<!-- MARKER:begin" and
# "<!-- MARKER:end -->" in OUTPUT with TEXT (which carries both markers), or appends TEXT when the
# markers are missing; nothing for /dev/null. Text outside the markers is kept.
write_marked_section() {
    local output=$1 marker=$2 text=$3
    [[ $output != /dev/null ]] || return 0
    [[ -f $output ]] || printf '# Benchmarks\n' >"$output"
    if grep -q "<!-- $marker:begin" "$output" && grep -q "<!-- $marker:end -->" "$output"; then
        printf '%s\n' "$text" >"$work/section.md"
        awk -v file="$work/section.md" -v begin="<!-- $marker:begin" -v end="<!-- $marker:end -->" '
            index($0, begin) == 1 { while ((getline line < file) > 0) print line; skip = 1; next }
            index($0, end) == 1 { skip = 0; next }
            !skip { print }' "$output" >"$work/out.md"
        cat "$work/out.md" >"$output"
    else
        printf '\n%s\n' "$text" >>"$output"
    fi
    echo "updated $output" >&2
}

# trace_threads FILE SECONDS PID...: every 0.1 s for SECONDS, one line per thread of each PID:
# milliseconds since the start, pid, tid, on-CPU ns (schedstat field 1), voluntary switches, name.
# Where a window's CPU goes, thread by thread and moment by moment (issue 37).
trace_threads() {
    local file=$1 seconds=$2 t0 now; shift 2
    t0=$(date +%s%N)
    : >"$file"
    while :; do
        now=$(date +%s%N)
        (((now - t0) / 1000000 > seconds * 1000)) && break
        for pid in "$@"; do
            for task in /proc/"$pid"/task/*; do
                printf '%d %s %s %s %s %s\n' $(((now - t0) / 1000000)) "$pid" "${task##*/}" \
                    "$(cut -d' ' -f1 "$task/schedstat" 2>/dev/null)" \
                    "$(awk '/^voluntary_ctxt_switches:/ { print $2 }' "$task/status" 2>/dev/null)" \
                    "$(tr ' ' _ <"$task/comm" 2>/dev/null)"
            done
        done >>"$file"
        sleep 0.1
    done
}
