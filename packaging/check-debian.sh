#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Cheap consistency checks of debian/ against the project (make check runs this; no build needed):
#   - every file `make install` and `make install-app` put under PREFIX=/usr is in exactly one
#     debian/*.install, and every line there is one of them (or qibla-sim, installed by debian/rules)
#   - debian/changelog's upstream version is qiblaVersion
#   - debian/patches/series names the patches there, and each patches only a carried component
#   - debian/copyright names each component and the version Package.resolved pins
# Prints "ok"/"not ok" lines; exits 1 on the first class of failure found.
set -eu
cd "$(dirname "$0")/.."
status=0
fail() { echo "not ok - $*"; status=1; }

vars="PREFIX=/usr ZSHCOMPDIR=/usr/share/zsh/vendor-completions DOCDIR=/usr/share/doc/qiblad"
print='print-%: ; @echo $($*)'
installed=$(mktemp); claimed=$(mktemp)
trap 'rm -f "$installed" "$claimed"' EXIT
{
    make -s --no-print-directory $vars --eval "$print" print-INSTALLED_COMMON print-INSTALLED_SYSTEM
    make -s --no-print-directory -C clients/qibla-compass PREFIX=/usr --eval "$print" print-INSTALLED
    echo /usr/bin/qibla-sim
} | tr ' ' '\n' | sed -n 's|^/||p' | sort > "$installed"
# The .install lines, with their globs expanded against the installed list.
for f in debian/*.install; do
    while read -r pattern _; do
        [ -n "$pattern" ] || continue
        matched=0
        while read -r path; do
            case $path in $pattern) echo "$path $f"; matched=1 ;; esac
        done < "$installed"
        [ $matched = 1 ] || fail "$f: $pattern matches nothing make install installs"
    done < "$f"
done | sort > "$claimed"
missing=$(cut -d' ' -f1 "$claimed" | sort | comm -23 "$installed" -)
twice=$(cut -d' ' -f1 "$claimed" | uniq -d)
[ -z "$missing" ] && echo "ok - every installed file is in a debian/*.install" || fail "not in any debian/*.install: $missing"
[ -z "$twice" ] && echo "ok - no file in two packages" || fail "in two debian/*.install: $twice"

version=$(sed -n 's/^public let qiblaVersion = "\(.*\)"$/\1/p' Sources/Interface/PropertyValue.swift)
changelog=$(sed -n '1s/^qiblad (\([^-)]*\)-[^)]*).*/\1/p' debian/changelog)
[ "$version" = "$changelog" ] && echo "ok - debian/changelog is $version" || fail "debian/changelog says $changelog, qiblaVersion is $version"

for p in $(cat debian/patches/series); do
    [ -f "debian/patches/$p" ] || fail "series names $p, not in debian/patches"
    others=$(sed -n 's|^+++ b/\([^/]*\)/.*|\1|p' "debian/patches/$p" | grep -vxE 'swift-argument-parser|swift-log|swift-system' || true)
    [ -z "$others" ] || fail "$p patches $others, not a carried component"
done
echo "ok - debian/patches/series"

python3 - <<'PY' || status=1
import json, re
copyright = open("debian/copyright").read()
for pin in json.load(open("Package.resolved"))["pins"]:
    name, version = pin["identity"], pin["state"]["version"]
    if f"Files: {name}/*" not in copyright or f"{name} {version}" not in copyright:
        print(f"not ok - debian/copyright lacks {name} {version} (Package.resolved's pin)")
        raise SystemExit(1)
print("ok - debian/copyright covers the pinned components")
PY
exit $status
