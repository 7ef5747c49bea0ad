// The ops that fused mode rewrites before planning (batch_norm_folding.h, decompose_composites.h)
// or generates as pointwise code with several operands: each graph runs fused and must match the
// reference interpreter on the original graph, with values that reach every branch (negative
// slopes, rows of -inf for LogSumExp, odd sizes for the vector tails).
#include <cmath>
#include <functional>
#include <limits>

#include <gtest/gtest.h>

#include "e2e/e2e_cache_dir.h"
#include "ir/error.h"
#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "driver/executor.h"

namespace tilefuse {
namespace {

// Deterministic values in [-2, 2) with a few exact zeros.
Tensor filled(std::vector<int64_t> shape, int salt = 0) {
  Tensor t(DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, ((i * 37 + salt * 11) % 97) / 24.25 - 2.0);
  return t;
}

Tensor positive(std::vector<int64_t> shape, int salt = 0) {
  Tensor t = filled(std::move(shape), salt);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, 0.5 + std::abs(t.get_f64(i)));
  return t;
}

struct Case {
  std::string name;
  std::function<void(Graph&, std::map<std::string, Tensor>&)> build;  // adds inputs, nodes, outputs
  size_t max_steps = 0;  // when > 0: the fused plan must have at most this many steps
};

class CompositeOps : public ::testing::TestWithParam<Case> {};

TEST_P(CompositeOps, FusedMatchesReference) {
  Graph g;
  std::map<std::string, Tensor> inputs;
  GetParam().build(g, inputs);
  g.infer_shapes();
  const std::vector<Tensor> expected = reference::run_graph(g, inputs);
  const driver::ExecutorOptions options = e2e::executor_options();
  driver::ExecutorCounters counters;
  driver::Executor exe(g, options, counters);
  if (GetParam().max_steps > 0) {
    EXPECT_LE(exe.plan().steps.size(), GetParam().max_steps);
  }
  const std::vector<Tensor> actual = exe.run(inputs);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    CompareResult r = compare_tensors(actual[i], expected[i], {1e-5, 1e-5});
    EXPECT_TRUE(r.ok) << GetParam().name << " output " << i << ": " << r.message;
  }
}

Value* input(Graph& g, std::map<std::string, Tensor>& in, const std::string& name, Tensor t) {
  std::vector<Dim> shape(t.shape().begin(), t.shape().end());
  in[name] = t;
  return g.add_input(name, t.dtype(), shape);
}

Value* one_op(Graph& g, const std::string& op, std::vector<Value*> inputs, AttributeMap attrs = {}) {
  return g.add_node(op, op, std::move(inputs), {"y"}, std::move(attrs))->outputs[0];
}

Value* batch_norm(Graph& g, Value* x, int64_t channels, const std::string& name = "bn") {
  return g.add_node("BatchNormalization", name,
                    {x, g.add_constant(name + "_gamma", positive({channels}, 1)), g.add_constant(name + "_beta", filled({channels}, 2)),
                     g.add_constant(name + "_mean", filled({channels}, 3)), g.add_constant(name + "_var", positive({channels}, 4))},
                    {name + "_out"}, {{"epsilon", 1e-3}})
      ->outputs[0];
}

std::vector<Case> cases() {
  std::vector<Case> c;
  c.push_back({"BatchNormAlone", [](Graph& g, auto& in) {
                 g.add_output(batch_norm(g, input(g, in, "x", filled({2, 5, 3, 7})), 5));
               }, 1});
  c.push_back({"ConvThenBatchNormFolds", [](Graph& g, auto& in) {
                 Value* x = input(g, in, "x", filled({2, 3, 9, 9}));
                 Value* conv = g.add_node("Conv", "conv", {x, g.add_constant("w", filled({4, 3, 3, 3}, 5)),
                                                          g.add_constant("b", filled({4}, 6))},
                                          {"conv_out"}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})->outputs[0];
                 g.add_output(batch_norm(g, conv, 4));
               }, 1});  // one step: the Conv with the statistics folded in (else a second kernel)
  // MobileNetV3's second block at full size: the expansion (1 MiB a image) and the depthwise
  // convolution become one PointwiseDepthwiseConv step, the projection a second.
  c.push_back({"InvertedResidualBlockFolds", [](Graph& g, auto& in) {
                 auto conv = [&](Value* x, const std::string& name, std::vector<int64_t> w, AttributeMap attrs) {
                   const int64_t maps = w[0];
                   Tensor weight = filled(w, 5);  // scaled so that sums of 64 stay near 1, where f32 is exact to 1e-6
                   for (int64_t i = 0; i < weight.numel(); ++i) weight.set_f64(i, 0.1 * weight.get_f64(i));
                   Value* y = g.add_node("Conv", name, {x, g.add_constant(name + "_w", weight)}, {name + "_out"},
                                         std::move(attrs))->outputs[0];
                   return batch_norm(g, y, maps, name + "_bn");
                 };
                 Value* x = input(g, in, "x", filled({1, 16, 66, 64}));
                 Value* e = conv(x, "expand", {64, 16, 1, 1}, {});
                 e = g.add_node("Clip", "relu6", {e, g.add_constant("lo", Tensor::scalar_f32(0.0f)), g.add_constant("hi", Tensor::scalar_f32(6.0f))},
                                {"relu6_out"})->outputs[0];
                 Value* d = conv(e, "dw", {64, 1, 3, 3},
                                 {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 2}}, {"group", int64_t{64}}});
                 d = g.add_node("HardSwish", "hswish", {d}, {"hswish_out"})->outputs[0];
                 g.add_output(conv(d, "project", {24, 64, 1, 1}, {}));
               }, 2});
  c.push_back({"GemmThenBatchNormFolds", [](Graph& g, auto& in) {
                 Value* x = input(g, in, "x", filled({6, 8}));
                 Value* mm = g.add_node("Gemm", "gemm", {x, g.add_constant("w", filled({5, 8}, 7)),
                                                         g.add_constant("c", filled({5}, 8))},
                                        {"gemm_out"}, {{"transB", int64_t{1}}})->outputs[0];
                 g.add_output(batch_norm(g, mm, 5));
               }, 1});  // folded into the Gemm's weights and C
  c.push_back({"MatMulThenBatchNormFolds", [](Graph& g, auto& in) {
                 Value* x = input(g, in, "x", filled({6, 8}));
                 Value* mm = g.add_node("MatMul", "mm", {x, g.add_constant("w", filled({8, 5}, 9))}, {"mm_out"})->outputs[0];
                 g.add_output(batch_norm(g, mm, 5));
               }, 2});  // MatMul, then the shift as an epilogue kernel
  c.push_back({"BatchNormAfterAOneInputOp", [](Graph& g, auto& in) {  // LeViT: Flatten then BatchNorm1d
                 Value* x = input(g, in, "x", filled({6, 5, 1}));
                 Value* flat = g.add_node("Flatten", "flat", {x}, {"flat_out"}, {{"axis", int64_t{1}}})->outputs[0];
                 g.add_output(batch_norm(g, flat, 5));
               }});
  // Speech and vision models' LayerNorm over channels: Transpose, LayerNorm, Transpose back. One
  // step (the LayerNorm in the source's layout, the transposes gone); also with the mean output
  // read (the plain expansion), without a bias, a rank-4 permutation and no Transpose back.
  c.push_back({"LayerNormOfTransposeRunsInSourceLayout", [](Graph& g, auto& in) {
                 Value* x = input(g, in, "x", filled({2, 24, 40}));
                 Value* t = one_op(g, "Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
                 Value* ln = g.add_node("LayerNormalization", "ln", {t, g.add_constant("gamma", positive({24}, 1)),
                                                                   g.add_constant("beta", filled({24}, 2))},
                                        {"ln_out"})->outputs[0];
                 g.add_output(g.add_node("Transpose", "back", {ln}, {"back_out"},
                                         {{"perm", std::vector<int64_t>{0, 2, 1}}})->outputs[0]);
               }, 2});  // the LayerNorm kernel and the Identity view of the graph output
  c.push_back({"LayerNormOfTransposeWithItsMeanRead", [](Graph& g, auto& in) {
                 Value* x = input(g, in, "x", filled({2, 24, 40}));
                 Value* t = one_op(g, "Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
                 Node* ln = g.add_node("LayerNormalization", "ln", {t, g.add_constant("gamma", positive({24}, 1))},
                                       {"ln_out", "ln_mean"});
                 g.add_output(ln->outputs[0]);
                 g.add_output(ln->outputs[1]);
               }});
  c.push_back({"LayerNormOfRank4TransposeKeepsItsLayout", [](Graph& g, auto& in) {
                 Value* x = input(g, in, "x", filled({2, 16, 5, 7}));
                 Value* t = one_op(g, "Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}});
                 Value* w = input(g, in, "gamma", positive({16}, 3));  // weights that are no constant
                 g.add_output(g.add_node("LayerNormalization", "ln", {t, w}, {"ln_out"}, {{"epsilon", 1e-3}})->outputs[0]);
               }});
  c.push_back({"InstanceNorm", [](Graph& g, auto& in) {
                 Value* x = input(g, in, "x", filled({2, 3, 5, 7}));
                 g.add_output(one_op(g, "InstanceNormalization",
                                     {x, g.add_constant("s", positive({3}, 1)), g.add_constant("b", filled({3}, 2))}));
               }});
  for (int64_t params : {int64_t{2}, int64_t{6}}) {  // per group (opset 18) and per channel (opset 21)
    c.push_back({"GroupNorm" + std::to_string(params) + "Params", [params](Graph& g, auto& in) {
                   Value* x = input(g, in, "x", filled({2, 6, 4, 5}));
                   g.add_output(one_op(g, "GroupNormalization",
                                       {x, g.add_constant("s", positive({params}, 1)), g.add_constant("b", filled({params}, 2))},
                                       {{"num_groups", int64_t{2}}}));
                 }});
  }
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    c.push_back({op, [op](Graph& g, auto& in) { g.add_output(one_op(g, op, {input(g, in, "x", filled({2, 3, 5, 7}))})); }, 1});
  }
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"}) {
    for (int64_t keepdims : {1, 0}) {
      c.push_back({std::string(op) + (keepdims ? "" : "DroppingAxes"), [op, keepdims](Graph& g, auto& in) {
                     Tensor x = std::string(op) == "ReduceLogSum" ? positive({4, 37}) : filled({4, 37});
                     if (std::string(op) == "ReduceLogSumExp") {
                       for (int64_t j = 0; j < 37; ++j) x.set_f64(37 + j, -INFINITY);  // a row of -inf gives -inf
                       x.set_f64(2 * 37 + 5, 1000.0);  // exp(1000) overflows unless shifted
                     }
                     g.add_output(one_op(g, op, {input(g, in, "x", x)},
                                         {{"axes", std::vector<int64_t>{1}}, {"keepdims", keepdims}}));
                   }, 1});
    }
  }
  // A keepdims=0 result read by a full-size op broadcasts along the last axis (numpy's rule), not
  // along the reduced one: y[i, j] = x[i, j] + sum_k x[j, k]. Read as the row value it is, the
  // sum would be x[i]'s own.
  c.push_back({"DroppedAxesResultBroadcastAsNumpyDoes", [](Graph& g, auto& in) {
                 Value* x = input(g, in, "x", filled({6, 6}));
                 Value* s = g.add_node("ReduceSum", "sum", {x, g.add_constant("axes", Tensor::from_vector<int64_t>(DType::i64, {1}, {1}))},
                                       {"s"}, {{"keepdims", int64_t{0}}})->outputs[0];
                 Value* total = g.add_node("ReduceSum", "total", {x}, {"total"}, {{"keepdims", int64_t{0}}})->outputs[0];
                 g.add_output(g.add_node("Add", "add", {x, s}, {"y"})->outputs[0]);
                 g.add_output(g.add_node("Sub", "sub", {x, total}, {"z"})->outputs[0]);  // a scalar: the same either way
               }});
  c.push_back({"PRelu", [](Graph& g, auto& in) {
                 g.add_output(one_op(g, "PRelu", {input(g, in, "x", filled({4, 37})), g.add_constant("slope", filled({37}, 3))}));
               }, 1});
  for (const char* op : {"Sum", "Mean"}) {
    c.push_back({op, [op](Graph& g, auto& in) {
                   g.add_output(one_op(g, op, {input(g, in, "a", filled({4, 37})), input(g, in, "b", filled({37}, 1)),
                                               input(g, in, "c", filled({4, 1}, 2))}));
                 }, 1});
  }
  return c;
}

INSTANTIATE_TEST_SUITE_P(RewrittenOrGenerated, CompositeOps, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

// NonZero's output size depends on the data: the reference interpreter runs it, fused mode
// refuses it with the op's name and the reason instead of planning a wrong buffer.
TEST(DataDependentShapes, FusedModeNamesTheOpAndTheReason) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(3), Dim(4)});
  g.add_output(g.add_node("NonZero", "nz", {x}, {"idx"})->outputs[0]);
  g.infer_shapes();
  Tensor data = filled({3, 4});
  EXPECT_EQ(reference::run_graph(g, {{"x", data}}).at(0).shape()[0], 2);
  driver::ExecutorOptions options;
  options.cache_dir = e2e::test_cache_dir();
  driver::ExecutorCounters counters;
  driver::Executor exe(g, options, counters);
  try {
    exe.run({{"x", data}});
    FAIL() << "fused mode ran a data-dependent shape";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'nz' (NonZero)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("depends on tensor data"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tilefuse
