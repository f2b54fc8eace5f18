#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The upstream tarballs of Debian's source package (dpkg-source format 3.0 (quilt), several tarballs):
#
#   qiblad_VERSION.orig.tar.xz                         this repository's tracked files (git archive)
#   qiblad_VERSION.orig-swift-argument-parser.tar.xz   the releases pinned in Package.resolved,
#   qiblad_VERSION.orig-swift-log.tar.xz               each unpacked by dpkg-source into a directory
#   qiblad_VERSION.orig-swift-system.tar.xz            of its name beside Package.swift
#
# Debian packages none of the three Swift packages, so the source package carries their upstream
# releases unmodified; debian/patches lowers their manifests' tools version for Debian's swiftlang
# (ARCHITECTURE.md, "Distribution builds"). Nothing made here is committed.
#
#   packaging/make-orig-tarballs.sh [--unpack] OUTDIR
#
# --unpack also unpacks them as dpkg-source -x would, into OUTDIR/qiblad-VERSION (the components
# in swift-argument-parser/, swift-log/, swift-system/): ready for apt-get build-dep and
# dpkg-buildpackage there.
#
# The dependencies are cloned from the locations in Package.resolved (git's url.insteadOf may point
# them at local mirrors) and checked against the pinned revisions.
set -eu
unpack=0
if [ "${1:-}" = --unpack ]; then unpack=1; shift; fi
out=${1:?usage: make-orig-tarballs.sh [--unpack] OUTDIR}
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
version=$(sed -n 's/^public let qiblaVersion = "\(.*\)"$/\1/p' "$top/Sources/Interface/PropertyValue.swift")
[ -n "$version" ] || { echo "no qiblaVersion in Sources/Interface/PropertyValue.swift" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# HEAD with the tracked files' uncommitted changes (git stash create), so a change can be tried
# before it is committed; a clean tree gives HEAD itself.
tree=$(git -C "$top" stash create)
git -C "$top" archive --format=tar --prefix="qiblad-$version/" "${tree:-HEAD}" | xz -9 > "$out/qiblad_$version.orig.tar.xz"

python3 - "$top/Package.resolved" > "$work/pins" <<'PY'
import json, sys
for pin in json.load(open(sys.argv[1]))["pins"]:
    print(pin["identity"], pin["location"], pin["state"]["version"], pin["state"]["revision"])
PY
while read -r name location version_pin revision; do
    git clone --quiet --bare --depth 1 --branch "$version_pin" "$location" "$work/$name.git" 2>/dev/null \
        || git clone --quiet --bare "$location" "$work/$name.git"
    actual=$(git -C "$work/$name.git" rev-parse "$version_pin^{commit}")
    [ "$actual" = "$revision" ] || { echo "$name $version_pin is $actual, Package.resolved pins $revision" >&2; exit 1; }
    # The files' times are the release commit's; a mirror that rewrote them to the epoch (lintian:
    # package-contains-ancient-file) gets qiblad's commit time instead.
    when=$(git -C "$work/$name.git" log -1 --format=%ct "$revision")
    [ "$when" -gt 0 ] || when=$(git -C "$top" log -1 --format=%ct HEAD)
    mkdir "$work/$name" && git -C "$work/$name.git" archive --format=tar "$revision" | tar -x -C "$work/$name"
    tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$when" \
        --transform="s|^$name|$name-$version_pin|" -cf - "$name" | xz -9 > "$out/qiblad_$version.orig-$name.tar.xz"
    echo "$name $version_pin ($revision)"
done < "$work/pins"
ls -l "$out"/qiblad_"$version".orig*.tar.xz
if [ $unpack = 1 ]; then
    tree=$out/qiblad-$version
    rm -rf "$tree" && mkdir -p "$tree"
    tar -xf "$out/qiblad_$version.orig.tar.xz" -C "$tree" --strip-components=1
    while read -r name _; do
        mkdir "$tree/$name" && tar -xf "$out/qiblad_$version.orig-$name.tar.xz" -C "$tree/$name" --strip-components=1
    done < "$work/pins"
    echo "unpacked in $tree"
fi
