#include "maskgat/io/edge_features.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "io/detail/npy.hpp"
#include "io/detail/text.hpp"
#include "io/detail/zip_archive.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat {
namespace {

constexpr std::string_view kReader = "edge_features";

RowMatrix<float> read_text(const std::filesystem::path& path, const ReadOptions& options) {
  detail::LineReader reader(path, kReader, options.limits.max_line_bytes);
  std::string_view line;
  std::vector<std::string_view> fields;
  std::vector<float> values;
  std::int64_t width = -1;
  std::int64_t rows = 0;
  bool first_line = true;
  while (reader.next(line)) {
    if (detail::is_blank_or_comment(line)) continue;
    detail::split_fields(line, fields);
    const bool header = first_line && std::none_of(fields.begin(), fields.end(), [](auto field) {
                          return detail::parse_number(field).has_value();
                        });
    first_line = false;
    if (header) continue;
    if (width < 0) {
      width = static_cast<std::int64_t>(fields.size());
      if (width > options.limits.max_features) {
        reader.fail_limit(std::to_string(width) + " features per edge: over the feature limit (" +
                          std::to_string(options.limits.max_features) + ", --max-features)");
      }
    } else if (static_cast<std::int64_t>(fields.size()) != width) {
      reader.fail("expected " + std::to_string(width) + " numbers as on the first row, got " +
                  std::to_string(fields.size()));
    }
    if (++rows > options.limits.max_edges) {
      reader.fail_limit("more than " + std::to_string(options.limits.max_edges) +
                        " rows: over the edge limit (raise it with --max-edges)");
    }
    for (const std::string_view field : fields) {
      const auto value = detail::parse_number(field);
      if (!value) reader.fail(detail::quoted(field) + " is not a number");
      if (!std::isfinite(*value) || !std::isfinite(static_cast<float>(*value))) {
        reader.fail(detail::quoted(field) + " is not finite in float");
      }
      values.push_back(static_cast<float>(*value));
    }
  }
  if (rows == 0) {
    throw ParseError(kReader, reader.path(), 0, "no rows: expected one line of numbers per edge");
  }
  return Eigen::Map<const RowMatrix<float>>(values.data(), rows, width);
}

RowMatrix<float> read_npz_array(const std::filesystem::path& path, const ReadOptions& options) {
  const auto archive = detail::read_zip(path, kReader, options.limits);
  const auto& names = archive->names();
  std::string member = "edge_features.npy";
  if (!archive->contains(member)) {
    if (names.size() != 1) {
      throw ParseError(kReader, archive->path(), 0,
                       "no member 'edge_features.npy' and " + std::to_string(names.size()) +
                           " members: expected that array, or a single array");
    }
    member = names.front();
  }
  const std::string bytes = archive->read(member);
  const detail::NumpyArray array =
      detail::parse_npy(bytes, member, kReader, archive->path(), options.limits);
  const bool numeric = array.dtype.kind == detail::NumpyKind::kFloat ||
                       array.dtype.kind == detail::NumpyKind::kSigned ||
                       array.dtype.kind == detail::NumpyKind::kUnsigned ||
                       array.dtype.kind == detail::NumpyKind::kBool;
  if (!numeric || array.shape.size() != 2 || array.shape[0] == 0) {
    throw ParseError(kReader, archive->path(), 0,
                     "member " + detail::quoted_printable(member) + " is a '" + array.dtype.code +
                         "' array of shape " + detail::shape_text(array.shape) +
                         ", expected a numeric [E, D] array with E > 0");
  }
  if (array.shape[1] > options.limits.max_features || array.shape[0] > options.limits.max_edges) {
    throw LimitError(kReader, archive->path(), 0,
                     "member " + detail::quoted_printable(member) + " has shape " +
                         detail::shape_text(array.shape) +
                         ": over the feature or edge limit (--max-features, --max-edges)");
  }
  const std::vector<float> values = detail::numpy_floats(array);
  if (!std::all_of(values.begin(), values.end(), [](float v) { return std::isfinite(v); })) {
    throw ParseError(
        kReader, archive->path(), 0,
        "member " + detail::quoted_printable(member) + " holds a value that is not finite");
  }
  RowMatrix<float> out(array.shape[0], array.shape[1]);
  if (array.fortran) {
    out = Eigen::Map<const Eigen::MatrixXf>(values.data(), array.shape[0], array.shape[1]);
  } else {
    out = Eigen::Map<const RowMatrix<float>>(values.data(), array.shape[0], array.shape[1]);
  }
  return out;
}

}  // namespace

RowMatrix<float> read_edge_features(const std::filesystem::path& path, const ReadOptions& options) {
  return path.extension() == ".npz" ? read_npz_array(path, options) : read_text(path, options);
}

}  // namespace maskgat
