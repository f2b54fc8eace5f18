#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Places by name (issue 38): what the offline town search costs per keystroke, and what
# libgeonames costs qiblactl. Part 1 runs the app's own search (`qibla-compass --find-place Q1
# --find-place Q2 …`, release build: the queries searched in turn over one index, as keystrokes
# are) RUNS times per typed word and prints the medians of the steps it times in the thread's
# processor time and on GLib's monotonic clock: reading libgeonames' list (decompressing its GResource and walking the variant, names
# through the user's catalogue), folding it into the index, the first keystroke's search, and the
# slowest of the later keystrokes. The first keystroke's answer, when the index is built at that
# keystroke, is the sum of the first three (`--no-town-cache`: libgeonames read every time). Part 1c
# does the same through the towns' cache ($XDG_CACHE_HOME/qiblad, here a directory of the run's
# own): the cold run that reads libgeonames and writes the cache (the file removed before each
# run), and the warm run that loads it. Part 1b types the word as a person does on the
# location page (`--typed-after 0`, `150` and `500`: the list read on its own thread, the first
# letter typed at once, 150 ms or half a second after the page opened). Part 2 measures start-up, peak memory and the shared
# libraries ldd lists, with /usr/bin/time, of: `qiblactl --version` before issue 38 (BASE, default
# the commit before it, built in a scratch copy), optionally a build that links libgeonames
# (BENCH_LINKED_QIBLACTL, BENCH_LINKED_COMMIT), this tree's (which loads libgeonames only for
# its name commands), and this tree's `qiblactl places mecca` without a cache, writing it, and
# with it warm. The tables go into
# BENCHMARKS.md between the place-search markers.
#
#   scripts/bench-place-search.sh [runs]                  (default 20)
#   BENCH_NO_BUILD=1 scripts/bench-place-search.sh        (reuse the release builds)
#   BENCH_BASE_QIBLACTL=path scripts/bench-place-search.sh  (a qiblactl without libgeonames)
#   BENCH_OUTPUT=/dev/null scripts/bench-place-search.sh  (print only)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
output=${BENCH_OUTPUT:-BENCHMARKS.md}
base_commit=${BENCH_BASE:-f896769}
work=$(mktemp -d /tmp/bench-place-search.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The towns' cache of this run (the user's own is left alone); Part 1 and the "without" row of
# Part 2 use none.
export XDG_CACHE_HOME=$work/cache
if [[ -z ${BENCH_NO_BUILD:-} ]]; then
    echo "== building qiblactl and the app (release)" >&2
    swift build -c release --product qiblactl >"$work/build.log" 2>&1
    swift build -c release --package-path clients/qibla-compass --product qibla-compass >>"$work/build.log" 2>&1
fi
app=clients/qibla-compass/.build/release/qibla-compass
qiblactl=.build/release/qiblactl
[[ -x $app && -x $qiblactl ]] || { echo "bench-place-search: build $app and $qiblactl first" >&2; exit 1; }
base=${BENCH_BASE_QIBLACTL:-}
if [[ -z $base ]]; then
    echo "== building qiblactl at $base_commit (release, without libgeonames)" >&2
    mkdir -p "$work/base" && git archive "$base_commit" | tar -x -C "$work/base"
    swift build -c release --package-path "$work/base" --product qiblactl >>"$work/build.log" 2>&1
    base=$work/base/.build/release/qiblactl
fi

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ms() { awk '{ printf "%.1f", $1 / 1000 }'; }

# Part 1: a word typed letter by letter, in a language. Each figure: the thread's processor time
# (what the step costs) and, in brackets, the monotonic clock (what a person waits on this shared
# machine); medians of RUNS runs.
table="| language | typed | towns | read the list (ms) | build the index (ms) | first keystroke's search (ms) | first answer, all three (ms) | slowest later keystroke (ms) |
| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
towns=0
pair() { printf '%s (%s)' "$(median <"$work/$1.cpu" | ms)" "$(median <"$work/$1.wall" | ms)"; }
for case in "en birmingham" "en sao paulo" "en mecca" "ar مكة" "tr istanbul" "ur لاہور" "bn ঢাকা"; do
    language=${case%% *} word=${case#* }
    arguments=()
    for ((k = 1; k <= ${#word}; k++)); do arguments+=(--find-place "${word:0:k}"); done
    for f in read index first total later; do : >"$work/$f.cpu"; : >"$work/$f.wall"; done
    for ((i = 0; i < runs; i++)); do
        LANGUAGE=$language LC_ALL=C.UTF-8 "$app" "${arguments[@]}" --no-town-cache | grep '^cities=' >"$work/lines" || true
        get() { sed -n "$1s/.* $2=\([0-9]*\).*/\1/p" "$work/lines"; }
        towns=$(sed -n '1s/^cities=\([0-9]*\).*/\1/p' "$work/lines")
        for clock in cpu wall; do
            suffix=$([[ $clock == cpu ]] && echo _cpu_us || echo _us)
            r=$(get 1 "read$suffix") x=$(get 1 "index$suffix") f=$(get 1 "search$suffix")
            echo "$r" >>"$work/read.$clock"; echo "$x" >>"$work/index.$clock"; echo "$f" >>"$work/first.$clock"
            echo $((r + x + f)) >>"$work/total.$clock"
            sed -n "2,\$s/.* search$suffix=\([0-9]*\).*/\1/p" "$work/lines" | sort -n | tail -1 >>"$work/later.$clock"
        done
    done
    table+=$'\n'"| $language | \`$word\` | $towns | $(pair read) | $(pair index) | $(pair first) | $(pair total) | $(pair later) |"
done

# Part 1c: the same words through the towns' cache. Cold: the cache file removed before each run,
# so the process reads libgeonames, builds the index and writes the file; warm: it loads the file.
# "load" is all of that (--find-place times it as one step); the first answer adds the first
# keystroke's search. Processor time (monotonic clock), medians of RUNS runs.
cache_table="| language | typed | cold: load, reading libgeonames and writing the cache (ms) | cold: first answer (ms) | warm: load from the cache (ms) | warm: first answer (ms) | slowest later keystroke (ms) | cache file (KiB) |
| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for case in "en birmingham" "en sao paulo" "en mecca" "ar مكة" "tr istanbul" "ur لاہور" "bn ঢাکا"; do
    language=${case%% *} word=${case#* }
    arguments=()
    for ((k = 1; k <= ${#word}; k++)); do arguments+=(--find-place "${word:0:k}"); done
    for f in cload ctotal wload wtotal later; do : >"$work/$f.cpu"; : >"$work/$f.wall"; done
    for ((i = 0; i < runs; i++)); do
        for temperature in cold warm; do
            if [[ $temperature == cold ]]; then rm -rf "$XDG_CACHE_HOME/qiblad"; fi
            LANGUAGE=$language LC_ALL=C.UTF-8 "$app" "${arguments[@]}" | grep '^cities=' >"$work/lines" || true
            expected=$([[ $temperature == cold ]] && echo miss || echo hit)
            grep -q "town_cache=$expected" "$work/lines" || { echo "bench-place-search: $temperature run of $word: not a cache $expected" >&2; exit 1; }
            p=${temperature:0:1}
            for clock in cpu wall; do
                suffix=$([[ $clock == cpu ]] && echo _cpu_us || echo _us)
                r=$(sed -n "1s/.* read$suffix=\([0-9]*\).*/\1/p" "$work/lines") f=$(sed -n "1s/.* search$suffix=\([0-9]*\).*/\1/p" "$work/lines")
                echo "$r" >>"$work/${p}load.$clock"; echo $((r + f)) >>"$work/${p}total.$clock"
                if [[ $temperature == warm ]]; then
                    sed -n "2,\$s/.* search$suffix=\([0-9]*\).*/\1/p" "$work/lines" | sort -n | tail -1 >>"$work/later.$clock"
                fi
            done
        done
    done
    size=$(du -k "$XDG_CACHE_HOME"/qiblad/towns-*.cache | awk '{ s += $1 } END { print s }')
    cache_table+=$'\n'"| $language | \`$word\` | $(pair cload) | $(pair ctotal) | $(pair wload) | $(pair wtotal) | $(pair later) | $size |"
done

# Part 1b: as a person types on the location page. The app reads the list and builds the index
# on a thread of its own from the moment the page shows (TownList); `--typed-after MS` does the
# same on a GLib main loop and types the first letter MS later: the time from that keystroke to
# its answer (the wait for the index included), the part of it spent waiting, the slowest later
# keystroke, and the longest the main loop went without running its 2-ms timer meanwhile (a
# stall a person would see). Monotonic clock, medians of RUNS runs. The towns' cache is warm (made
# by Part 1c), as on every start of the app after its first.
typed_table="| language | typed | first letter typed after the page opened (ms) | first keystroke to its answer (ms) | of which waiting for the index (ms) | slowest later keystroke (ms) | longest main-loop stall (ms) |
| --- | --- | ---: | ---: | ---: | ---: | ---: |"
for case in "en birmingham" "ar مكة"; do
    language=${case%% *} word=${case#* }
    LANGUAGE=$language LC_ALL=C.UTF-8 "$app" --find-place "$word" >/dev/null || true    # the cache made warm
    arguments=()
    for ((k = 1; k <= ${#word}; k++)); do arguments+=(--find-place "${word:0:k}"); done
    for after in 0 150 500; do
        for f in answer waited later stall; do : >"$work/$f"; done
        for ((i = 0; i < runs; i++)); do
            LANGUAGE=$language LC_ALL=C.UTF-8 "$app" "${arguments[@]}" --typed-after "$after" | grep '^cities=' >"$work/lines" || true
            sed -n "1s/.* answer_us=\([0-9]*\).*/\1/p" "$work/lines" >>"$work/answer"
            sed -n "1s/.* waited_us=\([0-9]*\).*/\1/p" "$work/lines" >>"$work/waited"
            sed -n "1s/.* stall_us=\([0-9]*\).*/\1/p" "$work/lines" >>"$work/stall"
            sed -n "2,\$s/.* answer_us=\([0-9]*\).*/\1/p" "$work/lines" | sort -n | tail -1 >>"$work/later"
        done
        typed_table+=$'\n'"| $language | \`$word\` | $after | $(median <"$work/answer" | ms) | $(median <"$work/waited" | ms) | $(median <"$work/later" | ms) | $(median <"$work/stall" | ms) |"
    done
done

# Part 2: libgeonames in a command-line process.
measure() {  # median wall ms and peak RSS MiB of RUNS runs (BENCH_BEFORE: a command run before each)
    : >"$work/t"
    for ((i = 0; i < runs; i++)); do
        if [[ -n ${BENCH_BEFORE:-} ]]; then eval "$BENCH_BEFORE"; fi
        /usr/bin/time -f "%e %M" -o "$work/one" "$@" >/dev/null 2>&1 || true; cat "$work/one" >>"$work/t"
    done
    local wall rss
    wall=$(awk '{ print $1 * 1000 }' "$work/t" | median)
    rss=$(awk '{ print $2 / 1024 }' "$work/t" | median)
    printf '%s | %.1f' "$wall" "$rss"
}
libraries() { ldd "$1" | wc -l; }
linked_row=""
if [[ -n ${BENCH_LINKED_QIBLACTL:-} ]]; then
    linked_row=$'\n'"| \`qiblactl --version\` linking libgeonames (${BENCH_LINKED_COMMIT:-a build that links it}) | $(libraries "$BENCH_LINKED_QIBLACTL") | $(measure "$BENCH_LINKED_QIBLACTL" --version) |"
fi
costs="| program | shared libraries | wall (ms, 10-ms resolution) | peak RSS (MiB) |
| --- | ---: | ---: | ---: |
| \`qiblactl --version\` before issue 38 ($base_commit) | $(libraries "$base") | $(measure "$base" --version) |$linked_row
| \`qiblactl --version\`, libgeonames loaded only by the name commands (this tree) | $(libraries "$qiblactl") | $(measure "$qiblactl" --version) |
| \`qiblactl places mecca\`, no cache (this tree: loads libgeonames, reads, indexes, searches) | $(libraries "$qiblactl") + 11 loaded | $(XDG_CACHE_HOME=/proc/no-cache LANGUAGE=en LC_ALL=C.UTF-8 measure "$qiblactl" places mecca) |
| \`qiblactl places mecca\`, cold cache (as above, and writes the cache) | $(libraries "$qiblactl") + 11 loaded | $(BENCH_BEFORE='rm -rf "$XDG_CACHE_HOME/qiblad"' LANGUAGE=en LC_ALL=C.UTF-8 measure "$qiblactl" places mecca) |
| \`qiblactl places mecca\`, warm cache (loads the cache, searches; no libgeonames) | $(libraries "$qiblactl") | $(LANGUAGE=en LC_ALL=C.UTF-8 measure "$qiblactl" places mecca) |"

text="<!-- place-search:begin (generated by scripts/bench-place-search.sh; edit outside the markers) -->
## Places by name (issue 38)

\`scripts/bench-place-search.sh $runs\` on $(date -u +%Y-%m-%d), $(nproc) cores, $(uname -m): the app's
search (\`qibla-compass --find-place\` once per letter of the word, release) over libgeonames'
$towns towns, median of $runs runs: the thread's processor time, and in brackets the monotonic
clock's (this machine is shared: the brackets include waiting for a processor). Reading and
indexing happen once per process, here all on one thread; the column \"first answer\" is what a
first keystroke would cost if it had to do them itself, without the towns' cache
(\`--no-town-cache\`). The list keeps the best 20.

$table

With the towns' cache (\`\$XDG_CACHE_HOME/qiblad/towns-LANGUAGE.cache\`, a directory of the run's
own): cold, the file removed before each run (the process reads libgeonames, builds the index and
writes the file: the first run after installing or upgrading libgeonames, or in a new language);
warm, every later process. \"Load\" is the whole step; the first answer adds the first keystroke's
search. The thread's processor time, and in brackets the monotonic clock's; median of $runs runs.

$cache_table

The app reads the list and builds the index on a thread of its own (\`TownList\`) from the
moment the location page (or a known position) shows, never on the GTK main loop; a keystroke
that comes before the index is answered as soon as it is there. As a person types
(\`qibla-compass --find-place b --find-place bi … --typed-after MS\`: the same thread and hand-back
on a GLib main loop, the first letter typed MS after the page opened, the towns' cache warm;
monotonic clock, median of $runs runs; in the app GtkSearchEntry adds its own 150 ms after the
last key before it asks):

$typed_table

What libgeonames costs \`qiblactl\` (each started $runs times; /usr/bin/time, median; the
shared libraries as ldd lists them; \`places\` loads libgeonames and its 11 more with dlopen
unless the towns' cache is warm; \"no cache\" points \`XDG_CACHE_HOME\` where nothing can be written):

$costs
<!-- place-search:end -->"
printf '%s\n' "$text"
. scripts/lib/bench-common.sh
write_marked_section "$output" place-search "$text"
