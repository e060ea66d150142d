#pragma once
/// @file
/// Index types shared by every MaskGAT module.

#include <cstdint>
#include <limits>

namespace maskgat {

/// A node id: a position in `[0, num_nodes)`. 32 bits, since node-id arrays dominate memory at
/// 10^8 edges; graphs of 2^31 - 1 nodes or more are rejected with a clear error.
using NodeId = std::int32_t;

/// An edge id or an offset into an edge array (CSR `indptr`): 64 bits.
using EdgeId = std::int64_t;

/// The largest node count a `Graph` can hold.
inline constexpr std::int64_t kMaxNodeCount = std::numeric_limits<NodeId>::max();

}  // namespace maskgat
