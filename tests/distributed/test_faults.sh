#!/usr/bin/env bash
# A distributed run whose rank fails ends as a whole, with a non-zero exit and a message, within
# 10 seconds: a corrupt part file (the rank that reads it names itself and the file), a rank that
# exits with status 1, and a rank killed with SIGKILL in the middle of training; a rank stopped
# with SIGSTOP ends the job within --mpi-timeout and 10 seconds, the other rank naming it; bad usage
# (parts for another process count, options a distributed run, evaluation or prediction does not
# take) refused by name.
#   test_faults.sh MASKGAT WORK_DIR
# Needs mpirun (Open MPI) and the Cora files (MASKGAT_DATA_DIR).
set -euo pipefail
maskgat="$1"
work="$2"
# shellcheck source=prologue.sh
source "$(dirname "$0")/prologue.sh"
launcher=("${mpirun[@]}")
mpirun+=(-np 2)
"$maskgat" partition --dataset cora --parts 2 --out cora.2 --quiet > /dev/null
train=(train --partitions cora.2 --epochs 100000 --patience 0 --threads 1 --quiet)

failures=0
fail() {
  echo "FAIL ($1): $2"
  failures=$((failures + 1))
}
now() { date +%s.%N; }
# Checks how a job ended: a non-zero status, `expected` in its output, within `limit` (10) s of
# `since`.
check() {
  local what="$1" status="$2" since="$3" expected="$4" limit="${5:-10}"
  local took
  took=$(awk -v a="$(now)" -v b="$since" 'BEGIN { printf "%.1f", a - b }')
  [ "$status" -ne 0 ] || fail "$what" "the job exited 0"
  grep -q -- "$expected" out.txt || fail "$what" "no '$expected' in: $(head -c 2000 out.txt)"
  if awk -v t="$took" -v l="$limit" 'BEGIN { exit !(t > l) }'; then
    fail "$what" "the job took $took s to end"
  fi
  echo "ok ($what): exit $status after $took s"
}

# A corrupt part file: one byte of rank 1's part record flipped.
cp -r cora.2 corrupt.2
printf '\x7f' | dd of=corrupt.2/part-1/part bs=1 seek=40 conv=notrunc status=none
start=$(now)
status=0
timeout 60 "${mpirun[@]}" "$maskgat" train --partitions corrupt.2 --threads 1 --quiet \
  > out.txt 2>&1 || status=$?
check "corrupt part file" "$status" "$start" "error: rank 1 of 2: partition: .*part-1/part: checksum mismatch"

# A rank that exits with status 1 while the other starts.
start=$(now)
status=0
timeout 60 "${mpirun[@]}" sh -c \
  'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exit 1; fi; exec "$0" "$@"' "$maskgat" "${train[@]}" \
  > out.txt 2>&1 || status=$?
check "rank exits 1" "$status" "$start" "exit code"

# signal_rank WHAT SIGNAL EXPECTED LIMIT [OPTION...]: trains on both ranks with OPTIONs, sends
# SIGNAL to rank 1 once it is past loading, and checks how the job ended (`check`).
signal_rank() {
  local what="$1" signal="$2" expected="$3" limit="$4" status=0 job start
  shift 4
  rm -f pid.0 pid.1
  timeout 120 "${mpirun[@]}" sh -c 'echo $$ > pid.$OMPI_COMM_WORLD_RANK; exec "$0" "$@"' \
    "$maskgat" "${train[@]}" "$@" > out.txt 2>&1 &
  job=$!
  for _ in $(seq 100); do [ -s pid.1 ] && break; sleep 0.1; done
  sleep 3  # past loading, into the epochs
  start=$(now)
  kill "-$signal" "$(cat pid.1)"
  wait "$job" || status=$?
  check "$what" "$status" "$start" "$expected" "$limit"
}
# A rank killed with SIGKILL while both train.
signal_rank "rank killed" KILL "signal 9" 10
# A rank stopped (SIGSTOP) while both train: the other waits --mpi-timeout (3 s), names it and
# ends the job.
signal_rank "rank stopped" STOP \
  "error: rank 0 of 2: mpi: rank 0 waited 3.[0-9] s in exchange (call [0-9]*) for rank 1, which did not answer" \
  13 --mpi-timeout 3

# Bad usage, refused with exit 2 and a message: parts for another process count, and options a
# distributed run, evaluation or prediction does not take.
# refused WHAT MESSAGE COMMAND...: COMMAND exits with 2 and prints MESSAGE.
refused() {
  local what=$1 message=$2 status=0
  shift 2
  "$@" > out.txt 2>&1 || status=$?
  [ "$status" -eq 2 ] || fail "$what" "exit $status, expected 2"
  grep -qF -- "$message" out.txt || fail "$what" "message: $(head -c 500 out.txt)"
}
refused "part count" \
  "error: rank 0 of 1: --partitions: cora.2 holds 2 parts, the job runs 1 processes; run it" \
  "${launcher[@]}" -np 1 "$maskgat" train --partitions cora.2 --threads 1 --quiet
refused "--runs" "error: --partitions trains one run on the whole graph; --runs, --plot, --split-out," \
  "$maskgat" train --partitions cora.2 --runs 2
refused "evaluate --split-out" \
  "error: --partitions evaluates on the parts as partitioned and reports accuracy; --data-as-given, --split-out" \
  "$maskgat" evaluate --partitions cora.2 --load model.ckpt --split-out split.txt
refused "predict --nodes" \
  "error: --partitions predicts every node of the parts as partitioned; --data-as-given," \
  "$maskgat" predict --partitions cora.2 --load model.ckpt --nodes 1 --json

if [ "$failures" -ne 0 ]; then
  echo "FAIL: $failures of 4 faults"
  exit 1
fi
echo "PASS: every fault ended the job"
