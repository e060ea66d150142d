#!/usr/bin/env bash
# Checks the library's layering: a file under lib/<layer>/ or include/maskgat/<layer>/ includes
# only headers of its own layer and of the layers below it (public `maskgat/<layer>/...` and
# private `<layer>/detail/...` alike), nothing in the library includes the umbrella header, and
# the umbrella header includes every public header but the optional MPI component's (mpi/, which
# needs MPI's headers).
#
# Usage: check_layers.sh SOURCE_DIR
set -euo pipefail
cd "$1"

declare -A allowed=(
  [core]="core"
  [graph]="core graph"
  [io]="core graph io"
  [ops]="core graph ops"
  [nn]="core graph ops nn"
  [optim]="core optim"
  [transforms]="core graph io transforms"
  [train]="core graph io ops nn optim transforms train"
  [mpi]="core mpi"
)

violations=0
checked=0
while IFS= read -r file; do
  layer=$(echo "$file" | sed -E 's#^(lib|include/maskgat)/([a-z]+)/.*#\2#')
  if [[ -z "${allowed[$layer]+set}" ]]; then
    echo "$file: not in a known layer"
    violations=$((violations + 1))
    continue
  fi
  while IFS=: read -r line include; do
    checked=$((checked + 1))
    target=$(echo "$include" | sed -E 's#^(maskgat/)?([a-z_]+)[/.].*#\2#')
    case "$include" in
      maskgat/export.hpp | maskgat/version.hpp) continue ;;
      maskgat/maskgat.hpp)
        echo "$file:$line: includes the umbrella header"
        violations=$((violations + 1))
        continue
        ;;
    esac
    if [[ " ${allowed[$layer]} " != *" $target "* ]]; then
      echo "$file:$line: layer '$layer' includes '$include' of layer '$target'"
      violations=$((violations + 1))
    fi
  done < <(grep -noE '^#include "[^"]+"' "$file" | sed -E 's/^([0-9]+):#include "(.*)"/\1:\2/')
done < <(find lib include/maskgat -mindepth 2 -type f \( -name '*.hpp' -o -name '*.cpp' \) | sort)

while IFS= read -r header; do
  if ! grep -q "^#include \"maskgat/$header\"" include/maskgat/maskgat.hpp; then
    echo "include/maskgat/maskgat.hpp: does not include maskgat/$header"
    violations=$((violations + 1))
  fi
done < <(cd include/maskgat && find . -mindepth 2 -name '*.hpp' -not -path './mpi/*' |
  sed 's#^\./##' | sort)

if ((checked == 0)); then
  echo "no includes found under $1/lib and $1/include/maskgat"
  exit 1
fi
if ((violations > 0)); then
  echo "$violations problem(s) with the layering or the umbrella header"
  exit 1
fi
echo "$checked includes, each of its own layer or one below; the umbrella header includes every public header"
