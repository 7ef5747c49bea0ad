// Transpose + MatMul -> FusedMatMul with a perm: folded on either operand (both at once for
// attention's Q K^T) and on the result, left alone when the transposed tensor has another reader
// or a transposed result's rows would not stay rows; the folded graph computes what the original
// did (reference interpreter, before and after).
#include "passes/matmul_transpose_folding.h"

#include <gtest/gtest.h>

#include "passes/matmul_bias_folding.h"
#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;

using Ints = std::vector<int64_t>;



// scores = Transpose(q, [0,2,1,3]) @ Transpose(k, [0,2,3,1]) for q, k: [2, 5, 3, 4] ([B, S, H, D]).
struct Attention {
  Graph g;
  Node* tq = nullptr;
  Attention() {
    Value* q = g.add_input("q", DType::f32, {2, 5, 3, 4});
    Value* k = g.add_input("k", DType::f32, {2, 5, 3, 4});
    tq = g.add_node("Transpose", "tq", {q}, {"qh"}, {{"perm", Ints{0, 2, 1, 3}}});
    Node* tk = g.add_node("Transpose", "tk", {k}, {"kt"}, {{"perm", Ints{0, 2, 3, 1}}});
    Node* mm = g.add_node("MatMul", "scores", {tq->outputs[0], tk->outputs[0]}, {"s"});
    g.set_outputs({mm->outputs[0]});
    g.infer_shapes();
  }
};



TEST(MatMulTransposeFolding, FoldsBothOperandsOfAttentionScores) {
  Attention before, after;
  EXPECT_EQ(fold_matmul_transposes(after.g), 1);
  EXPECT_EQ(count_op(after.g, "Transpose"), 0);
  ASSERT_EQ(count_op(after.g, "FusedMatMul"), 1);
  const Node* fused = after.g.nodes()[0];
  EXPECT_EQ(fused->attr_ints("perm_a"), (Ints{0, 2, 1, 3}));
  EXPECT_EQ(fused->attr_ints("perm_b"), (Ints{0, 2, 3, 1}));
  EXPECT_EQ(after.g.outputs()[0]->name, "s");
  expect_same_results(before.g, after.g);
}

TEST(MatMulTransposeFolding, ADefaultPermReversesAndABiasFoldsAfterwards) {
  // y = x @ Transpose(w) + b, as a Linear layer with its weight stored [out, in] may export.
  auto build = [] {
    Graph g;
    Value* x = g.add_input("x", DType::f32, {3, 6});
    Value* w = g.add_input("w", DType::f32, {5, 6});
    Node* t = g.add_node("Transpose", "t", {w}, {"wt"});
    Node* mm = g.add_node("MatMul", "mm", {x, t->outputs[0]}, {"p"});
    Node* add = g.add_node("Add", "add", {mm->outputs[0], g.add_constant("b", filled({5}, 9))}, {"y"});
    g.set_outputs({add->outputs[0]});
    g.infer_shapes();
    return g;
  };
  Graph before = build(), after = build();
  EXPECT_EQ(fold_matmul_transposes(after), 1);
  EXPECT_EQ(fold_matmul_biases(after), 1);
  ASSERT_EQ(after.num_nodes(), 1u);
  EXPECT_EQ(after.nodes()[0]->attr_ints("perm_b"), (Ints{1, 0}));
  EXPECT_EQ(after.nodes()[0]->inputs.size(), 3u);
  expect_same_results(before, after);
}

TEST(MatMulTransposeFolding, KeepsATransposeWithAnotherReader) {
  Attention a;
  Node* neg = a.g.add_node("Neg", "neg", {a.tq->outputs[0]}, {"n"});
  a.g.set_outputs({a.g.outputs()[0], neg->outputs[0]});
  a.g.infer_shapes();
  EXPECT_EQ(fold_matmul_transposes(a.g), 1);  // K's transpose still folds
  EXPECT_EQ(count_op(a.g, "Transpose"), 1);
  for (Node* n : a.g.nodes()) {
    if (n->op == "FusedMatMul") {
      EXPECT_FALSE(n->has_attr("perm_a"));
    }
  }
}

// heads = P @ Transpose(v, [0,2,1,3]); y = Transpose(heads, [0,2,1,3]) for p: [2, 3, 5, 5],
// v: [2, 5, 3, 4] ([B, S, H, D]), as attention's output goes back to [B, S, H, D].
Graph attention_output(const Ints& result_perm) {
  Graph g;
  Value* p = g.add_input("p", DType::f32, {2, 3, 5, 5});
  Node* tv = g.add_node("Transpose", "tv", {g.add_input("v", DType::f32, {2, 5, 3, 4})}, {"vh"},
                        {{"perm", Ints{0, 2, 1, 3}}});
  Node* mm = g.add_node("MatMul", "heads", {p, tv->outputs[0]}, {"h"});
  Node* ty = g.add_node("Transpose", "ty", {mm->outputs[0]}, {"y"}, {{"perm", result_perm}});
  g.set_outputs({ty->outputs[0]});
  g.infer_shapes();
  return g;
}

TEST(MatMulTransposeFolding, FoldsTheTransposeOfTheResultWithTheOperands) {
  Graph before = attention_output({0, 2, 1, 3}), after = attention_output({0, 2, 1, 3});
  EXPECT_EQ(fold_matmul_transposes(after), 1);
  ASSERT_EQ(after.num_nodes(), 1u);
  const Node* fused = after.nodes()[0];
  EXPECT_EQ(fused->op, "FusedMatMul");
  EXPECT_EQ(fused->attr_ints("perm_b"), (Ints{0, 2, 1, 3}));
  EXPECT_EQ(fused->attr_ints("perm_y"), (Ints{0, 2, 1, 3}));
  EXPECT_EQ(after.outputs()[0]->name, "y");
  EXPECT_EQ(after.outputs()[0]->shape, before.outputs()[0]->shape);
  expect_same_results(before, after);
}

TEST(MatMulTransposeFolding, KeepsAResultTransposeThatMovesTheLastDim) {
  // [2, 3, 5, 4] -> [2, 3, 4, 5]: the product's rows would become columns.
  Graph g = attention_output({0, 1, 3, 2});
  EXPECT_EQ(fold_matmul_transposes(g), 1);  // V's transpose still folds
  EXPECT_EQ(count_op(g, "Transpose"), 1);
}

TEST(MatMulTransposeFolding, ABiasFoldsAfterATransposedResult) {
  // y = Transpose(x @ w, [1, 0, 2]) + b: the bias is along the last dim, which stays last.
  auto build = [] {
    Graph g;
    Node* mm = g.add_node("MatMul", "mm", {g.add_input("x", DType::f32, {3, 4, 6}), g.add_input("w", DType::f32, {6, 5})},
                          {"p"});
    Node* t = g.add_node("Transpose", "t", {mm->outputs[0]}, {"pt"}, {{"perm", Ints{1, 0, 2}}});
    Node* add = g.add_node("Add", "add", {t->outputs[0], g.add_constant("b", filled({5}, 9))}, {"y"});
    g.set_outputs({add->outputs[0]});
    g.infer_shapes();
    return g;
  };
  Graph before = build(), after = build();
  EXPECT_EQ(fold_matmul_transposes(after), 1);
  EXPECT_EQ(fold_matmul_biases(after), 1);
  ASSERT_EQ(after.num_nodes(), 1u);
  EXPECT_EQ(after.nodes()[0]->attr_ints("perm_y"), (Ints{1, 0, 2}));
  expect_same_results(before, after);
}

TEST(MatMulTransposeFolding, KeepsATransposeThatMovesTheInnermostDimToABatchDim) {
  // Transpose([2, 3, 4], [2, 0, 1]) -> [4, 2, 3]: neither matrix dim is contiguous.
  Graph g;
  Value* x = g.add_input("x", DType::f32, {2, 3, 4});
  Node* t = g.add_node("Transpose", "t", {x}, {"xt"}, {{"perm", Ints{2, 0, 1}}});
  Node* mm = g.add_node("MatMul", "mm", {t->outputs[0], g.add_input("w", DType::f32, {3, 5})}, {"y"});
  g.set_outputs({mm->outputs[0]});
  g.infer_shapes();
  EXPECT_EQ(fold_matmul_transposes(g), 0);
}

}  // namespace
}  // namespace tilefuse::passes
