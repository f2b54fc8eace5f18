#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The long soak of issue 13: the SoakTests scenario (a simulated phone at 100 Hz, clients claiming
# and releasing, some killed) for SECONDS, once against a qiblad built with AddressSanitizer
# (LeakSanitizer reports at exit; the test fails on any report) and once against the release
# build, whose anonymous resident set's slope it prints (RssAnon: what a leak grows; the code pages
# the daemon gives back around claims swing the whole resident set).
#
#   scripts/soak.sh [SECONDS]     (default 1800: 30 minutes each)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-1800}

echo "== building the tests, the release qiblad and an AddressSanitizer qiblad" >&2
swift build --build-tests >&2
swift build -c release --product qiblad >&2
swift build --product qiblad -Xswiftc -sanitize=address --scratch-path .build-asan >&2
asan="$(swift build --product qiblad --scratch-path .build-asan --show-bin-path)/qiblad"
release="$(swift build -c release --show-bin-path)/qiblad"

run() {
    echo "== soak: $1 for $seconds s" >&2
    env QIBLAD_SOAK_SECONDS=$seconds QIBLAD_BINARY=$2 ${3:+QIBLAD_SOAK_SANITIZED=$3} ASAN_OPTIONS=detect_leaks=1 \
        swift test --skip-build --filter 'SoakTests/aLongRun' 2>&1 | grep -E 'soak:|✔|✘|passed|failed'
}
# One after the other: two `swift test` in one package wait for each other anyway.
run "AddressSanitizer build" "$asan" 1
run "release build" "$release" ""
