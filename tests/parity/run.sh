#!/bin/sh
# Runs the PyTorch parity checks: the exporter writes MaskGAT's results, reference.py recomputes
# them; then state_dicts.py saves PyG-named state dicts of the Cora models, the exporter imports
# and runs them, and state_dicts.py compares with PyTorch. Exits 77 (CTest's "skipped") when python3-torch is not installed, unless
# MASKGAT_REQUIRE_PARITY=1 (CI), where that is a failure.
# usage: run.sh EXPORTER DATA_DIR WORK_DIR
set -eu
# Debian's python3-torch belongs to /usr/bin/python3, which another python3 may shadow on PATH.
python=""
for candidate in /usr/bin/python3 python3; do
  if "$candidate" -c "import torch" 2>/dev/null; then
    python=$candidate
    break
  fi
done
if [ -z "$python" ]; then
  if [ "${MASKGAT_REQUIRE_PARITY:-0}" = 1 ]; then
    echo "parity: python3-torch is not installed (apt-get install python3-torch)" >&2
    exit 1
  fi
  echo "parity: skipped, python3-torch is not installed (apt-get install python3-torch)"
  exit 77
fi
data="${MASKGAT_DATA_DIR:-$2}"
rm -rf "$3"
"$1" "$3" "$data"
"$python" "$(dirname "$0")/reference.py" "$3"
"$python" "$(dirname "$0")/state_dicts.py" write "$3"
"$1" --import "$3" "$data"
"$python" "$(dirname "$0")/state_dicts.py" check "$3"
