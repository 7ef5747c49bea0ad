// Minimal graphs of failures the property test found (fused_execution_property_test.cpp), kept
// as fixed cases: each must build, run fused and unfused, and match the reference.
#include <gtest/gtest.h>

#include "runtime/random_fill.h"
#include "ir/parser.h"
#include "property/reference_check.h"
#include "property/temp_cache_dir.h"

namespace tilefuse::property {
namespace {

struct Regression {
  std::string name;
  std::string graph;  // IR text (ir/printer.h), static shapes
};

void PrintTo(const Regression& r, std::ostream* os) { *os << r.name; }

std::string regression_name(const ::testing::TestParamInfo<Regression>& info) { return info.param.name; }

class PropertyRegression : public ::testing::TestWithParam<Regression> {};

TEST_P(PropertyRegression, MatchesReference) {
  Graph g = parse_graph(GetParam().graph);
  std::map<std::string, Tensor> inputs;
  for (const Value* in : g.inputs()) {
    std::mt19937_64 rng = runtime::input_rng(1, in->name);
    inputs[in->name] = runtime::random_tensor(in->dtype, static_dims(in->shape), rng);
  }
  for (bool fuse : {true, false}) {
    driver::ExecutorOptions options;
    options.fuse = fuse;
    options.device.threads = 2;
    options.cache_dir = temp_cache_dir();
    driver::ExecutorCounters counters;
    EXPECT_EQ(mismatches_against_reference(g, {inputs}, options, counters), "");
  }
}

const Regression kRegressions[] = {
    // A keepdims reduction over axes of extent 1: its output has the kernel domain's shape, so
    // fusion::derive_iteration_space places it as a full-size value, and the kernel emitter's
    // schedule_passes threw std::out_of_range ("map::at").
    {"SoftmaxOverSizeOneAxis", R"(graph g(%x: f32[4, 1]) -> (%y) {
  %y: f32[4, 1] = Softmax(%x) {axis = 1} @softmax
})"},
    {"ReduceOverSizeOneAxisFeedsKernel", R"(graph g(%x: f32[4, 1]) -> (%y) {
  %r: f32[4, 1] = ReduceSum(%x) {axes = [1], keepdims = 1} @r
  %y: f32[4, 1] = Sub(%x, %r) @sub
})"},
    // Rows of equal values (padding) into a LayerNormalization: its mean, summed and divided in
    // f32, was an ulp off the value, and 1 / sqrt(epsilon) made that 2e-5 in an output that ONNX
    // Runtime, PyTorch and the reference give as 0 (passes/decompose_composites: corrected
    // two-pass centring). x + (w - w) repeats each x along the row.
    {"LayerNormOfEqualValues", R"(graph g(%x: f32[64, 1], %w: f32[1, 6], %s: f32[6]) -> (%y) {
  %zero: f32[1, 6] = Sub(%w, %w) @zero
  %rows: f32[64, 6] = Add(%x, %zero) @rows
  %y: f32[64, 6] = LayerNormalization(%rows, %s) {axis = 1, epsilon = 1e-05} @norm
})"},
    // A sum over the size-1 axis a Reshape adds, fused with the Transpose before the view: size-1
    // axes have no axis in the kernel's refined domain, so the kernel reduced nothing by its
    // iteration space while the ReduceSum still summed the row into its first element
    // (fusion/iteration_space.cpp now keeps such a reduction out of a view's kernel).
    {"SumOverSizeOneAxisAfterView", R"(graph g(%x: f32[5]) -> (%y) {
  %shape: i64[2] = const dense<1, -1>
  %t: f32[5] = Transpose(%x) {perm = [0]} @t
  %r: f32[1, 5] = Reshape(%t, %shape) @r
  %y: f32[5] = ReduceSum(%r) {axes = [0], keepdims = 0} @y
})"},
};

INSTANTIATE_TEST_SUITE_P(Minimal, PropertyRegression, ::testing::ValuesIn(kRegressions), regression_name);

}  // namespace
}  // namespace tilefuse::property
