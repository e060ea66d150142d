#!/usr/bin/env bash
# Checks datasets/fetch.sh against a mirror made from the data directory ($MASKGAT_DATA_DIR if
# set, else the second argument):
#   test_fetch.sh <fetch.sh> <default data dir holding planetoid/>
set -euo pipefail
fetch="$1"
data="${MASKGAT_DATA_DIR:-$2}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A mirror with Cora's Planetoid files only, and ind.cora.y corrupted.
mkdir -p "$work/mirror/planetoid"
cp "$data"/planetoid/ind.cora.* "$work/mirror/planetoid/"
echo garbage > "$work/mirror/planetoid/ind.cora.y"

# 1. Good files are copied and verified; the corrupt one is refused; LINQS files are missing.
set +e
"$fetch" --from "$work/mirror" --dest "$work/dest" cora > "$work/out" 2>&1
code=$?
set -e
[ "$code" -eq 1 ] || fail "corrupt mirror file: exit $code, expected 1"
grep -q "^ok       planetoid/ind.cora.x$" "$work/out" || fail "ind.cora.x not copied"
grep -q "^BAD      planetoid/ind.cora.y: sha256 differs" "$work/out" || fail "corrupt y not reported"
grep -q "^missing  linqs/cora/cora.content" "$work/out" || fail "missing LINQS file not reported"
[ ! -e "$work/dest/planetoid/ind.cora.y" ] || fail "corrupt y was installed"
ls -A "$work/dest/planetoid" | grep -q '^\.fetch' && fail "temporary file left behind"

# 2. A corrupt file in place is kept, not replaced by the mirror's bad copy, and is an error.
echo "my own bytes" > "$work/dest/planetoid/ind.cora.y"
set +e
"$fetch" --from "$work/mirror" --dest "$work/dest" cora > "$work/out" 2>&1
code=$?
set -e
[ "$code" -eq 1 ] || fail "corrupt file in place: exit $code, expected 1"
[ "$(cat "$work/dest/planetoid/ind.cora.y")" = "my own bytes" ] || fail "file in place replaced"
rm "$work/mirror/planetoid/ind.cora.y"
set +e
"$fetch" --from "$work/mirror" --dest "$work/dest" cora > "$work/out" 2>&1
code=$?
set -e
[ "$code" -eq 1 ] || fail "corrupt file in place, none in the mirror: exit $code, expected 1"
grep -q "^BAD      planetoid/ind.cora.y: the file in place fails its sha256 check" "$work/out" ||
  fail "corrupt file in place not reported"

# 3. With a good copy in the mirror the file is repaired; a partial mirror is not an error.
cp "$data/planetoid/ind.cora.y" "$work/mirror/planetoid/ind.cora.y"
"$fetch" --from "$work/mirror" --dest "$work/dest" cora > "$work/out" 2>&1 ||
  fail "repair: exit $?, expected 0"
grep -q "^present  planetoid/ind.cora.x$" "$work/out" || fail "verified file not kept"
cmp -s "$data/planetoid/ind.cora.y" "$work/dest/planetoid/ind.cora.y" || fail "y not repaired"

# 4. Offline (downloads through a proxy that refuses connections): one attempt per host, then
# every file is reported and the message names --from.
set +e
https_proxy=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 MASKGAT_DATA_MIRROR= \
  "$fetch" --dest "$work/offline" cora > "$work/out" 2>&1
code=$?
set -e
[ "$code" -eq 1 ] || fail "offline: exit $code, expected 1"
[ "$(grep -c "^fetch.sh: cannot connect to .* (no network?); nothing more is downloaded from it$" "$work/out")" -eq 2 ] ||
  fail "offline: not one connection failure per host (github.com, linqs-data.soe.ucsc.edu)"
[ "$(grep -c "^FAILED   .*: download failed: " "$work/out")" -eq 2 ] ||
  fail "offline: not one attempt per host"
[ "$(grep -c "^FAILED   .*: not downloaded (no connection to " "$work/out")" -eq 8 ] ||
  fail "offline: not every other file reported"
grep -q "^fetch.sh: without a connection, copy the files from a local mirror with --from DIR" "$work/out" ||
  fail "offline: --from not named"

# 5. Bad usage exits 2.
set +e
"$fetch" --bogus > /dev/null 2>&1
code=$?
set -e
[ "$code" -eq 2 ] || fail "unknown argument: exit $code, expected 2"
echo "fetch.sh: all checks passed"
