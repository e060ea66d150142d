#include "maskgat/io/splits.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "io/detail/node_values.hpp"
#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/core/random.hpp"
#include "maskgat/io/output_file.hpp"

namespace maskgat {
namespace {

constexpr std::string_view kReader = "split";
constexpr detail::NodeValueWording kWording{
    .columns = "node train|val|test", .again = "listed", .repeats = "repeated line(s)"};

void shuffle(std::vector<NodeId>& items, Rng& rng) {
  for (std::size_t i = items.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(rng.uniform_int(i));
    std::swap(items[i - 1], items[j]);
  }
}

}  // namespace

const char* split_part_name(SplitPart part) noexcept {
  switch (part) {
    case SplitPart::kTrain:
      return "train";
    case SplitPart::kVal:
      return "val";
    case SplitPart::kTest:
      return "test";
    case SplitPart::kNone:
      break;
  }
  return "none";
}

std::vector<SplitPart> read_split(const std::filesystem::path& path, const NodeIndex& nodes,
                                  const ReadOptions& options, Notes& notes,
                                  std::span<const std::int32_t> labels) {
  detail::LineReader reader(path, kReader, options.limits.max_line_bytes);
  return detail::read_node_values(
      reader, nodes, SplitPart::kNone, kWording, options.strict, notes,
      [](std::string_view node) { return "node '" + std::string(node) + "' is not in the graph"; },
      [&](NodeId node, std::string_view name) {
        for (const SplitPart part : {SplitPart::kTrain, SplitPart::kVal, SplitPart::kTest}) {
          if (name != split_part_name(part)) continue;
          const auto slot = static_cast<std::size_t>(node);
          if (!labels.empty() && (slot >= labels.size() || labels[slot] < 0)) {
            reader.fail("node '" + nodes.name(node) + "' is in '" + std::string(name) +
                        "' but has no label: only labelled nodes can be trained or scored");
          }
          return part;
        }
        reader.fail("unknown split part " + detail::quoted(name) + ": expected train, val or test");
      },
      [](std::string_view node, std::string_view part, SplitPart first, std::int64_t line) {
        return "node '" + std::string(node) + "' is in '" + std::string(part) + "' here but in '" +
               split_part_name(first) + "' on line " + std::to_string(line);
      });
}

void write_split(const std::filesystem::path& path, std::span<const std::string> node_names,
                 std::span<const SplitPart> split, bool overwrite) {
  if (node_names.size() != split.size()) {
    throw InvalidArgument("write_split: " + std::to_string(node_names.size()) + " node names for " +
                          std::to_string(split.size()) + " split entries");
  }
  std::string text;
  for (std::size_t i = 0; i < split.size(); ++i) {
    if (split[i] == SplitPart::kNone) continue;
    const std::string& name = node_names[i];
    if (name.empty() || name.find_first_of(" \t,\r\n") != std::string::npos ||
        name.front() == '#' || name.front() == '%') {
      throw InvalidArgument("write_split: node " + std::to_string(i) + " is named " +
                            detail::quoted(name) +
                            ", which a split file cannot hold (empty, a space, tab, comma or line "
                            "end, or a leading # or %)");
    }
    text += name;
    text += ' ';
    text += split_part_name(split[i]);
    text += '\n';
  }
  write_file_atomically(path, text, overwrite);
}

RandomSplitSizes default_split_sizes(std::span<const std::int32_t> labels, std::int32_t num_classes,
                                     Notes& notes) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(std::max(num_classes, 0)), 0);
  for (const std::int32_t label : labels) {
    if (label >= 0 && label < num_classes) ++counts[static_cast<std::size_t>(label)];
  }
  const RandomSplitSizes planetoid;
  std::int64_t labelled = 0;
  std::int64_t smallest = 0;
  bool fits = true;
  for (const std::int64_t count : counts) {
    labelled += count;
    if (count > 0) smallest = smallest == 0 ? count : std::min(smallest, count);
    fits = fits && count >= planetoid.train_per_class;
  }
  const std::int64_t classes = static_cast<std::int64_t>(counts.size());
  if (fits && labelled - planetoid.train_per_class * classes >= planetoid.val + planetoid.test) {
    return planetoid;
  }
  RandomSplitSizes scaled;
  scaled.train_per_class = std::clamp<std::int64_t>(smallest / 5, 1, planetoid.train_per_class);
  std::int64_t trained = 0;
  for (const std::int64_t count : counts) trained += std::min(count, scaled.train_per_class);
  scaled.val = std::clamp<std::int64_t>(labelled / 5, 1, planetoid.val);
  scaled.test = std::clamp<std::int64_t>(labelled - trained - scaled.val, 0, planetoid.test);
  notes.push_back("random split: " + std::to_string(labelled) +
                  " labelled node(s) are too few for 20 per class, 500 val and 1000 test; drawn "
                  "with " +
                  std::to_string(scaled.train_per_class) + " per class, " +
                  std::to_string(scaled.val) + " val and " + std::to_string(scaled.test) +
                  " test (a fifth of the smallest class, a fifth of the labelled nodes, the "
                  "rest; --split-sizes sets them)");
  return scaled;
}

std::vector<SplitPart> random_split(std::span<const std::int32_t> labels, std::int32_t num_classes,
                                    const RandomSplitSizes& sizes, std::uint64_t seed,
                                    Notes& notes) {
  if (sizes.train_per_class < 0 || sizes.val < 0 ||
      (sizes.test < 0 && sizes.test != RandomSplitSizes::kRest)) {
    throw InvalidArgument("random_split: split sizes must be non-negative");
  }
  std::vector<std::vector<NodeId>> by_class(static_cast<std::size_t>(std::max(num_classes, 0)));
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0) continue;
    if (labels[i] >= num_classes) {
      throw InvalidArgument("random_split: node " + std::to_string(i) + " has class " +
                            std::to_string(labels[i]) + ", expected a class below " +
                            std::to_string(num_classes));
    }
    by_class[static_cast<std::size_t>(labels[i])].push_back(static_cast<NodeId>(i));
  }
  Rng rng(seed);
  std::vector<SplitPart> split(labels.size(), SplitPart::kNone);
  std::vector<NodeId> rest;
  // Per class: its training nodes, then (per class) its validation nodes.
  std::vector<std::pair<SplitPart, std::int64_t>> per_class{
      {SplitPart::kTrain, sizes.train_per_class}};
  if (sizes.val_per_class) per_class.emplace_back(SplitPart::kVal, sizes.val);
  for (std::size_t c = 0; c < by_class.size(); ++c) {
    auto& members = by_class[c];
    shuffle(members, rng);
    std::size_t next = 0;
    for (const auto& [part, wanted] : per_class) {
      const auto take =
          std::min<std::size_t>(members.size() - next, static_cast<std::size_t>(wanted));
      if (take < static_cast<std::size_t>(wanted)) {
        notes.push_back(
            "random split: class " + std::to_string(c) + " has " + std::to_string(members.size()) +
            " labelled node(s), fewer than the " + std::to_string(wanted) + " " +
            (part == SplitPart::kTrain ? "training" : "validation") + " nodes asked for" +
            (part == SplitPart::kTrain ? "" : " after its training nodes"));
      }
      for (std::size_t k = 0; k < take; ++k)
        split[static_cast<std::size_t>(members[next + k])] = part;
      next += take;
    }
    rest.insert(rest.end(), members.begin() + static_cast<std::ptrdiff_t>(next), members.end());
  }
  std::sort(rest.begin(), rest.end());
  shuffle(rest, rng);
  std::vector<std::pair<SplitPart, std::int64_t>> from_rest;
  if (!sizes.val_per_class) from_rest.emplace_back(SplitPart::kVal, sizes.val);
  from_rest.emplace_back(SplitPart::kTest, sizes.test);
  std::size_t next = 0;
  for (const auto& [part, wanted] : from_rest) {
    const std::size_t left = rest.size() - next;
    const auto take = wanted == RandomSplitSizes::kRest
                          ? left
                          : std::min<std::size_t>(left, static_cast<std::size_t>(wanted));
    if (wanted != RandomSplitSizes::kRest && take < static_cast<std::size_t>(wanted)) {
      notes.push_back(std::string("random split: asked for ") + std::to_string(wanted) + " " +
                      split_part_name(part) + " node(s), only " + std::to_string(take) +
                      " labelled node(s) left");
    }
    for (std::size_t k = 0; k < take; ++k) split[static_cast<std::size_t>(rest[next + k])] = part;
    next += take;
  }
  return split;
}

}  // namespace maskgat
