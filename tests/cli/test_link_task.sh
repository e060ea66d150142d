#!/usr/bin/env bash
# Link prediction end to end on a small own edge list: train with the edge split written out,
# train again on the split read back (the same metrics), evaluate the saved model on its split,
# resume to the bytes of one run, score pairs and recommend nodes, and the refusals.
#   test_link_task.sh MASKGAT COMMUNITIES_DIR
set -euo pipefail
maskgat="$1"
data="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/checks.sh"

own=(--graph "$data/edges.txt" --features "$data/features.csv" --undirected)
common=("${own[@]}" --task link --val-fraction 0.1 --test-fraction 0.2 --patience 0 --threads 2 --quiet)
"$maskgat" train "${common[@]}" --epochs 30 --out-dim 8 --save "$work/m.ckpt" \
  --split-out "$work/split.txt" --metrics-json "$work/train.json"
[ "$(json "$work/train.json" "d['task'], len(d['runs']), d['out_dim']")" = "link 1 8" ] ||
  fail "train JSON: $(cat "$work/train.json")"
# Every field docs/cli.md lists.
metrics="['pairs', 'loss', 'accuracy', 'roc_auc', 'average_precision', 'hits_at_10', 'hits_at_50', 'hits_at_100']"
[ "$(json "$work/train.json" "list(d) == ['command', 'task', 'dataset', 'model', 'out_dim', 'decoder', 'decoder_hidden', 'lr', 'weight_decay', 'epochs', 'patience', 'edge_split', 'runs', 'test'] and list(d['runs'][0]) == ['seed', 'epochs', 'best_epoch', 'val_roc_auc', 'test', 'ms_per_epoch'] and list(d['runs'][0]['test']) == $metrics and sorted(d['test']) == sorted(m + s for m in $metrics[3:] for s in ('_mean', '_std')) and d['decoder'] == 'dot' and d['decoder_hidden'] is None")" = True ] ||
  fail "train JSON fields: $(cat "$work/train.json")"
test_auc=$(json "$work/train.json" "round(d['runs'][0]['test']['roc_auc'], 6)")
test_pairs=$(json "$work/train.json" "d['runs'][0]['test']['pairs']")
# The split file: every part, test pairs as many as their negatives.
for part in train val test val_negative test_negative; do
  grep -q "^$part " "$work/split.txt" || fail "no $part line in the split file"
done
[ "$(grep -c '^test ' "$work/split.txt")" = "$test_pairs" ] || fail "test lines differ from $test_pairs"
[ "$(grep -c '^test_negative ' "$work/split.txt")" = "$test_pairs" ] || fail "test negatives"

# The split read back trains the same run.
"$maskgat" train "${own[@]}" --task link --patience 0 --threads 2 --quiet --epochs 30 --out-dim 8 \
  --edge-split "$work/split.txt" --metrics-json "$work/again.json"
[ "$(json "$work/again.json" "round(d['runs'][0]['test']['roc_auc'], 6)")" = "$test_auc" ] ||
  fail "the split read back gave another test ROC AUC"

# evaluate on the split read back, and drawn again from the model's seed with its shares: the
# test metrics are train's.
"$maskgat" evaluate --load "$work/m.ckpt" "${own[@]}" --edge-split "$work/split.txt" \
  --metrics-json "$work/eval.json" --quiet
[ "$(json "$work/eval.json" "round(d['splits']['test']['roc_auc'], 6)")" = "$test_auc" ] ||
  fail "evaluate's test ROC AUC differs from train's $test_auc"
[ "$(json "$work/eval.json" "list(d) == ['command', 'task', 'model', 'dataset', 'splits'] and list(d['splits']) == ['val', 'test'] and list(d['splits']['val']) == $metrics")" = True ] ||
  fail "evaluate JSON fields: $(cat "$work/eval.json")"
"$maskgat" evaluate --load "$work/m.ckpt" "${own[@]}" --val-fraction 0.1 --test-fraction 0.2 \
  --metrics-json "$work/drawn.json" --quiet
[ "$(json "$work/drawn.json" "round(d['splits']['test']['roc_auc'], 6)")" = "$test_auc" ] ||
  fail "evaluate on the split drawn again differs from train's $test_auc"

# Resumed: 15 + 15 epochs are the bytes of 30.
"$maskgat" train "${common[@]}" --epochs 15 --out-dim 8 --save "$work/half.ckpt"
"$maskgat" train "${own[@]}" --task link --threads 1 --quiet --resume "$work/half.ckpt" \
  --val-fraction 0.1 --test-fraction 0.2 --epochs 30 --save "$work/resumed.ckpt"
cmp -s "$work/m.ckpt" "$work/resumed.ckpt" || fail "the resumed run differs from the run in one go"

# Pairs named as in the input, and recommendations.
printf 't00 t01\n# a comment\ns00,t00\n' > "$work/pairs.txt"
"$maskgat" predict --load "$work/m.ckpt" "${own[@]}" --pairs "$work/pairs.txt" \
  --output "$work/scores.csv" --quiet
[ "$(cut -d, -f1,2 "$work/scores.csv" | tr '\n' ' ')" = "source,target t00,t01 s00,t00 " ] ||
  fail "scores: $(cat "$work/scores.csv")"
"$maskgat" predict --load "$work/m.ckpt" "${own[@]}" --recommend t00 --top-k 5 --json \
  > "$work/rec.json"
[ "$(json "$work/rec.json" "len(d['recommendations']), d['recommendations'][0]['rank']")" = "5 1" ] ||
  fail "recommend: $(cat "$work/rec.json")"
[ "$(json "$work/rec.json" "list(d) == ['command', 'task', 'model', 'dataset', 'recommend', 'recommendations'] and list(d['recommendations'][0]) == ['rank', 'node', 'score']")" = True ] ||
  fail "recommend JSON fields: $(cat "$work/rec.json")"
# Never itself nor a node it already has an edge to.
neighbours=$(awk '$1 == "t00" { print $2 } $2 == "t00" { print $1 }' "$data/edges.txt")
for node in $(json "$work/rec.json" "' '.join(r['node'] for r in d['recommendations'])"); do
  [ "$node" != t00 ] || fail "t00 recommended to itself"
  for n in $neighbours; do [ "$node" != "$n" ] || fail "t00 recommended its neighbour $n"; done
done

# The MLP decoder: trained, evaluated on its split and scoring pairs.
"$maskgat" train "${common[@]}" --epochs 10 --out-dim 8 --decoder mlp --decoder-hidden 6 \
  --save "$work/mlp.ckpt" --metrics-json "$work/mlp.json"
[ "$(json "$work/mlp.json" "d['decoder'], d['decoder_hidden']")" = "mlp 6" ] || fail "mlp JSON"
"$maskgat" evaluate --load "$work/mlp.ckpt" "${own[@]}" --val-fraction 0.1 --test-fraction 0.2 \
  --metrics-json "$work/mlp-eval.json" --quiet
[ "$(json "$work/mlp-eval.json" "round(d['splits']['test']['roc_auc'], 6)")" = \
  "$(json "$work/mlp.json" "round(d['runs'][0]['test']['roc_auc'], 6)")" ] || fail "mlp evaluate"
"$maskgat" predict --load "$work/mlp.ckpt" "${own[@]}" --pairs "$work/pairs.txt" --json --quiet \
  > "$work/mlp-scores.json"
[ "$(json "$work/mlp-scores.json" "len(d['pairs']), list(d) == ['command', 'task', 'model', 'dataset', 'pairs'] and list(d['pairs'][0]) == ['source', 'target', 'score']")" = "2 True" ] ||
  fail "pairs JSON: $(cat "$work/mlp-scores.json")"

printf 'source target\nt00 t01\n' > "$work/header.txt"
expect 1 "header.txt:1: node 'source' is not in the graph (a pairs file has no header line)" \
  predict --load "$work/m.ckpt" "${own[@]}" --pairs "$work/header.txt" --json
printf 't00 t01\nt00 t02 0.5\n' > "$work/three.txt"
expect 1 "three.txt:2: expected 2 columns (source target), got 3" \
  predict --load "$work/m.ckpt" "${own[@]}" --pairs "$work/three.txt" --json
expect 2 "top-k 40: node 't00' has 36 nodes it has no edge to" predict --load "$work/m.ckpt" "${own[@]}" --recommend t00 --top-k 40 --json
expect 2 "no node 'x99' in the data" predict --load "$work/m.ckpt" "${own[@]}" --recommend x99 --json
expect 2 "needs --pairs FILE or --recommend NODE" predict --load "$work/m.ckpt" "${own[@]}" --json
expect 1 "was trained on another edge split" evaluate --load "$work/m.ckpt" "${own[@]}"
expect 2 "--batch-size is not for --task link" train "${own[@]}" --task link --batch-size 8
expect 2 "give one or the other" train "${own[@]}" --task link --edge-split "$work/split.txt" \
  --test-fraction 0.1
expect 2 "are for --task link" train "${own[@]}" --labels "$data/labels.txt" --out-dim 4
expect 2 "add --decoder mlp" train "${own[@]}" --task link --decoder-hidden 4
expect 2 "--nodes and --batch-size are for node models" predict --load "$work/m.ckpt" "${own[@]}" \
  --nodes t00 --json
"$maskgat" train "${own[@]}" --labels "$data/labels.txt" --epochs 2 --patience 0 --quiet \
  --save "$work/node.ckpt" > /dev/null
expect 2 "--pairs and --recommend are for link models" predict --load "$work/node.ckpt" "${own[@]}" \
  --pairs "$work/pairs.txt" --json
expect 2 "--edge-split, --val-fraction and --test-fraction are for link models" \
  evaluate --load "$work/node.ckpt" "${own[@]}" --labels "$data/labels.txt" --test-fraction 0.2
echo "link task: ok"
