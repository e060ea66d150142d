#!/usr/bin/env python3
"""Packs a graph store's directory (a part of a partition too) into one input of the `store`
fuzz target (fuzz_store.cpp): each file as a byte naming it, its length (32 bits,
little-endian) and its bytes, the header first, then a last byte 1 so that the target seals the
store (recomputes its checksums).

    pack_store.py STORE_DIR OUTPUT_FILE
"""

import os
import struct
import sys

FILES = ["header", "in_offsets.bin", "in_sources.bin", "weights.bin", "out_offsets.bin",
         "out_targets.bin", "out_edge_ids.bin", "labels.bin", "split.bin", "features.bin",
         "feature_offsets.bin", "feature_columns.bin", "feature_values.bin",
         "node_name_offsets.bin", "node_name_bytes.bin", "part"]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    store, output = sys.argv[1], sys.argv[2]
    packed = bytearray()
    for index, name in enumerate(FILES):
        path = os.path.join(store, name)
        if os.path.exists(path):
            with open(path, "rb") as file:
                content = file.read()
            packed += struct.pack("<BI", index, len(content)) + content
    packed.append(1)
    with open(output, "wb") as file:
        file.write(packed)


if __name__ == "__main__":
    main()
