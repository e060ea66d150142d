#include <doctest/doctest.h>

#include "maskgat/core/error.hpp"

TEST_SUITE("unit") {
  TEST_CASE("ParseError formats reader - path and line") {
    const maskgat::ParseError error("edge_list", "graph.txt", 12, "node id -3 is negative");
    CHECK(std::string(error.what()) == "edge_list: graph.txt:12: node id -3 is negative");
    CHECK(error.path() == "graph.txt");
    CHECK(error.line() == 12);
  }

  TEST_CASE("ParseError without a line omits it") {
    const maskgat::ParseError error("planetoid", "ind.cora.x", 0, "truncated");
    CHECK(std::string(error.what()) == "planetoid: ind.cora.x: truncated");
  }

  TEST_CASE("LimitError is a ParseError and an Error") {
    const maskgat::LimitError error("edge_list", "g.txt", 1, "too many");
    const maskgat::ParseError& as_parse = error;
    const maskgat::Error& as_error = error;
    CHECK(std::string(as_parse.what()) == std::string(as_error.what()));
  }
}
