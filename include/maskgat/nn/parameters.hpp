#pragma once
/// @file
/// All trainable parameters of a model in one contiguous buffer, with their gradients in another.
///
/// Layers register their tensors by name (`conv1.weight`) and keep a `Parameter` handle; values
/// and gradients are viewed in place through `Eigen::Map`. zero_grad, gradient checks, the
/// optimizer and checkpoints are then loops over one flat array.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "maskgat/core/random.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"

namespace maskgat::nn {

/// A handle to one rows x cols tensor of a `ParameterStore`: its place in the flat buffers.
/// Stays valid while the store grows (it is an offset, not a pointer).
struct Parameter {
  std::int64_t offset = 0;  ///< position of the first entry in the flat buffers
  std::int64_t rows = 0;    ///< the tensor's rows
  std::int64_t cols = 0;    ///< the tensor's columns
  /// The number of scalars.
  /// @return rows * cols
  [[nodiscard]] std::int64_t size() const noexcept { return rows * cols; }
};

/// Named parameter tensors in one contiguous value buffer and one gradient buffer of the same
/// layout. Not thread-safe for concurrent `add`; reading values from many threads is fine.
template <typename T>
class MASKGAT_EXPORT ParameterStore {
 public:
  /// A writable in-place view of one tensor.
  using Map = Eigen::Map<RowMatrix<T>>;
  /// A read-only in-place view of one tensor.
  using ConstMap = Eigen::Map<const RowMatrix<T>>;

  /// One registered tensor.
  struct Entry {
    std::string name;     ///< e.g. `conv1.weight`
    Parameter parameter;  ///< where it lives
  };

  /// Registers a zero-filled rows x cols tensor (values and gradient). Grows the buffers, so
  /// maps and spans taken before are invalidated; handles stay valid.
  /// @param name e.g. `conv1.weight`; unique within the store
  /// @param rows >= 0
  /// @param cols >= 0
  /// @return the tensor's handle
  /// @throws InvalidArgument if `name` is empty or taken, or a size is negative.
  Parameter add(std::string_view name, std::int64_t rows, std::int64_t cols);

  /// The values of `parameter`, viewed in place (rows x cols, row-major).
  /// @param parameter a handle `add` returned for this store (not checked)
  /// @return a writable view, valid until the next `add`
  [[nodiscard]] Map value(const Parameter& parameter) noexcept;
  /// The values of `parameter`, viewed in place, read-only.
  /// @param parameter a handle `add` returned for this store (not checked)
  /// @return a read-only view, valid until the next `add`
  [[nodiscard]] ConstMap value(const Parameter& parameter) const noexcept;
  /// The gradient of `parameter`, same layout.
  /// @param parameter a handle `add` returned for this store (not checked)
  /// @return a writable view, valid until the next `add`
  [[nodiscard]] Map grad(const Parameter& parameter) noexcept;
  /// The gradient of `parameter`, same layout, read-only.
  /// @param parameter a handle `add` returned for this store (not checked)
  /// @return a read-only view, valid until the next `add`
  [[nodiscard]] ConstMap grad(const Parameter& parameter) const noexcept;

  /// Every value, in registration order.
  /// @return `size()` scalars, valid until the next `add`
  [[nodiscard]] std::span<T> values() noexcept { return values_; }
  /// Every value, in registration order, read-only.
  /// @return `size()` scalars, valid until the next `add`
  [[nodiscard]] std::span<const T> values() const noexcept { return values_; }
  /// Every gradient, in the same order.
  /// @return `size()` scalars, valid until the next `add`
  [[nodiscard]] std::span<T> grads() noexcept { return grads_; }
  /// Every gradient, in the same order, read-only.
  /// @return `size()` scalars, valid until the next `add`
  [[nodiscard]] std::span<const T> grads() const noexcept { return grads_; }

  /// Sets every gradient to zero.
  void zero_grad() noexcept;

  /// The registered tensors in registration order.
  /// @return one entry per `add`
  [[nodiscard]] const std::vector<Entry>& entries() const noexcept { return entries_; }
  /// The tensor called `name`, if any. O(number of tensors).
  /// @param name the exact name
  /// @return its handle, or `std::nullopt`
  [[nodiscard]] std::optional<Parameter> find(std::string_view name) const;
  /// Total number of scalars.
  /// @return the length of `values()` and of `grads()`
  [[nodiscard]] std::int64_t size() const noexcept {
    return static_cast<std::int64_t>(values_.size());
  }

 private:
  std::vector<T> values_;
  std::vector<T> grads_;
  std::vector<Entry> entries_;
};

/// Glorot (Xavier) uniform initialisation: every entry uniform in `[-a, a]` with
/// `a = sqrt(6 / (fan_in + fan_out))`, drawn row by row from `rng`. Serial.
/// @param values  the tensor to fill, e.g. `store.value(parameter)`
/// @param fan_in  inputs per output (the rows of a projection's W)
/// @param fan_out outputs per input (the columns of a projection's W)
/// @param rng     draws one `uniform()` per entry
template <typename T>
MASKGAT_EXPORT void glorot_uniform(Eigen::Map<RowMatrix<T>> values, std::int64_t fan_in,
                                   std::int64_t fan_out, Rng& rng);

}  // namespace maskgat::nn
