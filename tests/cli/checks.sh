# Helpers the task scripts (test_graph_task.sh, test_link_task.sh) source; they set `maskgat`
# (the program) and `work` (a scratch folder) first.
fail() { echo "FAIL: $*" >&2; exit 1; }
json() { python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"; }
expect() {  # expect CODE PATTERN ARGS...: the exit code and a line of stderr
  local code="$1" pattern="$2"
  shift 2
  set +e
  "$maskgat" "$@" > /dev/null 2> "$work/err"
  local got=$?
  set -e
  [ "$got" = "$code" ] || fail "$* exited $got, expected $code: $(cat "$work/err")"
  grep -q -- "$pattern" "$work/err" || fail "$*: stderr lacks '$pattern': $(cat "$work/err")"
}
