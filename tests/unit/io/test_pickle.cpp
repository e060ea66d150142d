// The bounded protocol-2 pickle reader behind the Planetoid loader: the value tree it builds,
// the typed decoders, and the exact message for every kind of malformed or hostile input.
//
// Hand-made pickles are written as byte strings with the opcode of every piece commented; byte
// offsets in the pinned messages count from the PROTO opcode at byte 0.

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "io/detail/pickle_decoders.hpp"
#include "maskgat/core/error.hpp"
#include "support/paths.hpp"
#include "support/tiny_planetoid.hpp"

using maskgat::test::tiny_planetoid_part;

namespace {

using maskgat::Limits;
using maskgat::detail::decode_adjacency;
using maskgat::detail::decode_csr_matrix;
using maskgat::detail::decode_int_matrix;
using maskgat::detail::Pickle;
using maskgat::detail::PickleKind;

// `std::string` from a literal that may contain NUL bytes.
template <std::size_t N>
std::string bytes(const char (&text)[N]) {
  return std::string(text, N - 1);
}

Pickle parse(const std::string& data, const Limits& limits = {}) {
  return Pickle(data, "planetoid", "t.pkl", limits);
}

// `data` with the first occurrence of `from` replaced by `to` (same length).
std::string patched(std::string data, const std::string& from, const std::string& to) {
  const auto at = data.find(from);
  REQUIRE(at != std::string::npos);
  REQUIRE(from.size() == to.size());
  data.replace(at, from.size(), to);
  return data;
}

// The little-endian bytes of int32 values, as numpy stores an 'i4' array.
std::string int32s(std::initializer_list<std::int32_t> values) {
  std::string out;
  for (const std::int32_t value : values) {
    const auto bits = static_cast<std::uint32_t>(value);
    for (int shift = 0; shift < 32; shift += 8) out += static_cast<char>((bits >> shift) & 0xFFU);
  }
  return out;
}

// A 2-D numpy 'i4' array pickle; `rows` and `cols` are BININT opcodes (5 bytes each) and
// `data` a SHORT_BINSTRING, so the ndarray is created by the REDUCE at byte 60.
std::string array_pickle(const std::string& rows, const std::string& cols,
                         const std::string& data) {
  return bytes(
             "\x80\x02"                                // 0 PROTO 2
             "cnumpy.core.multiarray\n_reconstruct\n"  // 2 GLOBAL
             "cnumpy\nndarray\n"                       // 38 GLOBAL
             "K\x00\x85"                               // 53 BININT1 0, 55 TUPLE1
             "U\x01"
             "b"          // 56 SHORT_BINSTRING 'b'
             "\x87R"      // 59 TUPLE3, 60 REDUCE
             "(K\x01") +  // 61 MARK, 62 BININT1 1 (version)
         rows +
         cols +  // 64, 69 BININT
         bytes(
             "\x86"                                       // 74 TUPLE2 (shape)
             "cnumpy\ndtype\n"                            // 75 GLOBAL
             "U\x02i4K\x00K\x01\x87R"                     // 88 'i4', 0, 1, TUPLE3, 97 REDUCE
             "(K\x03U\x01<NNN"                            // 98 MARK, state (3, '<', None x3,
             "J\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb"  //   -1, -1, 0) TUPLE, BUILD
             "\x89U") +                                   // NEWFALSE (C order), SHORT_BINSTRING
         std::string(1, static_cast<char>(data.size())) +
         data + bytes("tb.");  // TUPLE, BUILD, STOP
}

const std::string kBinInt2 = bytes("J\x02\x00\x00\x00");
const std::string kBinInt3 = bytes("J\x03\x00\x00\x00");
const std::string kBinIntHuge = bytes("J\xff\xff\xff\x7f");

const char* const kAllowed =
    "expected one of numpy.core.multiarray._reconstruct, numpy.ndarray, numpy.dtype, "
    "scipy.sparse.csr.csr_matrix, "
    "scipy.sparse._csr.csr_matrix, collections.defaultdict, __builtin__.list, "
    "copy_reg._reconstructor, __builtin__.object";

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("pickle: a value tree with shared and nested values") {
    const std::string data = bytes(
        "\x80\x02"                           // 0 PROTO 2
        "}q\x01"                             // 2 EMPTY_DICT, 3 BINPUT 1
        "("                                  // 5 MARK
        "K\x07"                              // 6 BININT1 7 (key)
        "]q\x02"                             // 8 EMPTY_LIST, 9 BINPUT 2
        "("                                  // 11 MARK
        "M\x00\x01"                          // 12 BININT2 256
        "J\xfe\xff\xff\xff"                  // 15 BININT -2
        "N\x88"                              // 20 NONE, 21 NEWTRUE
        "G\x3f\xf8\x00\x00\x00\x00\x00\x00"  // 22 BINFLOAT 1.5 (big-endian)
        "U\x02hi"                            // 31 SHORT_BINSTRING 'hi'
        "e"                                  // 35 APPENDS
        "K\x08h\x02"                         // 36 BININT1 8 (key), 38 BINGET 2 (same list)
        "u.");                               // 40 SETITEMS, 41 STOP
    const Pickle p = parse(data);
    const auto root = p.root();
    CHECK(p.value(root).kind == PickleKind::kDict);
    const auto entries = p.items(root);
    REQUIRE(entries.size() == 4);
    CHECK(p.value(entries[0]).integer == 7);
    CHECK(p.value(entries[2]).integer == 8);
    CHECK(entries[1] == entries[3]);
    const auto list = p.items(entries[1]);
    REQUIRE(list.size() == 6);
    CHECK(p.value(list[0]).integer == 256);
    CHECK(p.value(list[1]).integer == -2);
    CHECK(p.value(list[2]).kind == PickleKind::kNone);
    CHECK(p.value(list[3]).kind == PickleKind::kBool);
    CHECK(p.value(list[3]).integer == 1);
    CHECK(p.value(list[4]).real == 1.5);
    CHECK(p.bytes(list[5]) == "hi");
    CHECK(p.describe_at(entries[1]) == "a list (created at byte 8)");
  }

  TEST_CASE("pickle: a list that contains itself is read without recursing") {
    // 2 EMPTY_LIST, 3 BINPUT 1, 5 BINGET 1, 7 APPEND, 8 STOP
    const Pickle p =
        parse(bytes("\x80\x02]q\x01h\x01"
                    "a."));
    REQUIRE(p.items(p.root()).size() == 1);
    CHECK(p.items(p.root())[0] == p.root());
  }

  TEST_CASE("pickle: truncated files") {
    CHECK_THROWS_WITH_AS(parse(""),
                         "planetoid: t.pkl: empty file: expected a protocol-2 or -3 pickle",
                         maskgat::ParseError);
    // 2 BININT1 without its byte.
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02K")),
                         "planetoid: t.pkl: truncated file: BININT1 at byte 2 needs 1 more "
                         "byte(s), 0 remain",
                         maskgat::ParseError);
    // 2 NONE, then the end without STOP.
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02N")),
                         "planetoid: t.pkl: truncated file: no STOP opcode before the end at "
                         "byte 3",
                         maskgat::ParseError);
    // 2 GLOBAL whose module name never ends.
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02"
                                     "cos")),
                         "planetoid: t.pkl: truncated file: the module name of GLOBAL at byte 2 "
                         "has no terminating newline",
                         maskgat::ParseError);
  }

  TEST_CASE("pickle: every truncation of a real-structured file is a ParseError") {
    for (const char* name : {"allx", "ally", "graph"}) {
      const std::string data = tiny_planetoid_part(name);
      for (std::size_t size = 0; size < data.size(); ++size) {
        CHECK_THROWS_AS(parse(data.substr(0, size)), maskgat::ParseError);
      }
    }
  }

  TEST_CASE("pickle: corrupting any byte of a real-structured file never crashes") {
    const std::array<char, 6> replacements{'\x00', '\xff', '(', '.', 'h', 'J'};
    for (const char* name : {"x", "ty", "graph"}) {
      const std::string data = tiny_planetoid_part(name);
      for (std::size_t at = 0; at < data.size(); ++at) {
        for (const char replacement : replacements) {
          std::string corrupt = data;
          corrupt[at] = replacement;
          try {
            const Pickle p = parse(corrupt);
            const auto kind = p.value(p.root()).kind;
            if (kind == PickleKind::kDict) {
              (void)decode_adjacency(p, 8, {});
            } else if (p.value(p.root()).cls == maskgat::detail::PickleClass::kCsrMatrix) {
              (void)decode_csr_matrix(p, {});
            } else {
              (void)decode_int_matrix(p, {});
            }
          } catch (const maskgat::Error&) {
          }
        }
      }
    }
  }

  TEST_CASE("pickle: protocol 3 text and bytes are strings") {
    // (BINUNICODE 'hi', SHORT_BINBYTES 'ab', BINBYTES 'xyz') as a tuple
    const maskgat::detail::Pickle p =
        parse(bytes("\x80\x03X\x02\x00\x00\x00hiC\x02"
                    "abB\x03\x00\x00\x00xyz\x87."));
    const auto items = p.items(p.root());
    REQUIRE(items.size() == 3);
    CHECK(p.bytes(items[0]) == "hi");
    CHECK(p.bytes(items[1]) == "ab");
    CHECK(p.bytes(items[2]) == "xyz");
    CHECK_THROWS_WITH_AS(
        parse(bytes("\x80\x03X\x05\x00\x00\x00hi.")),
        "planetoid: t.pkl: BINUNICODE at byte 2 declares 5 bytes, but only 3 remain",
        maskgat::ParseError);
  }

  TEST_CASE("pickle: unsupported opcodes and protocols") {
    // SHORT_BINUNICODE (protocol 4, never written by these files)
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x03\x8c\x02hi.")),
                         "planetoid: t.pkl: unsupported opcode 0x8c at byte 2",
                         maskgat::ParseError);
    // 2 FRAME (protocol 4)
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02\x95")),
                         "planetoid: t.pkl: unsupported opcode 0x95 at byte 2",
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(
        parse(bytes("(.")),
        "planetoid: t.pkl: not a protocol-2 or -3 pickle: expected PROTO (0x80) at "
        "byte 0, got 0x28 ('(')",
        maskgat::ParseError);
    CHECK_THROWS_WITH_AS(
        parse(bytes("\x80\x04N.")),
        "planetoid: t.pkl: unsupported pickle protocol 4 at byte 1, expected 2 or 3",
        maskgat::ParseError);
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02N.N")),
                         "planetoid: t.pkl: 1 trailing byte(s) after STOP at byte 3",
                         maskgat::ParseError);
    // A persistent id (BINPERSID) belongs to torch.save files only: 2 NONE, 3 BINPERSID.
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02NQ.")),
                         "planetoid: t.pkl: BINPERSID at byte 3: a persistent id belongs in a "
                         "torch.save file, not here",
                         maskgat::ParseError);
    // So do the torch globals: 2 GLOBAL 'collections OrderedDict'.
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02"
                                     "ccollections\nOrderedDict\n"
                                     ")R.")),
                         (std::string("planetoid: t.pkl: global 'collections.OrderedDict' at "
                                      "byte 2 is not allowed: ") +
                          kAllowed)
                             .c_str(),
                         maskgat::ParseError);
  }

  TEST_CASE("pickle: LONG1 holds integers of up to 8 bytes, sign-extended") {
    // 2 LONG1 of 2 bytes 0xff 0x7f = 32767; 6 LONG1 of 1 byte 0xff = -1; 9 LONG1 of 8 bytes
    // = 10^12; 19 LONG1 of 0 bytes = 0; 21 TUPLE of the four from 1 MARK.
    const Pickle p =
        parse(bytes("\x80\x02(\x8a\x02\xff\x7f\x8a\x01\xff"
                    "\x8a\x08\x00\x10\xa5\xd4\xe8\x00\x00\x00\x8a\x00t."));
    const auto items = p.items(p.root());
    REQUIRE(items.size() == 4);
    CHECK(p.value(items[0]).integer == 32767);
    CHECK(p.value(items[1]).integer == -1);
    CHECK(p.value(items[2]).integer == 1'000'000'000'000);
    CHECK(p.value(items[3]).integer == 0);
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02\x8a\x09\x01\x02\x03\x04\x05\x06\x07\x08\x09.")),
                         "planetoid: t.pkl: LONG1 at byte 2 holds 9 bytes, more than the 8 of a "
                         "64-bit integer",
                         maskgat::ParseError);
  }

  TEST_CASE("pickle: globals outside the allowlist are refused before anything is called") {
    // 2 GLOBAL 'os system', 13 SHORT_BINSTRING 'ls', 17 TUPLE1, 18 REDUCE, 19 STOP
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02"
                                     "cos\nsystem\n"
                                     "U\x02ls\x85R.")),
                         (std::string("planetoid: t.pkl: global 'os.system' at byte 2 is not "
                                      "allowed: ") +
                          kAllowed)
                             .c_str(),
                         maskgat::ParseError);
    // 2 GLOBAL '__builtin__ eval', 19 SHORT_BINSTRING '1+1', TUPLE1, REDUCE, STOP
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02"
                                     "c__builtin__\neval\n"
                                     "U\x03"
                                     "1+1\x85R.")),
                         (std::string("planetoid: t.pkl: global '__builtin__.eval' at byte 2 is "
                                      "not allowed: ") +
                          kAllowed)
                             .c_str(),
                         maskgat::ParseError);
    // An allowed class that is not a function: 2 GLOBAL 'numpy ndarray', 17 EMPTY_TUPLE,
    // 18 REDUCE.
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02"
                                     "cnumpy\nndarray\n"
                                     ")R.")),
                         "planetoid: t.pkl: REDUCE at byte 18 cannot call numpy.ndarray",
                         maskgat::ParseError);
    // NEWOBJ of anything but a csr_matrix: 2 GLOBAL '__builtin__ list', 20 EMPTY_TUPLE, 21 NEWOBJ
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02"
                                     "c__builtin__\nlist\n"
                                     ")\x81.")),
                         "planetoid: t.pkl: NEWOBJ at byte 21 can only create a "
                         "scipy.sparse.csr.csr_matrix, got the global __builtin__.list (created "
                         "at byte 2)",
                         maskgat::ParseError);
  }

  TEST_CASE("pickle: declared lengths larger than the file") {
    // 2 BINSTRING declaring 2^31 - 1 bytes: checked against the 0 that remain, never allocated.
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02T\xff\xff\xff\x7f")),
                         "planetoid: t.pkl: BINSTRING at byte 2 declares 2147483647 bytes, but "
                         "only 0 remain",
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02U\x10"
                                     "abc")),
                         "planetoid: t.pkl: SHORT_BINSTRING at byte 2 declares 16 bytes, but only "
                         "3 remain",
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02T\xff\xff\xff\xff")),
                         "planetoid: t.pkl: BINSTRING at byte 2 declares a negative length -1",
                         maskgat::ParseError);
  }

  TEST_CASE("pickle: array sizes are checked against the limit and the data") {
    // Shape (2^31 - 1, 2^31 - 1) with no data: a LimitError, nothing allocated.
    CHECK_THROWS_WITH_AS(decode_int_matrix(parse(array_pickle(kBinIntHuge, kBinIntHuge, "")), {}),
                         "planetoid: t.pkl: the numpy.ndarray created at byte 60 has shape "
                         "(2147483647, 2147483647), over the limit of 1000000000 elements "
                         "(Limits::max_array_elements)",
                         maskgat::LimitError);
    Limits small;
    small.max_array_elements = 5;
    CHECK_THROWS_AS(decode_int_matrix(
                        parse(array_pickle(kBinInt2, kBinInt3, int32s({1, 0, 0, 0, 1, 0}))), small),
                    maskgat::LimitError);
    CHECK_THROWS_WITH_AS(decode_int_matrix(parse(array_pickle(kBinInt2, kBinInt3, "abcd")), {}),
                         "planetoid: t.pkl: the numpy.ndarray created at byte 60 holds 4 data "
                         "bytes, expected 24 for shape (2, 3) of dtype 'i4'",
                         maskgat::ParseError);
    const auto matrix =
        decode_int_matrix(parse(array_pickle(kBinInt2, kBinInt3, int32s({1, 0, 0, 0, -7, 9}))), {});
    CHECK(matrix.rows == 2);
    CHECK(matrix.cols == 3);
    CHECK(matrix.values == std::vector<std::int64_t>{1, 0, 0, 0, -7, 9});
  }

  TEST_CASE("pickle: deep nesting and stack or memo misuse") {
    std::string deep = bytes("\x80\x02") + std::string(300, '(');
    CHECK_THROWS_WITH_AS(parse(deep),
                         "planetoid: t.pkl: MARK at byte 258 nests deeper than 256 (raise it with "
                         "--max-nesting-depth)",
                         maskgat::LimitError);
    CHECK_THROWS_WITH_AS(
        parse(bytes("\x80\x02\x85.")),
        "planetoid: t.pkl: TUPLE1 at byte 2 needs 1 value(s) on the stack, found 0",
        maskgat::ParseError);
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02t.")),
                         "planetoid: t.pkl: TUPLE at byte 2 has no matching MARK",
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02NN.")),
                         "planetoid: t.pkl: STOP at byte 4 leaves 2 value(s) on the stack, "
                         "expected 1",
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02h\x05.")),
                         "planetoid: t.pkl: BINGET at byte 2 refers to memo entry 5, which was "
                         "never stored",
                         maskgat::ParseError);
    // 2 NONE, 3 LONG_BINPUT 2^32 - 1: refused instead of sizing a memo from it.
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02Nr\xff\xff\xff\xff.")),
                         "planetoid: t.pkl: LONG_BINPUT at byte 3 uses memo index 4294967295, "
                         "more than the 3 bytes before it allow",
                         maskgat::ParseError);
    // 2 EMPTY_LIST, 3 EMPTY_DICT, 4 BUILD
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02]}b.")),
                         "planetoid: t.pkl: BUILD at byte 4 expects an object below the state, "
                         "got a list (created at byte 2)",
                         maskgat::ParseError);
    // 2 EMPTY_DICT, 3 NONE, 4 APPEND
    CHECK_THROWS_WITH_AS(parse(bytes("\x80\x02}Na.")),
                         "planetoid: t.pkl: APPEND at byte 4 expects a list below the value, got "
                         "a dict (created at byte 2)",
                         maskgat::ParseError);
  }

  TEST_CASE("pickle: values of the wrong type for the decoder") {
    CHECK_THROWS_WITH_AS(decode_csr_matrix(parse(bytes("\x80\x02]q\x01.")), {}),
                         "planetoid: t.pkl: expected a scipy.sparse.csr.csr_matrix, got a list "
                         "(created at byte 2)",
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(decode_int_matrix(parse(bytes("\x80\x02}.")), {}),
                         "planetoid: t.pkl: expected a numpy.ndarray, got a dict (created at byte "
                         "2)",
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(decode_adjacency(parse(bytes("\x80\x02]q\x01.")), 4, {}),
                         "planetoid: t.pkl: expected a dict of int -> list of int "
                         "(collections.defaultdict), got a list (created at byte 2)",
                         maskgat::ParseError);
    // A one-hot matrix where a CSR matrix is expected.
    CHECK_THROWS_WITH_AS(decode_csr_matrix(parse(tiny_planetoid_part("ally")), {}),
                         "planetoid: t.pkl: expected a scipy.sparse.csr.csr_matrix, got a "
                         "numpy.ndarray (created at byte 64)",
                         maskgat::ParseError);
    // A CSR matrix where a dense array is expected.
    CHECK_THROWS_WITH_AS(decode_int_matrix(parse(tiny_planetoid_part("x")), {}),
                         "planetoid: t.pkl: expected a numpy.ndarray, got a "
                         "scipy.sparse.csr.csr_matrix (created at byte 34)",
                         maskgat::ParseError);
  }

  TEST_CASE("pickle: a CSR matrix decodes and its arrays are checked") {
    const std::string allx = tiny_planetoid_part("allx");
    const auto csr = decode_csr_matrix(parse(allx), {});
    CHECK(csr.rows == 4);
    CHECK(csr.cols == 5);
    CHECK(csr.indptr == std::vector<std::int64_t>{0, 2, 3, 5, 5});
    CHECK(csr.indices == std::vector<std::int32_t>{0, 3, 1, 2, 4});
    CHECK(csr.values == std::vector<float>{1.0F, 1.0F, 1.0F, 0.5F, 0.25F});

    const std::string indptr = int32s({0, 2, 3, 5, 5});
    const std::string indices = int32s({0, 3, 1, 2, 4});
    const std::string self = "the scipy.sparse.csr.csr_matrix created at byte 34";
    CHECK_THROWS_WITH_AS(
        decode_csr_matrix(parse(patched(allx, indptr, int32s({0, 3, 2, 5, 5}))), {}),
        ("planetoid: t.pkl: 'indptr' of " + self +
         ": not monotone: indptr[2] = 2 is less than indptr[1] = 3")
            .c_str(),
        maskgat::ParseError);
    CHECK_THROWS_WITH_AS(
        decode_csr_matrix(parse(patched(allx, indptr, int32s({0, 2, 3, 5, 6}))), {}),
        ("planetoid: t.pkl: 'indices' of " + self + ": 5 entries, expected indptr[rows] = 6")
            .c_str(),
        maskgat::ParseError);
    CHECK_THROWS_WITH_AS(
        decode_csr_matrix(parse(patched(allx, indices, int32s({0, 3, 1, 2, 9}))), {}),
        ("planetoid: t.pkl: 'indices' of " + self + ": indices[4] = 9 is outside [0, 5)").c_str(),
        maskgat::ParseError);
    CHECK_THROWS_WITH_AS(
        decode_csr_matrix(parse(patched(allx, indices, int32s({0, 0, 1, 2, 4}))), {}),
        ("planetoid: t.pkl: 'indices' of " + self + ": row 0 lists column 0 twice").c_str(),
        maskgat::ParseError);
    CHECK_THROWS_WITH_AS(
        decode_csr_matrix(parse(patched(allx,
                                        bytes("U\x02"
                                              "f4"),
                                        bytes("U\x02"
                                              "i4"))),
                          {}),
        ("planetoid: t.pkl: 'data' of " + self +
         ": expected a float array ('f4' or 'f8'), got dtype 'i4' (the numpy.ndarray created at "
         "byte 353)")
            .c_str(),
        maskgat::ParseError);
    CHECK_THROWS_WITH_AS(
        decode_csr_matrix(parse(patched(allx,
                                        bytes("U\x02"
                                              "f4"),
                                        bytes("U\x02"
                                              "c8"))),
                          {}),
        ("planetoid: t.pkl: 'data' of " + self +
         ": the numpy.ndarray created at byte 353: "
         "unsupported dtype 'c8', expected a little-endian bool, integer, float, unicode, "
         "bytes or object type such as '<f4'")
            .c_str(),
        maskgat::ParseError);

    // scipy allows unsorted rows; they come back sorted.
    const auto unsorted =
        decode_csr_matrix(parse(patched(allx, indices, int32s({3, 0, 1, 2, 4}))), {});
    CHECK(unsorted.indices == std::vector<std::int32_t>{0, 3, 1, 2, 4});

    Limits narrow;
    narrow.max_features = 4;
    CHECK_THROWS_WITH_AS(decode_csr_matrix(parse(allx), narrow),
                         ("planetoid: t.pkl: " + self +
                          " has 5 columns, over the feature limit of 4 (raise it with "
                          "--max-features)")
                             .c_str(),
                         maskgat::LimitError);
  }

  TEST_CASE("pickle: copy_reg._reconstructor builds a csr_matrix as NEWOBJ does") {
    // The fixture's opening `GLOBAL csr_matrix, BINPUT 1, EMPTY_TUPLE, NEWOBJ` becomes the
    // protocol-0/1 style `_reconstructor(csr_matrix, object, None)`; the rest is unchanged.
    const std::string newobj = bytes(
        "\x80\x02"
        "cscipy.sparse.csr\ncsr_matrix\nq\x01)\x81");
    const std::string reconstructor = bytes(
        "\x80\x02"
        "ccopy_reg\n_reconstructor\n"      // GLOBAL
        "cscipy.sparse.csr\ncsr_matrix\n"  // GLOBAL
        "c__builtin__\nobject\n"           // GLOBAL
        "N\x87R");                         // NONE, TUPLE3, REDUCE
    std::string data = tiny_planetoid_part("allx");
    REQUIRE(data.starts_with(newobj));
    data.replace(0, newobj.size(), reconstructor);
    const auto csr = decode_csr_matrix(parse(data), {});
    CHECK(csr.rows == 4);
    CHECK(csr.indices == std::vector<std::int32_t>{0, 3, 1, 2, 4});

    // Any other class for the reconstructor is refused: 2 GLOBAL, 27 GLOBAL list, 45 GLOBAL
    // object, 65 NONE, 66 TUPLE3, 67 REDUCE.
    CHECK_THROWS_WITH_AS(
        parse(bytes("\x80\x02"
                    "ccopy_reg\n_reconstructor\n"
                    "c__builtin__\nlist\n"
                    "c__builtin__\nobject\n"
                    "N\x87R.")),
        "planetoid: t.pkl: copy_reg._reconstructor called at byte 67: argument 1 is the global "
        "__builtin__.list (created at byte 27), expected scipy.sparse.csr.csr_matrix",
        maskgat::ParseError);
  }

  TEST_CASE("pickle: an adjacency dict decodes in file order and ids are checked") {
    const Pickle graph = parse(tiny_planetoid_part("graph"));
    const auto adjacency = decode_adjacency(graph, 8, {});
    CHECK(adjacency.sources == std::vector<maskgat::NodeId>{0, 0, 0, 1, 2, 2, 3, 4, 5, 6, 7});
    CHECK(adjacency.targets == std::vector<maskgat::NodeId>{1, 2, 1, 0, 0, 2, 4, 7, 6, 5, 4});
    CHECK_THROWS_WITH_AS(decode_adjacency(graph, 7, {}),
                         "planetoid: t.pkl: dict key 7 created at byte 118 is outside [0, 7)",
                         maskgat::ParseError);
    // 2 EMPTY_DICT, 3 MARK, 4 BININT1 0, 6 EMPTY_LIST, 7 BININT1 9, 9 APPEND, 10 SETITEMS
    CHECK_THROWS_WITH_AS(decode_adjacency(parse(bytes("\x80\x02}(K\x00]K\x09"
                                                      "au.")),
                                          8, {}),
                         "planetoid: t.pkl: node id 9 created at byte 7 in the list of key 0 is "
                         "outside [0, 8)",
                         maskgat::ParseError);
    // The same key twice: 4 BININT1 1 and 8 BININT1 1.
    CHECK_THROWS_WITH_AS(decode_adjacency(parse(bytes("\x80\x02}(K\x01]K\x01]u.")), 8, {}),
                         "planetoid: t.pkl: dict key 1 appears twice (at bytes 4 and 7)",
                         maskgat::ParseError);
    Limits few;
    few.max_edges = 10;
    CHECK_THROWS_WITH_AS(decode_adjacency(graph, 8, few),
                         "planetoid: t.pkl: the dict holds 11 edges, over the edge limit of 10 "
                         "(raise it with --max-edges)",
                         maskgat::LimitError);
  }

  TEST_CASE("pickle: files that cannot be read") {
    const auto dir = maskgat::test::scratch_dir("pickle-files");
    const std::string missing = (dir / "nope.pkl").string();
    CHECK_THROWS_WITH_AS(
        maskgat::detail::read_pickle(dir / "nope.pkl", "planetoid", {}),
        ("planetoid: cannot open '" + missing + "': No such file or directory").c_str(),
        maskgat::IoError);
    const auto big =
        maskgat::test::write_file("pickle-files", "big.pkl", "\x80" + std::string(99, 'N'));
    Limits tiny;
    tiny.max_file_bytes = 10;
    CHECK_THROWS_WITH_AS(maskgat::detail::read_pickle(big, "planetoid", tiny),
                         ("planetoid: " + big.string() +
                          ": file is 100 bytes, over the limit of 10 (raise it with "
                          "--max-file-bytes)")
                             .c_str(),
                         maskgat::LimitError);
  }
}
