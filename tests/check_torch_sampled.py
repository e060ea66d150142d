#!/usr/bin/python3
"""Checks the sampled baseline of apps/bench/torch_baseline.py: sample_blocks keeps, for every node
a layer computes, min(fanout, in-degree) distinct in-neighbours of it (all of them at fanout -1),
numbers each layer's destinations as the first rows of its sources and leaves its numbering array
as it found it; the model on those blocks gives the rows of the model on the batch's subgraph; and
a one-epoch `--datasets sampled:N` run prints its JSON line. Exits 77 (CTest's "skipped") without
torch, unless MASKGAT_REQUIRE_PARITY=1 (CI).
    check_torch_sampled.py TORCH_BASELINE_DIR"""

import json
import os
import subprocess
import sys


def main():
    try:
        import numpy  # noqa: F401 (the baseline needs it)
        import torch
    except ImportError:
        if os.environ.get("MASKGAT_REQUIRE_PARITY") == "1":
            print("check_torch_sampled: python3-torch is not installed")
            return 1
        print("check_torch_sampled: skipped, python3-torch is not installed")
        return 77
    sys.path.insert(0, sys.argv[1])
    import torch_baseline as baseline

    nodes = 3000
    _, _, edges, *_ = baseline.synthetic(nodes)
    indptr, indices = baseline.csr_by_destination(edges, nodes)
    local = torch.full((nodes,), -1, dtype=torch.int64)
    generator = torch.Generator().manual_seed(0)
    failures = []
    for fanouts in ([3, 2], [10, 10], [-1, 4]):
        seeds = torch.tensor([5, 17, 2999, 0, 123, 1024])
        batch, blocks = baseline.sample_blocks(indptr, indices, seeds, fanouts, local, generator)
        if not bool((local == -1).all()):
            failures.append(f"{fanouts}: the numbering array was not reset")
        if batch[:seeds.numel()].tolist() != seeds.tolist() or \
                batch.unique().numel() != batch.numel():
            failures.append(f"{fanouts}: the batch does not start with its seeds, or repeats a "
                            "node")
        reads = batch.numel()  # the rows the input layer reads
        for layer, block in enumerate(blocks):
            source, target = block[False]
            rows, fanout = block["rows"], fanouts[layer]
            if int(source.max()) >= reads or int(target.max()) >= rows:
                failures.append(f"{fanouts}, layer {layer}: an index beyond the rows it reads")
            for row in range(rows):
                node = int(batch[row])
                neighbours = set(indices[indptr[node]:indptr[node + 1]].tolist())
                drawn = [int(batch[s]) for s in source[target == row].tolist()]
                want = len(neighbours) if fanout < 0 else min(fanout, len(neighbours))
                if len(set(drawn)) != len(drawn) or len(drawn) != want or \
                        not set(drawn) <= neighbours:
                    failures.append(f"{fanouts}, layer {layer}, node {node}: drew {sorted(drawn)} "
                                    f"of {sorted(neighbours)}, expected {want} distinct")
            looped = block[True]
            if looped[0].numel() != source.numel() + rows:
                failures.append(f"{fanouts}, layer {layer}: not one self-loop per destination")
            reads = rows

        # Each attention layer on its block gives the destinations' rows of that layer on the
        # graph of all the rows it reads, with the block's in-edges and a self-loop for every row
        # (the rows beyond the destinations keep only theirs); the model, one row per seed.
        torch.manual_seed(0)
        spec = baseline.model_spec(type("Args", (), {"model": "", "attention": "gat"}), "synthetic")
        model = baseline.build_model(spec, 128, 10)
        model.eval()
        convs = sorted((m for m in model.modules() if hasattr(m, "index")), key=lambda m: m.index)
        x = torch.randn(batch.numel(), 128)
        with torch.no_grad():
            for layer, block in enumerate(blocks):
                inputs = x if layer == 0 else torch.randn(blocks[layer - 1]["rows"], 64)
                source, target = block[False]
                every = torch.arange(inputs.size(0))
                graph = {True: (torch.cat([source, every]), torch.cat([target, every]))}
                on_block = convs[layer](inputs, {"blocks": blocks})
                on_graph = convs[layer](inputs, graph)[:block["rows"]]
                if not torch.allclose(on_block, on_graph, atol=1e-5):
                    failures.append(f"{fanouts}, layer {layer}: the block's rows differ from the "
                                    f"graph's by {float((on_block - on_graph).abs().max())}")
            if model(x, {"blocks": blocks}).size(0) != seeds.numel():
                failures.append(f"{fanouts}: not one output row per seed")
    status = subprocess.run([sys.executable, os.path.join(sys.argv[1], "torch_baseline.py"),
                             "--datasets", "sampled:3000", "--threads", "1", "--epochs", "1",
                             "--plain"], stdout=subprocess.PIPE, text=True, check=False)
    lines = [json.loads(line) for line in status.stdout.splitlines() if line.startswith("{")]
    if status.returncode != 0 or not lines or lines[-1].get("status") != "ok":
        failures.append(f"sampled:3000 run: exit {status.returncode}, {status.stdout.strip()}")
    else:
        line = lines[-1]
        parts = line["sampling_seconds"] + line["gather_seconds"] + line["model_seconds"]
        if line["train_nodes"] != 300 or abs(parts - line["seconds_per_epoch"]) > 1e-9:
            failures.append(f"sampled:3000 run: {line}")
    for failure in failures:
        print("FAIL: " + failure)
    if failures:
        return 1
    print("PASS: sample_blocks draws as the C++ sampler's rule says, the model runs on its blocks, "
          "and a sampled:3000 epoch reports its parts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
