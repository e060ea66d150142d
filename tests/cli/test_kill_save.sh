#!/usr/bin/env bash
# Kills `maskgat train --save m.bin --force` with SIGKILL at many moments while an older m.bin
# exists, and checks after each kill that m.bin is byte for byte the old model or the new one (the
# training is deterministic), that it loads (`maskgat evaluate`), and that no temporary file is
# left in the directory, but for the one a kill between naming it and renaming it over m.bin
# leaves, which the next save must remove.
#   test_kill_save.sh MASKGAT WORK_DIR
# Moments: 24 evenly spread over an uninterrupted run (loading, training, saving), then, under
# strace (which pauses the process at a chosen system call), exactly inside the save: after the
# content is written and synced, before it is linked; at the link; and at the rename, the one
# moment a named temporary file exists, which the next save must remove.
set -euo pipefail
maskgat="$1"
work="$2"
rm -rf "$work"
mkdir -p "$work"
cd "$work"

# A 400-node graph with 8000 features: a ~10 MB checkpoint, so saving takes a while.
dataset="synthetic:nodes=400,degree=4,features=8000,classes=3"
train=("$maskgat" train --dataset "$dataset" --epochs 15 --patience 0 --threads 1 --quiet)
"${train[@]}" --seed 1 --save old.bin > /dev/null 2>&1
"${train[@]}" --seed 2 --save new.bin > /dev/null 2>&1
old=$(md5sum < old.bin)
new=$(md5sum < new.bin)
[ "$old" != "$new" ] || { echo "FAIL: the two seeds gave the same model"; exit 1; }

failures=0
fail() {
  echo "FAIL ($1): $2"
  failures=$((failures + 1))
}

# Checks the directory after a kill; $2 is what m.bin must be: old, new or either.
check() {
  local moment="$1" expect="$2" sum
  local extra
  extra=$(ls -A | grep -v -x -e m.bin -e old.bin -e new.bin || true)
  [ -z "$extra" ] || fail "$moment" "left behind: $extra"
  [ -f m.bin ] || { fail "$moment" "m.bin is missing"; return; }
  sum=$(md5sum < m.bin)
  case "$expect:$sum" in
    "old:$old" | "new:$new" | "either:$old" | "either:$new") ;;
    *) fail "$moment" "m.bin is neither the expected model ($expect) nor intact" ;;
  esac
  "$maskgat" evaluate --load m.bin --dataset "$dataset" > /dev/null 2>&1 ||
    fail "$moment" "m.bin does not load"
}

# Checks the directory after a kill at any moment. A kill between naming the temporary file and
# renaming it over m.bin (the rename window) leaves that name and the old m.bin; the next save must
# then remove the name and write the new model.
check_after_kill() {
  local moment="$1"
  if ls -A | grep -q -x '\.m\.bin\.maskgat-tmp-[0-9]*'; then
    [ "$(md5sum < m.bin)" = "$old" ] || fail "$moment" "a temporary name is left and m.bin is not the old model"
    "${train[@]}" --seed 2 --save m.bin --force > /dev/null 2>&1
    check "save after $moment" new
    rename_windows=$((rename_windows + 1))
  else
    check "$moment" either
  fi
}
rename_windows=0

# An uninterrupted run replaces m.bin with the new model.
cp old.bin m.bin
start=$(date +%s%N)
"${train[@]}" --seed 2 --save m.bin --force > /dev/null 2>&1
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
check "uninterrupted" new

# Evenly spread kills, from the start to just past the uninterrupted run's length.
kills=24
for i in $(seq 1 "$kills"); do
  cp old.bin m.bin
  "${train[@]}" --seed 2 --save m.bin --force > /dev/null 2>&1 &
  pid=$!
  sleep "$(awk -v t="$elapsed_ms" -v i="$i" -v n="$kills" 'BEGIN { printf "%.3f", t * i / n / 1000 }')"
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  check_after_kill "kill $i/$kills at ${i}/${kills} of ${elapsed_ms} ms"
done

# The name of the system call process $1 is in, from /proc/<pid>/syscall (x86-64 numbers).
syscall_of() {
  case "$(cut -d' ' -f1 "/proc/$1/syscall" 2>/dev/null || echo none)" in
    74) echo fsync ;;
    265) echo linkat ;;
    82) echo rename ;;
    *) echo other ;;
  esac
}

# Runs the save under strace, which pauses it at the first call of system call $1 (a 30 s
# injected delay), and kills it there.
kill_at() {
  local syscall="$1" tracer pid=""
  cp old.bin m.bin
  strace -o /dev/null -e trace="$syscall" -e inject="$syscall":delay_enter=30000000:when=1 \
    "${train[@]}" --seed 2 --save m.bin --force > /dev/null 2>&1 &
  tracer=$!
  for _ in $(seq 1 600); do
    pid=$(pgrep -P "$tracer" || true)
    if [ -n "$pid" ] && [ "$(syscall_of "$pid")" = "$syscall" ]; then break; fi
    sleep 0.1
  done
  [ "$(syscall_of "$pid")" = "$syscall" ] || fail "at $syscall" "the save never reached $syscall"
  kill -KILL "$pid" 2>/dev/null || true
  wait "$tracer" 2>/dev/null || true
}

if command -v strace > /dev/null && [ "$(uname -m)" = x86_64 ]; then
  kill_at fsync  # content written, not yet synced or named
  check "at fsync" old
  kill_at linkat  # content synced, about to be named
  check "at linkat" old
  # At the rename the temporary name exists: the one file allowed to remain, which the next save
  # must remove.
  kill_at rename
  ls -A | grep -q -x '\.m\.bin\.maskgat-tmp-[0-9]*' || fail "at rename" "the temporary name is missing"
  check_after_kill "at rename"
  checked="24 spread kills, and kills at fsync, linkat and rename"
else
  echo "note: strace missing (or not x86-64): only the spread kills ran"
  checked="24 spread kills"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "PASS: $checked; m.bin was always the old or the new model, intact; $rename_windows kill(s)" \
  "in the rename window left the temporary name, which the next save removed"
