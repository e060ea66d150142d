#!/usr/bin/env bash
# Makes the public citation datasets, Shchur et al.'s npz graphs, the heterophily benchmark's
# graphs, three TU graph-classification collections and two trained PyTorch Geometric models
# (the torch.save files the import tests read) available in a MaskGAT data directory.
#
#   datasets/fetch.sh [--from DIR] [--dest DIR] [NAME ...]   (installed: maskgat-fetch)
#
# NAME: cora, citeseer, pubmed, amazon-computers, amazon-photo, coauthor-cs, gnn-benchmark (the
# SparseGraph npz files of Cora and CiteSeer), cora-ml, actor, chameleon-filtered,
# squirrel-filtered, tolokers, cornell, texas, wisconsin or heterophily (those seven), tu (the
# TU collections MUTAG, PROTEINS and ENZYMES), pyg-models (models/elliptic_gat.pt and
# models/solubility_gat.pt) (default: all).
#
# --from DIR  copy from a local mirror with the same layout (planetoid/, linqs/, graphdata/, ...)
#             instead of downloading; default $MASKGAT_DATA_MIRROR when set. A mirror may be
#             partial: a file it lacks (PubMed's ind.pubmed.allx in some) is reported, not an
#             error. The models are taken from DIR/models, or from a models/ folder beside DIR.
# --dest DIR  data directory to fill; default $MASKGAT_DATA_DIR, else this script's folder in the
#             source tree, else ${XDG_DATA_HOME:-~/.local/share}/maskgat when installed
#
# Every file is checked against SHA256SUMS, beside this script in the source tree and in
# ../share/maskgat/ when installed as bin/maskgat-fetch. A file already in place with the
# right checksum is kept; a new copy is written to a temporary file in the destination folder,
# verified, and only then renamed over the old one, so a good file is never replaced by a bad
# one. Exit status: 0 when every requested file is in place and verified (or absent from the
# mirror), 1 when a file is corrupt or cannot be downloaded, 2 for bad usage.
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -f "$script_dir/SHA256SUMS" ]; then
  sums="$script_dir/SHA256SUMS"
  default_dest="$script_dir"
else
  sums="$script_dir/../share/maskgat/SHA256SUMS"
  data_home="${XDG_DATA_HOME:-}"
  case "$data_home" in /*) ;; *) data_home="${HOME:?fetch.sh: neither XDG_DATA_HOME nor HOME is set; pass --dest}/.local/share" ;; esac
  default_dest="$data_home/maskgat"
fi
if [ ! -f "$sums" ]; then
  echo "fetch.sh: cannot find SHA256SUMS beside the script or in $script_dir/../share/maskgat" >&2
  exit 2
fi
planetoid_url="https://github.com/kimiyoung/planetoid/raw/master/data"
linqs_url="https://linqs-data.soe.ucsc.edu/public/lbc"
# Shchur et al.'s npz files as EdisonLeeeee/GraphData keeps them (byte for byte the published ones).
graphdata_url="https://github.com/EdisonLeeeee/GraphData/raw/f8022c26b917346f2a461ffec0ec5ae24b36de68/datasets"
gnn_benchmark_url="https://github.com/shchur/gnn-benchmark/raw/1e72912a0810cdf27ae54fd589a3b43358a2b161/data/npz"
ppnp_url="https://github.com/klicperajo/ppnp/raw/394425a9eeffbd95c09d68d6f0e1473ac9c2fd4a/ppnp/data"
heterophily_url="https://github.com/yandex-research/heterophilous-graphs/raw/a431395582e929d88271309716bea4fe24ce6318/data"
tu_url="https://github.com/bknyaz/graph_nn/raw/72eaa1c6bd70a90fde772ad4a21049ccd6bc97a2/data"
heterophily_names=(actor chameleon-filtered squirrel-filtered tolokers cornell texas wisconsin)
# The trained models, each saved as models/gat.pt in its repository (at the commit named).
elliptic_url="https://github.com/Sajjad-Shahali/Elliptic-Bitcoin-Anomaly-Detection/raw/98a9c476871b9452e8a673f41af4a071a9b482fa/models/gat.pt"
solubility_url="https://github.com/billxby/molecular-solubility/raw/79263d5dc727b77798dd64b4f42248d65c736269/models/gat.pt"

from="${MASKGAT_DATA_MIRROR:-}"
dest="${MASKGAT_DATA_DIR:-$default_dest}"
names=()
usage() { sed -n '6,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --from) [ $# -ge 2 ] || usage; from="$2"; shift 2 ;;
    --dest) [ $# -ge 2 ] || usage; dest="$2"; shift 2 ;;
    -h|--help) usage ;;
    cora|citeseer|pubmed|amazon-computers|amazon-photo|coauthor-cs|gnn-benchmark|cora-ml) names+=("$1"); shift ;;
    actor|chameleon-filtered|squirrel-filtered|tolokers|cornell|texas|wisconsin) names+=("$1"); shift ;;
    heterophily|tu|pyg-models) names+=("$1"); shift ;;
    *) echo "fetch.sh: unknown argument '$1': expected --from, --dest, cora, citeseer, pubmed, amazon-computers, amazon-photo, coauthor-cs, gnn-benchmark, cora-ml, actor, chameleon-filtered, squirrel-filtered, tolokers, cornell, texas, wisconsin, heterophily, tu or pyg-models" >&2; exit 2 ;;
  esac
done
[ ${#names[@]} -gt 0 ] ||
  names=(cora citeseer pubmed amazon-computers amazon-photo coauthor-cs gnn-benchmark cora-ml heterophily tu pyg-models)
if [ -n "$from" ] && [ ! -d "$from" ]; then
  echo "fetch.sh: mirror '$from' is not a directory" >&2
  exit 1
fi

expected_sum() { awk -v f="$1" '$2 == f { print $1 }' "$sums"; }
checksum_ok() { [ -f "$2" ] && [ "$(sha256sum "$2" | cut -d' ' -f1)" = "$(expected_sum "$1")" ]; }

failed=0
missing=0
tmpdir="$(mktemp -d)"
trap 'rm -rf "$tmpdir"' EXIT

# install REL SOURCE_FILE: verifies SOURCE_FILE against REL's checksum and moves it into place.
install_file() {
  local rel="$1" source="$2" target="$dest/$1"
  mkdir -p "$(dirname "$target")"
  local partial
  partial="$(mktemp "$(dirname "$target")/.fetch.XXXXXX")"
  if ! cp "$source" "$partial"; then
    rm -f "$partial"
    echo "FAILED   $rel: cannot copy $source; kept what was there" >&2
    failed=1
  elif checksum_ok "$rel" "$partial"; then
    mv -f "$partial" "$target"
    echo "ok       $rel"
  else
    rm -f "$partial"
    echo "BAD      $rel: sha256 differs from SHA256SUMS; kept what was there" >&2
    failed=1
  fi
}

unavailable() {
  if [ -e "$dest/$1" ]; then
    echo "BAD      $1: the file in place fails its sha256 check and ${from:-the download} has no good copy" >&2
    failed=1
  elif [ -n "$from" ]; then
    echo "missing  $1: not in the mirror $from" >&2
    missing=1
  else
    echo "FAILED   $1: ${download_error:-download failed}" >&2
    failed=1
  fi
}

# Downloads $1 to $2; on failure `download_error` says why. After a failure to connect to a host
# (no network, no DNS, a timeout) nothing more is asked of that host: every other file would wait
# for the same timeout.
unreachable=" "
offline=0
download_error=""
download() {
  local host="${1#*://}"
  host="${host%%/*}"
  download_error=""
  case "$unreachable" in
    *" $host "*) download_error="not downloaded (no connection to $host)"; return 1 ;;
  esac
  local code=0
  if command -v curl >/dev/null; then
    curl -fsSL --connect-timeout 10 --retry 2 -o "$2" "$1" 2> "$tmpdir/download.err" || code=$?
    case "$code" in 5|6|7|28) unreachable="$unreachable$host " ;; esac
  elif command -v wget >/dev/null; then
    wget -q --timeout=10 --tries=3 -O "$2" "$1" 2> "$tmpdir/download.err" || code=$?
    [ "$code" -ne 4 ] || unreachable="$unreachable$host "
  else
    echo "fetch.sh: neither curl nor wget is installed" >&2
    return 1
  fi
  [ "$code" -ne 0 ] || return 0
  download_error="download failed: $(head -c 300 "$tmpdir/download.err" | tr '\n' ' ')"
  case "$unreachable" in
    *" $host "*)
      offline=1
      echo "fetch.sh: cannot connect to $host (no network?); nothing more is downloaded from it" >&2 ;;
  esac
  return "$code"
}

fetch_file() {
  local rel="$1"
  if checksum_ok "$rel" "$dest/$rel"; then
    echo "present  $rel"
    return
  fi
  if [ -n "$from" ]; then
    if [ -f "$from/$rel" ]; then
      install_file "$rel" "$from/$rel"
    elif [[ "$rel" == models/* ]] && [ -f "$from/../$rel" ]; then
      install_file "$rel" "$from/../$rel"
    else
      unavailable "$rel"
    fi
    return
  fi
  case "$rel" in
    models/*)
      local url="$elliptic_url"
      [ "$rel" = models/elliptic_gat.pt ] || url="$solubility_url"
      if download "$url" "$tmpdir/file"; then
        install_file "$rel" "$tmpdir/file"
      else
        unavailable "$rel"
      fi ;;
    graphdata/* | gnn-benchmark/* | ppnp/* | heterophily/* | tu/*)
      local url="$graphdata_url"
      case "$rel" in
        tu/*) url="$tu_url" ;;
        gnn-benchmark/*) url="$gnn_benchmark_url" ;;
        ppnp/*) url="$ppnp_url" ;;
        heterophily/*) url="$heterophily_url" ;;
      esac
      if download "$url/$(basename "$rel")" "$tmpdir/file"; then
        install_file "$rel" "$tmpdir/file"
      else
        unavailable "$rel"
      fi ;;
    planetoid/*)
      if download "$planetoid_url/$(basename "$rel")" "$tmpdir/file"; then
        install_file "$rel" "$tmpdir/file"
      else
        unavailable "$rel"
      fi ;;
    linqs/*)
      local name archive
      name="$(basename "$(dirname "$rel")")"
      archive="$tmpdir/$name.tgz"
      if [ ! -d "$tmpdir/$name" ]; then
        if download "$linqs_url/$name.tgz" "$archive" &&
           checksum_ok "linqs/archives/$name.tgz" "$archive"; then
          tar -xzf "$archive" -C "$tmpdir"
        else
          unavailable "$rel"
          return
        fi
      fi
      install_file "$rel" "$tmpdir/$name/$(basename "$rel")" ;;
  esac
}

for name in "${names[@]}"; do
  case "$name" in
    amazon-computers) fetch_file graphdata/amazon_cs.npz ;;
    amazon-photo) fetch_file graphdata/amazon_photo.npz ;;
    coauthor-cs) fetch_file graphdata/coauthor_cs.npz ;;
    gnn-benchmark) for file in cora citeseer; do fetch_file "gnn-benchmark/$file.npz"; done ;;
    cora-ml) fetch_file ppnp/cora_ml.npz ;;
    actor|chameleon-filtered|squirrel-filtered|tolokers|cornell|texas|wisconsin)
      fetch_file "heterophily/${name//-/_}.npz" ;;
    heterophily) for file in "${heterophily_names[@]}"; do fetch_file "heterophily/${file//-/_}.npz"; done ;;
    tu) for file in MUTAG PROTEINS ENZYMES; do fetch_file "tu/$file.zip"; done ;;
    pyg-models) for file in elliptic_gat solubility_gat; do fetch_file "models/$file.pt"; done ;;
    *)
      for part in x tx allx y ty ally graph test.index; do fetch_file "planetoid/ind.$name.$part"; done
      if [ "$name" != pubmed ]; then
        for ext in content cites; do fetch_file "linqs/$name/$name.$ext"; done
      fi ;;
  esac
done

if [ "$failed" -ne 0 ]; then
  if [ "$offline" -ne 0 ]; then
    echo "fetch.sh: without a connection, copy the files from a local mirror with --from DIR (or set MASKGAT_DATA_MIRROR=DIR)" >&2
  else
    echo "fetch.sh: some files are missing or corrupt (see above)" >&2
  fi
  exit 1
fi
if [ "$missing" -ne 0 ]; then
  echo "fetch.sh: done; the files marked missing are not in the mirror (PubMed's features need ind.pubmed.allx)" >&2
fi
echo "fetch.sh: data directory $dest"
