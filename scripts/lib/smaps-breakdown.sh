# SPDX-License-Identifier: Apache-2.0
# Where a process's resident set is (issue 33), sourced by the benchmark scripts.
#
#   smaps_breakdown PID     prints "category rss_kB pss_kB private_dirty_kB" lines, one per category
#
# From /proc/PID/smaps, mapping by mapping: the executable's own mappings by permission (r-xp code,
# r--p read-only data and RELRO, rw-p data), libraries by name (libm, libdbus-1, libgps, libc, ld.so,
# libstdc++, GLib's four, libudev, the rest as "other libraries", each with all its mappings),
# [heap], the main thread's [stack], the other threads' stacks (the anonymous mappings holding a
# thread's stack pointer, from /proc/PID/task/*/syscall), the rest of the anonymous memory
# (.bss, malloc's other arenas, the Swift runtime's pools) and the kernel's [vdso]/[vvar].

smaps_breakdown() {
    local pid=$1 exe sps
    exe=$(readlink "/proc/$pid/exe")
    # The stack pointer of every thread but the main one (field 9 of /proc/PID/task/TID/syscall;
    # "running" when the thread is on a CPU, then it is left out).
    sps=$(for t in /proc/"$pid"/task/*; do
        [[ ${t##*/} == "$pid" ]] && continue
        awk 'NF >= 9 { print $9 }' "$t/syscall" 2>/dev/null
    done | tr '\n' ' ')
    awk -v exe="$exe" -v sps="$sps" '
        function hex(s,   i, c, v) { v = 0; s = tolower(s); sub(/^0x/, "", s)
            for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
            return v }
        BEGIN { n = split(sps, sp, " "); for (i = 1; i <= n; i++) spv[i] = hex(sp[i]) }
        /^[0-9a-f]+-[0-9a-f]+ / {
            split($1, range, "-"); lo = hex(range[1]); hi = hex(range[2]); perms = $2; path = $6
            if (path == exe) { base = exe; sub(/.*\//, "", base); cat = base " " perms }
            else if (path ~ /\/libm\.so/) cat = "libm"
            else if (path ~ /\/libdbus-1\.so/) cat = "libdbus-1"
            else if (path ~ /\/libgps\.so/) cat = "libgps"
            else if (path ~ /\/libc\.so/) cat = "libc"
            else if (path ~ /\/ld-linux/) cat = "ld.so"
            else if (path ~ /\/libstdc\+\+\.so/) cat = "libstdc++"
            else if (path ~ /\/lib(glib|gio|gobject|gmodule)-2\.0\.so/) cat = "GLib (glib, gio, gobject, gmodule)"
            else if (path ~ /\/libudev\.so/) cat = "libudev"
            else if (path ~ /\.so/) cat = "other libraries"
            else if (path == "[heap]") cat = "[heap]"
            else if (path == "[stack]") cat = "main stack"
            else if (path ~ /^\[(vdso|vvar|vsyscall|vvar_vclock)\]$/) cat = "[vdso], [vvar]"
            else if (path == "") {
                cat = "anonymous (.bss, arenas, runtime)"
                for (i = 1; i <= n; i++) if (spv[i] >= lo && spv[i] < hi) cat = "thread stacks"
            } else cat = "other files"
            if (!(cat in rss)) { order[++count] = cat; rss[cat] = 0; pss[cat] = 0; dirty[cat] = 0 }
            next }
        $1 == "Rss:" { rss[cat] += $2 }
        $1 == "Pss:" { pss[cat] += $2 }
        $1 == "Private_Dirty:" { dirty[cat] += $2 }
        END { for (i = 1; i <= count; i++) { c = order[i]; gsub(/ /, "_", c); printf "%s %d %d %d\n", c, rss[order[i]], pss[order[i]], dirty[order[i]] } }
    ' "/proc/$pid/smaps"
}

# smaps_breakdown_table NAME_A FILE_A NAME_B FILE_B: a Markdown table of two breakdowns side by side
# (files of smaps_breakdown lines), categories of A first, then B's others, with totals.
smaps_breakdown_table() {
    awk -v a="$1" -v b="$3" '
        FNR == 1 { file++ }
        { c = $1; if (!(c in seen)) { seen[c] = 1; order[++n] = c }
          if (file == 1) { ar[c] = $2; ap[c] = $3; ad[c] = $4; at += $2; apt += $3; adt += $4 }
          else { br[c] = $2; bp[c] = $3; bd[c] = $4; bt += $2; bpt += $3; bdt += $4 } }
        function cell(r, p, d) { return (r == "" ? "—" : sprintf("%d / %d / %d", r, p, d)) }
        END {
            printf "| kB: Rss / Pss / Private_Dirty | %s | %s |\n|---|---:|---:|\n", a, b
            for (i = 1; i <= n; i++) { c = order[i]; label = c; gsub(/_/, " ", label)
                printf "| %s | %s | %s |\n", label, cell(ar[c], ap[c], ad[c]), cell(br[c], bp[c], bd[c]) }
            printf "| **total** | **%s** | **%s** |\n", cell(at, apt, adt), cell(bt, bpt, bdt)
        }' "$2" "$4"
}
