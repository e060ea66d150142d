#!/usr/bin/env bash
# Checks that every gather kernel of the attention (`aggregate_rows`, `grad_alpha_rows`,
# `grad_values_row`, in every shape and scalar type) compiled with its prefetches. They are
# hints without an observable effect, so a compiler may drop them silently: GCC 12 dropped every
# call of a prefetch helper it had not inlined, which left the 10^6-node epoch 1.5x slower while
# every other test passed.
#
# Usage: check_prefetches.sh OBJDUMP BINARY
set -euo pipefail
objdump=$1
binary=$2

"$objdump" -d -C --no-show-raw-insn "$binary" | awk '
  /^[0-9a-f]+ <.*>:$/ {
    if (name != "") report()
    name = ""
    if ($0 ~ /maskgat::ops::detail::(aggregate_rows|grad_alpha_rows|grad_values_row)</) name = $0
    prefetches = 0
    next
  }
  name != "" && /\tprefetch/ { ++prefetches }  # the instruction, not a call of a helper
  function report() {
    ++kernels
    if (prefetches == 0) { print "no prefetch in " name; ++missing }
  }
  END {
    if (name != "") report()
    if (kernels < 3) { print "expected the gather kernels in the binary, found " kernels + 0; exit 1 }
    if (missing > 0) { print missing " of " kernels " gather kernels have no prefetch"; exit 1 }
    print kernels " gather kernels, each with its prefetches"
  }'
