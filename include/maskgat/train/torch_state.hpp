#pragma once
/// @file
/// Models trained in PyTorch, served here, and back: a PyTorch Geometric state dict
/// (`read_state_dict`) loaded into a model of a spec, and a model's parameters under PyG's names.
///
/// Names: a module named `conv1` in the spec is PyG's attribute `conv1`. GAT layers read
/// `conv1.lin.weight` (or equal `lin_src.weight` and `lin_dst.weight`), `att_src`, `att_dst`,
/// `lin_edge.weight`, `att_edge`, `res.weight`, `bias`; GATv2 layers `lin_l.weight`/`.bias`,
/// `lin_r.weight`/`.bias` (with `share_weights` PyG saves `lin_r` as a copy of `lin_l`), `att`,
/// `lin_edge.weight`, `res.weight`, `bias`; dot-product layers (PyG's `TransformerConv`)
/// `lin_query`, `lin_key`, `lin_value`, `lin_skip` (`.weight`, `.bias`); `torch.nn.Linear`
/// `weight` and `bias`; `torch.nn.LayerNorm` `weight`, `bias`; `torch.nn.BatchNorm1d` `weight`,
/// `bias`, `running_mean`, `running_var`, `num_batches_tracked`; a residual block's projection
/// `skip.weight`. Shapes are PyTorch's: `Linear.weight` is the transpose of MaskGAT's `x W`,
/// attention vectors are [1, H, C], biases and norms' vectors [F] (docs/pytorch.md).

#include <string>
#include <utility>
#include <vector>

#include "maskgat/export.hpp"
#include "maskgat/io/torch_file.hpp"
#include "maskgat/nn/model.hpp"
#include "maskgat/nn/spec.hpp"
#include "maskgat/train/checkpoint.hpp"

namespace maskgat::train {

/// How a state dict's keys map onto a model's parameters.
struct StateDictOptions {
  /// Key prefixes replaced before matching, the first that applies to a key: `{"module.", ""}`
  /// strips the prefix of a model saved from `torch.nn.DataParallel`, `{"gnn.conv", "conv"}`
  /// renames a wrapped model's layers.
  std::vector<std::pair<std::string, std::string>> renames{};
};

/// Copies the tensors of `state` into `model`'s parameters and running statistics, strictly as
/// PyTorch's `load_state_dict(strict=True)`: every parameter must be given, with its shape, and
/// every key must be used (`num_batches_tracked` of a batch norm with running statistics, and the
/// copies PyG saves of shared weights, are accepted; a copy must equal its original).
/// @param model   any model; its values are replaced only when every check passes
/// @param state   e.g. from `read_state_dict`
/// @param options renames
/// @throws Error listing every missing key, every unexpected key and every size mismatch, e.g.
///         `state dict: missing keys: 'conv2.att_src'; unexpected keys: 'conv2.att_source'; size
///         mismatch: 'conv1.lin.weight' is [64, 1433] in the file, [64, 500] in the model`.
MASKGAT_EXPORT void load_state_dict(nn::Model& model, const StateDict& state,
                                    const StateDictOptions& options = {});

/// The model `spec` describes with the tensors of `state` in it. The input width and the class
/// count are read from the state dict (the first module's input, the last one's output), so
/// `spec.in_features` and `spec.classes` need not be set; when set they must agree with it.
/// @param spec    the modules, named as the PyG model's attributes
/// @param state   e.g. from `read_state_dict`
/// @param options renames
/// @return the model, its values from `state`
/// @throws Error as `load_state_dict`, or when the widths cannot be read (the state dict holds
///         none of the first or last module's tensors); InvalidArgument as `nn::Model`'s
///         constructor.
[[nodiscard]] MASKGAT_EXPORT nn::Model import_state_dict(nn::ModelSpec spec, const StateDict& state,
                                                         const StateDictOptions& options = {});

/// The parameters and running statistics of `model` under PyG's names and shapes, as float32
/// tensors (a batch norm's `num_batches_tracked` as an int64 0-d tensor holding 0), in the order
/// of the model's parameters; a GAT layer's projection as `lin.weight`.
/// @param model any model
/// @return the state dict `write_state_dict` saves and `load_state_dict` reads back
[[nodiscard]] MASKGAT_EXPORT StateDict export_state_dict(const nn::Model& model);

/// A checkpoint holding `model`, as `evaluate` and `predict` use it, for a model that was not
/// trained here: no training state and no record of its data.
/// @param model       e.g. from `import_state_dict`
/// @param class_names one distinct name per output class, in class-id order
/// @param source      what it came from (the checkpoint's dataset field), e.g. the file's name
/// @return the checkpoint
/// @throws InvalidArgument when the names are not one distinct non-empty name per class.
[[nodiscard]] MASKGAT_EXPORT Checkpoint checkpoint_of(const nn::Model& model,
                                                      std::vector<std::string> class_names,
                                                      std::string source);

}  // namespace maskgat::train
