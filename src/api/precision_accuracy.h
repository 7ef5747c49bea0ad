// How far a lower precision's outputs are from f32's (`tilefuse bench --precision bf16
// --accuracy`): the model compiled twice, in f32 and in the asked precision, and both run on the
// same seeded inputs, several times. Per float output: the worst relative error, max |low - f32|
// over max |f32|, over every sample; for a classifier's logits (a rank-2 output of more than one
// class) also the share of rows whose top-1 class agrees.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/runner.h"
#include "ir/graph.h"

namespace tilefuse::api {

struct OutputAccuracy {
  std::string name;
  double worst_relative = 0;
  std::optional<double> top1_agreement;  // classifiers' logits only
};

struct AccuracyReport {
  std::string precision;  // the one compared with f32, as it ran ("f32" where the CPU lacks it)
  int samples = 0;
  std::vector<OutputAccuracy> outputs;  // float outputs, in the graph's order
};

// `options.precision` is the lower precision (UserError when it is f32). Inputs in `given` are the
// same in every sample; the others are random data from seeds seed, seed + 1, ...
AccuracyReport measure_accuracy(const Graph& graph, const std::map<std::string, Tensor>& given, uint64_t seed,
                                int samples, const ExecutionOptions& options);

nlohmann::json accuracy_to_json(const AccuracyReport& report);
std::string accuracy_to_table(const AccuracyReport& report);

}  // namespace tilefuse::api
