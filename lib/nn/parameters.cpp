#include "maskgat/nn/parameters.hpp"

#include <algorithm>
#include <cmath>

#include "maskgat/core/error.hpp"

namespace maskgat::nn {

template <typename T>
Parameter ParameterStore<T>::add(std::string_view name, std::int64_t rows, std::int64_t cols) {
  if (name.empty()) throw InvalidArgument("ParameterStore::add: the name is empty");
  if (find(name)) {
    throw InvalidArgument("ParameterStore::add: a parameter named '" + std::string(name) +
                          "' already exists");
  }
  if (rows < 0 || cols < 0) {
    throw InvalidArgument("ParameterStore::add: '" + std::string(name) + "' has shape " +
                          std::to_string(rows) + " x " + std::to_string(cols) +
                          ", expected sizes >= 0");
  }
  const Parameter parameter{size(), rows, cols};
  values_.resize(values_.size() + static_cast<std::size_t>(parameter.size()), T(0));
  grads_.resize(values_.size(), T(0));
  entries_.push_back({std::string(name), parameter});
  return parameter;
}

namespace {

// The rows x cols block of `data` where `parameter` lies, as a Map or ConstMap.
template <typename Map, typename Data>
Map block_of(Data& data, const Parameter& parameter) noexcept {
  return Map(data.data() + parameter.offset, parameter.rows, parameter.cols);
}

}  // namespace

template <typename T>
typename ParameterStore<T>::Map ParameterStore<T>::value(const Parameter& parameter) noexcept {
  return block_of<Map>(values_, parameter);
}

template <typename T>
typename ParameterStore<T>::ConstMap ParameterStore<T>::value(
    const Parameter& parameter) const noexcept {
  return block_of<ConstMap>(values_, parameter);
}

template <typename T>
typename ParameterStore<T>::Map ParameterStore<T>::grad(const Parameter& parameter) noexcept {
  return block_of<Map>(grads_, parameter);
}

template <typename T>
typename ParameterStore<T>::ConstMap ParameterStore<T>::grad(
    const Parameter& parameter) const noexcept {
  return block_of<ConstMap>(grads_, parameter);
}

template <typename T>
void ParameterStore<T>::zero_grad() noexcept {
  std::fill(grads_.begin(), grads_.end(), T(0));
}

template <typename T>
std::optional<Parameter> ParameterStore<T>::find(std::string_view name) const {
  const auto it = std::find_if(entries_.begin(), entries_.end(),
                               [&](const Entry& entry) { return entry.name == name; });
  if (it == entries_.end()) return std::nullopt;
  return it->parameter;
}

template <typename T>
void glorot_uniform(Eigen::Map<RowMatrix<T>> values, std::int64_t fan_in, std::int64_t fan_out,
                    Rng& rng) {
  const double bound =
      std::sqrt(6.0 / static_cast<double>(std::max<std::int64_t>(fan_in + fan_out, 1)));
  for (std::int64_t r = 0; r < values.rows(); ++r) {
    for (std::int64_t c = 0; c < values.cols(); ++c) {
      values(r, c) = static_cast<T>((2.0 * rng.uniform() - 1.0) * bound);
    }
  }
}

template class ParameterStore<float>;
template class ParameterStore<double>;
template void glorot_uniform<float>(Eigen::Map<RowMatrix<float>>, std::int64_t, std::int64_t, Rng&);
template void glorot_uniform<double>(Eigen::Map<RowMatrix<double>>, std::int64_t, std::int64_t,
                                     Rng&);

}  // namespace maskgat::nn
