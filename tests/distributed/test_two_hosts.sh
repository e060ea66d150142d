#!/usr/bin/env bash
# Distributed training between two "machines" on this one: two network namespaces, each with its
# own host name and address, joined by a veth pair, and `mpirun --mca btl tcp,self` across them
# from a hostfile, as on two hosts (mpirun starts the second host's daemon through a launcher that
# enters its namespace, where it would use ssh). Checks that the job trains on Cora's 2 parts
# (with dropout) to the bits of the same job over shared memory on one host (the same checkpoint;
# and that job twice, to the bits of itself), and that the
# bytes on the wire match what the ranks sent: at least their count, at most 10 % and 2 MB more
# (TCP/IP headers, mpirun's own traffic). Prints both epochs and the byte counts.
#   test_two_hosts.sh MASKGAT WORK_DIR
# Needs root (namespaces), iproute2, util-linux's unshare, Open MPI and the Cora files; skips
# (exit 77) without them.
set -euo pipefail
maskgat="$1"
work="$2"
# shellcheck source=prologue.sh
source "$(dirname "$0")/prologue.sh"
if [ "$(id -u)" -ne 0 ] || ! command -v ip > /dev/null || ! command -v unshare > /dev/null ||
   ! ip netns add maskgat-probe 2> /dev/null; then
  echo "SKIP: network namespaces need root, ip (iproute2) and unshare"
  exit 77
fi
ip netns delete maskgat-probe

# Names unique to this run, so parallel runs and leftovers never clash.
tag="mg$$"
hosts=("${tag}a" "${tag}b")
addresses=(10.199.0.1 10.199.0.2)
cleanup() {
  for host in "${hosts[@]}"; do
    ip netns delete "$host" 2> /dev/null || true
    rm -rf "/etc/netns/$host"
  done
}
trap cleanup EXIT
ip link add "${tag}0" type veth peer name "${tag}1"
for k in 0 1; do
  host="${hosts[$k]}"
  ip netns add "$host"
  ip link set "${tag}$k" netns "$host"
  ip -n "$host" addr add "${addresses[$k]}/24" dev "${tag}$k"
  ip -n "$host" link set "${tag}$k" up
  ip -n "$host" link set lo up
  # `ip netns exec` mounts /etc/netns/HOST/hosts over /etc/hosts: both names resolve in both.
  mkdir -p "/etc/netns/$host"
  printf '127.0.0.1 localhost\n%s %s\n%s %s\n' "${addresses[0]}" "${hosts[0]}" \
    "${addresses[1]}" "${hosts[1]}" > "/etc/netns/$host/hosts"
done
# The launcher mpirun calls as `launcher HOST COMMAND...` where it would call ssh: the command
# runs in HOST's namespace, under HOST's own host name.
cat > launch.sh <<'LAUNCH'
#!/bin/sh
host="$1"
shift
exec ip netns exec "$host" unshare --uts sh -c "hostname $host && exec $*"
LAUNCH
chmod +x launch.sh
printf '%s slots=1\n%s slots=1\n' "${hosts[0]}" "${hosts[1]}" > hostfile

"$maskgat" partition --dataset cora --parts 2 --out cora.2 --quiet > /dev/null
train=(train --partitions cora.2 --epochs 30 --patience 0 --whole-graph --threads 1 --json --quiet)
# The same job on one host over shared memory, twice (bit for bit the same run to run), then
# across the two namespaces over TCP.
"${mpirun[@]}" -np 2 "$maskgat" "${train[@]}" --save shared.ckpt > shared.json
"${mpirun[@]}" -np 2 "$maskgat" "${train[@]}" --save again.ckpt > /dev/null
# Bytes the first host has sent through its end of the veth pair.
host_sent() {
  ip -n "${hosts[0]}" -s -j link show "${tag}0" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["bytes"])'
}
tx_before=$(host_sent)
ip netns exec "${hosts[0]}" unshare --uts sh -c "hostname ${hosts[0]} && exec \"\$0\" \"\$@\"" \
  "${mpirun[@]}" -np 2 --hostfile hostfile --mca plm_rsh_agent "$PWD/launch.sh" \
  --mca btl tcp,self --mca btl_tcp_if_include "${addresses[0]%.*}.0/24" \
  --mca oob_tcp_if_include "${addresses[0]%.*}.0/24" \
  "$maskgat" "${train[@]}" --save tcp.ckpt > tcp.json
tx_after=$(host_sent)

failures=0
if ! cmp -s shared.ckpt again.ckpt; then
  echo "FAIL: two runs of the same job on one host saved different models"
  failures=$((failures + 1))
fi
if ! cmp -s shared.ckpt tcp.ckpt; then
  echo "FAIL: the two-host job saved another model than the one-host job"
  failures=$((failures + 1))
fi
python3 - shared.json tcp.json "$((tx_after - tx_before))" <<'CHECK' || failures=$((failures + 1))
import json, sys
shared, tcp = (json.load(open(path)) for path in sys.argv[1:3])
wire = int(sys.argv[3])
runs = shared["runs"][0], tcp["runs"][0]
# Rank 0 runs on the first host: what it sent crossed the veth pair (bytes per epoch over the
# epochs and the final evaluation, which the count covers).
sent = tcp["ranks"][0]["bytes_sent_per_epoch"] * runs[1]["epochs"]
print(f"epoch: {runs[0]['ms_per_epoch']:.2f} ms over shared memory, "
      f"{runs[1]['ms_per_epoch']:.2f} ms over TCP between the namespaces")
print(f"rank 0 sent {sent:.0f} bytes; {wire} bytes left its host ({wire / sent:.3f} x)")
ok = runs[0]["test_acc"] == runs[1]["test_acc"] and sent <= wire <= 1.1 * sent + 2e6
if not ok:
    print("FAIL: test accuracy", runs[0]["test_acc"], runs[1]["test_acc"], "or bytes off")
sys.exit(0 if ok else 1)
CHECK
if [ "$failures" -ne 0 ]; then exit 1; fi
echo "PASS: two hosts over TCP train as one host over shared memory"
