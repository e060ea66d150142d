// Fuzz target: the checkpoint reader, then the model it describes, applied as `maskgat predict`
// applies it. Each input is read as it is, and again with its header and checksum repaired
// (format version 1 to 8 by the input's length, the payload's size and FNV-1a 64 checksum), so
// that mutations reach every version's payload parser and the checks of the content behind the
// checksum, instead of stopping at the checksum.

#include <string>

#include "fuzz/fuzz_input.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/io/features.hpp"
#include "maskgat/nn/loss.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "maskgat/train/metrics.hpp"
#include "support/checkpoint_file.hpp"

namespace {

std::string repaired(std::string_view input) {
  using maskgat::test::kCheckpointHeader;
  const std::string_view payload =
      input.size() >= kCheckpointHeader + 8
          ? input.substr(kCheckpointHeader, input.size() - kCheckpointHeader - 8)
          : input;
  return maskgat::test::frame_checkpoint(payload, static_cast<std::uint32_t>(input.size() % 8) + 1);
}

// A loaded model on a 3-node cycle, every feature 1: each prediction must name one of the
// checkpoint's classes.
void apply(const maskgat::train::Checkpoint& checkpoint) {
  maskgat::nn::Model model = maskgat::train::load_model(checkpoint);
  const auto width = static_cast<Eigen::Index>(checkpoint.options.model.in_features);
  const maskgat::FeatureMatrix input(maskgat::DenseFeatures::Ones(3, width));
  const maskgat::Graph cycle(3, {0, 1, 2, 3}, {2, 0, 1});
  const maskgat::Graph mask = maskgat::masks::from_graph(cycle, true);
  maskgat::Rng unused(0);
  const auto& logits = model.forward(mask, input.view(), maskgat::nn::Mode::kEval, unused);
  for (const std::int32_t predicted : maskgat::train::predict_classes(logits)) {
    (void)checkpoint.class_names.at(static_cast<std::size_t>(predicted));
  }
}

void load(const std::filesystem::path& path) {
  maskgat::fuzz::accept_errors([&] { apply(maskgat::train::load_checkpoint(path)); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input = maskgat::fuzz::as_text(data, size);
  load(maskgat::fuzz::write_input(input, "model.bin"));
  load(maskgat::fuzz::write_input(repaired(input), "model.bin"));
  return 0;
}
