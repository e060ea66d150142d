#pragma once
/// @file
/// What a model is made of: its modules in order, with residual blocks, as a C++ struct or a JSON
/// file (docs/model-specs.md).

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "maskgat/core/schedule.hpp"
#include "maskgat/export.hpp"
#include "maskgat/nn/activation.hpp"
#include "maskgat/nn/dot_attention_conv.hpp"
#include "maskgat/nn/gat_conv.hpp"
#include "maskgat/nn/gatv2_conv.hpp"
#include "maskgat/nn/linear.hpp"
#include "maskgat/nn/normalization.hpp"
#include "maskgat/nn/readout.hpp"

namespace maskgat::nn {

/// An output width that a spec leaves to the data: the number of classes.
inline constexpr std::int64_t kClassesWidth = -1;

/// Dropout on a module's input, as `torch.nn.Dropout` (training only; sparse features drop
/// stored entries only).
struct DropoutOptions {
  double p = 0.5;  ///< the probability of zeroing an element, in [0, 1)
};

struct ModuleSpec;

/// A residual block: `out = body(x) + x` when the body keeps the width, else
/// `body(x) + x W_skip` with a learned projection (`name.skip.weight`, no bias), as PyG's
/// `residual=True`.
struct ResidualOptions {
  std::vector<ModuleSpec> modules;  ///< the body, in order (not empty)
};

/// One module of a model. Input widths (`in_features`, `features`) are inferred from the module
/// before; a nonzero value is a declaration the model checks. Output widths may be
/// `kClassesWidth`. The attention layers' `schedule` is the model's.
struct ModuleSpec {
  /// The module's name, the prefix of its parameters' names (`conv1` gives `conv1.weight`);
  /// empty: named by kind and position (`conv1`, `lin1`, `norm1`, `block1`).
  std::string name;
  /// Every kind of module, by its options.
  using Module = std::variant<GatConvOptions, GatV2ConvOptions, DotAttentionConvOptions,
                              LinearOptions, LayerNormOptions, BatchNormOptions, ActivationOptions,
                              DropoutOptions, ResidualOptions, ReadoutOptions>;
  /// The module and its options.
  Module module;
};

/// A model: its modules in order. The attention layers split it into levels (each attention
/// layer with the modules up to the next one; those before the first belong to the first), which
/// is how sampled and layer-wise steps run it.
struct ModelSpec {
  std::vector<ModuleSpec> modules;  ///< in order
  std::int64_t in_features = 0;     ///< F, the width of the features (set from the data)
  std::int64_t classes = 0;         ///< K, the width of the output (set from the data)
  Schedule schedule{};              ///< task sizes of the attention layers' kernels (speed only)
};

/// Reads a spec from JSON text: `{"modules": [{"type": "gat", "heads": 8, "channels": 8}, ...]}`
/// (every type and field in docs/model-specs.md). Unknown fields, types of the wrong kind and
/// values out of range are refused.
/// @param text   the JSON text
/// @param source where it came from (a file name), for messages
/// @return the spec, with `in_features` and `classes` unset
/// @throws ParseError naming the source, the module (by position and name) and the field.
[[nodiscard]] MASKGAT_EXPORT ModelSpec parse_model_spec(std::string_view text,
                                                        const std::string& source);

/// Writes a spec as JSON text that `parse_model_spec` reads back to the same spec (checkpoints
/// store it so).
/// @param spec any spec
/// @return one line of JSON, fields in a fixed order
[[nodiscard]] MASKGAT_EXPORT std::string model_spec_json(const ModelSpec& spec);

/// The size of a spec's model, from its widths alone (in double: hostile widths overflow
/// integers), to check before anything is built.
struct SpecSize {
  double weights = 0.0;  ///< an upper bound of its projections' weights
  double widest = 0.0;   ///< the widest module output (values per node)
};

/// The size of the model `spec` describes, with its `in_features` and `classes`.
/// @param spec any spec
/// @return its weights (each attention layer counted with a second projection, as GATv2 and
///         residual layers have one) and its widest output
[[nodiscard]] MASKGAT_EXPORT SpecSize spec_size(const ModelSpec& spec);

/// The kind of a module as specs spell it: `gat`, `gatv2`, `dot`, `linear`, `layer_norm`,
/// `batch_norm`, an activation's name, `dropout`, `residual`, or a readout's (`sum_pool`,
/// `mean_pool`, `max_pool`, `attention_pool`).
/// @param module any module
/// @return a static string
[[nodiscard]] MASKGAT_EXPORT const char* module_type(const ModuleSpec& module) noexcept;

}  // namespace maskgat::nn
