#include "maskgat/train/halo_exchange.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>

#include "maskgat/core/error.hpp"

namespace maskgat::train {

HaloExchange::HaloExchange(const GraphPart& part, Communicator& comm, std::size_t chunk_bytes)
    : part_(&part), comm_(&comm), chunk_bytes_(chunk_bytes) {
  if (comm.size() != part.parts || comm.rank() != part.part) {
    throw InvalidArgument("halo exchange: rank " + std::to_string(comm.rank()) + " of " +
                          std::to_string(comm.size()) + " holds part " + std::to_string(part.part) +
                          " of " + std::to_string(part.parts) +
                          ", expected part r of P on rank r of P");
  }
  const Graph& graph = part.data.graph;
  const auto count = static_cast<std::size_t>(graph.num_nodes());
  const auto parts = static_cast<std::size_t>(part.parts);
  const NodeId first = part.offsets[static_cast<std::size_t>(part.part)];
  const NodeId own = part.own_nodes();
  // Which of each owner's nodes this part reads, as global ids, and where their rows are here;
  // and the row of each own node.
  std::vector<std::vector<NodeId>> wanted(parts);
  halo_rows_.resize(parts);
  std::vector<NodeId> own_row(static_cast<std::size_t>(own));
  own_.assign(count, 0);
  for (std::size_t r = 0; r < count; ++r) {
    const auto row = static_cast<NodeId>(r);
    const NodeId global = part.globals[r];
    if (part.is_own(row)) {
      own_[r] = 1;
      own_row[static_cast<std::size_t>(global - first)] = row;
      continue;
    }
    const auto owner = static_cast<std::size_t>(part.owner_of(global));
    wanted[owner].push_back(global);
    halo_rows_[owner].push_back(row);
  }
  std::vector<std::vector<NodeId>> asked;
  exchange(comm, wanted, asked);
  own_rows_.resize(parts);
  for (std::size_t q = 0; q < parts; ++q) {
    for (const NodeId node : asked[q]) {
      if (node < first || node >= first + own || q == static_cast<std::size_t>(part.part)) {
        throw Error("halo exchange: part " + std::to_string(q) + " asks part " +
                    std::to_string(part.part) + " for node " + std::to_string(node) +
                    ", which it does not own (its nodes are [" + std::to_string(first) + ", " +
                    std::to_string(first + own) + ")); the part files are not of one partition");
      }
      own_rows_[q].push_back(own_row[static_cast<std::size_t>(node - first)]);
    }
  }
  // Each own row's first attention entry (in the mask models run on, `masks::from_graph`) as the
  // whole graph numbers it; its other entries follow in order, as the sources here are in the
  // whole graph's order.
  first_edges_.assign(count, 0);
  for (std::size_t r = 0; r < count; ++r) {
    if (own_[r] != 0) {
      first_edges_[r] = part.first_edges[static_cast<std::size_t>(part.globals[r] - first)];
    }
  }
  origins_ = part.origins;
  first_entries_ = part.first_entries;
  plan_rounds();
}

HaloExchange::HaloExchange(const HaloExchange& part, std::vector<std::uint8_t> own)
    : part_(part.part_), comm_(part.comm_), own_(std::move(own)), chunk_bytes_(part.chunk_bytes_) {}

void HaloExchange::plan_rounds() {
  std::int64_t most = 0;
  for (std::size_t q = 0; q < own_rows_.size(); ++q) {
    most = std::max({most, static_cast<std::int64_t>(own_rows_[q].size()),
                     static_cast<std::int64_t>(halo_rows_[q].size())});
  }
  const std::vector<std::int64_t> every = all_gather<std::int64_t>(*comm_, std::span(&most, 1));
  most_rows_ = *std::max_element(every.begin(), every.end());
  outgoing_.resize(own_rows_.size());
  received_.resize(own_rows_.size());
}

void HaloExchange::check_mask(const Graph& mask) const {
  if (mask.num_nodes() != static_cast<std::int64_t>(own_.size())) {
    throw InvalidArgument("halo exchange: a mask of " + std::to_string(mask.num_nodes()) +
                          " nodes for a part of " + std::to_string(own_.size()));
  }
}

std::vector<std::vector<std::uint8_t>> HaloExchange::ask_owners(
    std::span<const std::uint8_t> marked) {
  const auto parts = halo_rows_.size();
  std::vector<std::vector<std::uint8_t>> asks(parts);
  for (std::size_t q = 0; q < parts; ++q) {
    for (const NodeId r : halo_rows_[q]) asks[q].push_back(marked[static_cast<std::size_t>(r)]);
  }
  std::vector<std::vector<std::uint8_t>> asked;
  exchange(*comm_, asks, asked);
  for (std::size_t q = 0; q < parts; ++q) {
    if (asked[q].size() != own_rows_[q].size()) {
      throw Error("halo exchange: part " + std::to_string(q) + " asks about " +
                  std::to_string(asked[q].size()) + " rows, expected " +
                  std::to_string(own_rows_[q].size()));
    }
  }
  return asked;
}

std::unique_ptr<HaloExchange> HaloExchange::field(const Graph& mask,
                                                  std::span<const std::vector<std::uint8_t>> rows,
                                                  std::span<const NodeId> field_rows) {
  check_mask(mask);
  const auto count = own_.size();
  for (const auto& layer : rows) {
    if (layer.size() != count) {
      throw InvalidArgument("halo exchange: a field's rows give " + std::to_string(layer.size()) +
                            " bytes per layer for a part of " + std::to_string(count) + " rows");
    }
  }
  // The field's row of each row of the part (-1: not in the field).
  std::vector<NodeId> at(count, -1);
  for (std::size_t k = 0; k < field_rows.size(); ++k) {
    const NodeId row = field_rows[k];
    if (row < 0 || static_cast<std::size_t>(row) >= count || (k > 0 && row <= field_rows[k - 1])) {
      throw InvalidArgument("halo exchange: the field's row " + std::to_string(k) + " is " +
                            std::to_string(row) + ", expected ascending rows in [0, " +
                            std::to_string(count) + ")");
    }
    at[static_cast<std::size_t>(row)] = static_cast<NodeId>(k);
  }
  // The halo rows a row formed in a layer after the first reads: the field exchanges those, and
  // tells their owners which of their rows it reads.
  const auto offsets = mask.in_offsets();
  const auto sources = mask.in_sources();
  std::vector<std::uint8_t> read(count, 0);
  for (std::size_t layer = 1; layer < rows.size(); ++layer) {
    for (std::size_t r = 0; r < count; ++r) {
      if (rows[layer][r] == 0) continue;
      for (EdgeId e = offsets[r]; e < offsets[r + 1]; ++e) {
        const auto source = static_cast<std::size_t>(sources[static_cast<std::size_t>(e)]);
        if (own_[source] == 0) read[source] = 1;
      }
    }
  }
  const auto parts = halo_rows_.size();
  const std::vector<std::vector<std::uint8_t>> asked = ask_owners(read);
  std::vector<std::uint8_t> own(field_rows.size());
  for (std::size_t k = 0; k < own.size(); ++k)
    own[k] = own_[static_cast<std::size_t>(field_rows[k])];
  std::unique_ptr<HaloExchange> result(new HaloExchange(*this, std::move(own)));
  const auto field_row = [&](NodeId row, const char* kind) {
    const NodeId k = at[static_cast<std::size_t>(row)];
    if (k < 0) {
      throw Error("halo exchange: " + std::string(kind) + " row " + std::to_string(row) +
                  " of part " + std::to_string(part_->part) + " is exchanged but not in its field");
    }
    return k;
  };
  result->own_rows_.resize(parts);
  result->halo_rows_.resize(parts);
  for (std::size_t q = 0; q < parts; ++q) {
    for (std::size_t k = 0; k < asked[q].size(); ++k) {
      if (asked[q][k] != 0) result->own_rows_[q].push_back(field_row(own_rows_[q][k], "own"));
    }
    for (const NodeId r : halo_rows_[q]) {
      if (read[static_cast<std::size_t>(r)] != 0) {
        result->halo_rows_[q].push_back(field_row(r, "halo"));
      }
    }
  }
  for (const NodeId row : field_rows) {
    const auto r = static_cast<std::size_t>(row);
    result->origins_.push_back(origins_[r]);
    result->first_edges_.push_back(first_edges_[r]);
    if (!first_entries_.empty()) result->first_entries_.push_back(first_entries_[r]);
  }
  result->plan_rounds();
  return result;
}

std::vector<std::vector<std::uint8_t>> HaloExchange::receptive_rows(const Graph& mask,
                                                                    std::span<const NodeId> nodes,
                                                                    std::int64_t layers) {
  check_mask(mask);
  const auto count = own_.size();
  std::vector<std::vector<std::uint8_t>> rows(
      static_cast<std::size_t>(std::max<std::int64_t>(layers, 0)));
  if (rows.empty()) return rows;
  std::vector<std::uint8_t> needed(count, 0);
  for (const NodeId node : nodes) {
    if (node < 0 || static_cast<std::size_t>(node) >= count ||
        own_[static_cast<std::size_t>(node)] == 0) {
      throw InvalidArgument("halo exchange: node " + std::to_string(node) +
                            " is not one of the part's own rows");
    }
    needed[static_cast<std::size_t>(node)] = 1;
  }
  const auto offsets = mask.in_offsets();
  const auto sources = mask.in_sources();
  const auto parts = halo_rows_.size();
  for (std::size_t layer = rows.size(); layer-- > 0;) {
    rows[layer] = needed;
    if (layer == 0) break;
    // The layer below at the sources of the rows this one forms: own ones here, halo ones asked
    // of their owners, which tell in turn which of their rows this part asks for.
    std::vector<std::uint8_t> below(count, 0);
    for (std::size_t r = 0; r < count; ++r) {
      if (needed[r] == 0) continue;
      for (EdgeId e = offsets[r]; e < offsets[r + 1]; ++e)
        below[static_cast<std::size_t>(sources[static_cast<std::size_t>(e)])] = 1;
    }
    const std::vector<std::vector<std::uint8_t>> asked = ask_owners(below);
    for (std::size_t q = 0; q < parts; ++q) {
      for (std::size_t k = 0; k < asked[q].size(); ++k) {
        if (asked[q][k] != 0) below[static_cast<std::size_t>(own_rows_[q][k])] = 1;
      }
    }
    for (std::size_t r = 0; r < count; ++r) below[r] = own_[r] != 0 ? below[r] : 0;
    needed = std::move(below);
  }
  return rows;
}

void HaloExchange::swap_rows(
    const RowMatrix<float>& from, const std::vector<std::vector<NodeId>>& sends,
    const std::vector<std::vector<NodeId>>& receives,
    const std::function<void(std::size_t, std::size_t, const float*)>& take) {
  const auto parts = sends.size();
  const auto width = static_cast<std::size_t>(from.cols());
  const std::size_t chunk =
      std::max<std::size_t>(1, chunk_bytes_ / (std::max<std::size_t>(width, 1) * sizeof(float)));
  // Every part runs as many rounds, the most any pair needs, so the exchanges stay collective.
  const std::size_t rounds = (static_cast<std::size_t>(most_rows_) + chunk - 1) / chunk;
  std::vector<std::span<const std::byte>> out(parts);
  std::vector<std::span<std::byte>> in(parts);
  std::vector<std::size_t> receiving(parts);  // rows from each part in this round
  for (std::size_t round = 0; round < rounds; ++round) {
    const std::size_t first = round * chunk;
    for (std::size_t q = 0; q < parts; ++q) {
      const std::size_t sending =
          std::min(chunk, sends[q].size() - std::min(first, sends[q].size()));
      receiving[q] = std::min(chunk, receives[q].size() - std::min(first, receives[q].size()));
      outgoing_[q].resize(sending * width);
      for (std::size_t k = 0; k < sending; ++k) {
        const float* row = from.data() + static_cast<std::size_t>(sends[q][first + k]) * width;
        std::copy(row, row + width, outgoing_[q].begin() + static_cast<std::ptrdiff_t>(k * width));
      }
      received_[q].resize(receiving[q] * width);
      out[q] = std::as_bytes(std::span(outgoing_[q]));
      in[q] = std::as_writable_bytes(std::span(received_[q]));
    }
    comm_->exchange(out, in);
    for (std::size_t q = 0; q < parts; ++q) {
      for (std::size_t k = 0; k < receiving[q]; ++k) {
        take(q, first + k, received_[q].data() + k * width);
      }
    }
  }
}

void HaloExchange::fill(RowMatrix<float>& rows) {
  const auto width = static_cast<std::size_t>(rows.cols());
  swap_rows(rows, own_rows_, halo_rows_, [&](std::size_t q, std::size_t k, const float* row) {
    std::copy(row, row + width, rows.data() + static_cast<std::size_t>(halo_rows_[q][k]) * width);
  });
}

void HaloExchange::reduce(RowMatrix<float>& grad) {
  const auto width = static_cast<std::size_t>(grad.cols());
  swap_rows(grad, halo_rows_, own_rows_, [&](std::size_t q, std::size_t k, const float* row) {
    float* target = grad.data() + static_cast<std::size_t>(own_rows_[q][k]) * width;
    for (std::size_t c = 0; c < width; ++c) target[c] += row[c];
  });
  for (const auto& rows : halo_rows_) {
    for (const NodeId r : rows) grad.row(r).setZero();
  }
}

std::span<const NodeId> HaloExchange::origins() const { return origins_; }
std::span<const std::int64_t> HaloExchange::first_entries() const { return first_entries_; }
std::span<const std::int64_t> HaloExchange::first_edges() const { return first_edges_; }

}  // namespace maskgat::train
