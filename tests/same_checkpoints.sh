#!/usr/bin/env bash
# Trains the same models with two builds of maskgat and compares what they write byte for byte:
# checkpoints of GAT on Cora and CiteSeer, GATv2, dot-product attention, both positional
# encodings, whole-graph steps, three layers and a synthetic graph, a few epochs each, and the
# predictions, attention and evaluation the first build's models give. For changes that must not
# change results (a refactoring, a move); not part of the test suite, since it needs an older
# build. Needs the Cora and CiteSeer files (MASKGAT_DATA_DIR, else datasets/).
#
# Usage: same_checkpoints.sh OLD_MASKGAT NEW_MASKGAT [WORK_DIR]
set -euo pipefail
old=$1
new=$2
work=${3:-$(mktemp -d)}
export MASKGAT_DATA_DIR=${MASKGAT_DATA_DIR:-$(cd "$(dirname "$0")/.." && pwd)/datasets}

run() {
  local maskgat=$1 out=$2
  mkdir -p "$out"
  "$maskgat" train --dataset cora --epochs 5 --patience 0 --seed 3 --save "$out/cora_gat.ckpt" --quiet
  "$maskgat" train --dataset citeseer --epochs 5 --patience 0 --seed 4 --save "$out/citeseer_gat.ckpt" --quiet
  "$maskgat" train --dataset cora --epochs 4 --patience 0 --seed 5 --attention gatv2 --save "$out/cora_gatv2.ckpt" --quiet
  "$maskgat" train --dataset citeseer --epochs 4 --patience 0 --seed 6 --attention dot --save "$out/citeseer_dot.ckpt" --quiet
  "$maskgat" train --dataset cora --epochs 4 --patience 0 --seed 7 --whole-graph --pe lap:4 --save "$out/cora_lap_whole.ckpt" --quiet
  "$maskgat" train --dataset citeseer --epochs 4 --patience 0 --seed 8 --pe rw:3 --layers 3 --save "$out/citeseer_rw3.ckpt" --quiet
  "$maskgat" train --dataset synthetic:nodes=3000,degree=6,features=32,classes=5 --epochs 3 --patience 0 --save "$out/synthetic.ckpt" --quiet
  # Both builds apply the first build's models, so the outputs name the same model files.
  "$maskgat" predict --dataset cora --load "$work/old/cora_gat.ckpt" --output "$out/cora_predictions.csv" --attention-out "$out/cora_attention.csv"
  "$maskgat" predict --dataset citeseer --load "$work/old/citeseer_rw3.ckpt" --nodes 100,200,3000 --output "$out/citeseer_nodes.csv"
  "$maskgat" evaluate --dataset citeseer --load "$work/old/citeseer_gat.ckpt" --json > "$out/citeseer_evaluation.json"
}

rm -rf "$work/old" "$work/new"
run "$old" "$work/old" > /dev/null 2>&1
run "$new" "$work/new" > /dev/null 2>&1
files=0
differ=0
for file in "$work"/old/*; do
  files=$((files + 1))
  if ! cmp -s "$file" "$work/new/$(basename "$file")"; then
    echo "differs: $(basename "$file")"
    differ=$((differ + 1))
  fi
done
if ((files < 10)); then
  echo "expected 10 outputs in $work/old, found $files"
  exit 1
fi
if ((differ > 0)); then
  echo "$differ of $files outputs differ ($work)"
  exit 1
fi
echo "$files outputs byte-identical ($work)"
