#pragma once
// Training curves for `maskgat train --plot`: the CSV behind the picture, always, and the picture
// itself (SVG or PNG) when gnuplot is installed.

#include <filesystem>
#include <string>
#include <vector>

#include "maskgat/train/trainer.hpp"

namespace maskgat::app {

// The CSV written beside a plot: `image` with the extension `.csv`.
std::filesystem::path curves_csv(const std::filesystem::path& image);

// Throws InvalidArgument unless `image` ends in .svg or .png.
void check_plot_path(const std::filesystem::path& image);

// Writes `curves_csv(image)` (epoch,train_loss,val_loss,train_acc,val_acc: one row per epoch)
// and, when gnuplot is on PATH, draws loss and accuracy per epoch into `image`; both files are
// written to a temporary name and renamed. Without gnuplot it says so on stderr and keeps the CSV.
// Returns whether the picture was drawn.
// @throws IoError when a file exists and `force` is false, a write fails, or gnuplot fails.
bool plot_training_curves(const std::vector<train::EpochStats>& epochs, const std::string& title,
                          const std::filesystem::path& image, bool force);

}  // namespace maskgat::app
