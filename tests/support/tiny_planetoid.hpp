#pragma once
// An 8-node dataset in the Planetoid file format for the pickle and Planetoid tests, written byte
// by byte in the structure of the published files (Python-2 cPickle, protocol 2): memo indices
// from 1, strings as SHORT_BINSTRING / BINSTRING, ints as BININT1 / BININT2 / BININT, numpy arrays
// through numpy.core.multiarray._reconstruct + BUILD with one shared dtype per file fetched by
// BINGET, CSR matrices through NEWOBJ + a state dict, the graph as a defaultdict(list).
//
// Content (3 classes, 5 features, test range 4..7 with node 5 missing, like CiteSeer's gaps):
//   allx rows 0..3, ally classes 0 2 1 2; x / y = their first 2 rows;
//   test.index 7 4 6 (tx / ty row k is node test.index[k]), ty classes 1 0 2;
//   graph {0: [1, 2, 1], 1: [0], 2: [0, 2], 3: [4], 4: [7], 5: [6], 6: [5], 7: [4]}:
//   one duplicate (0->1), one self-loop (2), one edge without its reverse (3->4).

#include <filesystem>
#include <string>
#include <vector>

namespace maskgat::test {

// The file parts of a Planetoid dataset: x, tx, allx, y, ty, ally, graph, test.index.
const std::vector<std::string>& planetoid_parts();

// The bytes of the fixture's `ind.citeseer.<part>`.
std::string tiny_planetoid_part(const std::string& part);

// Writes the fixture's files to `<scratch_dir(tag)>/planetoid/` and returns that directory.
std::filesystem::path write_tiny_planetoid(const std::string& tag);

}  // namespace maskgat::test
