#!/usr/bin/env python3
"""State dict parity: PyG-named state dicts saved by torch.save, imported by MaskGAT and run on
Cora, against PyTorch running the weights read back from the same files.

`write DIR`: for each cora_import_* case the exporter wrote, its weights are named and shaped as
PyG's modules hold them (GATConv: lin.weight [H*C, F], att_src, att_dst and att_edge [1, H, C],
lin_edge.weight [H*C, D], res.weight [out, F], bias; GATv2Conv: lin_l and lin_r weight [H*C, F]
and bias, att [1, H, C]; torch.nn.Linear: weight [out, in], bias; LayerNorm and BatchNorm1d:
weight, bias, running_mean, running_var [F] and num_batches_tracked) and saved in five variants:
`f32`; `views` (every matrix a transposed view of its storage, every vector a slice that starts
inside a longer one); `f64`; `f16`; `wrapped` (a checkpoint dict {"epoch", "model_state_dict",
"optimizer"}, read with --key model_state_dict). The spec goes to <case>.spec.json.

`check DIR`: after `maskgat-parity-export --import DIR DATA_DIR` wrote <case>.<variant>.logits.json,
each file is loaded with torch.load, its tensors put back into reference.py's model of the spec
(float32), and its logits on Cora must match MaskGAT's with a norm-wise relative error <= 1e-5;
the state dict MaskGAT exported from the f32 import (<case>.export.pt) must hold the saved tensors
bitwise, under the same keys and dtypes.

usage: state_dicts.py write|check DIR
"""
import collections
import glob
import json
import os
import sys

import torch

from reference import (ModelBuilder, NAME_PREFIX, TOLERANCE, Weights, error, features, graph_of,
                       matrix)

VARIANTS = ("f32", "views", "f64", "f16", "wrapped")


def module_kinds(modules, counters=None, out=None):
    """Every module's name (its own, or kind and position) -> its type."""
    counters = {} if counters is None else counters
    out = {} if out is None else out
    for module in modules:
        prefix = NAME_PREFIX.get(module["type"])
        if not prefix:
            continue
        counters[prefix] = counters.get(prefix, 0) + 1
        out[module.get("name") or f"{prefix}{counters[prefix]}"] = module["type"]
        if module["type"] == "residual":
            module_kinds(module["modules"], counters, out)
    return out


def pyg_name(kinds, name):
    """MaskGAT's parameter name -> PyG's key, and whether the tensor is a Linear weight."""
    module, suffix = name.split(".", 1)
    if kinds[module] == "gat" and suffix == "weight":
        return f"{module}.lin.weight", True
    linear = suffix.endswith(".weight") or (kinds[module] == "linear" and suffix == "weight")
    return name, linear


def to_pyg(value, linear, suffix):
    """A MaskGAT tensor (rows x cols, x W) in PyG's shape."""
    if linear:
        return value.t().contiguous()
    if suffix.startswith("att"):
        return value.reshape(1, value.shape[0], value.shape[1]).contiguous()
    return value.reshape(-1).contiguous()


def state_dict(case):
    kinds = module_kinds(case["model"]["modules"])
    sd = collections.OrderedDict()
    for name, t in case["parameters"].items():
        key, linear = pyg_name(kinds, name)
        sd[key] = to_pyg(matrix(t["value"]), linear, name.split(".", 1)[1])
    for name, m in case["buffers_before"].items():
        sd[name] = matrix(m).reshape(-1)
        sd[name.rsplit(".", 1)[0] + ".num_batches_tracked"] = torch.tensor(7)
    return sd


def as_views(tensor):
    """The same values, saved as a transposed view or as a slice of a longer storage."""
    if tensor.dim() == 2:
        return tensor.t().contiguous().t()
    if tensor.dim() == 0:
        return tensor
    longer = torch.cat([torch.full((3,), 9.0, dtype=tensor.dtype), tensor.reshape(-1)])
    return longer[3:].view(tensor.shape)


def write(directory):
    for path in sorted(glob.glob(os.path.join(directory, "cora_import_*.json"))):
        with open(path) as f:
            case = json.load(f)
        if case["name"] + ".json" != os.path.basename(path):
            continue
        with open(os.path.join(directory, case["name"] + ".spec.json"), "w") as f:
            json.dump(case["model"], f)
        sd = state_dict(case)
        floats = lambda convert: collections.OrderedDict(
            (k, convert(v) if v.is_floating_point() else v) for k, v in sd.items())
        variants = {
            "f32": sd,
            "views": collections.OrderedDict((k, as_views(v)) for k, v in sd.items()),
            "f64": floats(lambda v: v.double()),
            "f16": floats(lambda v: v.half()),
            "wrapped": {"epoch": 3, "model_state_dict": sd, "optimizer": {"lr": 0.005}},
        }
        for variant, content in variants.items():
            torch.save(content, os.path.join(directory, f"{case['name']}.{variant}.pt"))


def reference_logits(case, path):
    """PyTorch's logits with the weights read back from the file at `path`."""
    loaded = torch.load(path)
    if "model_state_dict" in loaded:
        loaded = loaded["model_state_dict"]
    kinds = module_kinds(case["model"]["modules"])
    exported = {}
    for name, t in case["parameters"].items():
        key, linear = pyg_name(kinds, name)
        value = loaded[key].float()
        value = value.t() if linear else value.reshape(t["value"]["rows"], t["value"]["cols"])
        exported[name] = {"value": {"rows": value.shape[0], "cols": value.shape[1],
                                    "values": value.reshape(-1).tolist()}}
    buffers = {name: {"rows": 1, "cols": m["cols"], "values": loaded[name].float().tolist()}
               for name, m in case["buffers_before"].items()}
    builder = ModelBuilder(Weights(exported), buffers, graph_of(case), case["classes"], False)
    x = features(case)
    model, _ = builder.build(case["model"]["modules"], x.shape[1])
    with torch.no_grad():
        return model(x)


def round_trip_problems(original, exported):
    """What differs between the tensors saved and the ones MaskGAT exported after importing them
    (a batch norm's num_batches_tracked is not kept: it comes back 0)."""
    if set(original) != set(exported):
        return f"keys {sorted(set(original) ^ set(exported))} are not in both"
    for key, value in original.items():
        expected = torch.zeros_like(value) if key.endswith(".num_batches_tracked") else value
        if exported[key].dtype != value.dtype or not torch.equal(exported[key], expected):
            return f"{key} differs"
    return ""


def check(directory):
    failed = 0
    total = 0
    for path in sorted(glob.glob(os.path.join(directory, "cora_import_*.json"))):
        if path.endswith(".spec.json") or path.endswith(".logits.json"):
            continue
        with open(path) as f:
            case = json.load(f)
        for variant in VARIANTS:
            stem = os.path.join(directory, f"{case['name']}.{variant}")
            total += 1
            try:
                with open(stem + ".logits.json") as f:
                    maskgat = matrix(json.load(f)["out"])
            except FileNotFoundError:
                print(f"{case['name']:20} {variant:8} FAIL: MaskGAT wrote no logits")
                failed += 1
                continue
            value, kind = error(maskgat, reference_logits(case, stem + ".pt"))
            passed = value <= TOLERANCE
            failed += 0 if passed else 1
            print(f"{case['name']:20} {variant:8} logits {kind} error {value:.2e} "
                  f"{'ok' if passed else 'FAIL'}")
        total += 1
        exported = torch.load(os.path.join(directory, case["name"] + ".export.pt"))
        problems = round_trip_problems(state_dict(case), exported)
        failed += 1 if problems else 0
        print(f"{case['name']:20} export   {'FAIL: ' + problems if problems else 'bitwise ok'}")
    if total == 0:
        print(f"state_dicts.py: no cora_import_* cases in {directory}")
        return 1
    print(f"state dicts: {total - failed} of {total} imports match PyTorch")
    return 1 if failed else 0


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "check"):
        print(__doc__)
        return 2
    torch.set_num_threads(1)
    if sys.argv[1] == "write":
        write(sys.argv[2])
        return 0
    return check(sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
