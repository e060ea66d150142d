#include <iostream>

#include "maskgat/maskgat.hpp"  // everything public

int main() {
  maskgat::DatasetOptions options;
  options.data_dir = maskgat::resolve_data_dir(std::nullopt, "datasets");  // or $MASKGAT_DATA_DIR
  // Feature rows are normalised to sum 1, as the GAT paper (FeatureNormalization::kAuto).
  const maskgat::Dataset cora = maskgat::load_dataset("cora", options);

  maskgat::train::Trainer trainer(cora, maskgat::train::paper_recipe("cora"));
  const auto result = trainer.fit([](const maskgat::train::EpochStats& epoch) {
    if (epoch.epoch % 100 == 0) std::cout << epoch.epoch << ": val " << epoch.val_accuracy << '\n';
  });
  std::cout << "test accuracy " << result.test_accuracy << " (epoch " << result.best_epoch << ")\n";
  maskgat::train::save_checkpoint("cora.ckpt", trainer.checkpoint(), /*overwrite=*/true);

  // Later, or in another program: the saved model on the data, as `maskgat predict` runs it.
  maskgat::train::Predictor predictor(maskgat::train::load_checkpoint("cora.ckpt"), cora);
  const std::vector<std::int32_t> classes = predictor.predicted_classes();
  std::cout << "paper 0 is predicted " << cora.class_names[static_cast<std::size_t>(classes[0])]
            << '\n';
  return result.test_accuracy >= 0.75 ? 0 : 1;
}
