#!/usr/bin/env bash
# Installs the build tree to a temporary prefix and checks the installed maskgat and maskgat-fetch
# agree on the default data directory, ${XDG_DATA_HOME:-~/.local/share}/maskgat:
#   test_installed.sh <build dir> <data dir holding planetoid/ (used as the mirror)>
set -euo pipefail
build="$1"
mirror="${MASKGAT_DATA_DIR:-$2}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset MASKGAT_DATA_DIR MASKGAT_DATA_MIRROR

cmake --install "$build" --prefix "$work/prefix" > /dev/null
[ -x "$work/prefix/bin/maskgat" ] || fail "bin/maskgat not installed"
[ -x "$work/prefix/bin/maskgat-fetch" ] || fail "bin/maskgat-fetch not installed"

# 1. maskgat-fetch fills $XDG_DATA_HOME/maskgat; the installed maskgat reads it without flags.
XDG_DATA_HOME="$work/xdg" "$work/prefix/bin/maskgat-fetch" --from "$mirror" cora > "$work/fetch.out" 2>&1 ||
  { cat "$work/fetch.out" >&2; fail "maskgat-fetch failed"; }
[ -f "$work/xdg/maskgat/planetoid/ind.cora.graph" ] || fail "maskgat-fetch did not fill \$XDG_DATA_HOME/maskgat"
XDG_DATA_HOME="$work/xdg" "$work/prefix/bin/maskgat" info --dataset cora > "$work/info.out" ||
  fail "installed maskgat could not read \$XDG_DATA_HOME/maskgat"
grep -q "2708" "$work/info.out" || fail "info does not report Cora's 2708 nodes"

# 2. Without XDG_DATA_HOME the directory is ~/.local/share/maskgat, named in the error.
set +e
env -u XDG_DATA_HOME HOME="$work/home" "$work/prefix/bin/maskgat" info --dataset cora \
  > /dev/null 2> "$work/err"
code=$?
set -e
[ "$code" -eq 1 ] || fail "missing data: exit $code, expected 1"
grep -q "$work/home/.local/share/maskgat/planetoid/ind.cora" "$work/err" ||
  fail "error does not name ~/.local/share/maskgat: $(cat "$work/err")"
grep -q "maskgat-fetch" "$work/err" || fail "error does not name maskgat-fetch"

# 3. With neither HOME nor XDG_DATA_HOME a built-in dataset needs --data-dir (bad usage, exit 2),
#    while own files and synthetic graphs need no data directory at all.
set +e
env -u XDG_DATA_HOME -u HOME "$work/prefix/bin/maskgat" info --dataset cora > /dev/null 2> "$work/err"
code=$?
set -e
[ "$code" -eq 2 ] || fail "no HOME: exit $code, expected 2"
grep -q "^error: no data directory for cora: neither XDG_DATA_HOME nor HOME is set; pass --data-dir or set MASKGAT_DATA_DIR$" "$work/err" ||
  fail "no HOME: unexpected message: $(cat "$work/err")"
env -u XDG_DATA_HOME -u HOME "$work/prefix/bin/maskgat" info \
  --dataset synthetic:nodes=50,degree=3,features=4,classes=2 > /dev/null ||
  fail "no HOME: a synthetic graph failed"
echo "installed maskgat and maskgat-fetch share \${XDG_DATA_HOME:-~/.local/share}/maskgat"
