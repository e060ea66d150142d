#pragma once
// `maskgat train --task link`, and `evaluate` and `predict` of link models: which node pairs
// are edges, from the states an encoder gives each node.

#include "maskgat/train/checkpoint.hpp"
#include "train.hpp"
#include "use_model.hpp"

namespace maskgat::app {

// Trains a link model on one graph's edges split 85 / 5 / 10 (--val-fraction, --test-fraction)
// or as --edge-split reads them, one or several seeds; returns the exit code.
int run_train_links(TrainCommandOptions& options);

// Scores a link model on the test pairs of the split it trained on (drawn again from its seed,
// or read with --edge-split).
int run_evaluate_links(EvaluateOptions& options, train::Checkpoint checkpoint);

// Scores the pairs of --pairs, or lists the --top-k nodes --recommend should link to, with the
// states of every node on the whole graph.
int run_predict_links(PredictOptions& options, train::Checkpoint checkpoint);

}  // namespace maskgat::app
