#!/usr/bin/env python3
"""Independent check of the checksums pinned in tests/integration/test_citation_datasets.cpp.

Loads the Planetoid pickles with Python's own unpickler (stand-in classes for the numpy / scipy
globals; no numpy or scipy needed), assembles features and labels as PyG's read_planetoid_data
does (node test_index[k] gets tx / ty row k; test-range ids without a row get no features and
label -1), and prints FNV-1a 64-bit hashes of
  features: the CSR outer index (N + 1 int32), inner index (nnz int32) and value bit patterns
            (nnz float32), each little-endian, in that order, rows sorted by column;
  labels:   N int32 little-endian (-1 for unlabelled).
Usage: python3 planetoid_checksums.py <data dir>   (the directory holding planetoid/)
"""
import collections
import io
import os
import pickle
import struct
import sys

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3


def fnv1a(data, h=FNV_OFFSET):
    for byte in data:
        h = ((h ^ byte) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


class Array:
    def __setstate__(self, state):
        _, self.shape, dtype, _, raw = state
        self.raw = raw.encode("latin1") if isinstance(raw, str) else raw
        self.code = {"i4": "i", "f4": "f"}[dtype.args[0]]

    def values(self):
        return list(struct.unpack("<%d%s" % (len(self.raw) // 4, self.code), self.raw))


class Dtype:
    def __init__(self, *args):
        self.args = args

    def __setstate__(self, state):
        pass


class Csr:
    def __setstate__(self, state):
        self.shape = state["_shape"]
        self.indptr = state["indptr"].values()
        self.indices = state["indices"].values()
        self.data = state["data"].values()

    def row(self, r):
        return sorted(zip(self.indices[self.indptr[r]:self.indptr[r + 1]],
                          self.data[self.indptr[r]:self.indptr[r + 1]]))


def load(path):
    class Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            return {("numpy.core.multiarray", "_reconstruct"): lambda *a: Array(),
                    ("numpy", "ndarray"): None, ("numpy", "dtype"): Dtype,
                    ("scipy.sparse.csr", "csr_matrix"): Csr,
                    ("collections", "defaultdict"): collections.defaultdict,
                    ("__builtin__", "list"): list}[(module, name)]
    with open(path, "rb") as f:
        return Unpickler(io.BytesIO(f.read()), encoding="latin1").load()


def argmax_rows(array):
    rows, cols = array.shape
    v = array.values()
    out = []
    for r in range(rows):
        row = v[r * cols:(r + 1) * cols]
        best = max(row)
        out.append(row.index(best) if best > 0 else -1)
    return out


def main():
    root = os.path.join(sys.argv[1], "planetoid")
    for name in ("cora", "citeseer", "pubmed"):
        p = lambda part: os.path.join(root, "ind.%s.%s" % (name, part))
        with open(p("test.index")) as f:
            test = [int(line) for line in f if line.strip()]
        ally, ty = load(p("ally")), load(p("ty"))
        a = ally.shape[0]
        n = a + max(test) - min(test) + 1
        labels = [-1] * n
        labels[:a] = argmax_rows(ally)
        for k, label in enumerate(argmax_rows(ty)):
            labels[test[k]] = label
        label_hash = fnv1a(struct.pack("<%di" % n, *labels))
        line = "%s nodes=%d labels=0x%016x" % (name, n, label_hash)
        if os.path.exists(p("allx")):
            allx, tx = load(p("allx")), load(p("tx"))
            rows = [allx.row(i) for i in range(a)] + [[] for _ in range(n - a)]
            for k, node in enumerate(test):
                rows[node] = tx.row(k)
            outer, inner, bits = [0], [], []
            for row in rows:
                inner += [c for c, _ in row]
                bits += [struct.unpack("<I", struct.pack("<f", v))[0] for _, v in row]
                outer.append(len(inner))
            h = fnv1a(struct.pack("<%di" % len(outer), *outer))
            h = fnv1a(struct.pack("<%di" % len(inner), *inner), h)
            h = fnv1a(struct.pack("<%dI" % len(bits), *bits), h)
            line += " nnz=%d features=0x%016x" % (len(inner), h)
        print(line)


if __name__ == "__main__":
    main()
