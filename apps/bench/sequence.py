#!/usr/bin/env python3
"""Full against windowed self-attention over sequences: O(n^2) against O(n w).

Runs maskgat-bench's sequence measurements (one attention layer, one head of 64 channels over
64-wide sinusoidal position encodings; see `sequence:` in bench.cpp) with the full mask at
n = 10^3, 3*10^3, 10^4 and the window mask (w = 16: 8 positions each side and itself) at
n = 10^3 .. 10^6, prints a Markdown table and draws both time curves on log-log axes with
gnuplot.

    sequence.py --bench build/test/apps/bench/maskgat-bench [--attention dot] [--threads 2] \\
                [--epochs 5] [--plot docs/sequence_scaling.svg] [--out sequence.jsonl] \\
                [--full 1000,3000,10000] [--window 1000,10000,100000,1000000]
"""

import argparse
import json
import subprocess
import sys
import tempfile

FULL = "1000,3000,10000"
WINDOW = "1000,10000,100000,1000000"


def measure(bench, attention, threads, epochs, full, window):
    datasets = ([f"sequence:full:{n}" for n in full.split(",")] +
                [f"sequence:window:{n}" for n in window.split(",")])
    command = [bench, "--dataset", ",".join(datasets), "--attention", attention,
               "--threads", str(threads), "--epochs", str(epochs)]
    print("+ " + " ".join(command), file=sys.stderr, flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def table(lines):
    rows = ["| mask | positions n | entries | train step ms | forward ms | ns per entry (step) "
            "| step time vs previous n | peak RSS MB |",
            "|---|---|---|---|---|---|---|---|"]
    previous = {}
    for line in lines:
        mask = line["mask"]
        growth = ""
        if mask in previous:
            last = previous[mask]
            growth = (f"{line['ms_train_step'] / last['ms_train_step']:.1f}x for "
                      f"{line['positions'] / last['positions']:.3g}x n")
        previous[mask] = line
        rows.append(f"| {mask} | {line['positions']:,} | {line['entries']:,} | "
                    f"{line['ms_train_step']:.2f} | {line['ms_forward']:.2f} | "
                    f"{line['ns_per_entry_step']:.2f} | {growth} | {line['peak_rss_mb']:.0f} |")
    return "\n".join(rows)


def plot(lines, path):
    with tempfile.TemporaryDirectory() as tmp:
        for mask in ("full", "window"):
            with open(f"{tmp}/{mask}.dat", "w", encoding="utf-8") as out:
                for line in lines:
                    if line["mask"] == mask:
                        out.write(f"{line['positions']} {line['ms_train_step']}\n")
        terminal = "pngcairo size 720,440" if path.endswith(".png") else "svg size 720,440"
        script = f"""
set terminal {terminal} font ",12"
set output "{path}"
set logscale xy
set format x "10^{{%L}}"
set format y "10^{{%L}}"
set xlabel "sequence length n"
set ylabel "training step of one attention layer (ms)"
set key bottom right
set grid
plot "{tmp}/full.dat" with linespoints lw 2 pt 7 title "full mask (n^2 entries)", \\
     "{tmp}/window.dat" with linespoints lw 2 pt 5 title "window w = 16 (<= 17 n entries)"
"""
        subprocess.run(["gnuplot"], input=script, text=True, check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", required=True, help="the maskgat-bench program")
    parser.add_argument("--attention", default="dot", help="gat, gatv2 or dot (default dot)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=5, help="timed passes per measurement")
    parser.add_argument("--plot", help="write the curves to this .svg or .png")
    parser.add_argument("--out", help="also write the JSON lines to this file")
    parser.add_argument("--full", default=FULL, help="lengths with the full mask")
    parser.add_argument("--window", default=WINDOW, help="lengths with the window mask")
    args = parser.parse_args()
    lines = measure(args.bench, args.attention, args.threads, args.epochs, args.full, args.window)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            out.writelines(json.dumps(line) + "\n" for line in lines)
    print(table(lines))
    if args.plot:
        plot(lines, args.plot)
        print(f"wrote the plot to {args.plot}")


if __name__ == "__main__":
    main()
