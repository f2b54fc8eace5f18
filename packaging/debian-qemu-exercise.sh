#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The installed packages of a foreign architecture (arm64 on an amd64 host) at work under
# qemu-user-static, as far as qemu-user allows: run as root on the host after
# `ARCH=arm64 packaging/debian-chroot-test.sh WORKDIR`, which builds the packages in
# WORKDIR/build-arm64 and stops there (a fresh foreign chroot does not come up under qemu-user:
# mmdebstrap's setup fails in dpkg).
#
#   sudo packaging/debian-qemu-exercise.sh [WORKDIR]      (default /var/tmp/qiblad-debian)
#
# The packages are installed into the build chroot (apt-get install ./*.deb). Under qemu-user the
# chroot's own dbus-daemon stops answering after its first clients and busctl spins (seen with
# trixie's, 2026-11-27), so the bus and the busctl checks are the host's; everything of ours —
# qiblad, qiblactl and the simulated phone (qibla-sim) — is the chroot's arm64 build, emulated.
# Prints "ok N - what" / "not ok N - what"; exits 1 if any failed.
set -u
work=${1:-/var/tmp/qiblad-debian}
arch=${ARCH:-arm64}
root=$work/build-$arch
[ -d "$root/build" ] || { echo "no build chroot at $root" >&2; exit 2; }
number=0; failures=0
check() {   # what command...
    local what=$1; shift
    number=$((number + 1))
    if "$@" > /tmp/qemu-check.out 2>&1; then echo "ok $number - $what"
    else echo "not ok $number - $what"; sed 's/^/#   /' /tmp/qemu-check.out; failures=$((failures + 1)); fi
}
within() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'; }
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive DBUS_SESSION_BUS_ADDRESS=unix:path=/tmp/qemu-exercise/bus "$@"; }
# For "in_root_exec … &": the background job's pid is the program's own (chroot and env exec it),
# so the cleanup's kill reaches it.
in_root_exec() { exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    DBUS_SESSION_BUS_ADDRESS=unix:path=/tmp/qemu-exercise/bus "$@"; }

for m in proc sys dev; do mount --bind "/$m" "$root/$m"; done
rm -rf "$root/debs-$arch" "$root/tmp/qemu-exercise" && mkdir -p "$root/debs-$arch" "$root/tmp/qemu-exercise"
cp "$root"/build/*_"$arch".deb "$root/debs-$arch/" && rm -f "$root/debs-$arch"/*dbgsym*
w=$root/tmp/qemu-exercise
pids=()
cleanup() {
    # qiblactl claim's command (sleep) too: killing qiblactl leaves its child running.
    for pid in "${pids[@]}"; do pkill -P "$pid" 2>/dev/null; done
    kill "${pids[@]}" 2>/dev/null; sleep 1
    [ -s "$w/bus.pid" ] && kill "$(cat "$w/bus.pid")" 2>/dev/null
    for m in dev sys proc; do umount "$root/$m"; done
}
trap cleanup EXIT

started=$(date +%s)
check "apt-get install the $arch packages into the build chroot" in_root sh -c "apt-get install -y /debs-$arch/*.deb"
check "qiblad --version (emulated)" sh -c "chroot '$root' qiblad --version | grep -E '^[0-9]+\.[0-9]+\.[0-9]+'"
check "qiblactl --help (emulated)" chroot "$root" qiblactl --help
check "qiblad is an $arch executable" sh -c "file -L '$root/usr/bin/qiblad' | grep -Ei 'aarch64|arm64'"

dbus-daemon --session --fork --nopidfile --address="unix:path=$w/bus" --print-pid=3 3> "$w/bus.pid"
bus() { busctl --address="unix:path=$w/bus" "$@"; }
name=io.github.qiblad.Qibla1 path=/io/github/qiblad/Qibla1
property() { bus get-property "$name" "$path" "$name" "$1" 2>/dev/null | awk '{print $2}'; }
in_root_exec qibla-sim run --root /tmp/qemu-exercise/phone --phone pinephone --lat 51.5074 --lon=-0.1278 \
    --scene first-use --hard-iron=12,-8,5 > "$w/sim.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -e "$w/phone/bus/iio/devices" ] && break; sleep 0.2; done
in_root_exec qiblad --session --no-gpsd --sysfs-root /tmp/qemu-exercise/phone --state-dir /tmp/qemu-exercise/state \
    --verbose > "$w/qiblad.log" 2>&1 &
pids+=($!)
owned() { [ "$(bus call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus NameHasOwner s "$name" 2>/dev/null)" = "b true" ]; }
for _ in $(seq 150); do owned && break; sleep 0.2; done
check "qiblad ($arch, emulated) owns $name on the host's bus" owned
check "SetManualLocation(London)" bus call -- "$name" "$path" "$name" SetManualLocation dd 51.5074 -0.1278
bearing=$(property QiblaBearing)
check "QiblaBearing in London is 118.99° ± 0.05 (busctl: $bearing)" within "${bearing:-nan}" 118.94 119.04
check "qiblactl status (emulated, libdbus) answers" sh -c "chroot '$root' /usr/bin/env DBUS_SESSION_BUS_ADDRESS=unix:path=/tmp/qemu-exercise/bus qiblactl status | grep -F '118.99'"
in_root_exec qiblactl claim -- sleep 600 > "$w/claim.log" 2>&1 &
pids+=($!)
heading=nan
for _ in $(seq 120); do
    heading=$(property Heading)
    [ "$heading" != nan ] && [ -n "$heading" ] && break
    sleep 0.5
done
check "Heading is a number while qiblactl claims (busctl: $heading)" within "${heading:-nan}" 0 360
check "HasCompass is true" test "$(bus get-property "$name" "$path" "$name" HasCompass)" = "b true"
for _ in $(seq 240); do ls "$w"/state/calibration-* > /dev/null 2>&1 && break; sleep 0.5; done
check "a calibration stored ($(grep -o 'calibrating ([0-9]* %)' "$w/qiblad.log" | tail -1))" sh -c "ls '$w'/state/calibration-*"
echo "# $(( $(date +%s) - started )) s; qiblad's log ends:"
grep -v "gave back" "$w/qiblad.log" | tail -6 | sed 's/^/#   /'
[ $failures -eq 0 ]
