#!/usr/bin/env bash
# Trains on exactly a split written by the PyTorch peer (../shared/peer/graphdata.py, Shchur et
# al.'s protocol: largest component, 20 training and 30 validation nodes per class, nodes named by
# their npz row) and checks that each part holds the nodes the file names: `maskgat train
# --split-out` writes back the split it trained on, which must be the peer's line for line.
# Exits 77 (skipped) without the peer or python3-scipy, unless MASKGAT_REQUIRE_PARITY=1 (CI).
# MASKGAT_PEER_DIR, when set, names the peer's directory instead of PEER_DIR (a clone that is not
# beside ../shared), as MASKGAT_DATA_DIR does the data's.
#   test_peer_split.sh MASKGAT PEER_DIR DATA_DIR
set -euo pipefail
maskgat="$1"
peer="${MASKGAT_PEER_DIR:-$2}"
data="${MASKGAT_DATA_DIR:-$3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

python=/usr/bin/python3
if [ ! -f "$peer/graphdata.py" ] || ! "$python" -c "import numpy, scipy" 2>/dev/null; then
  message="the peer ($peer/graphdata.py) or python3-numpy and python3-scipy are missing"
  if [ "${MASKGAT_REQUIRE_PARITY:-0}" = 1 ]; then fail "$message"; fi
  echo "peer split: skipped, $message"
  exit 77
fi

PYTHONPATH="$peer" "$python" - "$data/graphdata/amazon_photo.npz" "$work/peer.split" <<'PY'
import sys
from graphdata import load_graphdata, write_split
write_split(load_graphdata(sys.argv[1], seed=3), sys.argv[2])
PY
"$maskgat" train --dataset amazon-photo --data-dir "$data" --largest-component \
  --split "$work/peer.split" --epochs 1 --patience 0 --split-out "$work/ours.split" --quiet

[ "$(wc -l < "$work/peer.split")" -eq 7487 ] || fail "the peer's split does not cover the 7487 nodes"
for part in train val test; do
  expected=$(grep -c " $part$" "$work/peer.split")
  got=$(grep -c " $part$" "$work/ours.split")
  [ "$expected" -eq "$got" ] || fail "$part: $got nodes, the peer's file names $expected"
done
[ "$(grep -c ' train$' "$work/ours.split")" -eq 160 ] || fail "not 20 training nodes per class"
[ "$(grep -c ' val$' "$work/ours.split")" -eq 240 ] || fail "not 30 validation nodes per class"
if ! diff <(sort "$work/peer.split") <(sort "$work/ours.split") > "$work/diff"; then
  head -5 "$work/diff" >&2
  fail "the split trained on is not the peer's"
fi
echo "peer split: 7487 nodes in the parts the peer's file names"
