#!/usr/bin/env bash
# Graph classification end to end on a TU collection: train one fold with two candidate models
# and save the kept one, evaluate it (only the graphs it was not fitted to are scored, and their
# accuracy is the fold's test accuracy), predict one row per graph, resume the saved run to the
# same bytes as training it in one go, and the refusals of node-task options and models.
#   test_graph_task.sh MASKGAT COLLECTION SPEC_DIR
set -euo pipefail
maskgat="$1"
collection="$2"
specs="$3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/checks.sh"

common=(--tu "$collection" --folds 4 --fold 2 --patience 0 --threads 2 --quiet)
"$maskgat" train --task graph "${common[@]}" --epochs 6 --batch-size 5 \
  --model "$specs/graph-gat-sum.json,$specs/graph-gat-attention.json" \
  --save "$work/m.ckpt" --metrics-json "$work/train.json" --lr 0.01
[ "$(json "$work/train.json" "d['task'], d['folds'], len(d['runs']), len(d['runs'][0]['candidate_val_scores'])")" = \
  "graph 4 1 2" ] || fail "train JSON: $(cat "$work/train.json")"
test_graphs=$(json "$work/train.json" "d['runs'][0]['test_graphs']")
test_acc=$(json "$work/train.json" "round(d['runs'][0]['test_acc'], 6)")

"$maskgat" evaluate --load "$work/m.ckpt" --tu "$collection" --metrics-json "$work/eval.json" --quiet
[ "$(json "$work/eval.json" "d['test']['graphs']")" = "$test_graphs" ] ||
  fail "evaluate scored $(json "$work/eval.json" "d['test']['graphs']") graphs, the fold tests $test_graphs"
[ "$(json "$work/eval.json" "round(d['test']['accuracy'], 6)")" = "$test_acc" ] ||
  fail "evaluate's accuracy differs from the fold's test accuracy $test_acc"

"$maskgat" predict --load "$work/m.ckpt" --tu "$collection" --output "$work/p.csv" --quiet
graphs=$("$maskgat" info --tu "$collection" --json | python3 -c "import json, sys; print(json.load(sys.stdin)['graphs'])")
[ "$(head -1 "$work/p.csv")" = "graph,predicted_class,p_-1,p_1" ] || fail "header: $(head -1 "$work/p.csv")"
[ "$(($(wc -l < "$work/p.csv") - 1))" = "$graphs" ] || fail "$(wc -l < "$work/p.csv") lines for $graphs graphs"
"$maskgat" predict --load "$work/m.ckpt" --tu "$collection" --nodes 3,1 --output "$work/two.csv" --quiet
[ "$(cut -d, -f1 "$work/two.csv" | tr '\n' ' ')" = "graph 3 1 " ] || fail "--nodes 3,1: $(cat "$work/two.csv")"

# Three epochs saved and resumed to six: the bytes of six in one go (one candidate).
"$maskgat" train --task graph "${common[@]}" --epochs 6 --model "$specs/graph-gat-sum.json" \
  --save "$work/six.ckpt" --lr 0.01
"$maskgat" train --task graph "${common[@]}" --epochs 3 --model "$specs/graph-gat-sum.json" \
  --save "$work/three.ckpt" --lr 0.01
"$maskgat" train --task graph --tu "$collection" --folds 4 --fold 2 --threads 1 --quiet \
  --resume "$work/three.ckpt" --epochs 6 --save "$work/resumed.ckpt"
cmp -s "$work/six.ckpt" "$work/resumed.ckpt" || fail "the resumed run differs from the run in one go"

expect 2 "needs --model" train --task graph --tu "$collection"
expect 2 "train on it with --task graph" train --tu "$collection"
expect 2 "they need --task graph" train --dataset synthetic:nodes=60,degree=4,features=4,classes=2 --folds 5
expect 2 "--pe is for node tasks" train --task graph --tu "$collection" --model "$specs/graph-gat-sum.json" --pe rw:4
expect 2 "fold 9: there are 4 folds" train --task graph --tu "$collection" --model "$specs/graph-gat-sum.json" --folds 4 --fold 9
expect 2 "classifies graphs" evaluate --load "$work/m.ckpt" --dataset synthetic:nodes=60,degree=4,features=4,classes=2
expect 1 "has no readout" train --task graph --tu "$collection" --model "$specs/paper.json" --fold 1 --epochs 1
expect 2 "not a graph of" predict --load "$work/m.ckpt" --tu "$collection" --nodes 0 --output "$work/none.csv"
[ ! -e "$work/none.csv" ] || fail "a refused prediction wrote its output"
echo "graph task: ok"
