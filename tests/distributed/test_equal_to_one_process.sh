#!/usr/bin/env bash
# Distributed training equals single-process training: for each graph, `maskgat partition` into
# P = 1, 2, 3 and 4 parts; with the paper's dropout and without any, each of the steps 1, 25 and
# 50 is taken by `mpirun -np P maskgat train --partitions` from the state single-process training
# on the whole graph (`--whole-graph`, the same seed) had before it (resumed from its checkpoint),
# and every parameter must be within 1e-5 (relative to 1 + its size) of that process's step, the
# test accuracy the same. After 50 free-running epochs the parameters may have drifted apart (runs
# that add in different orders can, by chance: an edge's score within rounding of LeakyReLU's kink;
# docs/scaling.md), so their difference is printed, and without dropout the models' predictions
# must agree on at least 99.5 % of the nodes, their test accuracies within one test node. Then
# checkpoints across part counts, evaluation and prediction on 4 parts against one process, the
# metrics JSON (one process's fields) and --quiet (the result line alone, as one process prints).
#   test_equal_to_one_process.sh MASKGAT COMPARE_CHECKPOINTS WORK_DIR DATASET...
# Needs mpirun (Open MPI); run as root, it passes --allow-run-as-root.
set -euo pipefail
maskgat="$1"
compare="$2"
work="$3"
shift 3
# shellcheck source=prologue.sh
source "$(dirname "$0")/prologue.sh"

failures=0
runs=0
test_acc() { sed -n 's/.*"test_acc": *\([0-9.e-]*\).*/\1/p' "$1"; }
# The test split's node count and accuracy in `maskgat evaluate --json` output.
test_split() { awk '/"test": \{/ { t = 1 } t && /"nodes"|"accuracy"/ { gsub(/[^0-9.e-]/, ""); printf "%s ", $0 }
  t && /"accuracy"/ { exit }' "$1"; }
# Models after free-running epochs: MODEL's predictions agree with one process's (free.ckpt,
# free-predicted.csv, free-evaluated.json) on at least 99.5 % of the nodes, and its test accuracy
# is within one test node of that process's.
#   check_drift WHAT MODEL
check_drift() {
  local what="$1" model="$2" agreement accuracies
  runs=$((runs + 1))
  "$maskgat" predict --dataset "$dataset" --load "$model" --output drift-predicted.csv --quiet \
    --force
  "$maskgat" evaluate --dataset "$dataset" --load "$model" --json --quiet > drift-evaluated.json
  agreement=$(paste -d, free-predicted.csv drift-predicted.csv | awk -F, '
    NR == 1 { half = NF / 2; next } { same += $2 == $(half + 2) } END { printf "%.4f", same / (NR - 1) }')
  accuracies="$(test_split free-evaluated.json)$(test_split drift-evaluated.json)"
  if ! awk -v a="$agreement" 'BEGIN { exit !(a >= 0.995) }'; then
    echo "FAIL ($what): predictions agree on $agreement of the nodes, expected at least 0.995"
    failures=$((failures + 1))
  elif ! echo "$accuracies" | awk '{ d = ($2 - $4) * $1; if (d < 0) d = -d; exit !(d <= 1.0001) }'; then
    echo "FAIL ($what): test nodes and accuracy $accuracies differ by more than one test node"
    failures=$((failures + 1))
  else
    echo "ok ($what): predictions agree on $agreement of the nodes, test accuracy within one node"
  fi
}
# Trains `--epochs E` on P parts with the remaining options and checks the checkpoint and test
# accuracy against one process's (one.ckpt, one.json); `what` names the check, `extra` is appended.
#   check_parts WHAT P EXTRA OPTION...
check_parts() {
  local what="$1" parts="$2" extra="$3"
  shift 3
  runs=$((runs + 1))
  if ! timeout 600 "${mpirun[@]}" -np "$parts" "$maskgat" train --partitions "$name.$parts" "$@" \
    --save many.ckpt > many.json; then
    echo "FAIL ($what): mpirun failed"
    failures=$((failures + 1))
    return
  fi
  local result
  if ! result=$("$compare" many.ckpt one.ckpt 1e-5); then
    echo "FAIL ($what): $result$extra"
    failures=$((failures + 1))
  elif [ "$(test_acc many.json)" != "$(test_acc one.json)" ]; then
    echo "FAIL ($what): test accuracy $(test_acc many.json), one process $(test_acc one.json)"
    failures=$((failures + 1))
  else
    echo "ok ($what): ${result#PASS: }, test accuracy $(test_acc many.json)$extra"
  fi
}
for dataset in "$@"; do
  name=${dataset%%:*}
  for parts in 1 2 3 4; do
    "$maskgat" partition --dataset "$dataset" --parts "$parts" --out "$name.$parts" --quiet \
      --threads 1 > /dev/null
  done
  common=(--patience 0 --threads 1 --json --quiet --force)
  for rate in 0.6 0; do
    dropout=(--dropout "$rate" --attn-dropout "$rate")
    # 50 free-running epochs (reported), then steps from one process's state (checked).
    "$maskgat" train --dataset "$dataset" --whole-graph --epochs 50 "${dropout[@]}" \
      "${common[@]}" --save free.ckpt > /dev/null
    if [ "$rate" = 0 ]; then
      "$maskgat" predict --dataset "$dataset" --load free.ckpt --output free-predicted.csv \
        --quiet --force
      "$maskgat" evaluate --dataset "$dataset" --load free.ckpt --json --quiet \
        > free-evaluated.json
    fi
    free=()
    for parts in 1 2 3 4; do
      "${mpirun[@]}" -np "$parts" "$maskgat" train --partitions "$name.$parts" --epochs 50 \
        "${dropout[@]}" "${common[@]}" --save many.ckpt > /dev/null
      free+=("$({ "$compare" many.ckpt free.ckpt 0 || true; } |
        sed 's/.*largest difference \([^ ]*\).*/\1/')")
      if [ "$rate" = 0 ]; then
        check_drift "$name, dropout 0, $parts parts, 50 free-running epochs" many.ckpt
      fi
    done
    for step in 1 25 50; do
      # Step 1 runs the parts' default steps (formed at the training nodes' receptive field),
      # the resumed ones `--whole-graph` (the checkpoint's), both bitwise as over every row.
      if [ "$step" -eq 1 ]; then
        from=("${dropout[@]}" "${common[@]}")
        "$maskgat" train --dataset "$dataset" --whole-graph --epochs 1 "${from[@]}" \
          --save one.ckpt > one.json
      else
        "$maskgat" train --dataset "$dataset" --whole-graph --epochs $((step - 1)) \
          "${dropout[@]}" "${common[@]}" --save before.ckpt > /dev/null
        from=(--resume before.ckpt "${common[@]:2}")  # --resume takes all but --patience 0
        "$maskgat" train --dataset "$dataset" --epochs "$step" "${from[@]}" --save one.ckpt \
          > one.json
      fi
      for parts in 1 2 3 4; do
        extra=""
        if [ "$step" -eq 50 ]; then extra=" (50 free-running epochs: ${free[$((parts - 1))]})"; fi
        check_parts "$name, dropout $rate, $parts parts, step $step" "$parts" "$extra" \
          --epochs "$step" "${from[@]}"
      done
    done
  done
done
# Checkpoints do not depend on the part count: the first graph's model trained on 4 parts
# evaluates on one process, and resumes on 2 parts and on one process to the parameters of an
# uninterrupted single-process run (`--whole-graph`, saved in the checkpoint, so that the resumed
# single-process steps do not move to the training nodes' field).
dataset=$1
name=${dataset%%:*}
common=(--patience 0 --threads 1 --json --quiet --force)  # --resume takes all but --patience 0
"${mpirun[@]}" -np 4 "$maskgat" train --partitions "$name.4" --whole-graph --epochs 40 \
  "${common[@]}" --save four.ckpt > four.json
"$maskgat" evaluate --dataset "$dataset" --load four.ckpt --json > evaluated.json
"${mpirun[@]}" -np 2 "$maskgat" train --partitions "$name.2" --resume four.ckpt --epochs 50 \
  "${common[@]:2}" --save resumed-two.ckpt > /dev/null
"$maskgat" train --dataset "$dataset" --resume four.ckpt --epochs 50 "${common[@]:2}" \
  --save resumed-one.ckpt > /dev/null
"$maskgat" train --dataset "$dataset" --whole-graph --epochs 50 "${common[@]}" \
  --save straight.ckpt > /dev/null
for resumed in resumed-two resumed-one; do
  runs=$((runs + 1))
  if result=$("$compare" "$resumed.ckpt" straight.ckpt 1e-5); then
    echo "ok ($name, 4 parts then $resumed): ${result#PASS: }"
  else
    echo "FAIL ($name, 4 parts then $resumed): $result"
    failures=$((failures + 1))
  fi
done
runs=$((runs + 1))
evaluated=$(awk '/"test": \{/ { test = 1 } test && /"accuracy"/ { gsub(/[^0-9.e-]/, ""); print; exit }' \
  evaluated.json)
if [ "$evaluated" = "$(test_acc four.json)" ]; then
  echo "ok ($name, 4 parts then evaluated on one process): test accuracy $evaluated"
else
  echo "FAIL ($name, 4 parts then evaluated on one process): $evaluated, trained $(test_acc four.json)"
  failures=$((failures + 1))
fi

# The 4-part model evaluated and applied on its 4 parts: the metrics and predictions of one process
# (losses summed in another order within 1e-9 relatively; probabilities, printed to 6 significant
# digits, within 1e-6).
"${mpirun[@]}" -np 4 "$maskgat" evaluate --partitions "$name.4" --load four.ckpt --json \
  > evaluated-four.json
"$maskgat" predict --dataset "$dataset" --load four.ckpt --output predicted.csv --quiet --force
"${mpirun[@]}" -np 4 "$maskgat" predict --partitions "$name.4" --load four.ckpt \
  --output predicted-four.csv --quiet --force
runs=$((runs + 1))
losses() { sed -n 's/.*"loss": *\([0-9.e+-]*\).*/\1/p' "$1"; }
if ! diff <(grep -v '"loss"' evaluated.json) <(grep -v '"loss"' evaluated-four.json) > /dev/null; then
  echo "FAIL ($name, evaluate on 4 parts): metrics other than the losses differ from one process"
  failures=$((failures + 1))
elif ! paste <(losses evaluated.json) <(losses evaluated-four.json) |
  awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-9 * $1) bad = 1 } END { exit bad }'; then
  echo "FAIL ($name, evaluate on 4 parts): losses $(losses evaluated-four.json | xargs)," \
    "one process $(losses evaluated.json | xargs)"
  failures=$((failures + 1))
else
  echo "ok ($name, evaluate on 4 parts): the metrics of one process"
fi
runs=$((runs + 1))
if result=$(paste -d, predicted.csv predicted-four.csv | awk -F, '
    NR == 1 { half = NF / 2; next }
    $1 != $(half + 1) || $2 != $(half + 2) {
      bad = "line " NR ": node " $1 " class " $2 ", on 4 parts " $(half + 1) " " $(half + 2); exit
    }
    { for (k = 3; k <= half; ++k) { d = $k - $(half + k); if (d < 0) d = -d; if (d > worst) worst = d } }
    END { if (bad != "") { print bad; exit 1 }
          if (worst > 1e-6) { print "probabilities differ by " worst; exit 1 }
          print NR - 1 " nodes, probabilities within " worst + 0 }') &&
  [ "$(wc -l < predicted.csv)" = "$(wc -l < predicted-four.csv)" ]; then
  echo "ok ($name, predict on 4 parts): $result"
else
  echo "FAIL ($name, predict on 4 parts): $result"
  failures=$((failures + 1))
fi

# One metrics schema: `train --partitions` writes one process's fields, and adds `parts` and the
# per-rank ones (docs/cli.md).
keys() { grep -o '"[a-z_]*":' "$1" | tr -d '":' | LC_ALL=C sort -u; }
"$maskgat" train --dataset "$dataset" --whole-graph --epochs 40 "${common[@]}" > single.json
runs=$((runs + 1))
missing=$(LC_ALL=C comm -23 <(keys single.json) <(keys four.json) | xargs)
added=$(LC_ALL=C comm -13 <(keys single.json) <(keys four.json) | xargs)
if [ -n "$missing" ] ||
  [ "$added" != "bytes_sent_per_epoch communication_share parts peak_rss_mb rank ranks" ]; then
  echo "FAIL (JSON of train --partitions): lacks one process's fields '$missing', adds '$added'"
  failures=$((failures + 1))
else
  echo "ok (JSON of train --partitions): one process's fields, and $added"
fi

# --quiet: the result line on stdout and nothing else, on parts as on one process.
runs=$((runs + 1))
quiet=(--epochs 2 --patience 0 --threads 1 --quiet)
"${mpirun[@]}" -np 2 "$maskgat" train --partitions "$name.2" "${quiet[@]}" > quiet-parts.txt \
  2> quiet-parts.err
"$maskgat" train --dataset "$dataset" "${quiet[@]}" > quiet-one.txt 2> quiet-one.err
if [ "$(wc -l < quiet-parts.txt)" -ne 1 ] || ! grep -q "^$name gat on 2 parts: test accuracy" quiet-parts.txt ||
  [ "$(wc -l < quiet-one.txt)" -ne 1 ] || ! grep -q "^$name gat: test accuracy" quiet-one.txt ||
  [ -s quiet-one.err ]; then
  echo "FAIL (--quiet): on 2 parts: '$(cat quiet-parts.txt)'; one process: '$(cat quiet-one.txt)' '$(cat quiet-one.err)'"
  failures=$((failures + 1))
else
  echo "ok (--quiet): the result line alone, on parts and on one process"
fi

if [ "$failures" -ne 0 ]; then
  echo "FAIL: $failures of $runs checks"
  exit 1
fi
echo "PASS: $runs checks: distributed runs equal to one process, checkpoints across part counts, JSON fields"
