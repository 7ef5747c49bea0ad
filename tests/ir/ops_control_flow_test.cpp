// Inference of If: a branch takes a captured value whose sizes the outer graph names with other
// symbols than the branch holds (inferred again after the model was read), and refuses one whose
// known sizes or rank differ; branches that give different sizes give a symbol of their own, of
// different ranks an error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ops_test_util.h"

namespace tilefuse {
namespace {

using ::testing::HasSubstr;
using op_testing::infer;
using op_testing::shape_of_output;
using op_testing::sym;
using op_testing::user_error;

// A branch that returns its one input, declared with `shape`.
GraphRef passing_branch(const Shape& shape) {
  auto g = std::make_shared<Graph>();
  Value* in = g->add_input("captured", DType::f32, shape);
  g->set_outputs({g->add_node("Identity", "same", {in}, {"out"})->outputs[0]});
  g->infer_shapes();
  return g;
}

Node* if_node(Graph& g, const Shape& outer, const Shape& inner) {
  Value* cond = g.add_input("cond", DType::boolean, {});
  Value* x = g.add_input("x", DType::f32, outer);
  return infer(g, "If", {cond, x}, {{"then_branch", passing_branch(inner)}, {"else_branch", passing_branch(inner)}});
}

TEST(ControlFlowOps, ACaptureMayNameItsUnknownSizesWithOtherSymbols) {
  Graph g;
  Node* n = if_node(g, {8, sym("_d5"), 55}, {8, sym("_d0"), 55});
  EXPECT_EQ(shape_of_output(n), "[8, _d0, 55]");
}

TEST(ControlFlowOps, ACaptureOfAnotherKnownSizeOrRankIsRefused) {
  Graph g;
  EXPECT_THAT(user_error([&] { if_node(g, {8, 4}, {8, 5}); }), HasSubstr("then_branch input 'captured' is f32[8, 5]"));
  Graph g2;
  EXPECT_THAT(user_error([&] { if_node(g2, {8, 4}, {8, 4, 1}); }), HasSubstr("the node passes f32[8, 4]"));
}

// A branch that returns a constant of `shape` (and takes the capture the other branch reads).
GraphRef constant_branch(const std::vector<int64_t>& shape) {
  auto g = std::make_shared<Graph>();
  g->add_input("captured", DType::f32, {4});
  g->set_outputs({g->add_constant("empty", Tensor(DType::i64, shape))});
  return g;
}

// A branch that returns its input's nonzero positions: [1, data-dependent].
GraphRef nonzero_branch() {
  auto g = std::make_shared<Graph>();
  Value* in = g->add_input("captured", DType::f32, {4});
  g->set_outputs({g->add_node("NonZero", "hits", {in}, {"out"})->outputs[0]});
  g->infer_shapes();
  return g;
}

TEST(ControlFlowOps, BranchesOfDifferentSizesGiveASymbol) {
  // torchvision's batched NMS: no boxes gives an empty list, else NMS's selection.
  Graph g;
  Value* cond = g.add_input("cond", DType::boolean, {});
  Value* x = g.add_input("x", DType::f32, {4});
  Node* n = infer(g, "If", {cond, x}, {{"then_branch", constant_branch({1, 0})}, {"else_branch", nonzero_branch()}});
  ASSERT_EQ(n->outputs[0]->rank(), 2);
  EXPECT_EQ(n->outputs[0]->shape[0], Dim(1));
  EXPECT_FALSE(n->outputs[0]->shape[1].is_const());
  Graph g2;
  Value* cond2 = g2.add_input("cond", DType::boolean, {});
  Value* x2 = g2.add_input("x", DType::f32, {4});
  EXPECT_THAT(user_error([&] {
                infer(g2, "If", {cond2, x2}, {{"then_branch", constant_branch({0})}, {"else_branch", nonzero_branch()}});
              }),
              HasSubstr("differ in type or rank"));
}

}  // namespace
}  // namespace tilefuse
