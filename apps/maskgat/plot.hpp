#pragma once
// Pictures for the command line, drawn by gnuplot when it is installed, each with the CSV behind
// it written beside it (always, so the data survives without gnuplot): training curves
// (`train --plot`) and a node's attention (`predict --plot-attention`).

#include <filesystem>
#include <string>
#include <vector>

#include "data_options.hpp"
#include "maskgat/train/trainer.hpp"

namespace maskgat::app {

// The CSV written beside a plot: `image` with the extension `.csv`.
std::filesystem::path plot_csv(const std::filesystem::path& image);

// Checks a plot's outputs before anything is computed: throws InvalidArgument naming `option`
// unless `image` ends in .svg or .png, and IoError (as `check_output`) when `image` or its CSV
// exists and `force` is false.
void check_plot_outputs(const char* option, const std::filesystem::path& image, bool force);

// The functions below write `plot_csv(image)` and, when gnuplot is on PATH, draw `image` through
// a temporary file that is renamed (replacing files only with `run.force`); without gnuplot they
// say so on stderr (unless --quiet) and keep the CSV. They
// return whether the picture was drawn. Call `check_plot_outputs` first.
// @throws IoError when a write fails or gnuplot fails.

// Loss and accuracy per epoch, training and validation; the CSV has
// epoch,train_loss,val_loss,train_acc,val_acc, one row per epoch.
bool plot_training_curves(const std::vector<train::EpochStats>& epochs, const std::string& title,
                          const std::filesystem::path& image, const RunOptions& run);

// `node`'s neighbours on a circle around it, each joined to it by a line whose width grows with
// its attention weight `alpha`; the CSV has neighbour,alpha,x,y, one row per neighbour.
bool plot_attention(const std::string& node, const std::vector<std::string>& neighbours,
                    const std::vector<double>& alpha, const std::filesystem::path& image,
                    const RunOptions& run);

}  // namespace maskgat::app
