#!/usr/bin/env bash
# The layers of src/ (top -> report -> heap -> base): no #include may point up.
# 1. Draws the include graph from the code and fails on any upward arrow.
# 2. Draws the module graph inside each layer (x.c and x.h are one module) and fails on a
#    cycle that is not in the allow-list below: a new ring of modules that include each other
#    fails even though every arrow points sideways.
# 3. Proves the build enforces the layers: a probe that includes a report header with the heap
#    layer's own include path must fail to compile, and the same probe including a heap
#    header must compile.
# Usage: layers.sh SOURCE_DIR C_COMPILER "HEAP_INCLUDE_DIRS" (';'-separated)
# LAYERS_DEBUG=1 also prints the module edges inside each layer.
set -uo pipefail
root=$1 cc=$2 heap_dirs=$3
cd "$root"
fail=0
rank() {
    case $1 in
    src/base/*) echo 0 ;; src/heap/*) echo 1 ;; src/report/*) echo 2 ;; src/*) echo 3 ;;
    include/*) echo -1 ;; *) echo 9 ;;
    esac
}
where() { # the file a quoted include names, searched as the build does
    local h=$1 d
    for d in src/base src/heap src/report src include; do
        [ -f "$d/$h" ] && { echo "$d/$h"; return; }
    done
    echo "?"
}
# Module cycles that exist today, each a sorted ring "layer: a b c" and why it stays. A cycle
# not listed fails; a listed one that is gone is reported, to be deleted here.
allowed_cycles=(
    "report: chain fault|the handler forwards through chain; chain takes the handler's types from fault.h"
    "report: elfimg symtab|symtab reads ELF images; elfimg fills symtab's struct hwt_symbol"
    "report: frame report|the report prints frames; frames are formatted into struct hwt_report"
    "report: symbolizer symparse|the symbolizer parses its replies; the parser fills the symbolizer's line struct"
)
module() { # layer: module name of a file, x.c and x.h as one
    local f=$1 layer
    case $f in
    src/base/*) layer=base ;; src/heap/*) layer=heap ;; src/report/*) layer=report ;; *) layer=top ;;
    esac
    local b=${f##*/}
    echo "$layer: ${b%.*}"
}
modedges=$(mktemp)
edges=0
while IFS= read -r f; do
    from=$(rank "$f")
    dir=$(dirname "$f")
    while IFS= read -r h; do
        if [ -f "$dir/$h" ]; then target="$dir/$h"; else target=$(where "$h"); fi
        [ "$target" = "?" ] && { echo "unresolved include \"$h\" in $f"; fail=1; continue; }
        edges=$((edges + 1))
        to=$(rank "$target")
        if [ "$to" -gt "$from" ]; then
            echo "upward include: $f -> $target"
            fail=1
        elif [ "$to" -eq "$from" ]; then
            m1=$(module "$f") m2=$(module "$target")
            [ "$m1" != "$m2" ] && echo "$m1|$m2" >>"$modedges"
        fi
    done < <(sed -nE 's/^#include "([^"]+)".*/\1/p' "$f")
done < <(find src -name '*.[ch]' | sort)
echo "include graph: $edges edges checked"

# Strongly connected components of the module graph (transitive closure; the graph is small):
# one line per cycle, "layer: a b c|a -> b, b -> c, c -> a" with its members sorted.
cycles=$(sort -u "$modedges" | awk -F'|' '
    { e[$1 "|" $2] = 1; n[$1] = 1; n[$2] = 1; out[$1] = out[$1] SUBSEP $2 }
    function reach(a,    stack, top, x, i, k, m, nx) {
        delete seen; top = 0; stack[++top] = a
        while (top > 0) {
            x = stack[top--]
            m = split(out[x], nx, SUBSEP)
            for (i = 2; i <= m; i++) if (!(nx[i] in seen)) { seen[nx[i]] = 1; stack[++top] = nx[i] }
        }
        for (k in seen) r[a "|" k] = 1
    }
    END {
        for (a in n) reach(a)
        for (a in n) {
            if (!((a "|" a) in r) || (a in done)) continue
            split(a, la, ": "); ring = ""; cnt = 0
            for (b in n) if ((a "|" b) in r && (b "|" a) in r) { done[b] = 1; mem[++cnt] = b }
            for (i = 1; i <= cnt; i++) for (j = i + 1; j <= cnt; j++) if (mem[j] < mem[i]) { t = mem[i]; mem[i] = mem[j]; mem[j] = t }
            names = ""; arrows = ""
            for (i = 1; i <= cnt; i++) {
                split(mem[i], lb, ": "); names = names " " lb[2]
                for (j = 1; j <= cnt; j++) if ((mem[i] "|" mem[j]) in e) {
                    split(mem[j], lc, ": "); arrows = arrows (arrows == "" ? "" : ", ") lb[2] " -> " lc[2]
                }
            }
            print la[1] ":" names "|" arrows
        }
    }' | sort) || { echo "module graph: awk failed"; fail=1; }
[ -n "${LAYERS_DEBUG:-}" ] && sort -u "$modedges"
rm -f "$modedges"
ncycles=0
while IFS='|' read -r ring arrows; do
    [ -z "$ring" ] && continue
    ncycles=$((ncycles + 1))
    reason=
    for a in "${allowed_cycles[@]}"; do
        [ "${a%%|*}" = "$ring" ] && reason=${a#*|}
    done
    if [ -n "$reason" ]; then
        echo "known module cycle $ring ($arrows): $reason"
    else
        echo "NEW module cycle $ring ($arrows): break it, or list it in allowed_cycles with a reason"
        fail=1
    fi
done <<<"$cycles"
for a in "${allowed_cycles[@]}"; do
    grep -qxF "${a%%|*}" <<<"$(cut -d'|' -f1 <<<"$cycles")" ||
        echo "note: allowed cycle ${a%%|*} no longer exists; delete it from allowed_cycles"
done
echo "module graph: $ncycles cycles"

probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
incs=()
IFS=';' read -ra dirs <<<"$heap_dirs"
for d in "${dirs[@]}"; do [ -n "$d" ] && incs+=("-I$d"); done
printf '#include "fault.h"\nint probe;\n' >"$probe/up.c"
printf '#include "slab.h"\nint probe;\n' >"$probe/down.c"
if "$cc" -fsyntax-only -D_GNU_SOURCE "${incs[@]}" "$probe/up.c" 2>/dev/null; then
    echo "a heap file including report/fault.h compiled: the heap layer's include path is too wide"
    fail=1
fi
if ! "$cc" -fsyntax-only -D_GNU_SOURCE -DHWTAG_MTE=0 "${incs[@]}" "$probe/down.c"; then
    echo "the control probe (a heap file including slab.h) did not compile"
    fail=1
fi
if [ $fail -eq 0 ]; then echo "layers: 1 passed, 0 failed"; else echo "layers: 0 passed, 1 failed"; fi
exit $fail
