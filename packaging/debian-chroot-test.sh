#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The whole Debian cycle with Debian's own Swift (trixie's swiftlang 6.0.3), as a maintainer does it,
# in clean chroots made with mmdebstrap (Debian's packages only):
#
#   1. source   the orig tarballs (packaging/make-orig-tarballs.sh: this tree and the three Swift
#               packages as components), dpkg-source -b, then dpkg-source -x (debian/patches applied)
#   2. chroot   a clean trixie build chroot: build-essential, lintian, apt-get build-dep of the source
#               and the test suite's tools (gpsd, dbus, strace, Xvfb…)
#   3. package  dpkg-buildpackage -b (nocheck: the suite runs next, on its own, so a failure is
#               reported and the cycle goes on), lintian on the result
#   4. tests    the daemon's suite (swift test), then the app's (README's make check, in two steps)
#   5. install  a fresh trixie chroot: apt-get install of the built .debs; qiblad --help/--version,
#               qiblactl --help; the installed qiblad on a private bus against qibla-sim's simulated
#               phone, QiblaBearing and Heading read with busctl; systemd-analyze verify on the units;
#               desktop-file-validate and appstreamcli validate on the app's files
#   6. upgrade  the next version, built again in the build chroot (a changelog entry 0.2.0-1+next,
#               dpkg-buildpackage -b -nc) and installed over the first: the state directory, with
#               the calibration qiblad stored in it, is kept
#   7. purge    apt-get remove (state kept), then purge (state gone), and a list of what is left
#               beside the files the chroot had before the install
#
#   sudo packaging/debian-chroot-test.sh [WORKDIR]      (default /var/tmp/qiblad-debian)
#
# Needs root, network access to Debian's archive, and on the host: mmdebstrap, rsync, git, python3,
# dpkg-dev (apt-get install mmdebstrap rsync dpkg-dev; for ARCH=arm64 also qemu-user-static and
# binfmt-support, with binfmt_misc mounted). About 90 minutes from nothing on 2 busy cores.
#
# ARCH=arm64 makes an arm64 chroot run by qemu-user-static (binfmt_misc must be enabled) and
# stops after the tests; packaging/debian-qemu-exercise.sh then installs and exercises its packages. KEEP_BUILD_CHROOT=1 reuses an existing build chroot, RESUME=package an
# existing build chroot and built tree (for trying changes to debian/).
# Each phase prints its duration; the last lines are the summary.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/var/tmp/qiblad-debian}
arch=${ARCH:-$(dpkg --print-architecture)}
mirror=${MIRROR:-http://deb.debian.org/debian}
suite=trixie
build=$work/build-$arch
fresh=$work/fresh-$arch
out=$work/out-$arch
log=$work/log-$arch
mkdir -p "$work" "$out" "$log"
summary=()
failed=0

phase_start() { phase=$1; started=$(date +%s); echo "=== $phase: $2"; }
phase_end() {   # status text
    local took=$(( $(date +%s) - started ))
    summary+=("$(printf '%-10s %6ss  %s' "$phase" "$took" "$1")")
    echo "=== $phase: $1 (${took}s)"
}
fail() { failed=1; phase_end "FAILED: $*"; }
finish() {
    echo; echo "=== summary ($arch, $work)"
    printf '%s\n' "${summary[@]}"
    exit $failed
}

# The kernel's file systems inside a chroot, for as long as a command runs there.
in_chroot() {   # root command...
    local root=$1; shift
    # The root a mount point of its own, so that unshare(1) in the tests (GeoClue's harness) can
    # change its propagation.
    # /sys/fs/cgroup as on a booted system: sd-bus reads a peer's credentials there (busctl status
    # fails with "No medium found" without it).
    mount --bind "$root" "$root"
    mount --bind /proc "$root/proc" && mount --bind /sys "$root/sys" && mount --bind /sys/fs/cgroup "$root/sys/fs/cgroup" \
        && mount --bind /dev "$root/dev" && mount --bind /dev/pts "$root/dev/pts" && mount -t tmpfs tmpfs "$root/dev/shm"
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        DEBIAN_FRONTEND=noninteractive "$@"
    local status=$?
    umount "$root/dev/shm" "$root/dev/pts" "$root/dev" "$root/sys/fs/cgroup" "$root/sys" "$root/proc" "$root"
    return $status
}

version=$(sed -n 's/^public let qiblaVersion = "\(.*\)"$/\1/p' "$top/Sources/Interface/PropertyValue.swift")
debversion=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)

# 1. The source package.
phase_start source "orig tarballs and the source package qiblad $debversion"
rm -rf "$out"/*
"$top/packaging/make-orig-tarballs.sh" "$out" > "$log/source.log" 2>&1 || { fail "make-orig-tarballs.sh (log/source.log)"; finish; }
phase_end ok

# RESUME=package: the build chroot and the unpacked tree of an earlier run are kept (its .build
# too), this tree's tracked files that differ are copied over theirs (rsync -c: the unchanged keep
# their times, so SwiftPM rebuilds only what changed), the source package is made again from the
# new tarballs (for lintian), and the run goes on from dpkg-buildpackage -nc.
if [ "${RESUME:-}" = package ] && [ -d "$build/build/qiblad-$version/.build" ]; then
    (cd "$top" && git ls-files) | rsync -rc --files-from=- --out-format='%n' "$top/" "$build/build/qiblad-$version/" \
        > "$log/resume-copied"
    summary+=("resumed   from the package phase in $build ($(wc -l < "$log/resume-copied") changed files copied in)")
    rm -rf "$build/build/src" && mkdir -p "$build/build/src" && cp "$out"/qiblad_"$version".orig*.tar.xz "$build/build/src/"
    cat > "$build/build/src/source.sh" <<SOURCE
set -e
cd /build/src
mkdir qiblad-$version && tar -xf qiblad_$version.orig.tar.xz -C qiblad-$version --strip-components=1
for c in swift-argument-parser swift-log swift-system; do
    mkdir qiblad-$version/\$c && tar -xf qiblad_$version.orig-\$c.tar.xz -C qiblad-$version/\$c --strip-components=1
done
dpkg-source -b qiblad-$version
cp qiblad_$debversion.dsc qiblad_$debversion.debian.tar.xz qiblad_$version.orig*.tar.xz /build/
SOURCE
    in_chroot "$build" sh -e /build/src/source.sh > "$log/resume-source.log" 2>&1 || { fail "dpkg-source -b (log/resume-source.log)"; finish; }
    nc=-nc
else
nc=

# 2. The build chroot.
phase_start chroot "clean $suite $arch build chroot"
# swiftlang's /usr/bin/swift is an absolute symbolic link (to /usr/libexec/swift/bin/swift): seen
# from outside the chroot it points at the host's tree, so the link itself is what is tested.
if [ "${KEEP_BUILD_CHROOT:-0}" = 1 ] && { [ -L "$build/usr/bin/swift" ] || [ -x "$build/usr/bin/swift" ]; }; then
    phase_end "reused $build"
else
    rm -rf "$build"
    # The suite's tools beyond Build-Depends (README's install line, as far as trixie has them).
    if ! mmdebstrap --arch="$arch" --variant=buildd \
        --include=build-essential,lintian,git,python3,gpsd,gpsd-clients,dbus,dbus-daemon,systemd,iproute2,strace,mount,util-linux,man-db,xvfb,xauth,xdotool,desktop-file-utils,appstream,at-spi2-core,gir1.2-atspi-2.0,python3-gi,python3-dbusmock,gir1.2-gtk-4.0,umockdev,iio-sensor-proxy,locales-all,geoclue-2.0,gettext-base,weston,phoc,phosh,grim,wlr-randr,gnome-settings-daemon-common \
        "$suite" "$build" "$mirror" > "$log/chroot.log" 2>&1; then
        fail "mmdebstrap (log/chroot.log)"; finish
    fi
    phase_end ok
fi
mkdir -p "$build/build"
rm -rf "$build/build"/*
cp "$out"/qiblad_"$version".orig*.tar.xz "$build/build/"
# dpkg-source -b from the unpacked orig tarballs, then -x: exactly what a buildd unpacks.
cat > "$build/build/unpack.sh" <<EOF
set -e
cd /build
apt-get update -q
mkdir qiblad-$version.src && tar -xf qiblad_$version.orig.tar.xz -C qiblad-$version.src --strip-components=1
for c in swift-argument-parser swift-log swift-system; do
    mkdir qiblad-$version.src/\$c && tar -xf qiblad_$version.orig-\$c.tar.xz -C qiblad-$version.src/\$c --strip-components=1
done
dpkg-source -b qiblad-$version.src
rm -rf qiblad-$version.src
dpkg-source -x qiblad_$debversion.dsc qiblad-$version
apt-get build-dep -y ./qiblad-$version
EOF
phase_start build-dep "dpkg-source -b/-x and apt-get build-dep"
in_chroot "$build" sh -e /build/unpack.sh > "$log/build-dep.log" 2>&1 || { fail "log/build-dep.log"; finish; }
in_chroot "$build" swift --version 2>&1 | head -1
phase_end ok

fi  # RESUME

# 3. The binary packages and lintian.
phase_start package "dpkg-buildpackage -b (DEB_BUILD_OPTIONS=nocheck)"
if in_chroot "$build" sh -c "cd /build/qiblad-$version && DEB_BUILD_OPTIONS='nocheck parallel=$(nproc)' dpkg-buildpackage -b -us -uc $nc" > "$log/package.log" 2>&1; then
    phase_end "ok: $(cd "$build/build" && ls ./*.deb | xargs -n1 basename | tr '\n' ' ')"
else
    fail "log/package.log"; finish
fi
cp "$build"/build/*.deb "$build"/build/*.changes "$build"/build/*.dsc "$build"/build/*.debian.tar.* "$out/"

phase_start lintian "lintian on the source and binary packages"
in_chroot "$build" sh -c "cd /build && lintian --info --display-info --pedantic qiblad_${debversion}_$arch.changes qiblad_$debversion.dsc" > "$log/lintian.log" 2>&1
lintian_status=$?
tags=$(grep -cE '^[EWIP]: ' "$log/lintian.log")
errors=$(grep -cE '^[EW]: ' "$log/lintian.log")
if [ "$errors" = 0 ] && [ $lintian_status -eq 0 ]; then phase_end "ok: no errors or warnings, $tags info/pedantic tags (log/lintian.log)"
else fail "$errors errors/warnings (log/lintian.log)"; fi

# 4. The test suites, on the unpacked source, with the release build's packages already done.
if [ "${SKIP_TESTS:-0}" = 1 ]; then
    summary+=("tests     skipped (SKIP_TESTS=1)")
else
phase_start tests "swift test (daemon), then the app's (its tests start Xvfb, weston, phoc)"
cat > "$build/build/tests.sh" <<EOF
cd /build/qiblad-$version
export QIBLAD_DISTRIBUTION_DEPENDENCIES=\$PWD HOME=/build/home
mkdir -p \$HOME
swift test 2>&1 | tee /build/tests-daemon.log | tail -25
daemon=\${PIPESTATUS[0]}
swift test --package-path clients/qibla-compass 2>&1 | tee /build/tests-app.log | tail -25
app=\${PIPESTATUS[0]}
echo "daemon suite exit \$daemon, app suite exit \$app"
[ \$daemon = 0 ] && [ \$app = 0 ]
EOF
if in_chroot "$build" bash /build/tests.sh > "$log/tests.log" 2>&1; then phase_end "ok: $(tail -1 "$log/tests.log")"
else fail "$(tail -1 "$log/tests.log") (log/tests.log, build-$arch/build/tests-*.log)"; fi
cp "$build"/build/tests-*.log "$log/" 2>/dev/null
fi

[ "$arch" = "$(dpkg --print-architecture)" ] || finish

# 5. A fresh chroot, the packages installed from files, everything else from Debian.
phase_start fresh "a fresh $suite chroot (minbase, the validators' packages)"
rm -rf "$fresh"
if ! mmdebstrap --arch="$arch" --variant=minbase \
    --include=systemd,dbus-daemon,man-db,desktop-file-utils,appstream,procps,util-linux \
    "$suite" "$fresh" "$mirror" > "$log/fresh.log" 2>&1; then
    fail "mmdebstrap (log/fresh.log)"; finish
fi
mkdir -p "$fresh/debs" && cp "$out"/*.deb "$fresh/debs/"
# What the system holds before the packages come: the purge is compared with it.
(cd "$fresh" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./debs -o -path ./run -o -path ./tmp \) -prune -o -print | sort) > "$log/files-before"
phase_end ok

phase_start install "apt-get install ./qiblad*.deb ./qibla-compass*.deb"
in_chroot "$fresh" sh -c 'apt-get update -q && apt-get install -y /debs/*.deb' > "$log/install.log" 2>&1 || { fail "log/install.log"; finish; }
phase_end "ok: $(grep -c '^Setting up' "$log/install.log") packages set up"

phase_start exercise "the installed programs, units and app files"
cp "$top/packaging/debian-exercise.sh" "$fresh/exercise.sh"
if in_chroot "$fresh" bash /exercise.sh before-upgrade > "$log/exercise.log" 2>&1; then phase_end "ok: $(grep -c '^ok ' "$log/exercise.log") checks"
else fail "$(grep -m1 '^not ok' "$log/exercise.log") (log/exercise.log)"; fi

# 6. The next version, built again: a changelog entry $debversion+next in the unpacked source, the
# debhelper stamps removed, dpkg-buildpackage -b -nc in the build chroot (SwiftPM's release build
# is kept, so the build redoes only what changed: the packages' version), the changelog put back;
# the new .debs installed over the old ones.
next=$debversion+next
phase_start upgrade "to $next, built again: the stored calibration is kept"
cat > "$build/build/next.sh" <<EOF
set -e
cd /build/qiblad-$version
cp debian/changelog /build/changelog.$debversion
trap 'cp /build/changelog.$debversion debian/changelog' EXIT
maintainer=\$(dpkg-parsechangelog -S Maintainer)
{ printf '%s\n\n  * %s\n\n -- %s  %s\n\n' 'qiblad ($next) unstable; urgency=medium' \
    'The next version, for the upgrade test (packaging/debian-chroot-test.sh).' \
    "\$maintainer" "\$(date -R)"; cat /build/changelog.$debversion; } > debian/changelog
rm -f debian/debhelper-build-stamp debian/*.debhelper.log
DEB_BUILD_OPTIONS='nocheck parallel=$(nproc)' dpkg-buildpackage -b -us -uc -nc
EOF
rm -rf "$fresh/debs-next" && mkdir -p "$fresh/debs-next"
if ! in_chroot "$build" bash /build/next.sh > "$log/next.log" 2>&1; then fail "dpkg-buildpackage of $next (log/next.log)"
elif cp "$build"/build/*_"$next"_*.deb "$fresh/debs-next/" && cp "$build"/build/*_"$next"_*.deb "$out/" \
    && in_chroot "$fresh" sh -c 'apt-get install -y /debs-next/*.deb' > "$log/upgrade.log" 2>&1 \
    && in_chroot "$fresh" bash /exercise.sh after-upgrade "$next" >> "$log/exercise.log" 2>&1; then
    phase_end "ok: $(grep -c '^Unpacking .* over' "$log/upgrade.log") packages upgraded ($(cd "$fresh/debs-next" && ls | tr '\n' ' '))"
else fail "log/upgrade.log, log/exercise.log"; fi

# 7. Remove, then purge.
phase_start purge "apt-get remove, then purge; what is left"
in_chroot "$fresh" sh -c 'apt-get remove -y qibla-compass qiblad qiblad-tools' > "$log/purge.log" 2>&1 \
    && in_chroot "$fresh" bash /exercise.sh after-remove >> "$log/exercise.log" 2>&1 \
    && in_chroot "$fresh" sh -c 'dpkg --purge qibla-compass qiblad qiblad-tools && apt-get autoremove --purge -y' >> "$log/purge.log" 2>&1 \
    && in_chroot "$fresh" bash /exercise.sh after-purge >> "$log/exercise.log" 2>&1
status=$?
rm -f "$fresh/exercise.sh"; rm -rf "$fresh/debs" "$fresh/debs-next"
(cd "$fresh" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./debs -o -path ./run -o -path ./tmp \) -prune -o -print | sort) > "$log/files-after"
# For the record: what the chroot holds now and did not before (the dependencies apt-get
# autoremove keeps, apt's and dpkg's records, the accounts). The exercise's after-purge stage
# checks that none of it is the packages' own.
comm -13 "$log/files-before" "$log/files-after" > "$log/files-left"
if [ $status -eq 0 ]; then
    phase_end "ok: no file of the packages, no qibla* path, no state left ($(wc -l < "$log/files-left") other new paths: log/files-left)"
else
    fail "$(grep '^not ok' "$log/exercise.log" | tail -3 | tr '\n' ' ') (log/exercise.log)"
fi
finish
