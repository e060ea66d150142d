#!/usr/bin/env python3
"""MaskGAT beside the PyTorch peer, in one run on one machine.

Runs maskgat-bench (the machine's limits, then every dataset on 1 and 2 threads) and the peer's
bench_torch.py (a PyTorch re-implementation of PyG's GATConv, `--tuned`: tcmalloc and OpenBLAS,
2 threads) on the same datasets, one after the other so neither disturbs the other, and prints a
Markdown table: time per training epoch (as the trainer runs it, on the training nodes'
receptive field, and over the whole graph, as the peer does) and per inference pass, peak RSS,
speed-ups, and the floor the machine's measured copy bandwidth and GEMM rate put under a
whole-graph training epoch.

    compare.py --bench build/release/apps/bench/maskgat-bench --peer ../shared/peer \\
               --data-dir ../shared/datasets [--datasets cora,citeseer,...] \\
               [--attention gat|gatv2|dot] [--repeat N] [--out all.jsonl]

With --repeat N both programs run N times, alternating, and the table gives the median of each
time over the N runs (peak RSS: the largest) and the speed-ups of those medians; a line after it
lists each run's own whole-graph speed-up, so a VM whose speed drifts between runs shows its
spread.

The peer directory is copied to a temporary folder (it may be read-only). Dataset names are
maskgat-bench's; the peer runs `pubmed` (its stand-in features, timing only) for pubmed-shaped,
its `graphdata` protocol (largest component, 20 + 30 nodes per class, seed 0) for
amazon-computers, amazon-photo and coauthor-cs, and its synthetic scales 10k / 100k / 1m for
synthetic:10000 / 100000 / 1000000. The peer's
1m scale needs more than 16 GB to train and is only run with --peer-1m.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

PEER_PYTHON = "/usr/bin/python3"  # Debian's python3-torch lives here, not in a pyenv shim
PEER_SCALES = {"synthetic:10000": "10k", "synthetic:100000": "100k", "synthetic:1000000": "1m"}
SHCHUR_GRAPHS = ("amazon-computers", "amazon-photo", "coauthor-cs")


def run_lines(command, env=None):
    print("+ " + " ".join(command), file=sys.stderr, flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, text=True, env=env, check=False)
    if result.returncode != 0:
        print(f"  exit {result.returncode}", file=sys.stderr)
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def run_peer(peer_dir, data_dir, dataset, attention, epochs, jsonl):
    """The peer's JSON line for one dataset (train and inference medians, peak RSS) or None."""
    common = [PEER_PYTHON, os.path.join(peer_dir, "bench_torch.py"), "--tuned", "--threads", "2",
              "--jsonl", jsonl]
    v2 = ["--v2"] if attention == "gatv2" else []
    if dataset in PEER_SCALES:
        command = common + ["synthetic", "--scales", PEER_SCALES[dataset],
                            "--max-timed", str(epochs)] + v2
        kind = "synthetic"
    else:
        # The peer's subcommand for these files is also the name of their folder.
        source = "graphdata" if dataset in SHCHUR_GRAPHS else "planetoid"
        name = "pubmed" if dataset == "pubmed-shaped" else dataset
        command = common + [source, "--datasets", name, "--seeds", "1",
                            "--max-epochs", str(epochs + 3), "--patience", "100000",
                            "--root", os.path.join(data_dir, source)] + v2
        kind = source + "_summary"
    lines = [line for line in run_lines(command) if line.get("kind") == kind]
    if not lines or lines[-1].get("status", "ok") != "ok":
        return None
    line = lines[-1]
    return {"train": line.get("train_ms_median"), "infer": line.get("infer_ms_median"),
            "rss": line.get("peak_rss_mb")}


def combine(runs, largest=("peak_rss_mb", "rss")):
    """One record from the same record of every run: the median of each measured (floating-point)
    figure, the largest for peak memory; counts and names from the first run; None when no run
    has it."""
    runs = [run for run in runs if run]
    if not runs:
        return None
    out = dict(runs[0])
    for key, value in runs[0].items():
        values = [run.get(key) for run in runs]
        if isinstance(value, float) and all(isinstance(v, (int, float)) for v in values):
            out[key] = max(values) if key in largest else statistics.median(values)
    return out


def fmt(value, digits=1):
    return "–" if value is None else f"{value:.{digits}f}"


def ratio(slow, fast):
    return "–" if slow is None or fast is None or fast == 0 else f"{slow / fast:.1f}x"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", required=True, help="the maskgat-bench executable")
    parser.add_argument("--peer", required=True, help="the peer's folder (bench_torch.py)")
    parser.add_argument("--data-dir", required=True, help="folder holding planetoid/ and graphdata/")
    parser.add_argument("--datasets",
                        default="cora,citeseer,pubmed-shaped,synthetic:10000,synthetic:100000,"
                                "synthetic:1000000")
    parser.add_argument("--attention", default="gat", choices=["gat", "gatv2", "dot"],
                        help="attention kind (the peer has gat and gatv2; dot runs MaskGAT only)")
    parser.add_argument("--epochs", type=int, default=20, help="timed epochs per measurement")
    parser.add_argument("--peer-1m", action="store_true", help="also run the peer at 1m nodes")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of both programs, alternating; the table gives medians")
    parser.add_argument("--out", help="write every JSON line (both programs) to this file")
    args = parser.parse_args()
    datasets = [d for d in args.datasets.split(",") if d]

    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    ours = []
    runs = []  # per run: (ours keyed by (dataset, threads), peer keyed by dataset)
    peer_lines = []
    with tempfile.TemporaryDirectory() as scratch:
        peer_dir = os.path.join(scratch, "peer")
        shutil.copytree(args.peer, peer_dir, ignore=shutil.ignore_patterns("results"))
        jsonl = os.path.join(scratch, "peer.jsonl")
        for _ in range(args.repeat):
            lines = run_lines([args.bench, "--dataset", "limits," + ",".join(datasets),
                               "--threads", "1,2", "--attention", args.attention,
                               "--epochs", str(args.epochs), "--data-dir", args.data_dir])
            ours += lines
            peer = {}
            for dataset in datasets:
                if args.attention == "dot" or (dataset == "synthetic:1000000" and
                                               not args.peer_1m):
                    continue
                peer[dataset] = run_peer(peer_dir, args.data_dir, dataset, args.attention,
                                         args.epochs, jsonl)
            runs.append(({(line.get("dataset", "limits"), line["threads"]): line
                          for line in lines if line["bench"] in ("maskgat", "limits")}, peer))
        if os.path.exists(jsonl):
            with open(jsonl, encoding="utf-8") as handle:
                peer_lines = [json.loads(line) for line in handle if line.strip()]

    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            for line in ours + peer_lines:
                handle.write(json.dumps(line) + "\n")

    keys = {key for mine, _ in runs for key in mine}
    merged = {key: combine([mine.get(key) for mine, _ in runs]) for key in keys}
    limits = {threads: line for (dataset, threads), line in merged.items() if dataset == "limits"}
    measured = {key: line for key, line in merged.items() if key[0] != "limits"}
    peer = {dataset: combine([theirs.get(dataset) for _, theirs in runs])
            for dataset in {d for _, theirs in runs for d in theirs}}

    two = limits.get(2, {})
    print("| dataset | nodes / edges | MaskGAT train ms, 1 / 2 threads | whole-graph train ms, "
          "1 / 2 threads | peer train ms | speed-up (whole graph) | floor ms (whole graph) | "
          "MaskGAT inference ms | peer inference ms | speed-up | "
          "MaskGAT peak RSS MB (model) | peer peak RSS MB | attention Medges/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for dataset in datasets:
        one_thread = measured.get((dataset, 1))
        line = measured.get((dataset, 2))
        if line is None:
            print(f"| {dataset} | measurement failed |" + " |" * 11)
            continue
        floor = None
        if two:
            floor = 1e3 * max(line["epoch_gflop"] / two["gemm_gflop_per_s"],
                              line["epoch_gbyte"] / two["copy_gb_per_s"])
        theirs = peer.get(dataset) or {}
        peer_note = "not run" if dataset not in peer else ("failed" if not theirs else None)
        print(f"| {dataset} | {line['nodes']} / {line['edges']} | "
              f"{fmt(one_thread and one_thread['ms_per_epoch'])} / {fmt(line['ms_per_epoch'])} | "
              f"{fmt(one_thread and one_thread['ms_per_epoch_graph'])} / "
              f"{fmt(line['ms_per_epoch_graph'])} | "
              f"{peer_note or fmt(theirs.get('train'))} | "
              f"{ratio(theirs.get('train'), line['ms_per_epoch'])} "
              f"({ratio(theirs.get('train'), line['ms_per_epoch_graph'])}) | {fmt(floor, 2)} | "
              f"{fmt(line['ms_inference'], 2)} | {peer_note or fmt(theirs.get('infer'))} | "
              f"{ratio(theirs.get('infer'), line['ms_inference'])} | "
              f"{fmt(line['peak_rss_mb'], 0)} ({fmt(line['model_mb'], 0)}) | "
              f"{peer_note or fmt(theirs.get('rss'), 0)} | "
              f"{fmt(line['attention_edges_per_s'] / 1e6)} |")
    if args.repeat > 1:
        spreads = []
        for dataset in datasets:
            speedups = []
            for mine, theirs in runs:
                line, their = mine.get((dataset, 2)), theirs.get(dataset)
                if line and their:
                    speedups.append(ratio(their.get("train"), line["ms_per_epoch_graph"]))
            if speedups:
                spreads.append(f"{dataset} {', '.join(speedups)}")
        if spreads:
            print(f"\nWhole-graph speed-up of each of the {args.repeat} runs: "
                  + "; ".join(spreads) + ".")
    for threads, line in sorted(limits.items()):
        print(f"\nLimits on {threads} thread(s): copy {line['copy_gb_per_s']:.1f} GB/s, "
              f"GEMM {line['gemm_gflop_per_s']:.1f} GFLOP/s, random 64-float row gathers "
              f"{line['gather_rows_per_s'] / 1e6:.1f} M/s.", end="")
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
