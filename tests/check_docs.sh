#!/usr/bin/env bash
# Checks that the user documentation names no commits: no word of 7 to 40 hexadecimal digits
# with a letter and a digit among them (a decimal number, as in a command or a quoted message, is allowed).
#
# Usage: check_docs.sh SOURCE_DIR
set -euo pipefail
cd "$1"
pages=(README.md CONTRIBUTING.md docs/*.md)
if ((${#pages[@]} < 3)); then
  echo "expected README.md, CONTRIBUTING.md and the pages of docs/"
  exit 1
fi
hashes=$(grep -noE '\b[0-9a-f]{7,40}\b' "${pages[@]}" | awk -F: '$3 ~ /[a-f]/ && $3 ~ /[0-9]/' || true)
if [[ -n "$hashes" ]]; then
  echo "$hashes"
  echo "the pages above name what looks like a commit"
  exit 1
fi
echo "${#pages[@]} pages, no commit named"
