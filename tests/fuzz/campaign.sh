#!/usr/bin/env bash
# A fuzzing campaign over the fuzz targets, one after another:
#   tests/fuzz/campaign.sh BUILD_DIR SECONDS [TARGET...]
# BUILD_DIR is a build configured with -DMASKGAT_FUZZ=ON (clang, see README.md here). Each target
# fuzzes for SECONDS from the committed corpus (corpus/<target>, read only; a differential
# target <reader>_vs_boost uses corpus/<reader>) into a scratch corpus
# under $MASKGAT_FUZZ_WORK (default /tmp/maskgat-fuzz-campaign); crashes, leaks, timeouts and
# over-limit allocations are saved there as artifacts. Afterwards the inputs that add coverage are
# merged into corpus/<target> (review and commit them), and a summary line per target is printed:
# executions, coverage (edges), corpus size, findings.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS [TARGET...]" >&2
  exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
build="$1"
seconds="$2"
shift 2
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(edge_list features labels split graphml dot graphml_vs_boost dot_vs_boost pickle
           checkpoint linqs npz npy store torch tu)
fi
work="${MASKGAT_FUZZ_WORK:-/tmp/maskgat-fuzz-campaign}"
for target in "${targets[@]}"; do
  binary="$build/tests/fuzz/maskgat_fuzz_$target"
  if [ ! -x "$binary" ]; then
    echo "error: $binary not found; build with -DMASKGAT_FUZZ=ON first" >&2
    exit 2
  fi
  corpus="$here/corpus/${target%_vs_boost}"  # a differential target shares its reader's corpus
  scratch="$work/$target"
  artifacts="$work/artifacts/$target"
  mkdir -p "$scratch" "$artifacts"
  log="$work/$target.log"
  # Findings do not stop the campaign (-fork keeps going past crashes); they are counted below.
  "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -max_len=4096 -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -artifact_prefix="$artifacts/" "$scratch" "$corpus" > "$log" 2>&1 || true
  "$binary" -merge=1 "$corpus" "$scratch" >> "$log" 2>&1
  stats=$(grep -E '^#[0-9]+: cov' "$log" | tail -1 || true)
  findings=$(find "$artifacts" -type f | wc -l)
  echo "$target: ${stats:-no stats}; findings: $findings (artifacts in $artifacts)"
done
