# Sourced by the distributed tests after they set $maskgat and $work: skips (exit 77) without the
# Cora files (fails instead under MASKGAT_REQUIRE_DATA), starts in an empty $work, and sets
# `mpirun` to the launcher (oversubscribed: more ranks than this machine's cores; as root it
# needs --allow-run-as-root).
if ! "$maskgat" info --dataset cora > /dev/null 2>&1; then
  if [ -n "${MASKGAT_REQUIRE_DATA:-}" ]; then echo "FAIL: the Cora files are missing"; exit 1; fi
  echo "SKIP: the Cora files are missing (datasets/fetch.sh fetches them)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"
cd "$work"
mpirun=(mpirun --oversubscribe)
if [ "$(id -u)" -eq 0 ]; then mpirun+=(--allow-run-as-root); fi
