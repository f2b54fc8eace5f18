#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Run inside a fresh Debian chroot by packaging/debian-chroot-test.sh: the installed packages at work.
#
#   debian-exercise.sh before-upgrade   --help/--version; qiblad (as the user qiblad, state in
#                                       /var/lib/qiblad as the system unit has it) on a private bus
#                                       against qibla-sim's simulated phone: QiblaBearing and Heading
#                                       by busctl, a calibration stored; systemd-analyze verify;
#                                       desktop-file-validate, appstreamcli validate
#   debian-exercise.sh after-upgrade V  the stored calibration is the same file, same bytes; the
#                                       installed version is V
#   debian-exercise.sh after-remove     the programs are gone, the state is still there
#   debian-exercise.sh after-purge      the state and the configuration directory are gone
#
# Prints "ok N - what" or "not ok N - what" per check; exits 1 if any failed.
set -u
number=0; failures=0
check() {   # what command...
    local what=$1; shift
    number=$((number + 1))
    if "$@" > /tmp/check.out 2>&1; then echo "ok $number - $what"
    else echo "not ok $number - $what"; sed 's/^/#   /' /tmp/check.out; failures=$((failures + 1)); fi
}
saved=/root/calibration.sha256
state=/var/lib/qiblad
name=io.github.qiblad.Qibla1 path=/io/github/qiblad/Qibla1

within() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'; }
angle_near() {  # value target tolerance, on the circle
    awk -v v="$1" -v t="$2" -v tol="$3" 'BEGIN { d = v - t; while (d > 180) d -= 360; while (d < -180) d += 360; exit !(d <= tol && d >= -tol) }'
}

case ${1:?stage} in
before-upgrade)
    check "qiblad --help" qiblad --help
    check "qiblad --version prints the version" sh -c 'qiblad --version | grep -E "^[0-9]+\.[0-9]+\.[0-9]+"'
    check "qiblactl --help" qiblactl --help
    check "qiblactl --version" qiblactl --version
    check "qibla-sim --help" qibla-sim --help
    check "the user qiblad and the group iio exist (sysusers)" sh -c 'getent passwd qiblad && getent group iio'
    check "every library qiblad links is found (ldd)" sh -c '! ldd /usr/bin/qiblad | grep "not found"'

    # The state directory as systemd's StateDirectory=qiblad makes it for User=qiblad.
    install -d -o qiblad -g qiblad -m 700 "$state"
    work=$(mktemp -d) && chown qiblad:qiblad "$work"
    # Everything on the private bus runs as the user qiblad, as the system unit does: the bus, the
    # simulated phone (a PinePhone with a hard-iron offset, a new user in London waving it for 20 s,
    # then turning to find the Qibla: qibla-sim's first-use scene), the installed qiblad pointed at
    # the fake sysfs tree, and the clients.
    # A command word, not a function: "$as_qiblad qiblad … &" is then qiblad's own pid.
    as_qiblad="setpriv --reuid qiblad --regid qiblad --init-groups"
    $as_qiblad dbus-daemon --session --fork --nopidfile --address="unix:path=$work/bus" \
        --print-address=3 --print-pid=4 3> "$work/address" 4> "$work/bus.pid"
    export DBUS_SESSION_BUS_ADDRESS=$(head -1 "$work/address")
    $as_qiblad qibla-sim run --root "$work/phone" --phone pinephone --lat 51.5074 --lon=-0.1278 --scene first-use --hard-iron=12,-8,5 \
        > "$work/sim.log" 2>&1 &
    sim=$!
    for _ in $(seq 50); do [ -e "$work/phone/bus/iio/devices" ] && break; sleep 0.2; done
    $as_qiblad env HOME="$work" qiblad --session --config /etc/qiblad/qiblad.conf --no-gpsd --sysfs-root "$work/phone" \
        --state-dir "$state" --verbose > "$work/qiblad.log" 2>&1 &
    daemon=$!
    bus() { $as_qiblad busctl --address="$DBUS_SESSION_BUS_ADDRESS" "$@"; }
    property() { bus get-property "$name" "$path" "$name" "$1" 2>/dev/null | awk '{print $2}'; }
    owned() { [ "$(bus call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus NameHasOwner s "$name" 2>/dev/null)" = "b true" ]; }
    for _ in $(seq 50); do owned && break; sleep 0.2; done
    check "qiblad owns $name on the private bus" owned
    check "SetManualLocation(London)" bus call -- "$name" "$path" "$name" SetManualLocation dd 51.5074 -0.1278
    bearing=$(property QiblaBearing)
    check "QiblaBearing in London is 118.99° ± 0.05 (busctl: $bearing)" within "$bearing" 118.94 119.04
    # The heading while qiblactl holds a claim (the sensors run only while a client claims the compass).
    $as_qiblad env HOME="$work" qiblactl claim -- sleep 170 > "$work/claim.log" 2>&1 &
    claim=$!
    heading=nan
    for _ in $(seq 100); do
        heading=$(property Heading)
        [ "$heading" != nan ] && [ -n "$heading" ] && break
        sleep 0.3
    done
    check "Heading is a number while claimed (busctl: $heading)" within "${heading:-nan}" 0 360
    check "HasCompass is true" test "$(bus get-property "$name" "$path" "$name" HasCompass)" = "b true"
    # What qiblad stores: the manual location at once; a calibration (calibration-NAME-HASH) once
    # the waving has covered enough directions (the scene's first 20 s; 120 s allowed for a slow
    # emulated or loaded machine, within the claim's 170 s).
    for _ in $(seq 240); do ls "$state"/calibration-* > /dev/null 2>&1 && break; sleep 0.5; done
    check "a calibration stored in $state ($(grep -o 'calibrating ([0-9]* %)' "$work/qiblad.log" | tail -1))" \
        sh -c "ls $state/calibration-*"
    check "the manual location stored in $state" test -s "$state/manual-location"
    sha256sum "$state"/* > "$saved" 2>/dev/null
    check "the bus is still up before qiblad is stopped" owned
    # The claim's command (sleep) too: killing qiblactl leaves its child running.
    kill $(ps -o pid= --ppid "$claim") "$claim" "$sim" 2>/dev/null
    kill "$daemon"; wait "$daemon"
    check "qiblad exited 0 on SIGTERM" test $? = 0
    kill "$(cat "$work/bus.pid")"
    sed 's/^/#   qiblad: /' "$work/qiblad.log" | tail -15

    # The units, offline (no systemd running in a chroot).
    check "systemd-analyze verify (system unit)" systemd-analyze verify --man=yes /usr/lib/systemd/system/qiblad.service
    check "systemd-analyze verify (user units)" systemd-analyze verify --man=yes /usr/lib/systemd/user/qiblad.service /usr/lib/systemd/user/qibla-remind.service
    check "the system bus policy is well-formed XML" sh -c 'dbus-daemon --config-file=/usr/share/dbus-1/system.conf --print-address --nofork --nopidfile --address=unix:path=/tmp/policy-check & p=$!; sleep 1; kill $p'
    check "desktop-file-validate" desktop-file-validate /usr/share/applications/io.github.qiblad.Compass.desktop
    check "appstreamcli validate" appstreamcli validate --no-net /usr/share/metainfo/io.github.qiblad.Compass.metainfo.xml
    check "the French catalogue is installed" test -s /usr/share/locale/fr/LC_MESSAGES/qibla-compass.mo
    check "man qiblad" sh -c 'man -w qiblad && man -w qiblactl && man -w qiblad.conf'
    rm -rf "$work"
    ;;
after-upgrade)
    check "the stored state (location, calibration) is the same bytes after the upgrade" \
        sh -c "grep -q /calibration- $saved && sha256sum -c $saved"
    check "the upgraded qiblad runs" qiblad --version
    check "the installed version is the next one (${2:-?})" \
        sh -c "[ \"\$(dpkg-query -W -f='\${Version}' qiblad)\" = '${2:-?}' ]"
    # The packages' files, for after-purge.
    dpkg -L qiblad qibla-compass qiblad-tools > /root/package-files.list
    ;;
after-remove)
    check "qiblad and qiblactl are gone" sh -c '! command -v qiblad && ! command -v qiblactl && ! command -v qibla-compass'
    check "the state directory stays on remove" test -s "$state/manual-location"
    ;;
after-purge)
    check "the state directory is gone on purge" test ! -e "$state"
    check "no file of the packages is left (directories shared with others may stay)" \
        sh -c 'while read -r p; do [ -d "$p" ] || [ ! -e "$p" ] || { echo "$p"; exit 1; }; done < /root/package-files.list'
    # Outside the test's own .deb copies and man-db's cache of formatted pages (/var/cache/man,
    # a cache man-db's daily job prunes).
    check "no path named qibla* anywhere else (units, policy, rules, systemd's enablement records, /etc/qiblad)" \
        sh -c '! find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /debs -o -path /debs-next -o -path /var/cache/man \) -prune -o -iname "*qibla*" -print | grep .'
    check "the user qiblad stays (Debian leaves system users)" getent passwd qiblad
    rm -f "$saved" /root/package-files.list
    ;;
*) echo "unknown stage $1" >&2; exit 2 ;;
esac
[ $failures = 0 ]
