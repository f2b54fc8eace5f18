#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# polkit/qiblad-iio-sensor-proxy.rules against a real polkitd (Debian 13: polkitd 126), not the
# test suite's python-dbusmock stand-in: pkcheck asks for iio-sensor-proxy's action
# net.hadess.SensorProxy.claim-sensor on behalf of a process of the user qiblad (allowed by the
# rule), of the user nobody (not allowed), and of qiblad again with the rule moved away (not
# allowed: the rule is what allows it) and put back.
#
#   packaging/debian-polkit-check.sh QIBLAD_DEB      as root, in a trixie chroot with /proc, /sys, /dev
#
# e.g. in debian-chroot-test.sh's fresh chroot after its run (packages from Debian's archive:
# polkitd, iio-sensor-proxy for its action's policy file; qiblad from the .deb, its sysusers
# user). A private system bus is started; polkitd is started by it (bus activation). Exit 0 when
# all four answers are as expected.
set -u
deb=${1:?usage: debian-polkit-check.sh QIBLAD_DEB}
apt-get update -q > /dev/null && apt-get install -y -q polkitd iio-sensor-proxy "$deb" > /tmp/polkit-check-install.log 2>&1 \
    || { echo "not ok: apt-get install (/tmp/polkit-check-install.log)"; exit 1; }
getent passwd qiblad > /dev/null || systemd-sysusers
rules=/usr/share/polkit-1/rules.d/qiblad-iio-sensor-proxy.rules
[ -f "$rules" ] || { echo "not ok: $rules is not installed"; exit 1; }
mkdir -p /run/dbus && rm -f /run/dbus/pid /run/dbus/system_bus_socket
dbus-daemon --system --fork || { echo "not ok: no system bus"; exit 1; }
failed=0
check() {   # user expected-exit what
    setpriv --reuid="$1" --regid="$(id -g "$1")" --clear-groups sleep 30 &
    local subject=$!
    sleep 0.5
    pkcheck --action-id net.hadess.SensorProxy.claim-sensor --process "$subject" > /dev/null 2>&1
    local status=$?
    kill "$subject"
    if [ "$status" = "$2" ]; then echo "ok: $3 (pkcheck exit $status)"; else echo "not ok: $3 (pkcheck exit $status, expected $2)"; failed=1; fi
}
check qiblad 0 "a process of the user qiblad may claim"
check nobody 1 "a process of the user nobody may not"
mv "$rules" /tmp/ && sleep 2   # polkitd rereads its rules when the directory changes
check qiblad 1 "without the rule, qiblad may not either"
mv /tmp/qiblad-iio-sensor-proxy.rules "$rules" && sleep 2
check qiblad 0 "with the rule back, qiblad may again"
kill "$(cat /run/dbus/pid)"
exit $failed
