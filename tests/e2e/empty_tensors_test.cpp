// A symbolic dim bound to 0 (an empty batch, an empty sequence) runs fused and matches the
// reference: generated jit kernels (elementwise, row reductions, softmax), the GEMM and the
// convolution calls, Concat, a transposing view and GatherElements along the empty axis, each
// run with the dim at 0 first and then at a positive size in the same executor. A jit kernel once
// divided by its zero units per block (SIGFPE, the process gone) on any of them, and
// GatherElements by its empty axis.
#include <gtest/gtest.h>

#include "e2e/fused_vs_reference.h"

namespace tilefuse::e2e {
namespace {

// Inputs x [N, 3, 6, 6] and r [N, 16] for N = 0, 3, 0.
std::vector<std::map<std::string, Tensor>> batches() {
  std::vector<std::map<std::string, Tensor>> runs;
  for (int64_t n : {0, 3, 0}) runs.push_back({{"x", filled({n, 3, 6, 6}, 1)}, {"r", filled({n, 16}, 2)}});
  return runs;
}

GraphCase empty_batch(std::string name, std::function<std::vector<Value*>(Graph&, Value*, Value*)> body) {
  return {std::move(name), [body](Graph& g) {
            const Dim n = Dim::symbol("N");
            Value* x = g.add_input("x", DType::f32, {n, Dim(3), Dim(6), Dim(6)});
            Value* r = g.add_input("r", DType::f32, {n, Dim(16)});
            for (Value* out : body(g, x, r)) g.add_output(out);
            return batches();
          }};
}

class EmptyBatch : public ::testing::TestWithParam<GraphCase> {};

TEST_P(EmptyBatch, FusedMatchesReference) { expect_fused_matches_reference(GetParam()); }

using Ints = std::vector<int64_t>;

INSTANTIATE_TEST_SUITE_P(
    Ops, EmptyBatch,
    ::testing::Values(
        empty_batch("ElementwiseChain",
                    [](Graph& g, Value* x, Value*) {
                      Value* two = g.add_constant("two", Tensor::scalar_f32(2.0f));
                      return std::vector<Value*>{node(g, "Tanh", {node(g, "Mul", {x, two})})};
                    }),
        empty_batch("RowReductionAndSoftmax",
                    [](Graph& g, Value*, Value* r) {
                      return std::vector<Value*>{
                          node(g, "ReduceSum", {r, g.add_constant("axes", Tensor::from_vector<int64_t>(DType::i64, {1}, {1}))}),
                          node(g, "Softmax", {r}, {{"axis", int64_t{-1}}})};
                    }),
        empty_batch("GemmAndConv",
                    [](Graph& g, Value* x, Value* r) {
                      Value* w = g.add_constant("w", filled({16, 8}, 3));
                      Value* k = g.add_constant("k", filled({4, 3, 3, 3}, 4));
                      return std::vector<Value*>{node(g, "MatMul", {r, w}),
                                                 node(g, "Conv", {x, k}, {{"pads", Ints{1, 1, 1, 1}}})};
                    }),
        empty_batch("ConcatAndTranspose",
                    [](Graph& g, Value*, Value* r) {
                      Value* fixed = g.add_constant("fixed", filled({2, 16}, 5));
                      Value* joined = node(g, "Concat", {r, fixed}, {{"axis", int64_t{0}}});
                      return std::vector<Value*>{node(g, "Relu", {joined}),
                                                 node(g, "Transpose", {node(g, "Sigmoid", {r})}, {{"perm", Ints{1, 0}}})};
                    })),
    [](const auto& info) { return info.param.name; });

TEST(EmptyBatch, GatherElementsAlongTheEmptyAxis) {
  expect_fused_matches_reference({"GatherElements", [](Graph& g) {
                                    const Dim n = Dim::symbol("N");
                                    Value* data = g.add_input("data", DType::f32, {n, Dim(16)});
                                    Value* idx = g.add_input("idx", DType::i64, {n, Dim(16)});
                                    g.add_output(node(g, "GatherElements", {data, idx}, {{"axis", int64_t{0}}}));
                                    std::vector<std::map<std::string, Tensor>> runs;
                                    for (int64_t rows : {0, 3}) {
                                      Tensor indices(DType::i64, {rows, 16});
                                      for (int64_t i = 0; i < indices.numel(); ++i) indices.set_f64(i, (i * 7) % rows);
                                      runs.push_back({{"data", filled({rows, 16}, 6)}, {"idx", indices}});
                                    }
                                    return runs;
                                  }});
}

}  // namespace
}  // namespace tilefuse::e2e
