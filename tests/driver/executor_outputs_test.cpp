// How the executor hands back graph outputs that are not plain kernel results: views of
// intermediates (whose bytes must outlive every later step), views of inputs, values later steps
// also read, repeats, inputs and constants, and caller buffers that alias the inputs. Each case
// runs fused and unfused against the reference interpreter. The random version of these cases is
// tests/property/executor_structure_property_test.cpp; these are the ones it found or that an
// issue reported, kept as named regressions.
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "build/build_test_support.h"
#include "ir/parser.h"
#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "driver/executor.h"

namespace tilefuse::driver {
namespace {

using tilefuse::testing::TempDir;

std::map<std::string, Tensor> random_inputs(const Graph& g, const SymbolBindings& symbols = {}) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> uniform(-4, 4);
  std::map<std::string, Tensor> inputs;
  for (const Value* in : g.inputs()) {
    std::vector<int64_t> dims;
    for (const Dim& d : in->shape) dims.push_back(d.evaluate(symbols));
    Tensor t(in->dtype, dims);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, uniform(rng));
    inputs[in->name] = t;
  }
  return inputs;
}

class ExecutorOutputs : public ::testing::TestWithParam<bool> {
 protected:
  // One kernel cache for the suite: its precompiled header and kernels are built once.
  static void SetUpTestSuite() { cache_ = new TempDir(); }
  static void TearDownTestSuite() { delete cache_; }

  // Runs `text` twice with the same output tensors and compares every output with the reference.
  void expect_matches_reference(const std::string& text, const SymbolBindings& symbols = {}) {
    Graph g = parse_graph(text);
    ExecutorOptions o;
    o.fuse = GetParam();
    o.device.threads = 2;
    o.cache_dir = cache_->path();
    ExecutorCounters counters;
    Executor executor(g, o, counters);
    SCOPED_TRACE(fusion::print_plan(executor.plan()));
    const auto inputs = random_inputs(g, symbols);
    const std::vector<Tensor> expected = reference::run_graph(g, inputs);
    std::vector<Tensor> actual;
    for (int run = 1; run <= 2; ++run) {
      executor.run(inputs, actual);
      ASSERT_EQ(actual.size(), expected.size());
      for (size_t i = 0; i < actual.size(); ++i) {
        const CompareResult r = compare_tensors(actual[i], expected[i], {1e-5, 1e-6});
        EXPECT_TRUE(r.ok) << "output " << i << " '" << g.outputs()[i]->name << "', run " << run << ": " << r.message;
      }
    }
  }

  static inline TempDir* cache_ = nullptr;
};

// The issue's model: y = Reshape(Relu(x)) is an output, and the MatMul and Sigmoid after it
// used to take Relu's arena bytes before y was copied out.
TEST_P(ExecutorOutputs, ViewOfAnIntermediateSurvivesLaterSteps) {
  expect_matches_reference(R"(
graph g(%x: f32[64, 64], %x2: f32[64, 64], %w: f32[64, 64]) -> (%y, %z) {
  %s: i64[1] = const dense<4096>
  %a: f32[64, 64] = Relu(%x)
  %y: f32[4096] = Reshape(%a, %s)
  %b: f32[64, 64] = MatMul(%x2, %w)
  %z: f32[64, 64] = Sigmoid(%b)
}
)");
}

// Found by the structure property: outputs that are views of an input and of each other, an
// unused input, symbolic dims.
TEST_P(ExecutorOutputs, ViewsOfAnInputAsOutputs) {
  expect_matches_reference(R"(
graph g(%in0: f32[d0, d1], %in1: f32[3]) -> (%v2, %v3, %v4, %v1) {
  %c0: i64[1] = const dense<-1>
  %v1: f32[d0*d1] = Reshape(%in0, %c0)
  %v2: f32[d0*d1] = Relu(%v1)
  %v3: f32[d0*d1] = Relu(%v1)
  %v4: f32[d0, d1] = Neg(%in0)
}
)",
                           {{"d0", 2}, {"d1", 3}});
}

TEST_P(ExecutorOutputs, RepeatedOutputsInputsAndConstants) {
  expect_matches_reference(R"(
graph g(%x: f32[4, 5]) -> (%r, %r, %x, %k, %f, %r) {
  %k: f32[2] = const dense<1.5, -2.0>
  %r: f32[4, 5] = Relu(%x)
  %f: f32[4, 5] = Flatten(%r)
}
)");
}

// Found by the structure property: an input and a constant listed after kernel outputs.
TEST_P(ExecutorOutputs, InputAndConstantAfterKernelOutputs) {
  expect_matches_reference(R"(
graph g(%in0: f32[1]) -> (%v0, %v2, %in0, %c3) {
  %c3: f32[2] = const dense<1.5, -2>
  %v0: f32[1] = Relu(%in0)
  %v1: f32[1] = Relu(%in0)
  %v2: f32[1] = Add(%v1, %in0)
}
)");
}

// An output that a later kernel also reads: it is written into the caller's tensor, and the
// later step reads it from there.
TEST_P(ExecutorOutputs, OutputReadByLaterSteps) {
  expect_matches_reference(R"(
graph g(%x: f32[8, 16], %w: f32[16, 4]) -> (%r, %n) {
  %r: f32[8, 16] = Relu(%x)
  %m: f32[8, 4] = MatMul(%r, %w)
  %n: f32[8, 4] = Neg(%m)
}
)");
}

// Found by the IR fuzzer: a lone op over dims that are symbolic expressions the iteration space
// cannot prove to broadcast was an internal error; it now runs on the reference kernels.
TEST_P(ExecutorOutputs, OpWithoutAnIterationSpaceRunsAsAHostStep) {
  expect_matches_reference(R"(
graph g(%x: f32[N, 8], %b: f32[8 - R + R2], %r: f32[R], %r2: f32[R2]) -> (%t, %r, %r2) {
  %t = Add(%x, %b)
}
)",
                           {{"N", 2}, {"R", 5}, {"R2", 5}});
}

// A graph of library and view steps only: no kernel to compile at all.
TEST_P(ExecutorOutputs, PlanWithoutKernels) {
  expect_matches_reference(R"(
graph g(%x: f32[3, 4], %w: f32[4, 2]) -> (%m, %v) {
  %s: i64[1] = const dense<-1>
  %m: f32[3, 2] = MatMul(%x, %w)
  %v: f32[6] = Reshape(%m, %s)
}
)");
}

// Output tensors handed in by a C++ caller that share bytes with an input (or with each other)
// are not written in place: the executor gives them tensors of their own.
TEST_P(ExecutorOutputs, CallerOutputsAliasingInputsAreReplaced) {
  Graph g = parse_graph(R"(
graph g(%x: f32[16]) -> (%a, %b) {
  %a: f32[16] = Neg(%x)
  %b: f32[16] = Exp(%x)
}
)");
  ExecutorOptions o;
  o.fuse = GetParam();
  o.cache_dir = cache_->path();
  ExecutorCounters counters;
  Executor executor(g, o, counters);
  auto inputs = random_inputs(g);
  const std::vector<Tensor> expected = reference::run_graph(g, inputs);
  std::vector<Tensor> outputs = {inputs.at("x"), inputs.at("x")};
  executor.run(inputs, outputs);
  EXPECT_NE(outputs[0].raw(), inputs.at("x").raw());
  EXPECT_NE(outputs[1].raw(), inputs.at("x").raw());
  EXPECT_NE(outputs[0].raw(), outputs[1].raw());
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(compare_tensors(outputs[i], expected[i], {1e-5, 1e-6}).ok) << i;
}

// A model fed ever new sizes keeps the most recently run shapes only; a shape dropped and seen
// again is prepared afresh and still computes the right result.
TEST_P(ExecutorOutputs, PreparedShapesAreBoundedLeastRecentlyRunFirst) {
  Graph g = parse_graph(R"(
graph g(%x: f32[N, 24]) -> (%y) {
  %a: f32[N, 24] = Sigmoid(%x)
  %y: f32[N, 24] = Mul(%a, %x)
}
)");
  ExecutorOptions o;
  o.fuse = GetParam();
  o.cache_dir = cache_->path();
  o.max_prepared_shapes = 3;
  ExecutorCounters counters;
  Executor executor(g, o, counters);
  for (int64_t n : {1, 2, 3, 1, 4, 5, 2, 1}) {
    const auto inputs = random_inputs(g, {{"N", n}});
    const std::vector<Tensor> actual = executor.run(inputs);
    EXPECT_TRUE(compare_tensors(actual[0], reference::run_graph(g, inputs)[0], {1e-5, 1e-6}).ok) << "N = " << n;
  }
  EXPECT_EQ(counters.prepared_shapes.load(), 3);
  // 1 2 3 | 1 is a hit | 4 drops 2 | 5 drops 3 | 2 drops 1 | 1 drops 4.
  EXPECT_EQ(counters.evicted_shapes.load(), 4);
}

INSTANTIATE_TEST_SUITE_P(FusedAndUnfused, ExecutorOutputs, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "fused" : "unfused"; });

}  // namespace
}  // namespace tilefuse::driver
