#include "maskgat/io/labels.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat {
namespace {

constexpr std::string_view kReader = "labels";

}  // namespace

std::vector<std::string> sort_class_names(std::vector<std::string> names) {
  const bool numeric = std::all_of(names.begin(), names.end(), [](const std::string& name) {
    return detail::parse_integer(name).has_value();
  });
  if (numeric) {
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
      return *detail::parse_integer(a) < *detail::parse_integer(b);
    });
  } else {
    // std::string compares as unsigned char: byte order.
    std::sort(names.begin(), names.end());
  }
  return names;
}

LabelTable read_labels(const std::filesystem::path& path, const NodeIndex& nodes,
                       const ReadOptions& options, Notes& notes) {
  detail::LineReader reader(path, kReader);
  const auto num_nodes = static_cast<std::size_t>(nodes.size());
  std::vector<std::int32_t> name_of_node(num_nodes, -1);  // index into `names`
  std::vector<std::int64_t> line_of_node(num_nodes, 0);
  std::vector<std::string> names;
  std::map<std::string, std::int32_t, std::less<>> name_ids;
  std::int64_t repeated = 0;
  std::string_view line;
  std::vector<std::string_view> fields;
  while (reader.next(line)) {
    if (detail::is_blank_or_comment(line)) continue;
    detail::split_fields(line, fields);
    if (fields.size() != 2) {
      reader.fail("expected 2 columns (node label), got " + std::to_string(fields.size()));
    }
    const auto node = nodes.find(fields[0]);
    if (!node) {
      reader.fail("label for node '" + std::string(fields[0]) + "', which is not in the graph");
    }
    auto found = name_ids.find(fields[1]);
    if (found == name_ids.end()) {
      found = name_ids.emplace(std::string(fields[1]), static_cast<std::int32_t>(names.size())).first;
      names.emplace_back(fields[1]);
    }
    const auto slot = static_cast<std::size_t>(*node);
    if (name_of_node[slot] >= 0) {
      if (name_of_node[slot] != found->second) {
        reader.fail("node '" + std::string(fields[0]) + "' has label '" + std::string(fields[1]) +
                    "' here but '" + names[static_cast<std::size_t>(name_of_node[slot])] +
                    "' on line " + std::to_string(line_of_node[slot]));
      }
      if (options.strict) {
        reader.fail("node '" + std::string(fields[0]) + "' is labelled again (first on line " +
                    std::to_string(line_of_node[slot]) + ") (--strict)");
      }
      ++repeated;
      continue;
    }
    name_of_node[slot] = found->second;
    line_of_node[slot] = reader.line_number();
  }
  if (repeated > 0) {
    notes.push_back("labels: " + reader.path() + ": " + std::to_string(repeated) +
                    " repeated label line(s) ignored");
  }
  LabelTable table;
  table.class_names = sort_class_names(names);
  std::vector<std::int32_t> class_of_name(names.size());
  for (std::size_t c = 0; c < table.class_names.size(); ++c) {
    class_of_name[static_cast<std::size_t>(name_ids.find(table.class_names[c])->second)] =
        static_cast<std::int32_t>(c);
  }
  table.labels.resize(num_nodes, -1);
  for (std::size_t i = 0; i < num_nodes; ++i) {
    if (name_of_node[i] >= 0) table.labels[i] = class_of_name[static_cast<std::size_t>(name_of_node[i])];
  }
  return table;
}

}  // namespace maskgat
