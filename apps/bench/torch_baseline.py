#!/usr/bin/python3
"""The GAT paper's model in plain PyTorch, computed as PyTorch Geometric's GATConv computes it:
the baseline `compare.py` sets MaskGAT beside. Needs torch, numpy and scipy (Debian:
python3-torch, python3-numpy, python3-scipy, run with /usr/bin/python3); not torch_geometric.

    torch_baseline.py [--datasets cora,citeseer,...] [--data-dir datasets] [--threads 2]
                      [--epochs 20] [--warmup 3] [--attention gat|gatv2] [--model SPEC]
                      [--state-dict FILE] [--plain]
    torch_baseline.py --datasets tu:PROTEINS --model SPEC [--batch-size 32] [--threads 1]
    torch_baseline.py --train --datasets cora,citeseer --seeds 10 [--threads 2]
    torch_baseline.py --datasets link:cora,link:amazon-photo [--model SPEC] [--out-dim 16]
    torch_baseline.py --datasets sampled:1000000 [--epochs 2] [--batch-size 1024] [--threads 1]

--model SPEC builds a MaskGAT model spec (docs/model-specs.md) instead, module by module with
PyTorch's and PyG's defaults (not edge_dim; the readouts sum_pool, mean_pool, max_pool as PyG's
global_*_pool and attention_pool as its AttentionalAggregation, H gates without bias weighting H
equal column blocks), trained with Adam lr 0.001 and no weight decay.
--state-dict FILE (with --model) loads a state dict with PyG's names into it, as maskgat import
reads one, and times its inference alone: a trained model served.
Without it the model is the GAT paper's, read from docs/specs/paper.json:
dropout 0.6 on the input, a GATConv layer of 8 heads x 8 channels (concatenated),
ELU, dropout 0.6, a GATConv layer of 1 head with the classes as channels (PubMed's shape: 8
heads, averaged); attention dropout 0.6 in both layers. A GATConv layer drops the graph's
self-loops and adds one per node, projects h = x W (no bias), scores each edge j -> i as
LeakyReLU_0.2(a_src . h_j + a_dst . h_i) per head, takes the softmax over i's in-edges with
scatter ops (scatter_reduce 'amax', exp, sums + 1e-16 as PyG), and sums alpha_ij h_j into
i, then adds a bias (the sums by index_add_: the same sums as PyG's scatter_add_, faster in
torch 1.13); weights glorot-uniform, biases zero (PyG's reset_parameters). `--attention gatv2`
is PyG's GATv2Conv (lin_l and lin_r with biases, score a . LeakyReLU(W_l x_j + W_r x_i)).
Adam lr 0.005, weight decay 5e-4 (PubMed: 0.01, 1e-3); the loss is the cross-entropy at the
training nodes.

Datasets, read from --data-dir (the folder `datasets/fetch.sh` fills):
  cora, citeseer   planetoid/ind.<name>.*, nodes, edges and split as PyG's Planetoid reads them
                   (self-loops and duplicates dropped), feature rows divided by their sum
  pubmed-shaped    PubMed's graph, labels and split (planetoid/ind.pubmed.*) with random
                   features, since ind.pubmed.allx is not mirrored: 500 columns, per row 50
                   draws of a column and a value in [0, 1) (numpy seed 0); timing only
  amazon-computers, amazon-photo, coauthor-cs
                   graphdata/amazon_cs.npz, amazon_photo.npz, coauthor_cs.npz: made undirected,
                   self-loops dropped, the largest connected component kept, feature rows
                   divided by their sum, 20 training and 30 validation nodes per class drawn
                   with numpy seed 0 (the rest test)
  tolokers, actor, chameleon-filtered, squirrel-filtered, cornell, texas, wisconsin
                   heterophily/<name>.npz (Platonov et al.): node_features as stored, edges
                   read both ways (self-loops and repeats dropped), fixed split 0
  synthetic:N      a graph shaped like maskgat-bench's synthetic:N (lib/io/synthetic.cpp), from
                   numpy seed 0: N nodes, 10 classes, node weights 1 + Pareto(2.5); node i gets
                   N * 10 * w_i / sum(w) in-edges (rounded up or down at random), each source
                   drawn by weight from i's class with probability 0.8, else from all nodes;
                   self-loops and repeated sources are dropped (MaskGAT's generator redraws them,
                   so this graph has fewer edges: 0.9 % fewer at N = 10^4, 0.02 % at 10^6); 128
                   features: a class mean with N(0, 2/128) entries plus unit Gaussian noise;
                   20 training nodes per class.
                   The same shape, not the same graph: timing only.
  tu:NAME          tu/NAME.zip (the TU graph-classification collections: MUTAG, PROTEINS,
                   ENZYMES), read as MaskGAT's reader does: 1-based node ids, edges as listed
                   (self-loops and repeats dropped), node labels one-hot from their smallest value
                   then node attributes; graph labels mapped to classes in numeric order. Timing
                   of a graph classifier (--model, a spec with a readout) only: a training epoch
                   is every graph once, in batches of --batch-size graphs (32) drawn by a shuffle
                   per epoch (numpy, seeded by the epoch), each collated into one block-diagonal
                   graph with a self-loop per node, as MaskGAT's GraphTrainer batches; inference
                   is every graph in batches of 256 (MaskGAT's kEvaluationBatch); the JSON line
                   adds `graphs_per_s_train` and `graphs_per_s_inference`.

  link:NAME        link prediction on NAME (any dataset above but tu:), as MaskGAT's LinkTrainer
                   runs it: the graph's undirected pairs (u < v) shuffled with numpy seed 0, 5 %
                   held out for validation and 10 % for test (the GAE protocol), the encoder
                   (--model, else the paper's model) with --out-dim output columns run on the
                   training pairs both ways plus a self-loop per node; a training epoch draws as
                   many negatives as training pairs (pairs that are edges of the graph in neither
                   direction, no self-loops; sampled at random and filtered, vectorised as PyG's
                   negative_sampling), scores every pair by the dot product of its nodes' rows,
                   takes binary_cross_entropy_with_logits, backward and an Adam step (lr 0.005,
                   no weight decay, as MaskGAT's link_recipe). `ms_per_epoch` is its median;
                   no inference is timed.

  sampled:N        mini-batch training on neighbour-sampled blocks of synthetic:N's graph, as
                   maskgat-bench's sampled:N runs it on its store: N / 100 training nodes per
                   class (10 % of the nodes, numpy seed 1), visited in a shuffled order in batches
                   of --batch-size (1024), fanouts 10,10. Each batch is sampled by sample_blocks
                   (vectorised PyTorch, the C++ sampler's rule: each layer keeps up to 10
                   in-neighbours of every node it computes, uniformly without replacement, drawn
                   afresh per layer; blocks numbered as DGL's and the C++ library's, so each layer
                   computes only the rows the next one reads), its input rows and labels gathered
                   (index_select), and the model run on the blocks (forward, cross-entropy at the
                   batch's nodes, backward, Adam step; each GATConv projects every row it reads, as
                   PyG's does). The JSON line gives the epoch of median length (the first epoch
                   includes the warm-up, as maskgat-bench's; --warmup does not apply):
                   `seconds_per_epoch`, its `sampling_seconds`, `gather_seconds` and
                   `model_seconds`, `train_nodes_per_s` (the whole loop) and
                   `model_train_nodes_per_s` (training nodes over the model's time alone), and
                   `batch_rows` (input rows per batch, mean).

Timing (the default): each dataset in its own child process, so that its peak RSS is its own.
The child times --warmup untimed then --epochs timed inference passes (evaluation forward and
softmax, no_grad), then as many training epochs (zero_grad, forward, loss, backward, Adam step)
over the whole graph, and prints one JSON line: the medians `ms_per_epoch` and `ms_inference`
(milliseconds), `peak_rss_mb` (getrusage ru_maxrss), the sizes, the threads and the libraries.
When memory runs out (e.g. under `prlimit --as=BYTES`) the line has `status` "out of memory"
and the peak reached; inference runs first so that its time survives.

--train measures accuracy instead: for seeds 0..--seeds-1, up to --max-epochs epochs with the
GAT reference code's early stopping (patience 100: the counter resets whenever validation
accuracy is at least its best or validation loss at most its best; the model is kept whenever
both hold) and the test accuracy of the model kept (on Shchur et al.'s graphs each seed draws its
own split); one JSON line per dataset with the mean and standard deviation (ddof 0) over the
seeds.

PyTorch as a user would tune it: unless --plain, the child runs with OpenBLAS
(libopenblas0-openmp) instead of the reference BLAS that Debian's python3-torch otherwise loads,
and with tcmalloc (libtcmalloc-minimal4), when they are installed; the JSON line names what was
loaded. Dropout draws its mask with torch.rand_like (the same distribution as F.dropout, whose
Bernoulli sampler is serial in Debian's torch, built without MKL).
"""

import argparse
import json
import math
import os
import pickle
import resource
import statistics
import subprocess
import sys
import time
import warnings

OPENBLAS_DIR = "/usr/lib/x86_64-linux-gnu/openblas-openmp"
TCMALLOC = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"
NPZ_FILES = {"amazon-computers": "amazon_cs.npz", "amazon-photo": "amazon_photo.npz",
             "coauthor-cs": "coauthor_cs.npz"}
PAPER_SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "specs",
                          "paper.json")
HETEROPHILY = ("tolokers", "actor", "chameleon-filtered", "squirrel-filtered", "cornell", "texas",
               "wisconsin")

# ---------------------------------------------------------------------------------- data
# Every loader returns (x float32 [N, F], y int64 [N], edges int64 [2, E] as source, target
# without self-loops, train, val, test int64 index arrays).


def normalize_rows(x):
    sums = x.sum(axis=1, keepdims=True)
    sums[sums == 0] = 1
    return (x / sums).astype("float32")


def planetoid(data_dir, name):
    import numpy as np
    root = os.path.join(data_dir, "planetoid")

    def read(part):
        with open(os.path.join(root, f"ind.{name}.{part}"), "rb") as handle:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = pickle.load(handle, encoding="latin1")
        return value.toarray() if hasattr(value, "toarray") else value

    y_small, ty, ally = read("y"), read("ty"), read("ally")
    with open(os.path.join(root, f"ind.{name}.test.index"), encoding="ascii") as handle:
        test = np.array([int(line) for line in handle if line.strip()], dtype=np.int64)
    ordered = np.sort(test)
    if name == "citeseer":  # isolated test nodes are missing from tx / ty: zero rows for them
        wide = np.zeros((test.max() - test.min() + 1, ty.shape[1]), dtype=ty.dtype)
        wide[ordered - test.min()] = ty
        ty = wide
    labels = np.concatenate([ally, ty]).argmax(1)
    labels[test] = labels[ordered]
    n = labels.shape[0]
    if name == "pubmed":  # pubmed-shaped: stand-in features (ind.pubmed.allx is not mirrored)
        rng = np.random.default_rng(0)
        x = np.zeros((n, 500), dtype=np.float32)
        rows = np.repeat(np.arange(n), 50)
        x[rows, rng.integers(0, 500, rows.size)] = rng.random(rows.size, dtype=np.float32)
    else:
        tx = read("tx")
        if name == "citeseer":
            wide = np.zeros((test.max() - test.min() + 1, tx.shape[1]), dtype=tx.dtype)
            wide[ordered - test.min()] = tx
            tx = wide
        x = np.concatenate([read("allx"), tx]).astype(np.float32)
        x[test] = x[ordered]
        x = normalize_rows(x)
    graph = read("graph")
    source = np.concatenate([np.full(len(v), k) for k, v in graph.items()]).astype(np.int64)
    target = np.concatenate([np.asarray(v, dtype=np.int64) for v in graph.values()])
    keep = source != target
    keys = np.unique(source[keep] * n + target[keep])
    edges = np.stack([keys // n, keys % n])
    train = np.arange(y_small.shape[0])
    val = np.arange(y_small.shape[0], y_small.shape[0] + 500)
    return x, labels.astype(np.int64), edges, train, val, ordered


def per_class_split(labels, nodes, train_per_class, val_per_class, rng):
    import numpy as np
    train, val = [], []
    for c in np.unique(labels[nodes]):
        members = rng.permutation(nodes[labels[nodes] == c])
        train.append(members[:train_per_class])
        val.append(members[train_per_class:train_per_class + val_per_class])
    train, val = np.sort(np.concatenate(train)), np.sort(np.concatenate(val))
    return train, val, np.setdiff1d(nodes, np.concatenate([train, val]))


def shchur(data_dir, name, seed=0):
    import numpy as np
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components
    archive = np.load(os.path.join(data_dir, "graphdata", NPZ_FILES[name]), allow_pickle=True)
    adjacency = archive["adj_matrix"].item().tocsr()
    adjacency = ((adjacency + adjacency.T) > 0).astype(np.float32)
    adjacency = (adjacency - sp.diags(adjacency.diagonal())).tocsr()
    adjacency.eliminate_zeros()
    _, component = connected_components(adjacency, directed=False)
    nodes = np.flatnonzero(component == np.bincount(component).argmax())
    adjacency = sp.coo_matrix(adjacency.tocsr()[nodes][:, nodes])
    x = normalize_rows(np.asarray(archive["node_attr"].item().tocsr()[nodes].todense(),
                                  dtype=np.float32))
    labels = archive["node_label"].astype(np.int64)[nodes]
    edges = np.stack([adjacency.col, adjacency.row]).astype(np.int64)
    split = per_class_split(labels, np.arange(nodes.size), 20, 30, np.random.default_rng(seed))
    return (x, labels, edges) + split


def synthetic(nodes, degree=10.0, features=128, classes=10, homophily=0.8, seed=0):
    import numpy as np
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, nodes)
    weights = 1.0 + rng.pareto(2.5, nodes)
    want = nodes * degree * weights / weights.sum()
    in_degree = np.minimum(np.floor(want + rng.random(nodes)), nodes - 1).astype(np.int64)
    target = np.repeat(np.arange(nodes), in_degree)
    # Sources by weight: nodes ordered by class, one cumulative sum, and a uniform draw inside
    # the target's class's stretch of it (or the whole of it).
    order = np.argsort(labels, kind="stable")
    cumulative = np.cumsum(weights[order])
    ends = np.searchsorted(labels[order], np.arange(classes), side="right")
    starts = np.concatenate([[0], ends[:-1]])
    low = np.concatenate([[0.0], cumulative])[starts]
    high = cumulative[ends - 1]
    own = rng.random(target.size) < homophily
    cls = labels[target]
    lo = np.where(own, low[cls], 0.0)
    hi = np.where(own, high[cls], cumulative[-1])
    picks = np.searchsorted(cumulative, lo + rng.random(target.size) * (hi - lo), side="right")
    source = order[np.minimum(picks, nodes - 1)]
    del own, cls, lo, hi, picks
    keep = source != target
    keys = np.unique(target[keep] * nodes + source[keep])  # repeated sources dropped
    edges = np.stack([keys % nodes, keys // nodes])
    del keys, keep, source, target
    means = rng.normal(0.0, math.sqrt(2.0 / features), (classes, features)).astype(np.float32)
    x = rng.standard_normal((nodes, features), dtype=np.float32)
    x += means[labels]
    split = per_class_split(labels, np.arange(nodes), 20, 0, rng)
    return (x, labels.astype(np.int64), edges) + split


def heterophily(data_dir, name):
    """Platonov et al.'s npz: node_features, node_labels, edges [E, 2] (each undirected edge once,
    read both ways here, self-loops and repeats dropped) and the first of the ten fixed splits."""
    import numpy as np
    archive = np.load(os.path.join(data_dir, "heterophily", name.replace("-", "_") + ".npz"))
    x = archive["node_features"].astype(np.float32)
    labels = archive["node_labels"].astype(np.int64)
    n = x.shape[0]
    pairs = archive["edges"].astype(np.int64)
    source = np.concatenate([pairs[:, 0], pairs[:, 1]])
    target = np.concatenate([pairs[:, 1], pairs[:, 0]])
    keep = source != target
    keys = np.unique(target[keep] * n + source[keep])
    edges = np.stack([keys % n, keys // n])
    split = [np.flatnonzero(archive[key][0]) for key in ("train_masks", "val_masks", "test_masks")]
    return (x, labels, edges) + tuple(split)


def tu(data_dir, name):
    """A TU collection as (x float32 [N, F], graph labels int64 [G], edges int64 [2, E] without
    self-loops, node offsets int64 [G + 1])."""
    import zipfile
    import numpy as np
    with zipfile.ZipFile(os.path.join(data_dir, "tu", name + ".zip")) as archive:
        members = {m.split("/")[-1]: m for m in archive.namelist()}

        def table(suffix, dtype):
            member = members.get(f"{name}_{suffix}.txt")
            if member is None:
                return None
            text = archive.read(member).decode().replace(",", " ")
            return np.loadtxt(text.splitlines(), dtype=dtype, ndmin=2)

        pairs = table("A", np.int64) - 1
        indicator = table("graph_indicator", np.int64)[:, 0] - 1
        graph_labels = table("graph_labels", np.int64)[:, 0]
        node_labels = table("node_labels", np.int64)
        attributes = table("node_attributes", np.float32)
    columns = []
    if node_labels is not None:
        for c in range(node_labels.shape[1]):
            values = node_labels[:, c] - node_labels[:, c].min()
            columns.append(np.eye(values.max() + 1, dtype=np.float32)[values])
    if attributes is not None:
        columns.append(attributes)
    x = np.concatenate(columns, axis=1)
    keep = pairs[:, 0] != pairs[:, 1]
    edges = np.unique(pairs[keep], axis=0).T  # repeats merged
    offsets = np.concatenate([[0], np.cumsum(np.bincount(indicator))])
    labels = np.searchsorted(np.unique(graph_labels), graph_labels)
    return x, labels, edges, offsets


def load(data_dir, dataset):
    if dataset in HETEROPHILY:
        return heterophily(data_dir, dataset)
    if dataset in ("cora", "citeseer"):
        return planetoid(data_dir, dataset)
    if dataset == "pubmed-shaped":
        return planetoid(data_dir, "pubmed")
    if dataset in NPZ_FILES:
        return shchur(data_dir, dataset)
    if dataset.startswith("synthetic:"):
        return synthetic(int(dataset.split(":", 1)[1]))
    raise SystemExit(f"torch_baseline.py: unknown dataset '{dataset}'")

# --------------------------------------------------------------------------------- model


def build_model(spec, in_features, classes):
    """The torch modules of a MaskGAT model spec (docs/model-specs.md), with PyTorch's and PyG's
    defaults: linear, layer_norm, batch_norm, the activations, dropout, residual blocks (a learned
    skip, no bias, where the widths differ) and gat / gatv2 layers as PyG's GATConv / GATv2Conv
    with concat, dropout, bias, negative_slope, add_self_loops, residual and share_weights (not
    edge_dim). Its forward takes x and `edges`: {True: (source, target) with one self-loop per
    node, False: without}, or {"blocks": one such dict per attention layer, in order, each with
    "rows", its destinations, which are the first rows of its input (a sampled mini-batch, as DGL
    and the C++ library run it: each layer computes only the rows the next one reads)}."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    def dropout(x, p, training):
        if not training or p == 0:
            return x
        return x * torch.rand_like(x).ge_(p).mul_(1.0 / (1.0 - p))

    def glorot(*shape):
        bound = math.sqrt(6.0 / (shape[-2] + shape[-1]))
        return nn.Parameter(torch.empty(*shape).uniform_(-bound, bound))

    def edge_softmax(scores, target, n):
        index = target.unsqueeze(1).expand_as(scores)
        top = scores.new_zeros(n, scores.size(1)).scatter_reduce_(
            0, index, scores.detach(), reduce="amax", include_self=False)
        scores = (scores - top.index_select(0, target)).exp()
        sums = scores.new_zeros(n, scores.size(1)).index_add_(0, target, scores) + 1e-16
        return scores / sums.index_select(0, target)

    class Conv(nn.Module):
        def __init__(self, kind, fan_in, o):
            super().__init__()
            self.kind, self.o = kind, o
            heads, channels = o["heads"], o["channels"]
            width = heads * channels if o["concat"] else channels
            if kind == "gat":
                self.weight = glorot(heads * channels, fan_in)
                self.att_src, self.att_dst = glorot(1, heads, channels), glorot(1, heads, channels)
            else:
                self.lin_l = glorot(heads * channels, fan_in)
                self.bias_l = nn.Parameter(torch.zeros(heads * channels))
                if not o["share_weights"]:
                    self.lin_r = glorot(heads * channels, fan_in)
                    self.bias_r = nn.Parameter(torch.zeros(heads * channels))
                self.att = glorot(1, heads, channels)
            self.res = glorot(width, fan_in) if o["residual"] else None
            self.bias = nn.Parameter(torch.zeros(width)) if o["bias"] else None
            self.width = width

        def forward(self, x, edges):
            o = self.o
            if "blocks" in edges:  # a sampled block: its destinations are x's first rows
                edges = edges["blocks"][self.index]
            source, target = edges[o["add_self_loops"]]
            n, shape = edges.get("rows", x.size(0)), (-1, o["heads"], o["channels"])
            if self.kind == "gat":
                h = (x @ self.weight.t()).view(shape)
                score_src, score_dst = (h * self.att_src).sum(-1), (h[:n] * self.att_dst).sum(-1)
                scores = F.leaky_relu(score_src.index_select(0, source) +
                                      score_dst.index_select(0, target), o["negative_slope"])
                values = h.index_select(0, source)
            else:
                h = F.linear(x, self.lin_l, self.bias_l).view(shape)
                right = (h[:n] if o["share_weights"] else
                         F.linear(x[:n], self.lin_r, self.bias_r).view(shape))
                values = h.index_select(0, source)
                scores = (F.leaky_relu(values + right.index_select(0, target), o["negative_slope"])
                          * self.att).sum(-1)
            alpha = dropout(edge_softmax(scores, target, n), o["dropout"], self.training)
            out = h.new_zeros(n, o["heads"], o["channels"]).index_add_(
                0, target, values * alpha.unsqueeze(-1))
            out = out.reshape(n, -1) if o["concat"] else out.mean(1)
            if self.res is not None:
                out = out + x[:n] @ self.res.t()
            return out if self.bias is None else out + self.bias

    class Pool(nn.Module):
        """A readout over the graphs of a batch: `edges["batch"]` is each node's graph,
        `edges["graphs"]` their number."""

        def __init__(self, kind, width, heads):
            super().__init__()
            self.kind, self.heads = kind, heads
            self.gate = glorot(heads, width) if kind == "attention_pool" else None

        def forward(self, x, edges):
            batch, graphs = edges["batch"], edges["graphs"]
            if self.kind == "max_pool":
                index = batch.unsqueeze(1).expand_as(x)
                return x.new_zeros(graphs, x.size(1)).scatter_reduce_(
                    0, index, x, reduce="amax", include_self=False)
            if self.kind == "attention_pool":
                scores = x @ self.gate.t()
                index = batch.unsqueeze(1).expand_as(scores)
                top = scores.new_zeros(graphs, self.heads).scatter_reduce_(
                    0, index, scores.detach(), reduce="amax", include_self=False)
                scores = (scores - top.index_select(0, batch)).exp()
                sums = scores.new_zeros(graphs, self.heads).index_add_(0, batch, scores)
                alpha = scores / sums.index_select(0, batch)
                x = x * alpha.repeat_interleave(x.size(1) // self.heads, dim=1)
            out = x.new_zeros(graphs, x.size(1)).index_add_(0, batch, x)
            if self.kind == "mean_pool":
                counts = torch.bincount(batch, minlength=graphs).clamp_(min=1)
                out = out / counts.unsqueeze(1)
            return out

    class Dropout(nn.Module):
        def __init__(self, p):
            super().__init__()
            self.p = p

        def forward(self, x):
            return dropout(x, self.p, self.training)

    class Sequence(nn.Module):
        """Modules in order; attention layers also get the edges; with `skip`, a residual
        block."""

        def __init__(self, modules, skip):
            super().__init__()
            self.steps = nn.ModuleList(modules)
            self.skip = skip

        def forward(self, x, edges):
            y = x
            for step in self.steps:
                y = step(y, edges) if isinstance(step, (Conv, Sequence, Pool)) else step(y)
            if self.skip is None:
                return y
            x = x[:y.size(0)]  # a sampled block's destinations
            return y + (x if self.skip is True else x @ self.skip.t())

    defaults = {
        "gat": {"heads": 1, "concat": True, "dropout": 0.0, "bias": True, "negative_slope": 0.2,
                "add_self_loops": True, "residual": False},
        "gatv2": {"heads": 1, "concat": True, "dropout": 0.0, "bias": True,
                  "negative_slope": 0.2, "add_self_loops": True, "residual": False,
                  "share_weights": False},
        "linear": {"bias": True},
        "layer_norm": {"eps": 1e-5, "elementwise_affine": True, "bias": True},
        "batch_norm": {"eps": 1e-5, "momentum": 0.1, "affine": True, "track_running_stats": True},
        "leaky_relu": {"negative_slope": 0.01},
        "elu": {"alpha": 1.0},
        "dropout": {"p": 0.5},
        "attention_pool": {"heads": 1},
    }

    convs = []  # the attention layers in order: the k-th reads a sampled batch's k-th block

    def build(modules, width, skip):
        built = []
        for module in modules:
            kind = module["type"]
            o = dict(defaults.get(kind, {}))
            o.update({k: v for k, v in module.items() if k not in ("type", "name", "modules")})
            for key in ("channels", "out"):
                if o.get(key) == "classes":
                    o[key] = classes
            if kind in ("gat", "gatv2"):
                if o.get("edge_dim"):
                    raise SystemExit("torch_baseline.py: edge_dim is not modelled here")
                built.append(Conv(kind, width, o))
                built[-1].index = len(convs)
                convs.append(built[-1])
                width = built[-1].width
            elif kind == "linear":
                built.append(nn.Linear(width, o["out"], bias=o["bias"]))
                width = o["out"]
            elif kind == "layer_norm":
                built.append(nn.LayerNorm(width, eps=o["eps"],
                                          elementwise_affine=o["elementwise_affine"]))
            elif kind == "batch_norm":
                built.append(nn.BatchNorm1d(width, eps=o["eps"], momentum=o["momentum"],
                                            affine=o["affine"],
                                            track_running_stats=o["track_running_stats"]))
            elif kind == "residual":
                block, block_width = build(module["modules"], width, True)
                if block_width != width:
                    block.skip = glorot(block_width, width)
                built.append(block)
                width = block_width
            elif kind == "dropout":
                built.append(Dropout(o["p"]))
            elif kind.endswith("_pool"):
                built.append(Pool(kind, width, o.get("heads", 1)))
            else:
                built.append({"identity": lambda: nn.Identity(), "relu": lambda: nn.ReLU(),
                              "gelu": lambda: nn.GELU(),
                              "leaky_relu": lambda: nn.LeakyReLU(o["negative_slope"]),
                              "elu": lambda: nn.ELU(o["alpha"])}[kind]())
        return Sequence(built, True if skip else None), width

    model, width = build(spec["modules"], in_features, False)
    if width != classes:
        raise SystemExit(f"torch_baseline.py: the spec's output is {width} wide, not {classes}")
    return model


def load_pyg_state_dict(model, spec, path):
    """Puts the tensors of a state dict with PyG's names (a torch.save file: GATConv's lin.weight,
    att_src, att_dst, bias, res.weight; GATv2Conv's lin_l and lin_r, att; torch.nn's Linear,
    LayerNorm, BatchNorm1d; a residual block's skip.weight) into the model build_model made from
    `spec`, its modules named as MaskGAT names them (their own name, or kind and position: conv1,
    lin1, norm1, block1). Every key must be used and every parameter given."""
    import torch
    state = torch.load(path, map_location="cpu")
    used = set()
    counters = {}
    prefixes = {"gat": "conv", "gatv2": "conv", "linear": "lin", "layer_norm": "norm",
                "batch_norm": "norm", "residual": "block"}

    def take(key, like):
        if key not in state:
            raise SystemExit(f"torch_baseline.py: {path} has no {key}")
        used.add(key)
        return state[key].to(like.dtype).reshape(like.shape)

    def fill(modules, steps):
        for module, step in zip(modules, steps):
            prefix = prefixes.get(module["type"])
            if not prefix:
                continue
            counters[prefix] = counters.get(prefix, 0) + 1
            name = module.get("name") or f"{prefix}{counters[prefix]}"
            pyg = {"weight": "lin.weight", "lin_l": "lin_l.weight", "bias_l": "lin_l.bias",
                   "lin_r": "lin_r.weight", "bias_r": "lin_r.bias", "res": "res.weight",
                   "skip": "skip.weight"}
            with torch.no_grad():
                for attribute, tensor in list(step.named_parameters(recurse=False)) + \
                        list(step.named_buffers(recurse=False)):
                    if module["type"] in ("gat", "gatv2"):
                        key = pyg.get(attribute, attribute)
                    elif module["type"] == "residual":
                        key = pyg[attribute]
                    else:
                        key = attribute
                    tensor.copy_(take(f"{name}.{key}", tensor))
            if module["type"] == "batch_norm" and f"{name}.num_batches_tracked" in state:
                used.add(f"{name}.num_batches_tracked")
            if module["type"] == "residual":
                fill(module["modules"], step.steps)

    fill(spec["modules"], model.steps)
    unused = sorted(set(state) - used)
    if unused:
        raise SystemExit(f"torch_baseline.py: {path}: keys the model does not use: {unused}")


def model_spec(args, dataset):
    """The spec to build: --model's, else the GAT paper's model (docs/specs/paper.json) with
    --attention's layers and, on pubmed-shaped, 8 output heads (the paper's PubMed shape)."""
    if args.model:
        with open(args.model, encoding="utf-8") as handle:
            return json.load(handle)
    with open(PAPER_SPEC, encoding="utf-8") as handle:
        spec = json.load(handle)
    for module in spec["modules"]:
        if module["type"] == "gat":
            module["type"] = args.attention
    if dataset == "pubmed-shaped":
        spec["modules"][-1]["heads"] = 8
    return spec


def prepare(data, dataset, args, seed):
    """Tensors with and without one self-loop per node, the model and its optimiser: the paper's
    Adam settings (PubMed's own), or with --model lr 0.001 and no weight decay (the heterophily
    settings docs/model-specs.md gives)."""
    import numpy as np
    import torch
    x, labels, edges, train, val, test = data
    n = x.shape[0]
    loops = np.arange(n, dtype=np.int64)
    plain = (torch.from_numpy(edges[0]), torch.from_numpy(edges[1]))
    looped = (torch.from_numpy(np.concatenate([edges[0], loops])),
              torch.from_numpy(np.concatenate([edges[1], loops])))
    pubmed = dataset == "pubmed-shaped"
    torch.manual_seed(seed)
    model = build_model(model_spec(args, dataset), x.shape[1], int(labels.max()) + 1)
    if args.model:
        lr, decay = 0.001, 0.0
    else:
        lr, decay = (0.01, 1e-3) if pubmed else (0.005, 5e-4)
    optimiser = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=decay)
    parts = [torch.from_numpy(np.asarray(part, dtype=np.int64)) for part in (train, val, test)]
    return (torch.from_numpy(x), torch.from_numpy(labels), {True: looped, False: plain}, parts,
            model, optimiser)

# ------------------------------------------------------------------------------ measure


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def libraries():
    with open("/proc/self/maps", encoding="utf-8") as maps:
        names = {line.split()[-1] for line in maps if "/" in line}
    return {"blas": "openblas" if any("openblas" in n for n in names) else "reference",
            "malloc": "tcmalloc" if any("tcmalloc" in n for n in names) else "glibc"}


def time_one(args, dataset):
    import torch
    import torch.nn.functional as F
    data = load(args.data_dir, dataset)
    x, labels, edges, (train, _, _), model, optimiser = prepare(data, dataset, args, 0)
    if args.state_dict:
        load_pyg_state_dict(model, model_spec(args, dataset), args.state_dict)
    line = {"bench": "torch", "dataset": dataset, "attention": args.attention,
            "model": args.model or "paper", "state_dict": args.state_dict or None,
            "nodes": x.size(0), "edges": data[2].shape[1], "features": x.size(1),
            "threads": torch.get_num_threads(), "torch": torch.__version__, **libraries(),
            "epochs": args.epochs, "warmup": args.warmup, "status": "ok"}

    def median_ms(step):
        times = []
        for k in range(args.warmup + args.epochs):
            start = time.perf_counter()
            step()
            if k >= args.warmup:
                times.append(1e3 * (time.perf_counter() - start))
        return statistics.median(times)

    def infer():
        with torch.no_grad():
            F.softmax(model(x, edges), dim=1)

    def epoch():
        optimiser.zero_grad()
        loss = F.cross_entropy(model(x, edges).index_select(0, train),
                               labels.index_select(0, train))
        loss.backward()
        optimiser.step()

    try:
        model.eval()
        line["ms_inference"] = median_ms(infer)
        if not args.state_dict:  # a served model is only run
            model.train()
            line["ms_per_epoch"] = median_ms(epoch)
    except (RuntimeError, MemoryError) as error:  # how torch reports a failed allocation
        if isinstance(error, RuntimeError) and "alloc" not in str(error):
            raise
        line["status"] = "out of memory: " + str(error).splitlines()[0][:200]
    line["peak_rss_mb"] = peak_rss_mb()
    return line


def time_graphs(args, dataset):
    """Graphs per second of a graph classifier on a TU collection: training epochs over every
    graph in batches of --batch-size, inference over every graph in batches of 256."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    if not args.model:
        raise SystemExit("torch_baseline.py: tu: datasets time a graph classifier: give --model")
    x, labels, edges, offsets = tu(args.data_dir, dataset.split(":", 1)[1])
    graphs = len(labels)
    classes = int(labels.max()) + 1
    with open(args.model, encoding="utf-8") as file:
        spec = json.load(file)
    torch.manual_seed(0)
    model = build_model(spec, x.shape[1], classes)
    optimiser = torch.optim.Adam(model.parameters(), lr=0.001, weight_decay=0.0)
    sizes = np.diff(offsets)
    graph_of_edge = np.searchsorted(offsets, edges[1], side="right") - 1
    edge_order = np.argsort(graph_of_edge, kind="stable")
    edge_offsets = np.concatenate([[0], np.cumsum(np.bincount(graph_of_edge, minlength=graphs))])
    edges = edges[:, edge_order]
    x_all, y_all = torch.from_numpy(x), torch.from_numpy(labels)

    def collate(ids):
        """The block-diagonal batch of graphs `ids` (PyG's Batch.from_data_list)."""
        nodes = np.concatenate([np.arange(offsets[g], offsets[g + 1]) for g in ids])
        shift = np.concatenate([[0], np.cumsum(sizes[ids])])
        pieces = [edges[:, edge_offsets[g]:edge_offsets[g + 1]] - offsets[g] + shift[k]
                  for k, g in enumerate(ids)]
        batch_edges = torch.from_numpy(np.concatenate(pieces, axis=1))
        n = len(nodes)
        loops = torch.arange(n)
        source = torch.cat([batch_edges[0], loops])
        target = torch.cat([batch_edges[1], loops])
        batch = torch.from_numpy(np.repeat(np.arange(len(ids)), sizes[ids]))
        context = {True: (source, target), False: (batch_edges[0], batch_edges[1]),
                   "batch": batch, "graphs": len(ids)}
        index = torch.from_numpy(nodes)
        return x_all.index_select(0, index), context, y_all.index_select(0, torch.from_numpy(ids))

    def epoch(number):
        model.train()
        order = np.random.default_rng(number).permutation(graphs)
        for first in range(0, graphs, args.batch_size):
            features, context, y = collate(order[first:first + args.batch_size])
            optimiser.zero_grad()
            F.cross_entropy(model(features, context), y).backward()
            optimiser.step()

    def infer():
        model.eval()
        with torch.no_grad():
            for first in range(0, graphs, 256):
                features, context, _ = collate(np.arange(first, min(first + 256, graphs)))
                F.softmax(model(features, context), dim=1)

    def median_ms(step):
        times = []
        for k in range(args.warmup + args.epochs):
            start = time.perf_counter()
            step(k)
            if k >= args.warmup:
                times.append(1e3 * (time.perf_counter() - start))
        return statistics.median(times)

    line = {"bench": "torch", "dataset": dataset, "model": args.model, "graphs": graphs,
            "nodes": x.shape[0], "edges": edges.shape[1], "features": x.shape[1],
            "batch_size": args.batch_size, "threads": torch.get_num_threads(),
            "torch": torch.__version__, **libraries(), "epochs": args.epochs,
            "warmup": args.warmup, "status": "ok"}
    line["ms_per_epoch"] = median_ms(epoch)
    line["ms_inference"] = median_ms(lambda _: infer())
    line["graphs_per_s_train"] = 1e3 * graphs / line["ms_per_epoch"]
    line["graphs_per_s_inference"] = 1e3 * graphs / line["ms_inference"]
    line["peak_rss_mb"] = peak_rss_mb()
    return line


def time_links(args, dataset):
    """Training epochs of link prediction (negatives drawn, encoder, dot-product decoder, loss,
    backward, Adam) on the GAE split of a dataset's edges."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    name = dataset.split(":", 1)[1]
    x, _, edges, *_ = load(args.data_dir, name)
    n = x.shape[0]
    pairs = np.unique(np.stack([np.minimum(edges[0], edges[1]), np.maximum(edges[0], edges[1])]),
                      axis=1)
    pairs = pairs[:, np.random.default_rng(0).permutation(pairs.shape[1])]
    held = round(0.05 * pairs.shape[1]) + round(0.10 * pairs.shape[1])
    train = pairs[:, held:]
    known = np.unique(np.concatenate([pairs[0] * n + pairs[1], pairs[1] * n + pairs[0]]))
    loops = np.arange(n, dtype=np.int64)
    source = np.concatenate([train[0], train[1]])
    target = np.concatenate([train[1], train[0]])
    graph = {True: (torch.from_numpy(np.concatenate([source, loops])),
                    torch.from_numpy(np.concatenate([target, loops]))),
             False: (torch.from_numpy(source), torch.from_numpy(target))}
    torch.manual_seed(0)
    model = build_model(model_spec(args, name), x.shape[1], args.out_dim)
    optimiser = torch.optim.Adam(model.parameters(), lr=0.005, weight_decay=0.0)
    features = torch.from_numpy(x)
    positives = torch.from_numpy(train)
    count = train.shape[1]
    labels = torch.cat([torch.ones(count), torch.zeros(count)])
    rng = np.random.default_rng(1)

    def negatives():
        found = np.empty((2, 0), dtype=np.int64)
        while found.shape[1] < count:
            draw = rng.integers(0, n, size=(2, 2 * count))
            keep = (draw[0] != draw[1]) & ~np.isin(draw[0] * n + draw[1], known)
            found = np.concatenate([found, draw[:, keep]], axis=1)
        return torch.from_numpy(found[:, :count])

    def epoch():
        negative = negatives()
        optimiser.zero_grad()
        z = model(features, graph)
        both = torch.cat([positives, negative], dim=1)
        logits = (z.index_select(0, both[0]) * z.index_select(0, both[1])).sum(dim=1)
        F.binary_cross_entropy_with_logits(logits, labels).backward()
        optimiser.step()

    times = []
    model.train()
    for k in range(args.warmup + args.epochs):
        start = time.perf_counter()
        epoch()
        if k >= args.warmup:
            times.append(1e3 * (time.perf_counter() - start))
    return {"bench": "torch", "dataset": dataset, "model": args.model or "paper",
            "nodes": n, "edges": edges.shape[1], "train_pairs": count, "features": x.shape[1],
            "out_dim": args.out_dim, "threads": torch.get_num_threads(),
            "torch": torch.__version__, **libraries(), "epochs": args.epochs,
            "warmup": args.warmup, "status": "ok", "ms_per_epoch": statistics.median(times),
            "peak_rss_mb": peak_rss_mb()}


def csr_by_destination(edges, nodes):
    """The in-edges of `edges` ([2, E]: sources, targets) as torch tensors `indptr` (N + 1) and
    `indices` (the sources, grouped by target in ascending order)."""
    import numpy as np
    import torch
    order = np.argsort(edges[1], kind="stable")
    counts = np.bincount(edges[1], minlength=nodes)
    return (torch.from_numpy(np.concatenate([[0], np.cumsum(counts)])),
            torch.from_numpy(np.ascontiguousarray(edges[0][order])))


def sample_blocks(indptr, indices, seeds, fanouts, local, generator):
    """The blocks of a mini-batch whose outputs are `seeds`, from the output layer down, as
    maskgat::NeighborSampler draws them: every node a layer computes keeps up to its fanout of
    its in-neighbours (CSR by destination: `indptr`, `indices`), uniformly without replacement
    (all of them when fewer), drawn afresh in every layer; the nodes a layer adds are numbered
    after those already present (ascending original ids), so each layer's destinations are the
    first rows of its sources. Vectorised: a random key per in-edge of the layer's rows, one sort
    by (row, key), the first `fanout` of each row kept. `local` is -1 for every node (N entries)
    and is left so. Returns every node (the input rows) and the blocks, input layer first."""
    import torch
    nodes = seeds
    local[nodes] = torch.arange(nodes.numel())
    blocks = []
    for fanout in reversed(fanouts):
        rows = nodes.numel()
        starts = indptr.index_select(0, nodes)
        degrees = indptr.index_select(0, nodes + 1) - starts
        row = torch.repeat_interleave(torch.arange(rows), degrees)
        first = torch.cumsum(degrees, 0) - degrees  # each row's first entry in `row`
        position = torch.arange(row.numel()) - first.index_select(0, row)
        if fanout >= 0:
            keys = torch.rand(row.numel(), generator=generator, dtype=torch.float64)
            order = torch.argsort(row.to(torch.float64) + keys)  # rows ascending, random inside
            row = row.index_select(0, order)
            rank = torch.arange(row.numel()) - first.index_select(0, row)
            keep = order[rank < fanout]
            row, position = row.index_select(0, keep), position.index_select(0, keep)
        sources = indices.index_select(0, starts.index_select(0, row) + position)
        ids = local.index_select(0, sources)
        fresh = torch.unique(sources[ids < 0])
        local[fresh] = torch.arange(nodes.numel(), nodes.numel() + fresh.numel())
        nodes = torch.cat([nodes, fresh])
        ids = local.index_select(0, sources)
        loops = torch.arange(rows)
        blocks.append({"rows": rows, False: (ids, row),
                       True: (torch.cat([ids, loops]), torch.cat([row, loops]))})
    local[nodes] = -1
    return nodes, blocks[::-1]


def time_sampled(args, dataset):
    """Mini-batch training epochs on neighbour-sampled blocks of synthetic:N, as maskgat-bench's
    sampled:N runs them: 10 % of the nodes for training (N / 100 per class), visited in a shuffled
    order in batches of --batch-size, fanouts 10,10; per batch the sampling, the gather of the
    input rows and the batch's labels, and the model (forward on the blocks, loss at the batch's
    nodes, backward, Adam step), each timed apart."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    nodes = int(dataset.split(":", 1)[1])
    x, labels, edges, *_ = synthetic(nodes)
    train, _, _ = per_class_split(labels, np.arange(nodes), nodes // 100, nodes // 100,
                                  np.random.default_rng(1))
    indptr, indices = csr_by_destination(edges, nodes)
    features, labels = torch.from_numpy(x), torch.from_numpy(labels)
    train = torch.from_numpy(np.asarray(train, dtype=np.int64))
    del x, edges
    torch.manual_seed(0)
    model = build_model(model_spec(args, "synthetic"), features.size(1), int(labels.max()) + 1)
    optimiser = torch.optim.Adam(model.parameters(), lr=0.005, weight_decay=5e-4)
    generator = torch.Generator().manual_seed(0)
    local = torch.full((nodes,), -1, dtype=torch.int64)
    fanouts = [10, 10]
    epochs, rows = [], []
    model.train()
    for _ in range(args.epochs):
        parts = [0.0, 0.0, 0.0]  # sampling, gather, model
        shuffled = train.index_select(0, torch.randperm(train.numel(), generator=generator))
        for seeds in torch.split(shuffled, args.batch_size):
            start = time.perf_counter()
            batch, blocks = sample_blocks(indptr, indices, seeds, fanouts, local, generator)
            sampled = time.perf_counter()
            inputs, targets = features.index_select(0, batch), labels.index_select(0, seeds)
            gathered = time.perf_counter()
            optimiser.zero_grad()
            F.cross_entropy(model(inputs, {"blocks": blocks}), targets).backward()
            optimiser.step()
            done = time.perf_counter()
            parts = [parts[0] + sampled - start, parts[1] + gathered - sampled,
                     parts[2] + done - gathered]
            rows.append(batch.numel())
        epochs.append(parts)
    median = sorted(epochs, key=sum)[(len(epochs) - 1) // 2]  # the epoch of median length
    seconds = sum(median)
    return {"bench": "torch-sampled", "dataset": dataset, "attention": args.attention,
            "nodes": nodes, "edges": int(indices.numel()), "train_nodes": int(train.numel()),
            "batch_size": args.batch_size, "fanouts": fanouts,
            "threads": torch.get_num_threads(), "torch": torch.__version__, **libraries(),
            "epochs": args.epochs, "status": "ok", "seconds_per_epoch": seconds,
            "sampling_seconds": median[0], "gather_seconds": median[1],
            "model_seconds": median[2], "train_nodes_per_s": train.numel() / seconds,
            "model_train_nodes_per_s": train.numel() / median[2],
            "batch_rows": statistics.mean(rows), "peak_rss_mb": peak_rss_mb()}


def train_one(args, dataset):
    import numpy as np
    import torch
    import torch.nn.functional as F
    data, accuracies, epochs_run = None, [], []
    for seed in range(args.seeds):
        if dataset in NPZ_FILES:  # Shchur et al.'s protocol: each seed draws its own split
            data = shchur(args.data_dir, dataset, seed)
        elif data is None:
            data = load(args.data_dir, dataset)
        x, labels, edges, (train, val, test), model, optimiser = prepare(
            data, dataset, args, seed)
        best_acc, best_loss, waited, kept = 0.0, math.inf, 0, 0.0
        for epoch in range(1, args.max_epochs + 1):
            model.train()
            optimiser.zero_grad()
            F.cross_entropy(model(x, edges)[train], labels[train]).backward()
            optimiser.step()
            model.eval()
            with torch.no_grad():
                logits = model(x, edges)
            loss = F.cross_entropy(logits[val], labels[val]).item()
            accuracy = (logits[val].argmax(1) == labels[val]).float().mean().item()
            if accuracy >= best_acc or loss <= best_loss:
                if accuracy >= best_acc and loss <= best_loss:
                    kept = (logits[test].argmax(1) == labels[test]).float().mean().item()
                best_acc, best_loss, waited = max(accuracy, best_acc), min(loss, best_loss), 0
            else:
                waited += 1
                if waited == args.patience:
                    break
        accuracies.append(round(100.0 * kept, 4))
        epochs_run.append(epoch)
        print(f"# {dataset} seed {seed}: test accuracy {100 * kept:.1f} after {epoch} epochs",
              file=sys.stderr, flush=True)
    return {"bench": "torch-train", "dataset": dataset, "attention": args.attention,
            "seeds": args.seeds, "test_accuracy_mean": round(float(np.mean(accuracies)), 4),
            "test_accuracy_std": round(float(np.std(accuracies)), 4), "test_accuracies": accuracies,
            "epochs_run": epochs_run, "threads": torch.get_num_threads(), **libraries()}


def child(args):
    import torch
    warnings.filterwarnings("ignore", message="scatter_reduce")  # "in beta" in torch 1.13
    torch.set_num_threads(args.threads)
    if args.batch_size is None:
        args.batch_size = 1024 if args.datasets.startswith("sampled:") else 32
    if args.datasets.startswith("tu:"):
        line = time_graphs(args, args.datasets)
    elif args.datasets.startswith("link:"):
        line = time_links(args, args.datasets)
    elif args.datasets.startswith("sampled:"):
        line = time_sampled(args, args.datasets)
    else:
        line = (train_one if args.train else time_one)(args, args.datasets)
    print(json.dumps(line), flush=True)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="cora,citeseer,pubmed-shaped,synthetic:10000,"
                                              "synthetic:100000")
    parser.add_argument("--data-dir", default=os.path.join(here, "..", "..", "datasets"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=20, help="timed epochs and passes")
    parser.add_argument("--warmup", type=int, default=3, help="untimed ones before them")
    parser.add_argument("--attention", default="gat", choices=["gat", "gatv2"])
    parser.add_argument("--model", default="",
                        help="a MaskGAT model spec (JSON) instead of the GAT paper's model")
    parser.add_argument("--state-dict", default="",
                        help="a state dict with PyG's names for --model: time its inference alone")
    parser.add_argument("--plain", action="store_true",
                        help="the system's BLAS, glibc malloc (dropout still uses rand_like)")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="graphs per training batch on tu: datasets (32), training nodes per "
                             "batch on sampled: datasets (1024)")
    parser.add_argument("--out-dim", type=int, default=16,
                        help="output columns of the encoder on link: datasets")
    parser.add_argument("--train", action="store_true", help="accuracy over seeds instead")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--max-epochs", type=int, default=10000)
    parser.add_argument("--patience", type=int, default=100)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)

    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    if not args.plain and os.path.isdir(OPENBLAS_DIR):
        env["LD_LIBRARY_PATH"] = ":".join(filter(None, [OPENBLAS_DIR, env.get("LD_LIBRARY_PATH")]))
    if not args.plain and os.path.exists(TCMALLOC):
        env["LD_PRELOAD"] = " ".join(filter(None, [TCMALLOC, env.get("LD_PRELOAD")]))
    status = 0
    for dataset in filter(None, args.datasets.split(",")):
        command = [sys.executable, os.path.abspath(__file__), "--child", "--datasets", dataset]
        for option in ("data_dir", "threads", "epochs", "warmup", "attention", "model",
                       "state_dict", "seeds", "max_epochs", "patience", "batch_size", "out_dim"):
            if getattr(args, option) is not None:
                command += ["--" + option.replace("_", "-"), str(getattr(args, option))]
        process = subprocess.Popen(command + (["--train"] if args.train else []), env=env,
                                   stdout=subprocess.PIPE, text=True)
        lines = [line for line in process.stdout if line.startswith("{")]
        _, code, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(code)
        if lines and process.returncode == 0:
            print(lines[-1], end="", flush=True)
        else:  # killed, e.g. by the kernel's OOM killer: its peak as the kernel counted it
            status = 1
            print(json.dumps({"bench": "torch", "dataset": dataset, "attention": args.attention,
                              "status": f"failed: exit {process.returncode}",
                              "peak_rss_mb": usage.ru_maxrss / 1024.0}), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
