#include "maskgat/io/labels.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "io/detail/node_values.hpp"
#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat {
namespace {

constexpr std::string_view kReader = "labels";
constexpr detail::NodeValueWording kWording{
    .columns = "node label", .again = "labelled", .repeats = "repeated label line(s)"};

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
  detail::LineReader reader(path, kReader, options.limits.max_line_bytes);
  const auto num_nodes = static_cast<std::size_t>(nodes.size());
  std::vector<std::string> names;
  std::map<std::string, std::int32_t, std::less<>> name_ids;
  // Index into `names` per node, -1 when unlabelled; class ids are only known once all are read.
  const std::vector<std::int32_t> name_of_node = detail::read_node_values<std::int32_t>(
      reader, nodes, -1, kWording, options.strict, notes,
      [](std::string_view node) {
        return "label for node '" + std::string(node) + "', which is not in the graph";
      },
      [&](NodeId /*node*/, std::string_view name) {
        auto found = name_ids.find(name);
        if (found == name_ids.end()) {
          if (static_cast<std::int64_t>(names.size()) >= options.limits.max_classes) {
            reader.fail_limit("label '" + std::string(name) + "' would be class " +
                              std::to_string(names.size() + 1) + ", over the limit of " +
                              std::to_string(options.limits.max_classes) +
                              " classes (raise it with --max-classes)");
          }
          found =
              name_ids.emplace(std::string(name), static_cast<std::int32_t>(names.size())).first;
          names.emplace_back(name);
        }
        return found->second;
      },
      [&](std::string_view node, std::string_view name, std::int32_t first, std::int64_t line) {
        return "node '" + std::string(node) + "' has label '" + std::string(name) + "' here but '" +
               names[static_cast<std::size_t>(first)] + "' on line " + std::to_string(line);
      });
  LabelTable table;
  table.class_names = sort_class_names(names);
  std::vector<std::int32_t> class_of_name(names.size());
  for (std::size_t c = 0; c < table.class_names.size(); ++c) {
    class_of_name[static_cast<std::size_t>(name_ids.find(table.class_names[c])->second)] =
        static_cast<std::int32_t>(c);
  }
  table.labels.resize(num_nodes, -1);
  for (std::size_t i = 0; i < num_nodes; ++i) {
    if (name_of_node[i] >= 0)
      table.labels[i] = class_of_name[static_cast<std::size_t>(name_of_node[i])];
  }
  return table;
}

}  // namespace maskgat
