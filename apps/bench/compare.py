#!/usr/bin/env python3
"""MaskGAT beside the same model in PyTorch, in one run on one machine.

Runs maskgat-bench (the machine's limits, then every dataset on 1 and 2 threads) and
torch_baseline.py (beside this script: the GAT paper's model as PyTorch Geometric's GATConv
computes it, in plain PyTorch, 2 threads, OpenBLAS and tcmalloc when installed) on the same
datasets, one program after the other so neither disturbs the other, and prints a Markdown table.
Both programs time the median of --epochs epochs and passes after 3 warm-up ones.

    compare.py --bench build/test/apps/bench/maskgat-bench [--data-dir datasets] \\
               [--datasets cora,citeseer,...,sampled:1000000] [--attention gat|gatv2|dot] \\
               [--repeat N] [--baseline-1m] [--sampled-epochs 2] [--store-dir DIR] \\
               [--out all.jsonl]

MaskGAT's training epoch is timed two ways: its "step", as `maskgat train` runs it by default (on
the training nodes' receptive field, or only at the rows the training nodes' logits need; the
same gradients as the whole graph), and over the whole graph, which is what PyTorch computes. The
table sets PyTorch's whole-graph epoch beside both, with both speed-ups (PyTorch's time over
MaskGAT's), truncated to two decimals so that none is rounded up. With --repeat N both programs
run N times, alternating, and the table gives the median of each time over the N runs (peak RSS:
the largest) and the speed-ups of those medians; a line after it lists each run's own speed-ups,
so a machine whose speed drifts between runs shows its spread.

sampled:N (10^6 is the case docs/performance.md and the README give) compares mini-batch
training on neighbour-sampled blocks instead, in a table of its own: maskgat-bench's store:N then
sampled:N (its synthetic graph kept in a store) and torch_baseline.py's sampled:N (the same
generator's model in numpy, the same protocol: 10 % of the nodes for training, batches of 1024,
fanouts 10,10), both on 1 and 2 threads, --sampled-epochs epochs each (the epoch of median
length; the first includes the warm-up on both sides). The table gives training nodes per second
of the whole loop, PyTorch's sampling, gather and model seconds apart, its model-only rate
(training nodes over the model's seconds alone: the fair figure if one does not accept its
vectorised sampler), MaskGAT's sampler alone, and both speed-ups.

Dataset names are maskgat-bench's; torch_baseline.py's docstring says what it builds for each
(its synthetic:N has the shape of maskgat-bench's, not the same edges). The baseline is not run
at synthetic:1000000 unless --baseline-1m (minutes per epoch and many GB; docs/performance.md
has it measured on its own), nor with --attention dot (it has no dot-product layer).
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BASELINE = os.path.join(HERE, "torch_baseline.py")
TORCH_PYTHON = "/usr/bin/python3"  # Debian's python3-torch lives here, not in a pyenv shim


def run_lines(command, env=None):
    print("+ " + " ".join(command), file=sys.stderr, flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, text=True, env=env, check=False)
    if result.returncode != 0:
        print(f"  exit {result.returncode}", file=sys.stderr)
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def run_sampled(args, data_dir, datasets):
    """One run of both programs on the sampled:N datasets, 1 and 2 threads: MaskGAT's lines and
    the baseline's, each keyed by (dataset, threads), and every JSON line."""
    stores = [f"store:{d.split(':', 1)[1]}" for d in datasets]
    lines = run_lines([args.bench, "--dataset", ",".join(stores + datasets), "--threads", "1,2",
                       "--epochs", str(args.sampled_epochs), "--data-dir", data_dir]
                      + (["--store-dir", args.store_dir] if args.store_dir else []))
    mine = {(f"sampled:{line['nodes']}", line["threads"]): line
            for line in lines if line.get("bench") == "sampled"}
    theirs, their_lines = {}, []
    if args.attention != "dot":
        for threads in (1, 2):
            got = run_lines([args.python, BASELINE, "--datasets", ",".join(datasets), "--threads",
                             str(threads), "--epochs", str(args.sampled_epochs), "--attention",
                             args.attention, "--data-dir", data_dir])
            their_lines += got
            theirs.update({(line["dataset"], threads): line
                           for line in got if line.get("status") == "ok"})
    return mine, theirs, lines + their_lines


def print_sampled(datasets, runs):
    """The sampled comparison's table from every run's (mine, theirs): medians over the runs."""
    keys = {(dataset, threads) for dataset in datasets for threads in (1, 2)}
    mine = {key: combine([run[0].get(key) for run in runs]) for key in keys}
    theirs = {key: combine([run[1].get(key) for run in runs]) for key in keys}
    print("\n| graph | threads | MaskGAT s / epoch | MaskGAT training nodes/s | MaskGAT sampler "
          "alone, nodes/s | PyTorch s / epoch (sampling / gather / model) | PyTorch training "
          "nodes/s | PyTorch model only, nodes/s | speed-up, whole loop | speed-up vs model only | "
          "input rows per batch, MaskGAT / PyTorch | peak RSS MB, MaskGAT / PyTorch |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for dataset in datasets:
        for threads in (1, 2):
            line, their = mine[(dataset, threads)], theirs[(dataset, threads)] or {}
            if line is None:
                print(f"| {dataset} | {threads} | measurement failed |" + " |" * 9)
                continue
            note = "not run" if not runs[0][1] and not their else "failed" if not their else None
            parts = note or (f"{their['seconds_per_epoch']:.2f} ({their['sampling_seconds']:.2f} / "
                             f"{their['gather_seconds']:.2f} / {their['model_seconds']:.2f})")
            print(f"| {dataset} ({line['edges']} edges) | {threads} | "
                  f"{line['seconds_per_epoch']:.2f} | {line['train_nodes_per_s']:,.0f} | "
                  f"{line['sampler_train_nodes_per_s']:,.0f} | {parts} | "
                  f"{note or format(their['train_nodes_per_s'], ',.0f')} | "
                  f"{note or format(their['model_train_nodes_per_s'], ',.0f')} | "
                  f"{ratio(line['train_nodes_per_s'], their.get('train_nodes_per_s'))} | "
                  f"{ratio(line['train_nodes_per_s'], their.get('model_train_nodes_per_s'))} | "
                  f"{line['batch_rows']:,.0f} / {note or format(their['batch_rows'], ',.0f')} | "
                  f"{fmt(line['peak_rss_mb'], 0)} / {note or fmt(their['peak_rss_mb'], 0)} |")
    print("\nSampled: batches of 1024 training nodes, fanouts 10,10, 10 % of the nodes for "
          "training; speed-ups are MaskGAT's training nodes per second over PyTorch's whole loop "
          "and over its model-only rate, truncated to two decimals.")


def run_baseline(python, data_dir, datasets, attention, epochs):
    """torch_baseline.py's figures per dataset: {dataset: {"train", "infer", "rss"}} (None for a
    dataset whose run failed), and its JSON lines."""
    if not datasets:
        return {}, []
    lines = run_lines([python, BASELINE, "--datasets", ",".join(datasets), "--threads", "2",
                       "--epochs", str(epochs), "--attention", attention, "--data-dir", data_dir])
    out = {dataset: None for dataset in datasets}
    for line in lines:
        if line.get("status") == "ok":
            out[line["dataset"]] = {"train": line["ms_per_epoch"], "infer": line["ms_inference"],
                                    "rss": line["peak_rss_mb"]}
    return out, lines


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


def fmt_ms(value):
    """Milliseconds to three significant figures or so (0.84, 13.1, 1246)."""
    if value is None:
        return "–"
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 1000 else f"{value:.0f}"


def ratio(slow, fast):
    """slow / fast truncated to two decimals (19.978 prints 19.97x, never 20.0x)."""
    if slow is None or fast is None or fast == 0:
        return "–"
    return f"{math.floor(100 * slow / fast + 1e-9) / 100:.2f}x"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", required=True, help="the maskgat-bench executable")
    parser.add_argument("--data-dir", default=os.path.join(HERE, "..", "..", "datasets"),
                        help="the data directory datasets/fetch.sh fills (default: datasets/)")
    parser.add_argument("--python", default=TORCH_PYTHON,
                        help="the Python that has torch, numpy and scipy")
    parser.add_argument("--datasets",
                        default="cora,citeseer,pubmed-shaped,synthetic:10000,synthetic:100000,"
                                "synthetic:1000000")
    parser.add_argument("--attention", default="gat", choices=["gat", "gatv2", "dot"],
                        help="attention kind (the baseline has gat and gatv2; dot runs MaskGAT "
                             "only)")
    parser.add_argument("--epochs", type=int, default=20, help="timed epochs per measurement")
    parser.add_argument("--baseline-1m", action="store_true",
                        help="also run the baseline at synthetic:1000000")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of both programs, alternating; the table gives medians")
    parser.add_argument("--sampled-epochs", type=int, default=2,
                        help="epochs per measurement on sampled:N datasets")
    parser.add_argument("--store-dir", help="where maskgat-bench writes the sampled:N graphs' "
                                            "stores (default: its own)")
    parser.add_argument("--out", help="write every JSON line (both programs) to this file")
    args = parser.parse_args()
    sampled = [d for d in args.datasets.split(",") if d.startswith("sampled:")]
    datasets = [d for d in args.datasets.split(",") if d and d not in sampled]
    data_dir = os.path.abspath(args.data_dir)

    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    baseline_datasets = [] if args.attention == "dot" else [
        d for d in datasets if d != "synthetic:1000000" or args.baseline_1m]
    all_lines = []
    runs = []  # per run: (ours keyed by (dataset, threads), the baseline's keyed by dataset)
    sampled_runs = []  # per run: (ours, the baseline's), both keyed by (dataset, threads)
    for _ in range(args.repeat):
        if sampled:
            mine, theirs, lines = run_sampled(args, data_dir, sampled)
            sampled_runs.append((mine, theirs))
            all_lines += lines
        lines = run_lines([args.bench, "--dataset", "limits," + ",".join(datasets),
                           "--threads", "1,2", "--attention", args.attention,
                           "--epochs", str(args.epochs), "--data-dir", data_dir])
        theirs, their_lines = run_baseline(args.python, data_dir, baseline_datasets,
                                           args.attention, args.epochs)
        all_lines += lines + their_lines
        runs.append(({(line.get("dataset", "limits"), line["threads"]): line
                      for line in lines if line["bench"] in ("maskgat", "limits")}, theirs))

    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            for line in all_lines:
                handle.write(json.dumps(line) + "\n")

    keys = {key for mine, _ in runs for key in mine}
    merged = {key: combine([mine.get(key) for mine, _ in runs]) for key in keys}
    limits = {threads: line for (dataset, threads), line in merged.items() if dataset == "limits"}
    measured = {key: line for key, line in merged.items() if key[0] != "limits"}
    baseline = {dataset: combine([theirs.get(dataset) for _, theirs in runs])
                for dataset in baseline_datasets}

    if datasets:
        two = limits.get(2, {})
        print("| dataset | nodes / edges | MaskGAT step ms, 1 / 2 threads | MaskGAT whole-graph "
              "ms, 1 / 2 threads | PyTorch whole-graph ms | speed-up vs MaskGAT step | speed-up "
              "vs MaskGAT whole graph | floor ms (whole graph) | MaskGAT inference ms | PyTorch "
              "inference ms | inference speed-up | MaskGAT peak RSS MB (model) | PyTorch peak "
              "RSS MB | attention Medges/s |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for dataset in datasets:
            one_thread = measured.get((dataset, 1))
            line = measured.get((dataset, 2))
            if line is None:
                print(f"| {dataset} | measurement failed |" + " |" * 12)
                continue
            floor = None
            if two:
                floor = 1e3 * max(line["epoch_gflop"] / two["gemm_gflop_per_s"],
                                  line["epoch_gbyte"] / two["copy_gb_per_s"])
            theirs = baseline.get(dataset) or {}
            note = "not run" if dataset not in baseline else ("failed" if not theirs else None)
            train = theirs.get("train")
            print(f"| {dataset} | {line['nodes']} / {line['edges']} | "
                  f"{fmt_ms(one_thread and one_thread['ms_per_epoch'])} / "
                  f"{fmt_ms(line['ms_per_epoch'])} | "
                  f"{fmt_ms(one_thread and one_thread['ms_per_epoch_graph'])} / "
                  f"{fmt_ms(line['ms_per_epoch_graph'])} | {note or fmt_ms(train)} | "
                  f"{ratio(train, line['ms_per_epoch'])} | "
                  f"{ratio(train, line['ms_per_epoch_graph'])} | "
                  f"{fmt(floor, 2)} | {fmt_ms(line['ms_inference'])} | "
                  f"{note or fmt_ms(theirs.get('infer'))} | "
                  f"{ratio(theirs.get('infer'), line['ms_inference'])} | "
                  f"{fmt(line['peak_rss_mb'], 0)} ({fmt(line['model_mb'], 0)}) | "
                  f"{note or fmt(theirs.get('rss'), 0)} | "
                  f"{fmt(line['attention_edges_per_s'] / 1e6)} |")
        print("\nMaskGAT step: its training epoch as `maskgat train` runs it (on the training "
              "nodes' receptive field, or at the rows their logits need). MaskGAT whole graph: the "
              "same epoch over every node, as PyTorch computes it. Speed-ups: PyTorch's "
              "whole-graph epoch over each of the two (2 threads), truncated to two decimals.")
        if args.repeat > 1:
            spreads = []
            for dataset in datasets:
                speedups = []
                for mine, theirs in runs:
                    line, their = mine.get((dataset, 2)), theirs.get(dataset)
                    if line and their:
                        speedups.append(f"{ratio(their['train'], line['ms_per_epoch'])} / "
                                        f"{ratio(their['train'], line['ms_per_epoch_graph'])}")
                if speedups:
                    spreads.append(f"{dataset} {', '.join(speedups)}")
            if spreads:
                print(f"\nSpeed-ups (vs step / vs whole graph) of each of the {args.repeat} runs: "
                      + "; ".join(spreads) + ".")
    if sampled:
        print_sampled(sampled, sampled_runs)
    for threads, line in sorted(limits.items()):
        print(f"\nLimits on {threads} thread(s): copy {line['copy_gb_per_s']:.1f} GB/s, "
              f"GEMM {line['gemm_gflop_per_s']:.1f} GFLOP/s, random 64-float row gathers "
              f"{line['gather_rows_per_s'] / 1e6:.1f} M/s.", end="")
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
