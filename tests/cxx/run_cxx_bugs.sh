#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Usage: run_cxx_bugs.sh PROGRAM [EMULATOR...]: each bug of cxx_bugs.cpp gets a report whose
# title and SUMMARY name the program's function, not the C or C++ library's routine, and
# whose trace still shows the library's frames.
set -uo pipefail
prog=$1
shift
fail=0
check() { # bug, function, text...
  local bug=$1 fn=$2 out
  shift 2
  out=$("$@" "$prog" "$bug" 2>&1)
  # the symbol as linked (mangled: the title keeps the kernel's token shape)
  for want in "^BUG: KASAN: slab-out-of-bounds in [A-Za-z0-9_]*$fn[A-Za-z0-9_]*\+0x" \
    "^SUMMARY: KASAN: slab-out-of-bounds in [A-Za-z0-9_]*$fn[A-Za-z0-9_]*\+0x"; do
    if ! grep -qE "$want" <<<"$out"; then
      echo "FAIL: $bug: no \"$want\" in:"; echo "$out"; fail=1
    fi
  done
  if ! grep -qE '^ .*libstdc\+\+\.so' <<<"$out"; then
    echo "FAIL: $bug: the C++ library's frame is missing from the trace:"; echo "$out"; fail=1
  fi
}
check string string_from_short_buffer "$@"
check hash hash_past_end "$@"
out=$("$@" "$prog" string 2>&1)
if ! grep -qF "Read of size 100 at addr" <<<"$out"; then
  echo "FAIL: string: the access is not memcpy's whole read:"; echo "$out"; fail=1
fi
[ $fail = 0 ] && echo "cxx bugs: 2 reports name the program's function"
exit $fail
