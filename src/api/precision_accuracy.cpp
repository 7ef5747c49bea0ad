#include "api/precision_accuracy.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "api/text_table.h"
#include "driver/executor.h"
#include "ir/error.h"
#include "runtime/input_binding.h"

namespace tilefuse::api {

namespace {

// max |low - exact| and max |exact| of one output.
struct Deviation {
  double error = 0, scale = 0;
};

Deviation deviation(const Tensor& exact, const Tensor& low) {
  Deviation d;
  for (int64_t i = 0; i < exact.numel(); ++i) {
    d.error = std::max(d.error, std::abs(low.get_f64(i) - exact.get_f64(i)));
    d.scale = std::max(d.scale, std::abs(exact.get_f64(i)));
  }
  return d;
}

bool is_classifier_output(const Tensor& t) { return t.shape().size() == 2 && t.shape()[1] > 1; }

// Rows of [N, classes] logits whose largest class is the same in both.
int64_t agreeing_rows(const Tensor& exact, const Tensor& low) {
  const int64_t rows = exact.shape()[0], classes = exact.shape()[1];
  int64_t agree = 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t best_exact = 0, best_low = 0;
    for (int64_t c = 1; c < classes; ++c) {
      if (exact.get_f64(r * classes + c) > exact.get_f64(r * classes + best_exact)) best_exact = c;
      if (low.get_f64(r * classes + c) > low.get_f64(r * classes + best_low)) best_low = c;
    }
    agree += best_exact == best_low;
  }
  return agree;
}

}  // namespace

AccuracyReport measure_accuracy(const Graph& graph, const std::map<std::string, Tensor>& given, uint64_t seed,
                                int samples, const ExecutionOptions& options) {
  if (options.precision == runtime::Precision::f32) {
    fail_user("--accuracy compares a lower precision with f32: give --precision bf16 (or TILEFUSE_PRECISION=bf16)");
  }
  if (samples < 1) fail_user("--samples must be a positive integer, got {}", samples);
  ExecutionOptions exact_options = options;
  exact_options.precision = runtime::Precision::f32;
  driver::ExecutorCounters exact_counters, low_counters;
  driver::Executor exact(graph, executor_options(Mode::fused, exact_options), exact_counters);
  driver::Executor low(graph, executor_options(Mode::fused, options), low_counters);
  AccuracyReport report;
  report.precision = runtime::precision_name(runtime::effective_precision(options.precision));
  report.samples = samples;
  std::vector<Deviation> worst(graph.outputs().size());
  std::vector<int64_t> agree(graph.outputs().size()), rows(graph.outputs().size());
  for (int s = 0; s < samples; ++s) {
    const runtime::BoundInputs inputs =
        runtime::bind_inputs(graph, given, {.fill_missing_randomly = true, .seed = seed + static_cast<uint64_t>(s)});
    const std::vector<Tensor> a = exact.run(inputs.by_name()), b = low.run(inputs.by_name());
    for (size_t i = 0; i < a.size(); ++i) {
      if (!is_float(a[i].dtype())) continue;
      const Deviation d = deviation(a[i], b[i]);
      worst[i].error = std::max(worst[i].error, d.error / std::max(d.scale, 1e-30));
      if (is_classifier_output(a[i])) agree[i] += agreeing_rows(a[i], b[i]), rows[i] += a[i].shape()[0];
    }
  }
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    if (!is_float(graph.outputs()[i]->dtype)) continue;
    OutputAccuracy out{graph.outputs()[i]->name, worst[i].error, std::nullopt};
    if (rows[i] > 0) out.top1_agreement = static_cast<double>(agree[i]) / static_cast<double>(rows[i]);
    report.outputs.push_back(out);
  }
  return report;
}

nlohmann::json accuracy_to_json(const AccuracyReport& report) {
  nlohmann::json outputs = nlohmann::json::array();
  for (const OutputAccuracy& o : report.outputs) {
    nlohmann::json j{{"name", o.name}, {"worst_relative_error", o.worst_relative}};
    if (o.top1_agreement) j["top1_agreement"] = *o.top1_agreement;
    outputs.push_back(j);
  }
  return {{"precision", report.precision}, {"against", "f32"}, {"samples", report.samples}, {"outputs", outputs}};
}

std::string accuracy_to_table(const AccuracyReport& report) {
  std::vector<std::vector<std::string>> rows = {{"output", "worst |" + report.precision + " - f32| / max |f32|", "top-1 agreement"}};
  for (const OutputAccuracy& o : report.outputs) {
    rows.push_back({o.name, fmt::format("{:.2e}", o.worst_relative),
                    o.top1_agreement ? fmt::format("{:.1f}%", 100 * *o.top1_agreement) : "-"});
  }
  return fmt::format("\naccuracy of {} against f32, {} seeded sample(s):\n", report.precision, report.samples) +
         render_table(rows);
}

}  // namespace tilefuse::api
