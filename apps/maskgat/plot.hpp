#pragma once
// Pictures for the command line, drawn by gnuplot when it is installed, each with the CSV behind
// it written beside it (always, so the data survives without gnuplot): training curves
// (`train --plot`) and a node's attention (`predict --plot-attention`).

#include <filesystem>
#include <string>
#include <vector>

#include "data_options.hpp"
#include "maskgat/train/trainer.hpp"
#include "outputs.hpp"

namespace maskgat::app {

// The CSV written beside a plot: `image` with the extension `.csv`.
std::filesystem::path plot_csv(const std::filesystem::path& image);

// Registers a plot's outputs, `image` and its CSV, with `outputs` (checked before anything is
// computed); throws InvalidArgument naming `option` unless `image` ends in .svg or .png.
void add_plot_outputs(OutputPlan& outputs, const std::string& option,
                      const std::filesystem::path& image);

// The functions below write `plot_csv(image)` and, when gnuplot is on PATH, draw `image`
// (replacing files only with `run.force`); without gnuplot they say so on stderr (unless
// --quiet) and keep the CSV. gnuplot reads and writes only files in a scratch directory of its
// own, and every string the user gave (names, titles) reaches it as a script argument, never as
// script text: a file name such as `<cmd` or `|cmd` is a name, not a pipe. They return whether
// the picture was drawn. Call `add_plot_outputs` and check the plan first.
// @throws IoError when a write fails or gnuplot fails.

// Loss and accuracy per epoch, training and validation, with a dashed line at `best_epoch` (the
// parameters the model keeps); the CSV has epoch,train_loss,val_loss,train_acc,val_acc, one row
// per epoch.
bool plot_training_curves(const std::vector<train::EpochStats>& epochs, std::int64_t best_epoch,
                          const std::string& title, const std::filesystem::path& image,
                          const RunOptions& run);

// `node`'s neighbours on a circle around it, each joined to it by a line whose width grows with
// its attention weight `alpha`; the CSV has neighbour,alpha,x,y, one row per neighbour.
bool plot_attention(const std::string& node, const std::vector<std::string>& neighbours,
                    const std::vector<double>& alpha, const std::filesystem::path& image,
                    const RunOptions& run);

}  // namespace maskgat::app
