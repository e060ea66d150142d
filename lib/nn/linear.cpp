#include "maskgat/nn/linear.hpp"

#include <string>

#include "nn/detail/layer_common.hpp"

namespace maskgat::nn {

template <typename T>
BasicLinear<T>::BasicLinear(ParameterStore<T>& store, std::string_view name,
                            const LinearOptions& options, Rng& rng)
    : store_(&store), options_(options) {
  detail::check_positive("linear", "in_features", options.in_features);
  detail::check_positive("linear", "out_features", options.out_features);
  projection_ = detail::add_projection(store, std::string(name), options.in_features,
                                       options.out_features, options.bias, rng);
}

template <typename T>
void BasicLinear<T>::forward(InputRef<T> x, RowMatrix<T>& out) const {
  detail::check_columns("linear.forward", x.cols(), options_.in_features);
  detail::project(*store_, projection_, x, out);
}

template <typename T>
void BasicLinear<T>::backward(InputRef<T> x, const RowMatrix<T>& grad_out,
                              RowMatrix<T>* grad_x) const {
  detail::check_shape("linear.backward", "grad_out", grad_out, x.rows(), options_.out_features,
                      "the input's rows");
  detail::prepare_grad_x("linear.backward", x, grad_x);
  detail::project_backward(*store_, projection_, x, grad_out, grad_x);
}

template class BasicLinear<float>;
template class BasicLinear<double>;

}  // namespace maskgat::nn
