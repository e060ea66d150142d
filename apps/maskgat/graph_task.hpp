#pragma once
// `maskgat train --task graph`, and `evaluate` and `predict` of graph classifiers on TU
// collections: many graphs, one label each.

#include "train.hpp"
#include "use_model.hpp"

namespace maskgat::app {

// Trains a graph classifier on a collection under Errica et al.'s stratified folds: every fold
// (--folds K) or one (--fold k, default 1 of 10), choosing per fold among the --model
// candidates on its validation graphs; returns the exit code.
int run_train_graphs(const TrainCommandOptions& options);

// Scores a graph classifier on a collection's graphs, leaving out those it was fitted to.
int run_evaluate_graphs(const EvaluateOptions& options);

// One row per graph of a collection: its predicted class and probabilities.
int run_predict_graphs(const PredictOptions& options);

}  // namespace maskgat::app
