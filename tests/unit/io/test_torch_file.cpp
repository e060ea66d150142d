// The torch.save reader: state dicts written byte by byte as PyTorch writes them (every dtype,
// views, wrapped checkpoints, any folder name, deflated members) and the exact message for every
// kind of malformed or hostile file.

#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/io/torch_file.hpp"
#include "support/paths.hpp"
#include "support/torch_writer.hpp"

namespace {

using maskgat::NamedTensor;
using maskgat::read_state_dict;
using maskgat::StateDict;
using maskgat::TorchDtype;
using maskgat::TorchReadOptions;
using maskgat::detail::PickleWriter;
using maskgat::detail::TorchTensorRecord;
using maskgat::test::Members;
using maskgat::test::raw_bytes;
using maskgat::test::state_dict_pickle;
using maskgat::test::torch_zip;

std::filesystem::path save(const std::string& name, const std::string& bytes) {
  return maskgat::test::write_file("torch_file", name, bytes);
}

StateDict read(const std::string& bytes, const TorchReadOptions& options = {}) {
  return read_state_dict(save("t.pt", bytes), options);
}

// The message of the error reading `bytes` throws, its path replaced by `F`.
std::string error_of(const std::string& bytes, const TorchReadOptions& options = {}) {
  const std::string path = save("t.pt", bytes).string();
  try {
    static_cast<void>(read_state_dict(path, options));
  } catch (const maskgat::Error& error) {
    std::string text = error.what();
    const std::size_t at = text.find(path);
    if (at != std::string::npos) text.replace(at, path.size(), "F");
    return text;
  }
  return "no error";
}

TorchTensorRecord spec(std::string name, std::string key, std::vector<std::int64_t> shape,
                       std::int64_t numel) {
  TorchTensorRecord s;
  s.name = std::move(name);
  s.key = std::move(key);
  s.shape = std::move(shape);
  s.numel = numel;
  return s;
}

const std::string kSix = raw_bytes<float>({1, 2, 3, 4, 5, 6});

// A state dict of one 2 x 3 float tensor over storage 0.
std::string one_tensor(TorchTensorRecord s, const std::string& storage = kSix) {
  return torch_zip("archive", state_dict_pickle({s}), {{"0", storage}});
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("torch: a state dict of float tensors, a parameter and metadata reads in order") {
    TorchTensorRecord weight = spec("lin.weight", "0", {2, 3}, 6);
    weight.parameter = true;
    TorchTensorRecord bias = spec("lin.bias", "1", {2}, 2);
    bias.metadata = true;
    const StateDict state = read(torch_zip("archive", state_dict_pickle({weight, bias}),
                                           {{"0", kSix}, {"1", raw_bytes<float>({-1.5F, 0.25F})}}));
    REQUIRE(state.tensors.size() == 2);
    CHECK(state.tensors[0].name == "lin.weight");
    CHECK(state.tensors[0].dtype == TorchDtype::kFloat32);
    CHECK(state.tensors[0].shape == std::vector<std::int64_t>{2, 3});
    CHECK(state.tensors[0].values == std::vector<double>{1, 2, 3, 4, 5, 6});
    CHECK(state.tensors[1].values == std::vector<double>{-1.5, 0.25});
    CHECK(state.find("lin.bias") == &state.tensors[1]);
    CHECK(state.find("lin") == nullptr);
  }

  TEST_CASE("torch: views read through their offset and strides; shared storages read once") {
    // The transpose of the 2 x 3 storage, and its second row as a slice.
    TorchTensorRecord transposed = spec("t", "0", {3, 2}, 6);
    transposed.stride = {1, 3};
    TorchTensorRecord row = spec("row", "0", {3}, 6);
    row.offset = 3;
    TorchTensorRecord expanded = spec("expanded", "0", {2, 2}, 6);
    expanded.stride = {0, 1};
    const StateDict state =
        read(torch_zip("m", state_dict_pickle({transposed, row, expanded}), {{"0", kSix}}));
    CHECK(state.tensors[0].values == std::vector<double>{1, 4, 2, 5, 3, 6});
    CHECK(state.tensors[1].values == std::vector<double>{4, 5, 6});
    CHECK(state.tensors[2].values == std::vector<double>{1, 2, 1, 2});
  }

  TEST_CASE("torch: every storage class reads to its dtype and values") {
    const auto one = [](const std::string& cls, const std::string& storage, std::int64_t numel) {
      TorchTensorRecord s = spec("x", "0", {numel}, numel);
      s.storage_class = cls;
      return read(one_tensor(s, storage)).tensors.at(0);
    };
    const NamedTensor f64 = one("DoubleStorage", raw_bytes<double>({0.1, -2.0}), 2);
    CHECK(f64.dtype == TorchDtype::kFloat64);
    CHECK(f64.values == std::vector<double>{0.1, -2.0});
    // float16 1.0 = 0x3c00, -2.5 = 0xc100, 65504 = 0x7bff; bfloat16 1.0 = 0x3f80, -0.5 = 0xbf00.
    const NamedTensor f16 =
        one("HalfStorage", raw_bytes<std::uint16_t>({0x3c00, 0xc100, 0x7bff}), 3);
    CHECK(f16.dtype == TorchDtype::kFloat16);
    CHECK(f16.values == std::vector<double>{1.0, -2.5, 65504.0});
    const NamedTensor bf16 = one("BFloat16Storage", raw_bytes<std::uint16_t>({0x3f80, 0xbf00}), 2);
    CHECK(bf16.dtype == TorchDtype::kBFloat16);
    CHECK(bf16.values == std::vector<double>{1.0, -0.5});
    const NamedTensor i64 = one("LongStorage", raw_bytes<std::int64_t>({-7, 1LL << 40}), 2);
    CHECK(i64.dtype == TorchDtype::kInt64);
    CHECK(i64.values == std::vector<double>{-7.0, 1099511627776.0});
    const NamedTensor i32 = one("IntStorage", raw_bytes<std::int32_t>({-3, 9}), 2);
    CHECK(i32.dtype == TorchDtype::kInt32);
    CHECK(i32.values == std::vector<double>{-3.0, 9.0});
    const NamedTensor flags = one("BoolStorage", std::string("\x01\x00", 2), 2);
    CHECK(flags.dtype == TorchDtype::kBool);
    CHECK(flags.values == std::vector<double>{1.0, 0.0});
    CHECK(std::string(maskgat::torch_dtype_name(TorchDtype::kBFloat16)) == "bfloat16");
  }

  TEST_CASE("torch: a 0-d tensor, a GPU location, deflated members and no byteorder member") {
    TorchTensorRecord count = spec("bn.num_batches_tracked", "0", {}, 1);
    count.storage_class = "LongStorage";
    count.location = "cuda:0";
    const StateDict state = read(torch_zip("gat", state_dict_pickle({count}),
                                           {{"0", raw_bytes<std::int64_t>({42})}}, "", true));
    CHECK(state.tensors.at(0).shape.empty());
    CHECK(state.tensors.at(0).values == std::vector<double>{42.0});
  }

  TEST_CASE("torch: a checkpoint that wraps the state dict is read with its key") {
    PickleWriter p;
    p.op('}').op('(').text("epoch").integer(12).text("model_state_dict");
    p.global("collections", "OrderedDict").op(')').op('R').op('(');
    p.text("w").tensor(spec("w", "0", {6}, 6)).op('u').op('u');
    const std::string file = torch_zip("archive", p.finish(), {{"0", kSix}});
    TorchReadOptions options;
    options.key = "model_state_dict";
    CHECK(read(file, options).tensors.at(0).values.size() == 6);
    CHECK(error_of(file) ==
          "torch: F: member 'archive/data.pkl': the file holds a dict whose item 'epoch' is an int "
          "(created at byte 14), not a tensor: if it wraps a state dict, name the item with --key; "
          "its keys are 'epoch', 'model_state_dict'");
    options.key = "state_dict";
    CHECK(error_of(file, options) ==
          "torch: F: member 'archive/data.pkl': the file's dict has no item 'state_dict'; its keys "
          "are 'epoch', 'model_state_dict'");
    options.key = "epoch";
    CHECK(error_of(file, options) ==
          "torch: F: member 'archive/data.pkl': item 'epoch' is an int (created at byte 14), "
          "expected a state dict");
  }

  TEST_CASE("torch: files that are not torch.save zips are named") {
    CHECK(error_of(std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 14)) ==
          "torch: F: written in the format of PyTorch before 1.6 (not a zip archive): load it in "
          "Python and save it again with torch.save in PyTorch 1.6 or later");
    CHECK(error_of("hello") ==
          "torch: F: not a torch.save file: expected a zip archive (starting with 'PK'), got "
          "'hello'");
    CHECK(error_of(
              maskgat::test::zip_bytes({{"m/constants.pkl", "x"}, {"m/code/a.py", "y"}}, false)) ==
          "torch: F: a TorchScript archive (torch.jit.save), not a state dict: save "
          "model.state_dict() with torch.save");
    CHECK(error_of(maskgat::test::zip_bytes({{"a/data.pkl", "x"}, {"b/data.pkl", "y"}}, false)) ==
          "torch: F: members 'a/data.pkl' and 'b/data.pkl': more than one folder holds a data.pkl");
    CHECK(error_of(maskgat::test::zip_bytes({{"a/../data.pkl", "x"}}, false)) ==
          "torch: F: member name 'a/../data.pkl' is not a relative path of named folders (it "
          "holds a '.' or '..' part)");
    CHECK(error_of(torch_zip("archive", state_dict_pickle({}), {}, "big")) ==
          "torch: F: member 'archive/byteorder' holds 'big', expected 'little' (files written on "
          "big-endian machines are not read)");
  }

  TEST_CASE("torch: a pickle that names anything but a state dict's globals is refused") {
    for (const auto& [module, name] : std::vector<std::pair<std::string, std::string>>{
             {"posix", "system"},
             {"os", "system"},
             {"builtins", "eval"},
             {"__builtin__", "eval"},
             {"torch_geometric.nn.conv.gat_conv", "GATConv"},
             {"numpy", "ndarray"}}) {
      PickleWriter p;
      p.global(module, name).text("echo hacked").op('\x85').op('R');
      const std::string message = error_of(torch_zip("archive", p.finish(), {}));
      CAPTURE(message);
      CHECK(message.starts_with("torch: F: member 'archive/data.pkl': global '" + module + "." +
                                name +
                                "' at byte 2 is not allowed: expected one of "
                                "collections.OrderedDict, torch._utils._rebuild_tensor_v2, "));
    }
    // A persistent id is no way around it: only ('storage', class, key, location, numel) is one.
    PickleWriter p;
    p.global("builtins", "eval");
    const std::string message = error_of(torch_zip("archive", p.op('Q').finish(), {}));
    CHECK(message.find("global 'builtins.eval' at byte 2 is not allowed") != std::string::npos);
    PickleWriter q;
    q.text("os.system").op('Q');
    CHECK(error_of(torch_zip("archive", q.finish(), {})) ==
          "torch: F: member 'archive/data.pkl': BINPERSID at byte 16 expects a tuple ('storage', "
          "class, key, location, numel), got a string (created at byte 2)");
  }

  TEST_CASE("torch: storages that are missing, named twice or of the wrong size are refused") {
    CHECK(error_of(one_tensor(spec("w", "7", {2, 3}, 6))) ==
          "torch: F: member 'archive/data.pkl': storage '7' created at byte 120 has no member "
          "'archive/data/7'");
    TorchTensorRecord a = spec("a", "0", {6}, 6);
    TorchTensorRecord b = spec("b", "0", {3}, 6);
    b.storage_class = "DoubleStorage";
    CHECK(error_of(torch_zip("archive", state_dict_pickle({a, b}), {{"0", kSix}})) ==
          "torch: F: member 'archive/data.pkl': storage '0' is named as torch.FloatStorage of 6 "
          "elements created at byte 120 and as torch.DoubleStorage of 6 created at byte 252");
    // The dtype the class implies and the member's bytes disagree.
    TorchTensorRecord wide = spec("w", "0", {6}, 6);
    wide.storage_class = "DoubleStorage";
    CHECK(error_of(one_tensor(wide)) ==
          "torch: F: member 'archive/data/0' holds 24 bytes, but its storage is named as "
          "torch.DoubleStorage of 6 elements (8 bytes each)");
    // A zip member whose headers claim more bytes than its data holds.
    std::string lying = one_tensor(spec("w", "0", {6}, 6));
    maskgat::test::patch_declared_size(lying, "archive/data/0", 4000);
    CHECK(error_of(lying) == "torch: F: member 'archive/data/0': Zip archive inconsistent");
  }

  TEST_CASE("torch: views past their storage, negative strides and huge shapes are refused") {
    TorchTensorRecord past = spec("w", "0", {3, 2}, 6);
    past.offset = 1;
    CHECK(error_of(one_tensor(past)) ==
          "torch: F: member 'archive/data.pkl': tensor 'w' of shape (3, 2), strides (2, 1) and "
          "offset 1 reads past the end of its 6-element storage");
    TorchTensorRecord negative = spec("w", "0", {3}, 6);
    negative.stride = {-1};
    CHECK(error_of(one_tensor(negative)) ==
          "torch: F: member 'archive/data.pkl': tensor 'w': stride 0 is -1, expected a "
          "non-negative int");
    TorchTensorRecord overflowing = spec("w", "0", {3, 2}, 6);
    overflowing.stride = {std::numeric_limits<std::int64_t>::max(), 1};
    CHECK(
        error_of(one_tensor(overflowing)).ends_with("reads past the end of its 6-element storage"));
    TorchTensorRecord huge = spec("w", "0", {1'000'000, 1'000'000}, 6);
    huge.stride = {0, 0};
    CHECK(error_of(one_tensor(huge)) ==
          "torch: F: tensor 'w' of shape (1000000, 1000000) takes the state dict past 1000000000 "
          "elements (Limits::max_array_elements)");
    TorchTensorRecord claim = spec("w", "0", {1'000'000'000'000}, 6);  // LONG1 in the pickle
    claim.stride = {0};
    CHECK(error_of(one_tensor(claim)) ==
          "torch: F: tensor 'w' of shape (1000000000000) takes the state dict past 1000000000 "
          "elements (Limits::max_array_elements)");
    TorchTensorRecord offset = spec("w", "0", {2}, 6);
    offset.offset = -2;
    CHECK(error_of(one_tensor(offset)) ==
          "torch: F: member 'archive/data.pkl': tensor 'w' has the negative storage offset -2");
  }

  TEST_CASE("torch: a state dict with a repeated key or a value that is not a tensor is refused") {
    const std::string twice =
        torch_zip("archive", state_dict_pickle({spec("w", "0", {6}, 6), spec("w", "0", {6}, 6)}),
                  {{"0", kSix}});
    CHECK(error_of(twice) ==
          "torch: F: member 'archive/data.pkl': the state dict gives the key "
          "'w' twice");
    PickleWriter p;
    p.global("collections", "OrderedDict").op(')').op('R').text("x").integer(3).op('s');
    CHECK(error_of(torch_zip("archive", p.finish(), {})) ==
          "torch: F: member 'archive/data.pkl': the file holds a dict whose item 'x' is an int "
          "(created at byte 35), not a tensor: if it wraps a state dict, name the item with --key; "
          "its keys are 'x'");
    PickleWriter list;
    list.op(']');
    CHECK(error_of(torch_zip("archive", list.finish(), {})) ==
          "torch: F: member 'archive/data.pkl': the file holds a list (created at byte 2), "
          "expected a state dict (an OrderedDict of tensors)");
  }
}

TEST_SUITE("unit") {
  TEST_CASE("torch: write_state_dict writes every dtype back bitwise, and refuses what it cannot") {
    StateDict state;
    state.tensors.push_back({"w", TorchDtype::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6.5}});
    state.tensors.push_back({"d", TorchDtype::kFloat64, {2}, {0.1, -1e300}});
    state.tensors.push_back({"h", TorchDtype::kFloat16, {1}, {-2.5}});
    state.tensors.push_back({"b", TorchDtype::kBFloat16, {1}, {0.5}});
    state.tensors.push_back({"n", TorchDtype::kInt64, {}, {150000}});
    state.tensors.push_back({"i", TorchDtype::kInt32, {2}, {-3, 7}});
    state.tensors.push_back({"m", TorchDtype::kBool, {2}, {1, 0}});
    const auto path = save("written.pt", "");
    maskgat::write_state_dict(path, state, /*overwrite=*/true);
    const StateDict back = read_state_dict(path, {});
    REQUIRE(back.tensors.size() == state.tensors.size());
    for (std::size_t k = 0; k < state.tensors.size(); ++k) {
      CAPTURE(state.tensors[k].name);
      CHECK(back.tensors[k].name == state.tensors[k].name);
      CHECK(back.tensors[k].dtype == state.tensors[k].dtype);
      CHECK(back.tensors[k].shape == state.tensors[k].shape);
      CHECK(back.tensors[k].values == state.tensors[k].values);
    }
    CHECK_THROWS_WITH_AS(maskgat::write_state_dict(path, state, false),
                         doctest::Contains("--force"), maskgat::IoError);
    const auto refused = [&](StateDict bad) {
      try {
        maskgat::write_state_dict(path, bad, true);
      } catch (const maskgat::InvalidArgument& error) {
        return std::string(error.what());
      }
      return std::string("no error");
    };
    StateDict twice = state;
    twice.tensors.push_back(state.tensors[0]);
    CHECK(refused(twice) == "write_state_dict: the name 'w' is given twice");
    StateDict short_values = state;
    short_values.tensors[0].values.pop_back();
    CHECK(refused(short_values) ==
          "write_state_dict: tensor 'w' has 5 values for a shape of 6 elements");
    StateDict fraction = state;
    fraction.tensors[5].values[0] = 0.5;
    CHECK(refused(fraction) ==
          "write_state_dict: tensor 'i' holds 0.500000, which int32 cannot hold");
  }
}
