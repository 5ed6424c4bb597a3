#!/usr/bin/env bash
# The layers of src/ (top -> report -> heap -> base): no #include may point up.
# 1. Draws the include graph from the code and fails on any upward arrow.
# 2. Proves the build enforces it: a probe that includes a report header with the heap
#    layer's own include path must fail to compile, and the same probe including a heap
#    header must compile.
# Usage: layers.sh SOURCE_DIR C_COMPILER "HEAP_INCLUDE_DIRS" (';'-separated)
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
        fi
    done < <(sed -nE 's/^#include "([^"]+)".*/\1/p' "$f")
done < <(find src -name '*.[ch]' | sort)
echo "include graph: $edges edges checked"

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
