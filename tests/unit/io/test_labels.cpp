#include <doctest/doctest.h>

#include <string>

#include "maskgat/core/error.hpp"
#include "maskgat/io/labels.hpp"
#include "support/paths.hpp"

using maskgat::NodeIndex;

namespace {

NodeIndex three_nodes() {
  NodeIndex nodes = NodeIndex::named(100);
  NodeIndex::Status status{};
  for (const char* name : {"a", "b", "c"}) REQUIRE(nodes.insert(name, status));
  nodes.freeze();
  return nodes;
}

maskgat::LabelTable load(const std::string& content, maskgat::Notes& notes,
                         const maskgat::ReadOptions& options = {}) {
  const auto path = maskgat::test::write_file("labels", "l.txt", content);
  return maskgat::read_labels(path, three_nodes(), options, notes);
}

std::string where() { return "labels: " + (maskgat::test::scratch_dir("labels") / "l.txt").string(); }

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("labels: class ids follow sorted names - missing nodes are unlabelled") {
    maskgat::Notes notes;
    const auto table = load("a beta\nc Alpha\n", notes);
    CHECK(table.class_names == std::vector<std::string>{"Alpha", "beta"});
    CHECK(table.labels == std::vector<std::int32_t>{1, -1, 0});
    CHECK(notes.empty());
  }

  TEST_CASE("labels: integer names sort numerically") {
    maskgat::Notes notes;
    const auto table = load("a 10\nb 9\nc 2\n", notes);
    CHECK(table.class_names == std::vector<std::string>{"2", "9", "10"});
    CHECK(table.labels == std::vector<std::int32_t>{2, 1, 0});
    CHECK(maskgat::sort_class_names({"b", "B", "a"}) == std::vector<std::string>{"B", "a", "b"});
  }

  TEST_CASE("labels: a repeated identical line is a note - or an error when strict") {
    maskgat::Notes notes;
    const auto table = load("a x\na x\n", notes);
    CHECK(table.labels[0] == 0);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0] == where() + ": 1 repeated label line(s) ignored");
    maskgat::ReadOptions strict;
    strict.strict = true;
    CHECK_THROWS_WITH_AS(load("a x\na x\n", notes, strict),
                         (where() + ":2: node 'a' is labelled again (first on line 1) (--strict)").c_str(),
                         maskgat::ParseError);
  }

  TEST_CASE("labels: malformed input gives pinned messages") {
    maskgat::Notes notes;
    CHECK_THROWS_WITH_AS(load("a x\nb\n", notes),
                         (where() + ":2: expected 2 columns (node label), got 1").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("a x\nzz y\n", notes),
                         (where() + ":2: label for node 'zz', which is not in the graph").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("a x\nb y\na y\n", notes),
                         (where() + ":3: node 'a' has label 'y' here but 'x' on line 1").c_str(),
                         maskgat::ParseError);
  }
}
