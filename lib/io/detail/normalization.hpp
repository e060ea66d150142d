#pragma once
// The feature-normalisation rule, shared by `normalize_features` and the synthetic store writer,
// which sees the features a block at a time.

#include "maskgat/io/dataset.hpp"

namespace maskgat::detail {

// Whether `rule` normalises the rows of features that have a negative entry (`has_negative`) or
// not: kRows always, kNone never, kAuto when none is negative (else it adds the loaders' note to
// `notes`).
[[nodiscard]] bool normalizes_rows(FeatureNormalization rule, bool has_negative, Notes& notes);

// Divides every row of `rows` by its sum (rows summing to 0 are left as they are), as
// `FeatureMatrix::normalize_rows` does its dense features; `first_row` is the first row's number
// in the error `normalize_rows` throws.
void normalize_dense_rows(DenseFeatures& rows, std::int64_t first_row = 0);

}  // namespace maskgat::detail
