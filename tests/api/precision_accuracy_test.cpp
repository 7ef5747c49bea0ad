// The bf16 accuracy report: a classifier's logits get a top-1 agreement, every float output a
// worst relative error within bf16's bound (and above zero where the CPU multiplies bf16), and
// asking for it in f32 is a configuration error.
#include "api/precision_accuracy.h"

#include <gtest/gtest.h>

#include "build/build_test_support.h"
#include "ir/error.h"
#include "runtime/sgemm_microkernel.h"

namespace tilefuse::api {
namespace {

// logits = x W + b: a linear classifier of 64 features into 10 classes over a batch of 16.
Graph classifier() {
  Graph g;
  Tensor w(DType::f32, {64, 10});
  for (int64_t i = 0; i < w.numel(); ++i) w.set_f64(i, ((i * 29) % 31) / 15.0 - 1.0);
  Tensor b(DType::f32, {10});
  for (int64_t i = 0; i < b.numel(); ++i) b.set_f64(i, 0.1 * static_cast<double>(i));
  Value* x = g.add_input("x", DType::f32, {Dim(16), Dim(64)});
  Value* h = g.add_node("MatMul", "mm", {x, g.add_constant("w", w)}, {"h"})->outputs[0];
  Value* logits = g.add_node("Add", "bias", {h, g.add_constant("b", b)}, {"logits"})->outputs[0];
  g.set_outputs({logits});
  g.infer_shapes();
  return g;
}

TEST(PrecisionAccuracy, ReportsTheWorstErrorAndTopOneAgreement) {
  tilefuse::testing::TempDir cache;
  ExecutionOptions options;
  options.cache_dir = cache.path();
  options.threads = 2;
  options.precision = runtime::Precision::bf16;
  const AccuracyReport report = measure_accuracy(classifier(), {}, 7, 3, options);
  EXPECT_EQ(report.samples, 3);
  ASSERT_EQ(report.outputs.size(), 1u);
  const OutputAccuracy& logits = report.outputs[0];
  EXPECT_EQ(logits.name, "logits");
  EXPECT_LE(logits.worst_relative, 2e-2);  // the README's bound for bf16
  ASSERT_TRUE(logits.top1_agreement.has_value());
  EXPECT_GE(*logits.top1_agreement, 0.9);
  EXPECT_LE(*logits.top1_agreement, 1.0);
  if (runtime::bf16_supported()) {
    EXPECT_EQ(report.precision, "bf16");
    EXPECT_GT(logits.worst_relative, 0.0);
  } else {
    EXPECT_EQ(report.precision, "f32");
  }
  EXPECT_EQ(accuracy_to_json(report)["outputs"][0]["top1_agreement"], *logits.top1_agreement);
}

TEST(PrecisionAccuracy, InF32ItIsAConfigurationError) {
  ExecutionOptions options;
  EXPECT_THROW(measure_accuracy(classifier(), {}, 0, 1, options), UserError);
}

}  // namespace
}  // namespace tilefuse::api
