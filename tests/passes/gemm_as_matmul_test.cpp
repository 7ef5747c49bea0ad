// Gemm -> MatMul / FusedMatMul where it is a plain product plus a bias vector (transB as perm_b,
// C [N] or [1, N]); Gemms with alpha, transA, beta or a C of another shape stay Gemms; a rewritten
// Gemm then takes its activation like any MatMul. The rewritten graph computes what the original
// did (reference interpreter, before and after).
#include "passes/gemm_as_matmul.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "passes/matmul_activation_folding.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;

// y = Gemm(x [6, 8], w, c) with the given attributes; c omitted when its shape is empty.
Graph gemm(AttributeMap attrs, std::vector<int64_t> c_shape, bool trans_b = false) {
  Graph g;
  std::vector<Value*> in = {g.add_input("x", DType::f32, {6, 8}),
                            g.add_constant("w", filled(trans_b ? std::vector<int64_t>{5, 8} : std::vector<int64_t>{8, 5}, 1))};
  if (!c_shape.empty()) in.push_back(g.add_constant("c", filled(c_shape, 2)));
  if (trans_b) attrs["transB"] = int64_t{1};
  Node* n = g.add_node("Gemm", "gemm", in, {"y"}, std::move(attrs));
  g.set_outputs({n->outputs[0]});
  g.infer_shapes();
  return g;
}

TEST(GemmAsMatMul, APlainProductWithABiasVectorBecomesAFusedMatMul) {
  for (const auto& [c_shape, trans_b, op] : {std::tuple{std::vector<int64_t>{5}, false, "FusedMatMul"},
                                              std::tuple{std::vector<int64_t>{1, 5}, true, "FusedMatMul"},
                                              std::tuple{std::vector<int64_t>{}, true, "FusedMatMul"},
                                              std::tuple{std::vector<int64_t>{}, false, "MatMul"}}) {
    Graph before = gemm({}, c_shape, trans_b), after = gemm({}, c_shape, trans_b);
    EXPECT_EQ(express_gemms_as_matmuls(after), 1);
    ASSERT_EQ(after.num_nodes(), 1u);
    EXPECT_EQ(after.nodes()[0]->op, op);
    EXPECT_EQ(after.nodes()[0]->has_attr("perm_b"), trans_b);
    EXPECT_EQ(after.outputs()[0]->name, "y");
    expect_same_results(before, after);
  }
}

TEST(GemmAsMatMul, LeavesGemmsThatAreMoreThanThat) {
  for (const auto& [attrs, c_shape] : {std::pair{AttributeMap{{"alpha", 0.5}}, std::vector<int64_t>{5}},
                                       std::pair{AttributeMap{{"beta", 2.0}}, std::vector<int64_t>{5}},
                                       std::pair{AttributeMap{}, std::vector<int64_t>{6, 5}},
                                       std::pair{AttributeMap{}, std::vector<int64_t>{6, 1}}}) {
    Graph g = gemm(attrs, c_shape);
    EXPECT_EQ(express_gemms_as_matmuls(g), 0);
  }
  Graph trans_a;
  Node* n = trans_a.add_node("Gemm", "gemm", {trans_a.add_input("x", DType::f32, {8, 6}), trans_a.add_constant("w", filled({8, 5}, 1))},
                             {"y"}, {{"transA", int64_t{1}}});
  trans_a.set_outputs({n->outputs[0]});
  trans_a.infer_shapes();
  EXPECT_EQ(express_gemms_as_matmuls(trans_a), 0);
}

TEST(GemmAsMatMul, ARewrittenGemmTakesItsActivation) {
  auto build = [] {
    Graph g = gemm({}, {5});
    Value* y = g.outputs()[0];
    Node* relu = g.add_node("Relu", "relu", {y}, {"r"});
    g.set_outputs({relu->outputs[0]});
    g.infer_shapes();
    return g;
  };
  Graph before = build(), after = build();
  express_gemms_as_matmuls(after);
  EXPECT_EQ(fold_matmul_activations(after), 1);
  ASSERT_EQ(after.num_nodes(), 1u);
  EXPECT_EQ(after.nodes()[0]->attr_string("activation", ""), "Relu");
  expect_same_results(before, after);
}

}  // namespace
}  // namespace tilefuse::passes
