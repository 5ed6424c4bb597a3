#!/usr/bin/env bash
# Source rules (docs/design.md, Source layout): asm only in src/base/arch/, none of the
# forbidden calls in src/, clang-format clean, and the layers' include direction.
set -uo pipefail
root=$1
cd "$root"
fail=0
srcs=$(find src -name '*.[ch]' | sort)
# (libc_names.h's asm labels rename declarations; they are no instructions)
bad=$(grep -nE '__asm__|\basm\b' $srcs | grep -v '^src/base/arch/' | grep -v '^src/base/libc_names.h:' || true)
if [ -n "$bad" ]; then echo "asm outside src/base/arch/:"; echo "$bad"; fail=1; fi
# malloc family, stdio, getenv, dl* lookups, backtrace, qsort: none in the core (all but the
# files of exported names, interpose.c and introspect.c, which CMakeLists.txt keeps out of it).
pat='\b(malloc|calloc|realloc|strdup|printf|fprintf|sprintf|snprintf|fopen|getenv|dladdr|dlsym|dlopen|backtrace|qsort)\s*\('
bad=$(grep -nE "$pat" $(find src -name '*.c') | grep -vE '^src/(interpose|introspect)\.c:' | grep -vE '^\S+:[0-9]+:\s*(/\*|\*)' || true)
if [ -n "$bad" ]; then echo "forbidden calls in src/:"; echo "$bad"; fail=1; fi
if command -v clang-format >/dev/null; then
  for f in $srcs include/*.h tests/*/*.c tests/*/*.h; do
    [ -f "$f" ] || continue
    if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
      echo "clang-format: $f needs formatting"; fail=1
    fi
  done
fi
# the README's option table is generated from src/base/options.def
if ! diff <(bash scripts/options-table.sh) <(sed -n '/^| variable | values | default | meaning |$/,/^$/p' README.md | sed '/^$/d') >/dev/null; then
  echo "README.md option table differs from scripts/options-table.sh output"; fail=1
fi
# src/ is flat inside each layer folder: nothing but base/arch/ one level deeper
extra=$(find src -mindepth 2 -type d ! -path src/base/arch | grep -vxE 'src/(base|heap|report)' || true)
if [ -n "$extra" ]; then echo "unexpected folders in src/:"; echo "$extra"; fail=1; fi
# every export of src/hwtag.map is in the Debian symbols file (and nothing else is)
if [ -f debian/libhwtag0.symbols ]; then
  want=$(sed -n '/global:/,/local:/p' src/hwtag.map | grep -v ':' | tr ';' '\n' | tr -d ' ' | grep . | sort)
  have=$(sed -nE 's/^ ([A-Za-z0-9_]+)@Base .*/\1/p' debian/libhwtag0.symbols | sort)
  if [ "$want" != "$have" ]; then
    echo "debian/libhwtag0.symbols differs from src/hwtag.map:"; diff <(echo "$want") <(echo "$have"); fail=1
  fi
fi
if [ $fail -eq 0 ]; then echo "lint: 1 passed, 0 failed"; else echo "lint: 0 passed, 1 failed"; fi
exit $fail
