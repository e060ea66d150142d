#!/usr/bin/env python3
"""Recomputes the cases maskgat-parity-export wrote with PyTorch and compares.

Written from PyG's documented semantics of GATConv, GATv2Conv and TransformerConv (edge_index
messages flow source -> destination, softmax over each destination's in-edges after PyG's
remove-then-add self-loops, heads concatenated or averaged), in plain tensor code. Gradients come
from autograd on L = sum(out * grad_out). Every output, parameter gradient and input gradient must
match MaskGAT with a norm-wise relative error <= 1e-5 (float32); a gradient that is zero by
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


def with_self_loops(src, dst, n):
    keep = src != dst
    loops = torch.arange(n)
    return torch.cat([src[keep], loops]), torch.cat([dst[keep], loops])


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


def linear(x, p, name):
    out = x @ p[name + ".weight"]
    if name + ".bias" in p:
        out = out + p[name + ".bias"]
    return out


def residual_and_bias(out, x, p, o):
    if o["residual"]:
        out = out + x @ p["conv.res.weight"]
    if o["bias"]:
        out = out + p["conv.bias"]
    return out


def gat(x, p, src, dst, n, o):
    heads, channels = o["heads"], o["out"]
    h = (x @ p["conv.weight"]).view(n, heads, channels)
    a_src = (h * p["conv.att_src"].view(1, heads, channels)).sum(-1)
    a_dst = (h * p["conv.att_dst"].view(1, heads, channels)).sum(-1)
    if o["add_self_loops"]:
        src, dst = with_self_loops(src, dst, n)
    scores = F.leaky_relu(a_src[src] + a_dst[dst], o["negative_slope"])
    out = finish(aggregate(edge_softmax(scores, dst, n), h[src], dst, n), o)
    return residual_and_bias(out, x, p, o)


def gatv2(x, p, src, dst, n, o):
    heads, channels = o["heads"], o["out"]
    x_l = linear(x, p, "conv.lin_l").view(n, heads, channels)
    x_r = x_l if o["share_weights"] else linear(x, p, "conv.lin_r").view(n, heads, channels)
    if o["add_self_loops"]:
        src, dst = with_self_loops(src, dst, n)
    z = F.leaky_relu(x_l[src] + x_r[dst], o["negative_slope"])
    scores = (z * p["conv.att"].view(1, heads, channels)).sum(-1)
    out = finish(aggregate(edge_softmax(scores, dst, n), x_l[src], dst, n), o)
    return residual_and_bias(out, x, p, o)


def dot(x, p, src, dst, n, o):
    heads, channels = o["heads"], o["out"]
    q = linear(x, p, "conv.query").view(n, heads, channels)
    k = linear(x, p, "conv.key").view(n, heads, channels)
    v = linear(x, p, "conv.value").view(n, heads, channels)
    scores = (q[dst] * k[src]).sum(-1) / math.sqrt(channels)
    out = finish(aggregate(edge_softmax(scores, dst, n), v[src], dst, n), o)
    if o["root_weight"]:
        out = out + linear(x, p, "conv.skip")
    return out


LAYERS = {"gat": gat, "gatv2": gatv2, "dot": dot}


def error(maskgat, reference):
    difference = (maskgat - reference).norm().item()
    norm = reference.norm().item()
    if norm < STRUCTURAL_ZERO:
        return difference, "absolute"
    return difference / norm, "relative"


def check(path):
    with open(path) as f:
        case = json.load(f)
    n = case["num_nodes"]
    src = torch.tensor(case["src"], dtype=torch.long)
    dst = torch.tensor(case["dst"], dtype=torch.long)
    x = features(case).requires_grad_(True)
    p = {name: matrix(t["value"]).requires_grad_(True) for name, t in case["parameters"].items()}
    out = LAYERS[case["layer"]](x, p, src, dst, n, case["options"])
    (out * matrix(case["grad_out"])).sum().backward()
    results = [("out", error(matrix(case["out"]), out.detach()))]
    for name, t in case["parameters"].items():
        results.append((name + ".grad", error(matrix(t["grad"]), p[name].grad)))
    if "grad_x" in case:
        results.append(("x.grad", error(matrix(case["grad_x"]), x.grad)))
    ok = True
    for what, (value, kind) in results:
        passed = value <= TOLERANCE
        ok = ok and passed
        print(f"{case['name']:24} {what:22} {kind} error {value:.2e} {'ok' if passed else 'FAIL'}")
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
