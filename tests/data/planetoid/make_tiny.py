#!/usr/bin/env python3
"""Writes tests/data/planetoid/tiny/ind.citeseer.*: an 8-node Planetoid dataset for the unit tests.

The pickles are written opcode by opcode (not with the pickle module, whose protocol-2 output under
Python 3 differs from Python 2's), mirroring the Python-2 cPickle output of the published files:
memo indices from 1, strings as SHORT_BINSTRING / BINSTRING, ints as BININT1 / BININT2 / BININT,
numpy arrays through numpy.core.multiarray._reconstruct + BUILD, a shared dtype fetched with
BINGET, CSR matrices through NEWOBJ + a state dict. With --check <planetoid dir> the script
compares the opcode structure of the written x / y / graph files with the real cora files.

Content (3 classes, 5 features, test range 4..7 with node 5 missing, as CiteSeer's gaps):
  allx rows 0..3, ally classes 0 2 1 2; x / y = their first 2 rows;
  test.index 7 4 6 (tx / ty row k is node test.index[k]), ty classes 1 0 2;
  graph {0: [1, 2, 1], 1: [0], 2: [0, 2], 3: [4], 4: [7], 5: [6], 6: [5], 7: [4]}:
  one duplicate (0->1), one self-loop (2), one edge without its reverse (3->4).
Run from anywhere: python3 make_tiny.py [--check /path/to/datasets/planetoid]
"""
import os
import pickle
import pickletools
import struct
import sys
import collections


class Writer:
    def __init__(self):
        self.out = bytearray(b"\x80\x02")
        self.next_memo = 1
        self.globals = {}
        self.dtypes = {}

    def put(self):
        index = self.next_memo
        self.next_memo += 1
        self.out += b"q" + bytes([index]) if index < 256 else b"r" + struct.pack("<I", index)
        return index

    def get(self, index):
        self.out += b"h" + bytes([index]) if index < 256 else b"j" + struct.pack("<I", index)

    def global_(self, module, name):
        key = (module, name)
        if key in self.globals:
            self.get(self.globals[key])
        else:
            self.out += b"c" + module.encode() + b"\n" + name.encode() + b"\n"
            self.globals[key] = self.put()

    def int_(self, value):
        if 0 <= value < 256:
            self.out += b"K" + bytes([value])
        elif 0 <= value < 65536:
            self.out += b"M" + struct.pack("<H", value)
        else:
            self.out += b"J" + struct.pack("<i", value)

    def string(self, text, memoize=False):
        data = text if isinstance(text, bytes) else text.encode()
        if len(data) < 256:
            self.out += b"U" + bytes([len(data)]) + data
        else:
            self.out += b"T" + struct.pack("<i", len(data)) + data
        if memoize:
            self.put()

    def dtype(self, code):
        if code in self.dtypes:
            self.get(self.dtypes[code])
            return
        self.global_("numpy", "dtype")
        self.string(code)
        self.int_(0)
        self.int_(1)
        self.out += b"\x87R"  # TUPLE3 REDUCE
        self.dtypes[code] = self.put()
        self.out += b"("  # MARK: dtype state (3, '<', None, None, None, -1, -1, 0)
        self.int_(3)
        self.string("<")
        self.out += b"NNN"
        self.int_(-1)
        self.int_(-1)
        self.int_(0)
        self.out += b"tb"  # TUPLE BUILD

    def ndarray(self, shape, code, data):
        self.global_("numpy.core.multiarray", "_reconstruct")
        self.global_("numpy", "ndarray")
        self.int_(0)
        self.out += b"\x85"  # TUPLE1
        self.string("b")
        self.out += b"\x87R"  # TUPLE3 REDUCE
        self.put()
        self.out += b"("  # MARK: array state (1, shape, dtype, fortran, data)
        self.int_(1)
        for dim in shape:
            self.int_(dim)
        self.out += {1: b"\x85", 2: b"\x86"}[len(shape)]
        self.dtype(code)
        self.out += b"\x89"  # NEWFALSE
        self.string(data)
        self.out += b"tb"  # TUPLE BUILD

    def stop(self):
        self.out += b"."
        return bytes(self.out)


def csr_pickle(rows, cols, dense_rows):
    indptr, indices, data = [0], [], []
    for row in dense_rows:
        for col, value in sorted(row.items()):
            indices.append(col)
            data.append(value)
        indptr.append(len(indices))
    w = Writer()
    w.global_("scipy.sparse.csr", "csr_matrix")
    w.out += b")\x81"  # EMPTY_TUPLE NEWOBJ
    w.put()
    w.out += b"}"  # EMPTY_DICT
    w.put()
    w.out += b"("  # MARK
    w.string("format", True)
    w.string("csr")
    w.string("_shape", True)
    w.int_(rows)
    w.int_(cols)
    w.out += b"\x86"  # TUPLE2
    w.string("indptr", True)
    w.ndarray((rows + 1,), "i4", struct.pack("<%di" % len(indptr), *indptr))
    w.string("_cs_matrix__has_sorted_indices", True)
    w.out += b"\x88"  # NEWTRUE
    w.string("indices", True)
    w.ndarray((len(indices),), "i4", struct.pack("<%di" % len(indices), *indices))
    w.string("maxprint", True)
    w.int_(50)
    w.string("data", True)
    w.ndarray((len(data),), "f4", struct.pack("<%df" % len(data), *data))
    w.out += b"ub"  # SETITEMS BUILD
    return w.stop()


def onehot_pickle(classes, num_classes):
    values = []
    for c in classes:
        values += [1 if k == c else 0 for k in range(num_classes)]
    w = Writer()
    w.ndarray((len(classes), num_classes), "i4", struct.pack("<%di" % len(values), *values))
    return w.stop()


def graph_pickle(adjacency):
    w = Writer()
    w.global_("collections", "defaultdict")
    w.global_("__builtin__", "list")
    w.out += b"\x85R"  # TUPLE1 REDUCE
    w.put()
    w.out += b"("  # MARK (one SETITEMS batch: fewer than 1000 keys)
    for key, items in adjacency.items():
        w.int_(key)
        w.out += b"]"  # EMPTY_LIST
        w.put()
        if len(items) == 1:
            w.int_(items[0])
            w.out += b"a"  # APPEND
        elif items:
            w.out += b"("
            for item in items:
                w.int_(item)
            w.out += b"e"  # APPENDS
    w.out += b"u"  # SETITEMS
    return w.stop()


ALLX = [{0: 1.0, 3: 1.0}, {1: 1.0}, {2: 0.5, 4: 0.25}, {}]
ALLY = [0, 2, 1, 2]
TEST_INDEX = [7, 4, 6]
TX = [{4: 2.0}, {0: 1.0, 1: 1.0}, {3: 1.0}]
TY = [1, 0, 2]
GRAPH = {0: [1, 2, 1], 1: [0], 2: [0, 2], 3: [4], 4: [7], 5: [6], 6: [5], 7: [4]}


def files():
    return {
        "x": csr_pickle(2, 5, ALLX[:2]),
        "tx": csr_pickle(3, 5, TX),
        "allx": csr_pickle(4, 5, ALLX),
        "y": onehot_pickle(ALLY[:2], 3),
        "ty": onehot_pickle(TY, 3),
        "ally": onehot_pickle(ALLY, 3),
        "graph": graph_pickle(GRAPH),
        "test.index": "".join("%d\n" % i for i in TEST_INDEX).encode(),
    }


def skeleton(data, limit=None):
    """Opcode names with ints and strings merged, list contents dropped: the file's structure."""
    names = []
    for op, arg, _ in pickletools.genops(data):
        name = {"BININT1": "INT", "BININT2": "INT", "BININT": "INT",
                "SHORT_BINSTRING": "STR", "BINSTRING": "STR", "LONG_BINPUT": "BINPUT"}.get(op.name, op.name)
        names.append(name)
        if limit and len(names) >= limit:
            break
    return names


class StandIn:
    """Plays numpy.ndarray / numpy.dtype / csr_matrix for pickle.Unpickler."""

    def __init__(self, *args):
        self.args = args

    def __setstate__(self, state):
        self.state = state


def load(data):
    class Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            allowed = {("numpy.core.multiarray", "_reconstruct"): lambda *a: StandIn(*a),
                       ("numpy", "ndarray"): StandIn, ("numpy", "dtype"): StandIn,
                       ("scipy.sparse.csr", "csr_matrix"): StandIn,
                       ("collections", "defaultdict"): collections.defaultdict,
                       ("__builtin__", "list"): list}
            return allowed[(module, name)]
    import io
    return Unpickler(io.BytesIO(data), encoding="latin1").load()


def main():
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny")
    os.makedirs(out_dir, exist_ok=True)
    written = files()
    for part, data in written.items():
        with open(os.path.join(out_dir, "ind.citeseer." + part), "wb") as f:
            f.write(data)
    # Sanity: the stand-in unpickler reads back what was meant.
    assert dict(load(written["graph"])) == GRAPH
    allx = load(written["allx"])
    assert allx.state["_shape"] == (4, 5)
    assert list(struct.unpack("<5i", allx.state["indptr"].state[4].encode("latin1"))) == [0, 2, 3, 5, 5]
    if "--check" in sys.argv:
        real = sys.argv[sys.argv.index("--check") + 1]
        for part in ("x", "y"):
            with open(os.path.join(real, "ind.cora." + part), "rb") as f:
                assert skeleton(f.read()) == skeleton(written[part]), part
        with open(os.path.join(real, "ind.cora.graph"), "rb") as f:
            assert skeleton(f.read(), 12) == skeleton(written["graph"], 12)
        print("structure matches the real cora x, y and graph files")
    print("wrote", out_dir)


if __name__ == "__main__":
    main()
