#pragma once
/// @file
/// The halo exchange of one part of a partitioned graph, over a `Communicator`.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "maskgat/core/communicator.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"
#include "maskgat/io/dataset.hpp"
#include "maskgat/io/partition.hpp"
#include "maskgat/nn/model.hpp"

namespace maskgat::train {

/// Runs a model on one part of a partition (`open_part`), rank r of the communicator holding part
/// r: fills the halo rows of the source-side projections of each layer after the first with the
/// rows their owners computed, sends the gradients of those rows back to the owners, and numbers
/// the part's rows and attention entries as the whole graph does (`nn::BasicHalo`).
///
/// The model runs on the part's store as it is (`data()`): the part's nodes, own and halo, in the
/// order of their ids in the whole graph, so each row reads its sources in the whole graph's order
/// and forms bitwise the row the whole graph forms from the same inputs. At construction every part
/// tells each owner which of its nodes it reads (global ids), so each owner learns what to send; an
/// id that is not the owner's own ends the construction with an error. Each exchange then sends a
/// row per halo node between the pairs of parts that share nodes, in rounds of a few MiB per pair,
/// so that its buffers stay small beside the rows they carry.
class MASKGAT_EXPORT HaloExchange final : public nn::BasicHalo<float> {
 public:
  /// Plans the part's exchanges. Collective.
  /// @param part the part this rank holds; must outlive the exchange
  /// @param comm the group, of `part.parts` ranks, this rank holding `part.part`; must outlive
  ///             the exchange
  /// @param chunk_bytes the most bytes of rows sent to one part per round (at least a row)
  /// @throws InvalidArgument when the communicator's size or rank does not match the part; Error
  ///         when a part asks for a node its owner does not own (part files that do not belong
  ///         together).
  HaloExchange(const GraphPart& part, Communicator& comm, std::size_t chunk_bytes = kChunkBytes);

  /// The default bytes of rows sent to one part per round.
  static constexpr std::size_t kChunkBytes = std::size_t{4} << 20;

  /// The part's store (`GraphPart::data`): its nodes in the whole graph's order, halo rows
  /// without in-edges, label or split part.
  /// @return the dataset the model trains and evaluates on
  [[nodiscard]] const Dataset& data() const noexcept { return part_->data; }
  /// The part as `open_part` gave it.
  /// @return the part given to the constructor
  [[nodiscard]] const GraphPart& part() const noexcept { return *part_; }
  /// Which rows of `data()` the part owns.
  /// @return one byte per row, 1 for an own node
  [[nodiscard]] std::span<const std::uint8_t> own_rows() const noexcept { return own_; }

  /// Where each layer must be formed on this part for the logits of `nodes` and of the nodes
  /// the other parts pass: as `masks::receptive_rows` on the whole graph, at this part's own
  /// rows (a halo row needed by a layer is asked of its owner, which forms it). Collective: every
  /// part calls it, with its own nodes (none is allowed).
  /// @param mask   the part's mask (`masks::from_graph(data().graph)`)
  /// @param nodes  own rows of `data()` whose logits are wanted
  /// @param layers the model's layers L
  /// @return L vectors of a byte per row of `data()`, the input layer's first
  /// @throws InvalidArgument when a node is not an own row or `mask` is not the part's.
  [[nodiscard]] std::vector<std::vector<std::uint8_t>> receptive_rows(const Graph& mask,
                                                                      std::span<const NodeId> nodes,
                                                                      std::int64_t layers);

  /// The exchange of a field of the part: the subgraph on rows `field_rows` of `data()`
  /// (`masks::rows_subgraph` of `rows`, its row k standing for row `field_rows[k]`), on which a
  /// model forms each layer at the rows `rows` asks for. It fills and reduces only the halo rows
  /// that a row formed in a layer after the first reads (their owners form them: `rows` is
  /// `receptive_rows`'), and numbers the field's rows as the part does, so that the model forms
  /// the asked rows as on the whole part, with the same dropout draws. Its rows (`own_rows()`,
  /// `origins()`, ...) are the field's, while `data()` and `part()` stay the part's: it is for a
  /// model's `set_halo`, not for `receptive_rows` or `field`. Collective; an Error found after its
  /// exchange (part files that do not belong together) leaves the other parts waiting, as any
  /// rank's failure does until the MPI job ends.
  /// @param mask       the part's mask (`masks::from_graph(data().graph)`)
  /// @param rows       per layer, a byte per row of `data()` (`receptive_rows`)
  /// @param field_rows the field's rows of `data()`, ascending (`masks::rows_subgraph(mask,
  ///                   rows).nodes`)
  /// @return the field's exchange; it uses this one's communicator and part
  /// @throws InvalidArgument when `mask` is not the part's or the rows are not of `data()`;
  ///         Error when a row the exchange sends or fills is not in the field.
  [[nodiscard]] std::unique_ptr<HaloExchange> field(const Graph& mask,
                                                    std::span<const std::vector<std::uint8_t>> rows,
                                                    std::span<const NodeId> field_rows);

  void fill(RowMatrix<float>& rows) override;
  void reduce(RowMatrix<float>& grad) override;
  [[nodiscard]] std::span<const NodeId> origins() const override;
  [[nodiscard]] std::span<const std::int64_t> first_entries() const override;
  [[nodiscard]] std::span<const std::int64_t> first_edges() const override;

 private:
  // Sends rows `sends[q]` of `from` to every part q and receives the rows `receives[q]` from it,
  // in rounds of at most `chunk_bytes_` of rows per pair (at least a row; the buffers stay that
  // small), passing each received row to `take(q, k, row)`: row k of receives[q], `from.cols()`
  // values.
  void swap_rows(const RowMatrix<float>& from, const std::vector<std::vector<NodeId>>& sends,
                 const std::vector<std::vector<NodeId>>& receives,
                 const std::function<void(std::size_t, std::size_t, const float*)>& take);

  // A field's exchange (`field`): this one's part and communicator, its own rows `own`; the rest
  // is the caller's to set.
  HaloExchange(const HaloExchange& part, std::vector<std::uint8_t> own);
  // Sizes the rounds of `swap_rows` (collective) and its buffers.
  void plan_rounds();
  // @throws InvalidArgument when `mask` has not a node per row.
  void check_mask(const Graph& mask) const;
  // Tells each owner, a byte per halo row it owns (`marked`, a byte per row), which of its rows
  // this part marks, and returns what every part tells this one: per part, a byte per row of
  // `own_rows_[q]`. Collective.
  // @throws Error when a part tells about another number of rows (parts not of one partition).
  std::vector<std::vector<std::uint8_t>> ask_owners(std::span<const std::uint8_t> marked);

  const GraphPart* part_;
  Communicator* comm_;
  std::vector<std::uint8_t> own_;
  std::vector<NodeId> origins_;
  std::vector<std::int64_t> first_entries_;
  std::vector<std::int64_t> first_edges_;
  std::vector<std::vector<NodeId>> own_rows_;   // per part: the own rows it reads, in its order
  std::vector<std::vector<NodeId>> halo_rows_;  // per part: this part's halo rows it owns
  std::size_t chunk_bytes_;
  std::int64_t most_rows_ = 0;  // the most rows any pair of parts exchanges, over all parts
  std::vector<std::vector<float>> outgoing_;
  std::vector<std::vector<float>> received_;
};

}  // namespace maskgat::train
