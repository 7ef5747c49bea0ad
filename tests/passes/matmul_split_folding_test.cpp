// A Split of a product's columns -> one product per part: GPT-2's Q/K/V form (Gemm, Reshapes,
// Split), Gemm's transB and broadcast C, a MatMul with a part nobody reads, a symbolic batch; and
// the forms left alone (narrow parts, another axis, another reader, a computed weight). The
// folded graph computes what the original did (reference interpreter, before and after).
#include "passes/matmul_split_folding.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;

using Ints = std::vector<int64_t>;

// Both graphs run on `feeds` (for symbolic inputs, which expect_same_results cannot fill).
void expect_same_results_for(const Graph& before, const Graph& after, const std::map<std::string, Tensor>& feeds) {
  const std::vector<Tensor> want = reference::run_graph(before, feeds), got = reference::run_graph(after, feeds);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(compare_tensors(got[i], want[i], {1e-6, 1e-6}).ok) << i;
  }
}

Value* i64s(Graph& g, const std::string& name, const Ints& v) {
  return g.add_constant(name, Tensor::from_vector<int64_t>(DType::i64, {static_cast<int64_t>(v.size())}, v));
}

// x [1, 6, 40] -> Reshape [6, 40] -> Gemm(w, c) -> Reshape [1, 6, N] -> Split(axis 2, sizes) ->
// a Relu of each part, every Relu a graph output (GPT-2's c_attn and its Split into Q, K, V).
struct GptProjection {
  Graph g;
  GptProjection(const Ints& sizes, Tensor w, Tensor c, AttributeMap gemm_attrs = {}) {
    int64_t n = 0;
    for (int64_t s : sizes) n += s;
    Value* x = g.add_input("x", DType::f32, {1, 6, 40});
    Node* flat = g.add_node("Reshape", "flat", {x, i64s(g, "flat_shape", {6, 40})}, {"xf"});
    Node* gemm = g.add_node("Gemm", "c_attn", {flat->outputs[0], g.add_constant("w", std::move(w)), g.add_constant("c", std::move(c))},
                            {"p"}, std::move(gemm_attrs));
    Node* back = g.add_node("Reshape", "back", {gemm->outputs[0], i64s(g, "back_shape", {1, 6, n})}, {"p3"});
    std::vector<std::string> names;
    for (size_t i = 0; i < sizes.size(); ++i) names.push_back("part" + std::to_string(i));
    Node* split = g.add_node("Split", "split", {back->outputs[0], i64s(g, "sizes", sizes)}, names, {{"axis", int64_t{2}}});
    std::vector<Value*> outs;
    for (size_t i = 0; i < sizes.size(); ++i) {
      outs.push_back(g.add_node("Relu", "relu" + std::to_string(i), {split->outputs[i]}, {"y" + std::to_string(i)})->outputs[0]);
    }
    g.set_outputs(outs);
    g.infer_shapes();
  }
};

TEST(MatMulSplitFolding, GivesEachPartOfGpt2sProjectionItsOwnProduct) {
  auto build = [] { return GptProjection({32, 32, 32}, filled({40, 96}, 1), filled({96}, 2)); };
  GptProjection before = build(), after = build();
  EXPECT_EQ(fold_matmul_splits(after.g), 1);
  EXPECT_EQ(count_op(after.g, "Split"), 0);
  EXPECT_EQ(count_op(after.g, "Gemm"), 3);
  for (const Node* n : after.g.nodes()) {
    if (n->op == "Gemm") {
      EXPECT_EQ(n->input(1)->shape, (Shape{40, 32}));
      EXPECT_EQ(n->input(2)->shape, (Shape{32}));
    }
  }
  expect_same_results(before.g, after.g);
}

TEST(MatMulSplitFolding, SlicesATransposedWeightAndABroadcastC) {
  // transB: w is [N, K]; C is [1, N]; parts of unequal widths.
  auto build = [] {
    return GptProjection({32, 64}, filled({96, 40}, 3), filled({1, 96}, 4), {{"transB", int64_t{1}}, {"beta", 0.5}});
  };
  GptProjection before = build(), after = build();
  EXPECT_EQ(fold_matmul_splits(after.g), 1);
  EXPECT_EQ(count_op(after.g, "Split"), 0);
  expect_same_results(before.g, after.g);
}

TEST(MatMulSplitFolding, APerRowCIsKeptWhole) {
  auto build = [] { return GptProjection({32, 32}, filled({40, 64}, 5), filled({6, 1}, 6)); };
  GptProjection before = build(), after = build();
  EXPECT_EQ(fold_matmul_splits(after.g), 1);
  expect_same_results(before.g, after.g);
}

// y = Split(x @ w, axis -1) for x [2, 5, 24], w [24, 96] constant.
Graph matmul_split(const Ints& sizes, bool read_all, Shape x_shape = {2, 5, 24}) {
  Graph g;
  Node* mm = g.add_node("MatMul", "mm", {g.add_input("x", DType::f32, std::move(x_shape)), g.add_constant("w", filled({24, 96}, 7))},
                        {"p"});
  std::vector<std::string> names;
  for (size_t i = 0; i < sizes.size(); ++i) names.push_back("part" + std::to_string(i));
  Node* split = g.add_node("Split", "split", {mm->outputs[0], i64s(g, "sizes", sizes)}, names, {{"axis", int64_t{-1}}});
  std::vector<Value*> outs(split->outputs.begin(), split->outputs.end());
  if (!read_all) outs.erase(outs.begin() + 1);  // the middle part: read by nobody
  g.set_outputs(outs);
  g.infer_shapes();
  return g;
}

TEST(MatMulSplitFolding, APartNobodyReadsIsNotComputed) {
  Graph before = matmul_split({32, 32, 32}, false), after = matmul_split({32, 32, 32}, false);
  EXPECT_EQ(fold_matmul_splits(after), 1);
  EXPECT_EQ(count_op(after, "MatMul"), 2);
  EXPECT_EQ(after.outputs()[0]->name, "part0");
  EXPECT_EQ(after.outputs()[1]->name, "part2");
  expect_same_results(before, after);
}

TEST(MatMulSplitFolding, LeavesNarrowPartsOtherAxesAndOtherReaders) {
  Graph narrow = matmul_split({16, 80}, true);
  EXPECT_EQ(fold_matmul_splits(narrow), 0);

  Graph rows;  // a Split along the rows of the product
  Node* mm = rows.add_node("MatMul", "mm", {rows.add_input("x", DType::f32, {64, 24}), rows.add_constant("w", filled({24, 96}, 7))},
                           {"p"});
  Node* split = rows.add_node("Split", "split", {mm->outputs[0]}, {"a", "b"}, {{"axis", int64_t{0}}, {"num_outputs", int64_t{2}}});
  rows.set_outputs(split->outputs);
  rows.infer_shapes();
  EXPECT_EQ(fold_matmul_splits(rows), 0);

  Graph shared = matmul_split({32, 64}, true);  // the product is also a graph output
  shared.set_outputs({shared.outputs()[0], shared.outputs()[1], shared.nodes()[0]->outputs[0]});
  EXPECT_EQ(fold_matmul_splits(shared), 0);

  Graph computed;  // B is an input, not a constant
  Node* mm2 = computed.add_node("MatMul", "mm", {computed.add_input("x", DType::f32, {8, 24}), computed.add_input("w", DType::f32, {24, 64})},
                                {"p"});
  Node* split2 = computed.add_node("Split", "split", {mm2->outputs[0]}, {"a", "b"}, {{"axis", int64_t{1}}, {"num_outputs", int64_t{2}}});
  computed.set_outputs(split2->outputs);
  computed.infer_shapes();
  EXPECT_EQ(fold_matmul_splits(computed), 0);
}

TEST(MatMulSplitFolding, ASymbolicBatchBecomesMinusOneInThePartsReshape) {
  // x [N, 6, 40] -> Reshape [-1, 40] -> MatMul -> Reshape [-1, 6, 96] -> Split.
  auto build = [] {
    Graph g;
    Value* x = g.add_input("x", DType::f32, {Dim::symbol("N"), 6, 40});
    Node* flat = g.add_node("Reshape", "flat", {x, i64s(g, "flat_shape", {-1, 40})}, {"xf"});
    Node* mm = g.add_node("MatMul", "mm", {flat->outputs[0], g.add_constant("w", filled({40, 96}, 8))}, {"p"});
    Node* back = g.add_node("Reshape", "back", {mm->outputs[0], i64s(g, "back_shape", {-1, 6, 96})}, {"p3"});
    Node* split = g.add_node("Split", "split", {back->outputs[0]}, {"q", "k", "v"}, {{"axis", int64_t{2}}, {"num_outputs", int64_t{3}}});
    g.set_outputs(split->outputs);
    g.infer_shapes();
    return g;
  };
  Graph before = build(), after = build();
  EXPECT_EQ(fold_matmul_splits(after), 1);
  EXPECT_EQ(count_op(after, "MatMul"), 3);
  EXPECT_EQ(after.outputs()[0]->shape, before.outputs()[0]->shape);
  expect_same_results_for(before, after, {{"x", filled({3, 6, 40}, 9)}});
}

TEST(MatMulSplitFolding, TwoSymbolicDimsTakeThePartsTargetFromTheOriginalOne) {
  // x [B, S, 40] -> Reshape [-1, 40] -> MatMul -> Reshape to Concat(Shape(x)[0:2], [96]) -> Split,
  // as a dynamic export computes GPT-2's [batch, seq, 2304].
  auto build = [] {
    Graph g;
    Value* x = g.add_input("x", DType::f32, {Dim::symbol("B"), Dim::symbol("S"), 40});
    Node* flat = g.add_node("Reshape", "flat", {x, i64s(g, "flat_shape", {-1, 40})}, {"xf"});
    Node* mm = g.add_node("MatMul", "mm", {flat->outputs[0], g.add_constant("w", filled({40, 96}, 8))}, {"p"});
    Node* shape = g.add_node("Shape", "shape", {x}, {"xs"});
    Node* lead = g.add_node("Slice", "lead", {shape->outputs[0], i64s(g, "zero", {0}), i64s(g, "two", {2})}, {"bs"});
    Node* target = g.add_node("Concat", "target", {lead->outputs[0], i64s(g, "n", {96})}, {"t"}, {{"axis", int64_t{0}}});
    Node* back = g.add_node("Reshape", "back", {mm->outputs[0], target->outputs[0]}, {"p3"});
    Node* split = g.add_node("Split", "split", {back->outputs[0]}, {"q", "k", "v"}, {{"axis", int64_t{2}}, {"num_outputs", int64_t{3}}});
    g.set_outputs(split->outputs);
    g.infer_shapes();
    return g;
  };
  Graph before = build(), after = build();
  ASSERT_EQ(fold_matmul_splits(after), 1);
  EXPECT_EQ(count_op(after, "Split"), 0);
  EXPECT_EQ(after.outputs()[0]->shape, before.outputs()[0]->shape);
  expect_same_results_for(before, after, {{"x", filled({2, 3, 40}, 9)}});
}

}  // namespace
}  // namespace tilefuse::passes
