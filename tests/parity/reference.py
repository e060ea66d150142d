#!/usr/bin/env python3
"""Recomputes the cases maskgat-parity-export wrote with PyTorch and compares.

Written from PyG's documented semantics of GATConv, GATv2Conv and TransformerConv (edge_index
messages flow source -> destination, softmax over each destination's in-edges after PyG's
remove-then-add self-loops, heads concatenated or averaged), in plain tensor code. Models built
from a spec are rebuilt from the spec's JSON with torch.nn's Linear, LayerNorm, BatchNorm1d and
activations around those attention formulas, with PyTorch's defaults, the widths and the names
worked out here, and MaskGAT's weights loaded by name (x W: Linear's weight transposed); their
BatchNorm running statistics after the forward are compared too. Gradients come from autograd on
L = sum(out * grad_out); cases without grad_out compare outputs alone. Every output, parameter
gradient, input gradient and running statistic must match MaskGAT with a norm-wise relative error <= 1e-5 (float32); a gradient that is zero by
construction (the key bias of dot-product attention, cancelled by the softmax) is compared in
absolute terms instead.

usage: reference.py CASE_DIR
"""
import glob
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

TOLERANCE = 1e-5
STRUCTURAL_ZERO = 1e-4


def matrix(m):
    return torch.tensor(m["values"], dtype=torch.float32).reshape(m["rows"], m["cols"])


def features(case):
    x = case["x"]
    if "triplets" in x:
        t = matrix(x["triplets"])
        dense = torch.zeros(x["rows"], x["cols"])
        dense[t[:, 0].long(), t[:, 1].long()] = t[:, 2]
        return dense
    return matrix(x)


def with_self_loops(src, dst, n, edge_attr=None):
    """PyG's remove_self_loops then add_self_loops; edge features of the loops are the mean of the
    node's (remaining) in-edges' (fill_value="mean"), zero without any."""
    keep = src != dst
    loops = torch.arange(n)
    if edge_attr is not None:
        kept = edge_attr[keep]
        sums = torch.zeros(n, kept.shape[1]).index_add(0, dst[keep], kept)
        counts = torch.zeros(n).index_add(0, dst[keep], torch.ones(len(kept)))
        edge_attr = torch.cat([kept, sums / counts.clamp(min=1)[:, None]])
    return torch.cat([src[keep], loops]), torch.cat([dst[keep], loops]), edge_attr


def edge_softmax(scores, dst, n):
    heads = scores.shape[1]
    index = dst[:, None].expand(-1, heads)
    maxima = torch.full((n, heads), float("-inf")).scatter_reduce(
        0, index, scores, "amax", include_self=True)
    e = torch.exp(scores - maxima[dst])
    sums = torch.zeros(n, heads).index_add(0, dst, e)
    return e / (sums[dst] + 1e-16)


def aggregate(alpha, messages, dst, n):
    out = torch.zeros(n, messages.shape[1], messages.shape[2])
    return out.index_add(0, dst, alpha.unsqueeze(-1) * messages)


def finish(out, o):
    return out.reshape(out.shape[0], -1) if o["concat"] else out.mean(dim=1)


def linear(x, p, name, bias=True):
    out = x @ p[name + ".weight"]
    if bias:
        out = out + p[name + ".bias"]
    return out


def residual_and_bias(out, x, p, name, o):
    if o["residual"]:
        out = out + x @ p[name + ".res.weight"]
    if o["bias"]:
        out = out + p[name + ".bias"]
    return out


def edge_terms(p, name, edge_attr, o):
    """PyG's lin_edge(edge_attr) as (E, H, C), for a layer with edge_dim."""
    return (edge_attr @ p[name + ".lin_edge.weight"]).view(-1, o["heads"], o["out"])


def gat(x, p, name, graph, o):
    src, dst, n, edge_attr = graph
    heads, channels = o["heads"], o["out"]
    h = (x @ p[name + ".weight"]).view(n, heads, channels)
    a_src = (h * p[name + ".att_src"].view(1, heads, channels)).sum(-1)
    a_dst = (h * p[name + ".att_dst"].view(1, heads, channels)).sum(-1)
    if o["add_self_loops"]:
        src, dst, edge_attr = with_self_loops(src, dst, n, edge_attr)
    alpha = a_src[src] + a_dst[dst]
    if o.get("edge_dim", 0):
        alpha = alpha + (edge_terms(p, name, edge_attr, o) *
                         p[name + ".att_edge"].view(1, heads, channels)).sum(-1)
    scores = F.leaky_relu(alpha, o["negative_slope"])
    out = finish(aggregate(edge_softmax(scores, dst, n), h[src], dst, n), o)
    return residual_and_bias(out, x, p, name, o)


def gatv2(x, p, name, graph, o):
    src, dst, n, edge_attr = graph
    heads, channels = o["heads"], o["out"]
    x_l = linear(x, p, name + ".lin_l", o["bias"]).view(n, heads, channels)
    x_r = x_l if o["share_weights"] else linear(x, p, name + ".lin_r", o["bias"]).view(
        n, heads, channels)
    if o["add_self_loops"]:
        src, dst, edge_attr = with_self_loops(src, dst, n, edge_attr)
    z = x_l[src] + x_r[dst]
    if o.get("edge_dim", 0):
        z = z + edge_terms(p, name, edge_attr, o)
    z = F.leaky_relu(z, o["negative_slope"])
    scores = (z * p[name + ".att"].view(1, heads, channels)).sum(-1)
    out = finish(aggregate(edge_softmax(scores, dst, n), x_l[src], dst, n), o)
    return residual_and_bias(out, x, p, name, o)


def dot(x, p, name, graph, o):
    src, dst, n, _ = graph
    heads, channels = o["heads"], o["out"]
    q = linear(x, p, name + ".query").view(n, heads, channels)
    k = linear(x, p, name + ".key").view(n, heads, channels)
    v = linear(x, p, name + ".value").view(n, heads, channels)
    scores = (q[dst] * k[src]).sum(-1) / math.sqrt(channels)
    out = finish(aggregate(edge_softmax(scores, dst, n), v[src], dst, n), o)
    if o["root_weight"]:
        out = out + linear(x, p, name + ".skip", o["bias"])
    return out


LAYERS = {"gat": gat, "gatv2": gatv2, "dot": dot}


# PyTorch's and PyG's defaults of every module a model spec may list: torch.nn.Linear, LayerNorm,
# BatchNorm1d, LeakyReLU, ELU and Dropout; PyG's GATConv, GATv2Conv and TransformerConv.
DEFAULTS = {
    "gat": {"heads": 1, "concat": True, "dropout": 0.0, "bias": True, "negative_slope": 0.2,
            "add_self_loops": True, "residual": False, "edge_dim": 0},
    "gatv2": {"heads": 1, "concat": True, "dropout": 0.0, "bias": True, "negative_slope": 0.2,
              "add_self_loops": True, "residual": False, "share_weights": False, "edge_dim": 0},
    "dot": {"heads": 1, "concat": True, "dropout": 0.0, "bias": True, "root_weight": True},
    "linear": {"bias": True},
    "layer_norm": {"eps": 1e-5, "elementwise_affine": True, "bias": True},
    "batch_norm": {"eps": 1e-5, "momentum": 0.1, "affine": True, "track_running_stats": True},
    "identity": {},
    "relu": {},
    "gelu": {},
    "leaky_relu": {"negative_slope": 0.01},
    "elu": {"alpha": 1.0},
    "dropout": {"p": 0.5},
    "residual": {},
}
# The fields naming a module's output width ("classes" allowed) and declaring its input width.
OUTPUT_WIDTH = {"gat": "channels", "gatv2": "channels", "dot": "channels", "linear": "out"}
INPUT_WIDTH = {"gat": "in", "gatv2": "in", "dot": "in", "linear": "in", "layer_norm": "features",
               "batch_norm": "features"}
# The prefix of the names given to unnamed modules, by kind and position.
NAME_PREFIX = {"gat": "conv", "gatv2": "conv", "dot": "conv", "linear": "lin",
               "layer_norm": "norm", "batch_norm": "norm", "residual": "block"}


class Weights:
    """MaskGAT's exported parameters, loaded by name into the tensors of the PyTorch model; each
    records how its gradient reads in MaskGAT's layout (x W: the transpose of torch.nn.Linear's)."""

    def __init__(self, exported):
        self.exported = exported
        self.bound = {}

    def value(self, name):
        if name not in self.exported:
            raise KeyError(f"MaskGAT has no parameter {name}")
        return matrix(self.exported[name]["value"])

    def __getitem__(self, name):
        """A parameter used as it is stored (the attention formulas' own tensors)."""
        if name not in self.bound:
            tensor = self.value(name).requires_grad_(True)
            self.bound[name] = (tensor, lambda grad: grad)
        return self.bound[name][0]

    def load(self, name, parameter, transpose=False):
        """Copies a parameter into a torch.nn module's `parameter`."""
        value = self.value(name)
        with torch.no_grad():
            parameter.copy_(value.t() if transpose else value.reshape(parameter.shape))
        shape = value.shape
        self.bound[name] = (parameter, (lambda grad: grad.t()) if transpose
                            else (lambda grad: grad.reshape(shape)))

    def grad(self, name):
        tensor, to_maskgat = self.bound[name]
        return to_maskgat(tensor.grad)


class ModelBuilder:
    """Builds the model a spec describes in plain PyTorch, with its own reading of the spec:
    PyTorch's defaults for absent fields, widths inferred module by module, unnamed modules named
    by kind and position (conv1, lin1, norm1, block1), a residual block's skip learned
    (name.skip.weight, no bias) when its body changes the width."""

    def __init__(self, weights, buffers, graph, classes, training):
        self.weights = weights
        self.buffers = buffers
        self.graph = graph
        self.classes = classes
        self.training = training
        self.counters = {}
        self.batch_norms = {}

    def build(self, modules, width):
        steps = []
        for module in modules:
            step, width = self.module(module, width)
            steps.append(step)

        def run(x):
            for step in steps:
                x = step(x)
            return x
        return run, width

    def module(self, module, width):
        kind = module["type"]
        o = dict(DEFAULTS[kind])
        widths = (INPUT_WIDTH.get(kind), OUTPUT_WIDTH.get(kind))
        for key, value in module.items():
            if key in ("type", "name", "modules") or key in widths:
                continue
            if key not in o:
                raise ValueError(f"{kind}: field {key} unknown to the reference")
            o[key] = value
        name = module.get("name", "")
        prefix = NAME_PREFIX.get(kind)
        if prefix:
            self.counters[prefix] = self.counters.get(prefix, 0) + 1
            name = name or f"{prefix}{self.counters[prefix]}"
        declared = module.get(INPUT_WIDTH.get(kind), 0)
        if declared not in (0, width):
            raise ValueError(f"{name}: declared input width {declared}, inferred {width}")
        out = module.get(OUTPUT_WIDTH.get(kind))
        out = self.classes if out == "classes" else out
        w = self.weights
        if kind in LAYERS:
            if self.training and o["dropout"] > 0:
                raise ValueError(f"{name}: attention dropout in training is not deterministic")
            o["out"] = out
            layer = LAYERS[kind]
            return (lambda x: layer(x, w, name, self.graph, o),
                    o["heads"] * out if o["concat"] else out)
        if kind == "linear":
            lin = torch.nn.Linear(width, out, bias=o["bias"])
            w.load(name + ".weight", lin.weight, transpose=True)
            if o["bias"]:
                w.load(name + ".bias", lin.bias)
            return lin, out
        if kind == "layer_norm":
            norm = torch.nn.LayerNorm(width, eps=o["eps"],
                                      elementwise_affine=o["elementwise_affine"])
            if o["elementwise_affine"]:
                w.load(name + ".weight", norm.weight)
                if o["bias"]:
                    w.load(name + ".bias", norm.bias)
                else:
                    norm.bias = None
            return norm, width
        if kind == "batch_norm":
            norm = torch.nn.BatchNorm1d(width, eps=o["eps"], momentum=o["momentum"],
                                        affine=o["affine"],
                                        track_running_stats=o["track_running_stats"])
            if o["affine"]:
                w.load(name + ".weight", norm.weight)
                w.load(name + ".bias", norm.bias)
            if o["track_running_stats"]:
                with torch.no_grad():
                    norm.running_mean.copy_(matrix(self.buffers[name + ".running_mean"])[0])
                    norm.running_var.copy_(matrix(self.buffers[name + ".running_var"])[0])
                self.batch_norms[name] = norm
            norm.train(self.training)
            return norm, width
        if kind == "dropout":
            if self.training and o["p"] > 0:
                raise ValueError(f"{name}: dropout in training is not deterministic")
            return torch.nn.Dropout(o["p"]).train(self.training), width
        if kind == "residual":
            body, body_width = self.build(module["modules"], width)
            if body_width == width:
                return (lambda x: body(x) + x), width
            skip = w[name + ".skip.weight"]
            return (lambda x: body(x) + x @ skip), body_width
        activations = {
            "identity": lambda: torch.nn.Identity(),
            "relu": lambda: torch.nn.ReLU(),
            "gelu": lambda: torch.nn.GELU(),
            "leaky_relu": lambda: torch.nn.LeakyReLU(o["negative_slope"]),
            "elu": lambda: torch.nn.ELU(o["alpha"]),
        }
        return activations[kind](), width


def error(maskgat, reference):
    difference = (maskgat - reference).norm().item()
    norm = reference.norm().item()
    if norm < STRUCTURAL_ZERO:
        return difference, "absolute"
    return difference / norm, "relative"


def graph_of(case):
    """The edges (source -> destination), the node count and the edges' features (or None)."""
    src = torch.tensor(case["src"], dtype=torch.long)
    dst = torch.tensor(case["dst"], dtype=torch.long)
    edge_attr = matrix(case["edge_attr"]) if "edge_attr" in case else None
    return src, dst, case["num_nodes"], edge_attr


def check_layer(case):
    """One attention layer: its output, and the gradients of its parameters and input."""
    x = features(case).requires_grad_(True)
    p = {name: matrix(t["value"]).requires_grad_(True) for name, t in case["parameters"].items()}
    out = LAYERS[case["layer"]](x, p, "conv", graph_of(case), case["options"])
    (out * matrix(case["grad_out"])).sum().backward()
    results = [("out", error(matrix(case["out"]), out.detach()))]
    for name, t in case["parameters"].items():
        results.append((name + ".grad", error(matrix(t["grad"]), p[name].grad)))
    if "grad_x" in case:
        results.append(("x.grad", error(matrix(case["grad_x"]), x.grad)))
    return results


def check_model(case):
    """A model built from a spec: its logits, the gradient of every parameter, and the running
    statistics of its batch normalisations after the forward. Every exported parameter must be one
    the PyTorch model uses."""
    weights = Weights(case["parameters"])
    builder = ModelBuilder(weights, case["buffers_before"], graph_of(case), case["classes"],
                           case["mode"] == "train")
    x = features(case)
    model, width = builder.build(case["model"]["modules"], x.shape[1])
    if width != case["classes"]:
        raise ValueError(f"the model's output is {width} wide, expected {case['classes']}")
    out = model(x)
    if "grad_out" in case:
        (out * matrix(case["grad_out"])).sum().backward()
    results = [("out", error(matrix(case["out"]), out.detach()))]
    for name, t in case["parameters"].items():
        if name not in weights.bound:
            results.append((name, (math.inf, "unused by PyTorch:")))
        elif "grad" in t:
            results.append((name + ".grad", error(matrix(t["grad"]), weights.grad(name))))
    expected = {f"{name}.{stat}" for name in builder.batch_norms
                for stat in ("running_mean", "running_var")}
    if expected != set(case["buffers"]):
        results.append(("buffers " + ",".join(sorted(set(case["buffers"]) ^ expected)),
                        (math.inf, "not in both:")))
    for name, norm in builder.batch_norms.items():
        for stat in ("running_mean", "running_var"):
            buffer = f"{name}.{stat}"
            if buffer in case["buffers"]:
                results.append((buffer, error(matrix(case["buffers"][buffer])[0],
                                              getattr(norm, stat))))
    return results


def check(path):
    with open(path) as f:
        case = json.load(f)
    try:
        results = check_model(case) if "model" in case else check_layer(case)
    except (KeyError, ValueError, RuntimeError) as failure:
        print(f"{case['name']:24} FAIL: {failure}")
        return False
    ok = True
    for what, (value, kind) in results:
        passed = value <= TOLERANCE
        ok = ok and passed
        print(f"{case['name']:24} {what:26} {kind} error {value:.2e} {'ok' if passed else 'FAIL'}")
    return ok


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    cases = sorted(glob.glob(os.path.join(sys.argv[1], "*.json")))
    if not cases:
        print(f"reference.py: no cases in {sys.argv[1]}")
        return 1
    torch.set_num_threads(1)
    failed = [path for path in cases if not check(path)]
    print(f"parity: {len(cases) - len(failed)} of {len(cases)} cases match PyTorch")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
