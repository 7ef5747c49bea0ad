// Einsum of one or two operands becomes ReduceSum / Transpose / Reshape / MatMul, and computes what
// the reference's Einsum does: batched products (attention's both halves), projections with
// several free labels on either side, contractions over several labels, outer products, labels
// summed in one operand only, a vector times a matrix, an ellipsis that broadcasts, transposes
// and sums of one operand; the output keeps its name. Left alone: diagonals, three operands,
// integers.
#include "passes/einsum_as_matmul.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;
using Shapes = std::vector<std::vector<int64_t>>;

Graph einsum_graph(const std::string& equation, const Shapes& shapes, DType dtype = DType::f32) {
  Graph g;
  std::vector<Value*> inputs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    Shape s;
    for (int64_t d : shapes[i]) s.push_back(Dim(d));
    inputs.push_back(g.add_input(std::string(1, char('a' + i)), dtype, s));
  }
  g.set_outputs({g.add_node("Einsum", "einsum", inputs, {"y"}, {{"equation", equation}})->outputs[0]});
  g.infer_shapes();
  return g;
}

TEST(EinsumAsMatmul, EveryContractionBecomesOneMatMul) {
  const std::vector<std::pair<std::string, Shapes>> cases = {
      {"bhqd,bhkd->bhqk", {{2, 3, 5, 4}, {2, 3, 6, 4}}},  // attention scores
      {"bhqk,bhkd->bhqd", {{2, 3, 5, 6}, {2, 3, 6, 4}}},  // attention's weighted values
      {"bsd,df->bsf", {{2, 5, 4}, {4, 3}}},              // a projection: two free labels on the left
      {"bsd,fd->bfs", {{2, 5, 4}, {3, 4}}},              // a transposed weight and output
      {"ij,jkl->ikl", {{3, 4}, {4, 2, 5}}},              // two free labels on the right
      {"abcd,cdeb->ae", {{2, 3, 4, 5}, {4, 5, 6, 3}}},   // three contracted labels, one a batch-like one
      {"i,j->ij", {{4}, {3}}},                           // an outer product
      {"ij,j->i", {{3, 4}, {4}}},                        // a matrix times a vector
      {"j,jk->k", {{4}, {4, 3}}},                        // a vector times a matrix
      {"ij,ij->", {{3, 4}, {3, 4}}},                     // a full contraction
      {"ijk,jl->il", {{3, 4, 2}, {4, 5}}},               // k summed in the first operand only
      {"...ij,...jk->...ik", {{2, 1, 3, 4}, {5, 4, 2}}},  // an ellipsis that broadcasts
      {"bij,bjk->bki", {{2, 3, 4}, {2, 4, 5}}},          // a batch with a transposed result
  };
  for (const auto& [equation, shapes] : cases) {
    SCOPED_TRACE(equation);
    Graph before = einsum_graph(equation, shapes), after = einsum_graph(equation, shapes);
    EXPECT_EQ(einsum_as_matmul(after), 1);
    EXPECT_EQ(count_op(after, "Einsum"), 0);
    EXPECT_EQ(count_op(after, "MatMul"), 1);
    EXPECT_EQ(after.outputs()[0]->name, "y");
    EXPECT_EQ(after.outputs()[0]->shape, before.outputs()[0]->shape);
    expect_same_results(before, after);
  }
}

TEST(EinsumAsMatmul, OneOperandIsASumAndATranspose) {
  for (const auto& [equation, shapes] : std::vector<std::pair<std::string, Shapes>>{
           {"ij->ji", {{3, 4}}}, {"ijk->ki", {{3, 4, 2}}}, {"ij->", {{3, 4}}}, {"ij->ij", {{3, 4}}}}) {
    SCOPED_TRACE(equation);
    Graph before = einsum_graph(equation, shapes), after = einsum_graph(equation, shapes);
    EXPECT_EQ(einsum_as_matmul(after), 1);
    EXPECT_EQ(count_op(after, "Einsum"), 0);
    EXPECT_EQ(count_op(after, "MatMul"), 0);
    expect_same_results(before, after);
  }
}

TEST(EinsumAsMatmul, KeepsASymbolicBatch) {
  Graph g;
  Value* q = g.add_input("q", DType::f32, {Dim::symbol("N"), Dim(3), Dim::symbol("S"), Dim(4)});
  Value* k = g.add_input("k", DType::f32, {Dim::symbol("N"), Dim(3), Dim::symbol("S"), Dim(4)});
  Value* x = g.add_input("x", DType::f32, {Dim::symbol("N"), Dim::symbol("S"), Dim(2), Dim(4)});
  Value* w = g.add_input("w", DType::f32, {Dim(2), Dim(4), Dim(6)});
  Value* scores = g.add_node("Einsum", "scores", {q, k}, {"scores"}, {{"equation", "bhqd,bhkd->bhqk"}})->outputs[0];
  Value* proj = g.add_node("Einsum", "proj", {x, w}, {"proj"}, {{"equation", "bshd,hdf->bsf"}})->outputs[0];
  g.set_outputs({scores, proj});
  g.infer_shapes();
  const Shape scores_shape = scores->shape, proj_shape = proj->shape;
  EXPECT_EQ(einsum_as_matmul(g), 2);
  EXPECT_EQ(count_op(g, "MatMul"), 2);
  EXPECT_EQ(g.outputs()[0]->shape, scores_shape);
  EXPECT_EQ(g.outputs()[1]->shape, proj_shape);
}

TEST(EinsumAsMatmul, LeavesDiagonalsThreeOperandsAndIntegers) {
  Graph diagonal = einsum_graph("ii->i", {{3, 3}});
  EXPECT_EQ(einsum_as_matmul(diagonal), 0);
  Graph three = einsum_graph("ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}});
  EXPECT_EQ(einsum_as_matmul(three), 0);
  Graph integers = einsum_graph("ij,jk->ik", {{2, 3}, {3, 4}}, DType::i64);
  EXPECT_EQ(einsum_as_matmul(integers), 0);
}

}  // namespace
}  // namespace tilefuse::passes
