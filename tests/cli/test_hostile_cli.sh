#!/usr/bin/env bash
# The command line against hostile and careless input, one block per class of fault of
# docs/hostile-inputs.md (second table): every case must end with the exit code given (1 bad data
# or I/O, 2 bad usage, 0 success) and a message matching the pattern, within 20 seconds, and what
# the user had must be intact afterwards.
#   test_hostile_cli.sh MASKGAT DATA_DIR WORK_DIR
# DATA_DIR is tests/data/communities (a 40-node graph with features, labels and a split).
set -uo pipefail
maskgat="$1"
data="$2"
work="$3"
corpus="$(cd "$(dirname "$0")/../fuzz/corpus" && pwd)"
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

cases=0
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect CODE PATTERN ARGS...: runs `maskgat ARGS...`; the exit code must be CODE and stderr must
# match the extended regular expression PATTERN. Sets $out (stdout) and $err (stderr).
expect() {
  local code="$1" pattern="$2"
  shift 2
  cases=$((cases + 1))
  out=$(timeout 20 "$maskgat" "$@" 2> stderr.txt)
  local got=$?
  err=$(cat stderr.txt)
  if [ "$got" != "$code" ]; then
    fail "maskgat $(printf '%q ' "$@" | cut -c1-300): exit $got, expected $code; stderr: ${err:0:500}"
  elif [ -n "$pattern" ] && ! grep -qE -- "$pattern" stderr.txt; then
    fail "maskgat $(printf '%q ' "$@" | cut -c1-300): stderr does not match '$pattern': ${err:0:500}"
  fi
}

# check DESCRIPTION COMMAND...: a condition on what is left afterwards.
check() {
  local what="$1"
  shift
  cases=$((cases + 1))
  "$@" || fail "$what"
}

own=(--graph "$data/edges.txt" --features "$data/features.csv" --labels "$data/labels.txt"
     --split "$data/split.txt" --undirected)
quick=(--epochs 3 --patience 0 --quiet)

# 1. Nesting the readers do not see as the user meant it: no parser recurses, so depth is only a
# limit, and text hidden behind a quote or a comment never reaches a recursive parser.
{ printf '<graphml><!DOCTYPE x ["'; for _ in $(seq 200000); do printf '<a>'; done; } > doctype.graphml
expect 1 "'<!DOCTYPE' inside the element <graphml>: expected a comment" info --graph doctype.graphml
{ printf '<graphml>'; for _ in $(seq 200000); do printf '<a>'; done; } > deep.graphml
expect 1 'nesting depth 257 exceeds the limit of 256 \(raise it with --max-nesting-depth\)' \
  info --graph deep.graphml
{ printf 'digraph { // comment\r'; for _ in $(seq 200000); do printf '{'; done; } > cr.dot
expect 1 ':1: nesting depth 257 exceeds the limit of 256' info --graph cr.dot
printf 'digraph {\n// comment\r a -> b\n}\n' > comment_cr.dot
expect 0 '' info --graph comment_cr.dot
check "an edge after '// comment\\r' is read" grep -q '^edges: 1$' <<< "$out"
{ printf 'digraph { # x\f'; for _ in $(seq 200000); do printf 'subgraph {'; done; } > ff.dot
expect 1 'unexpected .#.' info --graph ff.dot

# 2. Exceptions that escaped main: every one is an error with its exit code.
ln -s loop1 loop2
ln -s loop2 loop1
expect 1 "cannot open 'loop1': Too many levels of symbolic links" info --graph loop1
expect 1 'the path exists and is a symbolic link' train "${own[@]}" "${quick[@]}" --save loop1
long=$(printf 'a%.0s' $(seq 5000))
expect 1 'File name too long' info --graph "$long"
expect 1 'File name too long' train "${own[@]}" "${quick[@]}" --save "$long"
expect 1 "checkpoint: cannot open '\.': is a directory" evaluate --load . "${own[@]}"
expect 2 'over the limit of 100000000 \(raise it with --max-parameters\)' \
  train "${own[@]}" "${quick[@]}" --heads 2147483647 --hidden 2147483647
expect 2 'raise it with --max-activations' train "${own[@]}" "${quick[@]}" --heads 100000 \
  --hidden 1000 --max-parameters 1000000000000
if [ "$(id -u)" -ne 0 ]; then
  mkdir locked && chmod 000 locked
  expect 1 "cannot open 'locked/x': Permission denied" info --graph locked/x
  chmod 700 locked
fi
# Latin-1 names are ordinary input: the JSON replaces what is not UTF-8, and says so.
sed 's/^t00/caf\xe9/; s/ t00$/ caf\xe9/' "$data/edges.txt" > latin1_edges.txt
sed 's/^t00,/caf\xe9,/' "$data/features.csv" > latin1_features.csv
sed 's/^t00 theory/caf\xe9 th\xe9orie/; s/ theory$/ th\xe9orie/' "$data/labels.txt" > latin1_labels.txt
sed 's/^t00 /caf\xe9 /' "$data/split.txt" > latin1_split.txt
latin1=(--graph latin1_edges.txt --features latin1_features.csv --labels latin1_labels.txt
        --split latin1_split.txt --undirected)
expect 0 '' train "${latin1[@]}" "${quick[@]}" --save latin1.ckpt
expect 0 'not valid UTF-8 .* replaced by U\+FFFD' predict --load latin1.ckpt "${latin1[@]}" --json
check "predict --json with Latin-1 names prints valid JSON" \
  python3 -c 'import json, sys; d = json.loads(sys.argv[1]); assert d["predictions"][0]["node"] == "caf\ufffd"' "$out"
expect 0 'not valid UTF-8' evaluate --load latin1.ckpt "${latin1[@]}" --json
check "evaluate --json with a Latin-1 class name prints valid JSON" \
  python3 -c 'import json, sys; assert "th\ufffdorie" in json.loads(sys.argv[1])["classes"]' "$out"

# 3. Reads bounded before they are made, from devices and pipes too.
expect 1 'edge_list: /dev/zero:1: a zero byte at column 1' info --graph /dev/zero
expect 1 'features: /dev/zero:1: a zero byte at column 1' info --graph "$data/edges.txt" --features /dev/zero
expect 1 'checkpoint: /dev/zero: not a MaskGAT checkpoint' evaluate --load /dev/zero "${own[@]}"
expect 1 'checkpoint: /dev/urandom: not a MaskGAT checkpoint' evaluate --load /dev/urandom "${own[@]}"
expect 1 'graphml: /dev/zero:1: a zero byte at column 1' info --graph /dev/zero --format graphml
expect 1 'dot: /dev/zero:1: a zero byte' info --graph /dev/zero --format dot
head -c 300 /dev/zero | tr '\0' 'a' > long_line.txt
expect 1 'long_line.txt:1: the line is longer than 100 bytes, over the limit \(raise it with --max-line-bytes\)' \
  info --graph long_line.txt --max-line-bytes 100
{ head -c 98 /dev/zero | tr '\0' 'a'; printf ' b\r\n'; } > crlf_line.txt
expect 0 '' info --graph crlf_line.txt --max-line-bytes 100
check "a CRLF line of exactly --max-line-bytes bytes is read" grep -q '^edges: 1$' <<< "$out"
expect 1 'graphml: .*: file has more than 1000 bytes, over the limit \(raise it with --max-file-bytes\)' \
  info --graph <(head -c 5000 /dev/zero | tr '\0' ' ') --format graphml --max-file-bytes 1000

# 4. Limits that bound memory, checked before allocating.
awk '{ print $1, "class" NR }' "$data/labels.txt" > many_labels.txt
expect 1 'many_labels.txt:31: label .class31. would be class 31, over the limit of 30 classes \(raise it with --max-classes\)' \
  info --graph "$data/edges.txt" --labels many_labels.txt --max-classes 30
expect 1 'about 2e\+09 edges: over the edge limit of 200000000 \(raise it with --max-edges\)' \
  info --dataset synthetic:nodes=100000,degree=20000,features=8,classes=3
expect 1 '30000 classes: over the class limit of 1000 \(raise it with --max-classes\)' \
  info --dataset synthetic:nodes=100000,degree=2,features=8,classes=30000

# 5. Checkpoints whose checksum holds but whose content does not (crafted with a valid checksum;
# more in the unit test and the fuzz target `checkpoint`).
expect 1 'regression-empty-class-list: 0 class names for a model of 2 classes' \
  predict --load "$corpus/checkpoint/regression-empty-class-list" "${own[@]}" --json
expect 1 'regression-six-class-names: 6 class names for a model of 2 classes' \
  predict --load "$corpus/checkpoint/regression-six-class-names" "${own[@]}" --output six.csv
check "no CSV was written for a model with 6 class names" test ! -e six.csv
expect 1 "regression-nan-weights: the model's parameters hold a NaN or an infinity" \
  evaluate --load "$corpus/checkpoint/regression-nan-weights" "${own[@]}"

# 6. Outputs checked before any work; never two outputs in one file; never a file that is not a
# regular file replaced.
expect 1 "--save /nonexistent/dir/m.ckpt: cannot write in the directory '/nonexistent/dir': No such file or directory" \
  train "${own[@]}" --epochs 300 --patience 0 --save /nonexistent/dir/m.ckpt
check "no training ran before the unwritable --save was refused" test -z "$out"
expect 2 '--metrics-json ./x.ckpt and --save x.ckpt name the same file' \
  train "${own[@]}" "${quick[@]}" --save x.ckpt --metrics-json ./x.ckpt --force
check "nothing was written for two outputs in one file" test ! -e x.ckpt
expect 2 'names the input --features' predict --load latin1.ckpt "${latin1[@]}" \
  --output latin1_features.csv --force
ln latin1_features.csv hard_link.csv
expect 2 '--output hard_link.csv names the input --features' predict --load latin1.ckpt \
  "${latin1[@]}" --output hard_link.csv --force
check "the features file is intact" cmp -s latin1_features.csv hard_link.csv
mkfifo fifo
expect 1 '--output fifo: the path exists and is a FIFO; only a regular file is ever replaced' \
  predict --load latin1.ckpt "${latin1[@]}" --output fifo --force
check "the FIFO is still a FIFO" test -p fifo
mkdir directory
expect 1 'the path exists and is a directory' predict --load latin1.ckpt "${latin1[@]}" --output directory --force
expect 1 '--metrics-json latin1.ckpt/m.json: Not a directory' \
  evaluate --load latin1.ckpt "${latin1[@]}" --metrics-json latin1.ckpt/m.json

# 7. No user string reaches gnuplot as code: a name starting with '<' or '|' is a name.
expect 0 '' train "${own[@]}" "${quick[@]}" --plot '<touch PWNED;x.png'
check "--plot '<touch PWNED;x.png' ran no command" test ! -e PWNED
check "--plot '<touch PWNED;x.png' wrote the CSV under that name" test -s '<touch PWNED;x.csv'
expect 0 '' train "${own[@]}" "${quick[@]}" --plot '|touch PWNED.svg' --save plotted.ckpt
check "--plot '|touch PWNED.svg' ran no command" test ! -e PWNED
expect 0 '' predict --load plotted.ckpt "${own[@]}" --json --plot-attention t00 '<touch PWNED;t00.svg'
check "--plot-attention '<touch PWNED;t00.svg' ran no command" test ! -e PWNED
if command -v gnuplot > /dev/null; then
  check "the pictures were drawn" test -s '<touch PWNED;x.png' -a -s '|touch PWNED.svg' -a -s '<touch PWNED;t00.svg'
fi

# 8. Silently wrong or unclear results.
printf 'digraph { a -> b [weight=1e400] }\n' > exponent.dot
expect 1 "exponent.dot:1: the numeral '1' runs into 'e400': quote '1e400' to make it one ID" \
  info --graph exponent.dot
printf 'digraph { a -> b [weight="1e400"] }\n' > quoted_exponent.dot
expect 1 "quoted_exponent.dot:1: edge 'a' -> 'b': weight '1e400' is not finite" info --graph quoted_exponent.dot
printf 'digraph {\n  a [label=<<table><tr><td>x</td></tr></table>>];\n  a -> b;\n}\n' > html.dot
expect 0 '' info --graph html.dot
check "an HTML label is read" grep -q '^edges: 1$' <<< "$out"
{ printf 'digraph {\n'; for _ in $(seq 300000); do printf '// a comment line\n'; done; printf 'a -> b\n}\n'; } > comments.dot
expect 0 '' info --graph comments.dot
graphml_head='<graphml><graph edgedefault="directed"><node id="a"/><node id="b"/><edge source="a" target="b"/>'
printf '%s<hyperedge><endpoint node="a"/><endpoint node="b"/></hyperedge></graph></graphml>\n' "$graphml_head" > hyper.graphml
expect 0 'note: graphml: .*: 1 <hyperedge> element\(s\) ignored: hyperedges are not read' info --graph hyper.graphml
expect 1 '1 <hyperedge> element\(s\) ignored: hyperedges are not read \(--strict\)' info --graph hyper.graphml --strict
printf '<graphml><graph edgedefault="directed"><node id="a"><graph edgedefault="directed"><node id="x"/></graph></node></graph></graphml>\n' > nested.graphml
expect 0 '1 <graph> element\(s\) inside <node> elements ignored: nested graphs are not read' info --graph nested.graphml
printf '%s</graph><graph edgedefault="directed"><node id="z"/></graph></graphml>\n' "$graphml_head" > two.graphml
expect 0 '1 <graph> element\(s\) after the first ignored: one graph is read' info --graph two.graphml
printf '\xff\xfe' > utf16.graphml
printf '<graphml/>' | iconv -f UTF-8 -t UTF-16LE >> utf16.graphml
expect 1 'utf16.graphml:1: the file is UTF-16 little-endian text \(byte-order mark FF FE\), expected UTF-8' \
  info --graph utf16.graphml
grep -v ' test$' "$data/split.txt" > no_test_split.txt
expect 0 'note: the split has no test nodes, so there is no test accuracy' train --graph "$data/edges.txt" \
  --features "$data/features.csv" --labels "$data/labels.txt" --split no_test_split.txt --undirected \
  --epochs 3 --patience 0 --json
check "a split without test nodes reports test_acc null" \
  python3 -c 'import json, sys; d = json.loads(sys.argv[1]); assert d["runs"][0]["test_acc"] is None and d["test_acc_mean"] is None' "$out"
grep -v '^t00 ' "$data/labels.txt" > unlabelled_t00.txt
expect 1 "split: .*split.txt:1: node 't00' is in 'train' but has no label" \
  train --graph "$data/edges.txt" --features "$data/features.csv" --labels unlabelled_t00.txt \
  --split "$data/split.txt" "${quick[@]}"

echo "$((cases - failures)) of $cases hostile cases pass"
[ "$failures" -eq 0 ] && echo "PASS: every hostile case"
