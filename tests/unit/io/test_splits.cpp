#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "maskgat/core/error.hpp"
#include "maskgat/io/splits.hpp"
#include "support/paths.hpp"

using maskgat::SplitPart;

namespace {

std::int64_t count(const std::vector<SplitPart>& split, SplitPart part) {
  return std::count(split.begin(), split.end(), part);
}

std::string where() { return "split: " + (maskgat::test::scratch_dir("split") / "s.txt").string(); }

std::vector<SplitPart> load(const std::string& content, maskgat::Notes& notes) {
  maskgat::NodeIndex nodes = maskgat::NodeIndex::numeric(4, 100);
  const auto path = maskgat::test::write_file("split", "s.txt", content);
  return maskgat::read_split(path, nodes, {}, notes);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("default split sizes: Planetoid's where they fit, scaled to small graphs") {
    maskgat::Notes notes;
    std::vector<std::int32_t> labels(1560);
    for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::int32_t>(i % 3);
    const auto planetoid = maskgat::default_split_sizes(labels, 3, notes);
    CHECK(planetoid.train_per_class == 20);
    CHECK(planetoid.val == 500);
    CHECK(planetoid.test == 1000);
    CHECK(notes.empty());
    labels.pop_back();  // 1559 labelled: one short of 60 + 500 + 1000; nothing grows
    const auto short_one = maskgat::default_split_sizes(labels, 3, notes);
    CHECK(short_one.train_per_class == 20);  // a fifth of the smallest class is 103
    CHECK(short_one.val == 311);
    CHECK(short_one.test == 1000);
    REQUIRE(notes.size() == 1);
    // A large graph with one small class: only the training nodes per class shrink.
    std::vector<std::int32_t> skewed(5000, 0);
    std::fill(skewed.begin(), skewed.begin() + 10, 1);
    notes.clear();
    const auto one_small = maskgat::default_split_sizes(skewed, 2, notes);
    CHECK(one_small.train_per_class == 2);
    CHECK(one_small.val == 500);
    CHECK(one_small.test == 1000);
    // 34 nodes in classes of 22 and 12, one unlabelled, a class without nodes.
    std::vector<std::int32_t> small(34, 0);
    std::fill(small.begin() + 22, small.end(), 1);
    small[0] = -1;
    notes.clear();
    const auto scaled = maskgat::default_split_sizes(small, 3, notes);
    CHECK(scaled.train_per_class == 2);
    CHECK(scaled.val == 6);
    CHECK(scaled.test == 33 - 4 - 6);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0] ==
          "random split: 33 labelled node(s) are too few for 20 per class, 500 val and "
          "1000 test; drawn with 2 per class, 6 val and 23 test (a fifth of the "
          "smallest class, a fifth of the labelled nodes, the rest; --split-sizes sets "
          "them)");
    const auto split = maskgat::random_split(small, 3, scaled, 1, notes);
    CHECK(count(split, SplitPart::kTrain) == 4);
    CHECK(count(split, SplitPart::kVal) == 6);
    CHECK(count(split, SplitPart::kTest) == 23);
    REQUIRE(notes.size() == 2);  // every part filled; the class without nodes is noted
    CHECK(notes[1] ==
          "random split: class 2 has 0 labelled node(s), fewer than the 2 training "
          "nodes asked for");
  }

  TEST_CASE("write_split writes what read_split reads back, and refuses names it cannot hold") {
    const std::vector<std::string> names{"0", "1", "2", "3"};
    const std::vector<SplitPart> split{SplitPart::kTest, SplitPart::kNone, SplitPart::kTrain,
                                       SplitPart::kVal};
    const auto path = maskgat::test::scratch_dir("split") / "written.txt";
    maskgat::write_split(path, names, split, true);
    maskgat::NodeIndex nodes = maskgat::NodeIndex::numeric(4, 100);
    maskgat::Notes notes;
    CHECK(maskgat::read_split(path, nodes, {}, notes) == split);
    CHECK_THROWS_AS(maskgat::write_split(path, names, split, false), maskgat::IoError);
    const std::vector<std::string> spaced{"0", "1", "a b", "3"};
    CHECK_THROWS_WITH_AS(maskgat::write_split(path, spaced, split, true),
                         doctest::Contains("node 2 is named 'a b', which a split file cannot hold"),
                         maskgat::InvalidArgument);
    const std::vector<std::string> comment{"#0", "1", "2", "3"};
    CHECK_THROWS_AS(maskgat::write_split(path, comment, split, true), maskgat::InvalidArgument);
    CHECK_THROWS_AS(maskgat::write_split(path, names, std::vector<SplitPart>(3), true),
                    maskgat::InvalidArgument);
  }

  TEST_CASE("random split: stratified - seeded - disjoint") {
    std::vector<std::int32_t> labels(300);
    for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::int32_t>(i % 3);
    labels[5] = -1;
    maskgat::Notes notes;
    const maskgat::RandomSplitSizes sizes{10, 50, 100};
    const auto split = maskgat::random_split(labels, 3, sizes, 7, notes);
    CHECK(notes.empty());
    CHECK(count(split, SplitPart::kTrain) == 30);
    CHECK(count(split, SplitPart::kVal) == 50);
    CHECK(count(split, SplitPart::kTest) == 100);
    CHECK(split[5] == SplitPart::kNone);
    for (std::int32_t c = 0; c < 3; ++c) {
      std::int64_t train = 0;
      for (std::size_t i = 0; i < labels.size(); ++i) {
        train += labels[i] == c && split[i] == SplitPart::kTrain ? 1 : 0;
      }
      CHECK(train == 10);
    }
    CHECK(maskgat::random_split(labels, 3, sizes, 7, notes) == split);
    CHECK(maskgat::random_split(labels, 3, sizes, 8, notes) != split);
  }

  TEST_CASE("random split: takes what exists - in order - with notes") {
    const std::vector<std::int32_t> labels{0, 0, 0, 1, 1, -1};
    maskgat::Notes notes;
    const auto split = maskgat::random_split(labels, 2, {2, 500, 1000}, 0, notes);
    CHECK(count(split, SplitPart::kTrain) == 4);
    CHECK(count(split, SplitPart::kVal) == 1);
    CHECK(count(split, SplitPart::kTest) == 0);
    CHECK(notes == std::vector<std::string>{
                       "random split: asked for 500 val node(s), only 1 labelled node(s) left",
                       "random split: asked for 1000 test node(s), only 0 labelled node(s) left"});
  }

  TEST_CASE("random split per class: train and validation nodes per class, the rest for test") {
    std::vector<std::int32_t> labels(300);
    for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::int32_t>(i % 3);
    labels[5] = -1;
    maskgat::Notes notes;
    const maskgat::RandomSplitSizes sizes = maskgat::per_class_split(20, 30);
    const auto split = maskgat::random_split(labels, 3, sizes, 7, notes);
    CHECK(notes.empty());
    for (std::int32_t c = 0; c < 3; ++c) {
      std::int64_t train = 0;
      std::int64_t val = 0;
      for (std::size_t i = 0; i < labels.size(); ++i) {
        if (labels[i] != c) continue;
        train += split[i] == SplitPart::kTrain ? 1 : 0;
        val += split[i] == SplitPart::kVal ? 1 : 0;
      }
      CHECK(train == 20);
      CHECK(val == 30);
    }
    CHECK(count(split, SplitPart::kTest) == 299 - 150);
    CHECK(split[5] == SplitPart::kNone);
    CHECK(maskgat::random_split(labels, 3, sizes, 7, notes) == split);
    // Too small a class: its validation nodes are what its training nodes leave.
    const std::vector<std::int32_t> few{0, 0, 0, 1, 1, 1, 1, 1, 1};
    const auto small = maskgat::random_split(few, 2, maskgat::per_class_split(2, 2), 1, notes);
    CHECK(count(small, SplitPart::kVal) == 3);
    CHECK(count(small, SplitPart::kTest) == 2);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0] ==
          "random split: class 0 has 3 labelled node(s), fewer than the 2 validation nodes asked "
          "for after its training nodes");
  }

  TEST_CASE("split file: parts per node and pinned errors") {
    maskgat::Notes notes;
    const auto split = load("0 train\n3 test\n1 val\n", notes);
    CHECK(split == std::vector<SplitPart>{SplitPart::kTrain, SplitPart::kVal, SplitPart::kNone,
                                          SplitPart::kTest});
    CHECK_THROWS_WITH_AS(
        load("0 training\n", notes),
        (where() + ":1: unknown split part 'training': expected train, val or test").c_str(),
        maskgat::ParseError);
    CHECK_THROWS_WITH_AS(
        load("0 train\n0 test\n", notes),
        (where() + ":2: node '0' is in 'test' here but in 'train' on line 1").c_str(),
        maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("9 train\n", notes),
                         (where() + ":1: node '9' is not in the graph").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("0\n", notes),
                         (where() + ":1: expected 2 columns (node train|val|test), got 1").c_str(),
                         maskgat::ParseError);
  }
}
