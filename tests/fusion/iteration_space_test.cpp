// Iteration spaces of groups with views inside: the domain is the common refinement of the
// shapes on both sides of each view, every tensor's strides are spread over the refined axes,
// and groups whose shapes cannot share one domain are refused with the reason.
#include "fusion/iteration_space.h"

#include <gtest/gtest.h>

namespace tilefuse::fusion {
namespace {

Value* reshape(Graph& g, Value* x, std::vector<int64_t> shape, const std::string& name) {
  const auto n = static_cast<int64_t>(shape.size());
  Value* s = g.add_constant(name + "_shape", Tensor::from_vector<int64_t>(DType::i64, {n}, shape));
  return g.add_node("Reshape", name, {x, s}, {name})->outputs[0];
}

std::vector<Node*> all_nodes(const Graph& g) {
  std::vector<Node*> nodes;
  for (Node* n : g.nodes()) nodes.push_back(n);
  return nodes;
}

TEST(IterationSpace, AHeadSplitViewSpreadsStridesOverTheRefinedAxes) {
  // y = ReduceMax(Reshape(x * bias, [N, 32, 4, 32]), axis 3)
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim::symbol("N"), Dim(32), Dim(128)});
  Value* bias = g.add_input("bias", DType::f32, {Dim(128)});
  Value* scaled = g.add_node("Mul", "mul", {x, bias}, {"scaled"})->outputs[0];
  Value* heads = reshape(g, scaled, {0, 32, 4, 32}, "heads");
  Value* max = g.add_node("ReduceMax", "max", {heads}, {"max"}, {{"axes", std::vector<int64_t>{3}}})->outputs[0];
  g.add_output(max);
  g.infer_shapes();
  const IterationSpaceResult r = derive_iteration_space(all_nodes(g));
  ASSERT_TRUE(r.space) << r.reason;
  EXPECT_EQ(r.space->domain, (Shape{Dim::symbol("N"), Dim(32), Dim(4), Dim(32)}));
  EXPECT_EQ(r.space->reduced_axes, (std::vector<int64_t>{3}));
  EXPECT_EQ(r.space->access.at(x).strides, (std::vector<Dim>{Dim(4096), Dim(128), Dim(32), Dim(1)}));
  EXPECT_EQ(r.space->access.at(bias).strides, (std::vector<Dim>{Dim(0), Dim(0), Dim(32), Dim(1)}));
  EXPECT_EQ(r.space->access.at(max).level, Level::Reduced);
  EXPECT_EQ(r.space->access.at(max).strides, (std::vector<Dim>{Dim(128), Dim(4), Dim(1), Dim(0)}));
}

// scores [N, 16] / 4 + mask [N, seq]: the sum is [N, max(16, seq)], seq is 1 or 16 (checked on
// each run), so the mask's inner stride is min(seq - 1, 1), 0 or 1 at launch, and the quotient
// [N, 16] is the domain on every run.
TEST(IterationSpace, ADimThatOnlyTheRunSettlesGetsAStrideSettledThen) {
  Graph g;
  Value* scores = g.add_input("scores", DType::f32, {Dim::symbol("N"), Dim(16)});
  Value* mask = g.add_input("mask", DType::f32, {Dim::symbol("N"), Dim::symbol("seq")});
  Value* four = g.add_constant("four", Tensor::scalar_f32(4.0f));
  Value* scaled = g.add_node("Div", "div", {scores, four}, {"scaled"})->outputs[0];
  g.add_output(g.add_node("Add", "add", {scaled, mask}, {"y"})->outputs[0]);
  g.infer_shapes();
  const IterationSpaceResult r = derive_iteration_space(all_nodes(g));
  ASSERT_TRUE(r.space) << r.reason;
  EXPECT_EQ(shape_to_string(r.space->domain), "[N, max(16, seq)]");
  const Dim seq = Dim::symbol("seq");
  EXPECT_EQ(r.space->access.at(mask).strides, (std::vector<Dim>{seq, min(seq - Dim(1), Dim(1))}));
  EXPECT_EQ(r.space->access.at(scores).strides, (std::vector<Dim>{Dim(16), Dim(1)}));
  EXPECT_EQ(r.space->access.at(scaled).strides, (std::vector<Dim>{Dim(16), Dim(1)}));
}

// scores [N, s] * 0.125 + mask [N, t]: the product [N, s] is computed over [N, max(s, t)], read
// at stride min(s - 1, 1), and listed as a value the kernel never has in its own shape (the
// planner keeps such values from leaving the kernel).
TEST(IterationSpace, AProductTheRunMayBroadcastIsComputedOverTheDomainAndKeptInside) {
  Graph g;
  const Dim s = Dim::symbol("s"), t = Dim::symbol("t");
  Value* scores = g.add_input("scores", DType::f32, {Dim::symbol("N"), s});
  Value* mask = g.add_input("mask", DType::f32, {Dim::symbol("N"), t});
  Value* eighth = g.add_constant("eighth", Tensor::scalar_f32(0.125f));
  Value* scaled = g.add_node("Mul", "mul", {scores, eighth}, {"scaled"})->outputs[0];
  Value* y = g.add_node("Add", "add", {scaled, mask}, {"y"})->outputs[0];
  g.add_output(y);
  g.infer_shapes();
  const IterationSpaceResult r = derive_iteration_space(all_nodes(g));
  ASSERT_TRUE(r.space) << r.reason;
  EXPECT_EQ(shape_to_string(r.space->domain), "[N, max(s, t)]");
  EXPECT_EQ(r.space->access.at(scores).strides, (std::vector<Dim>{s, min(s - Dim(1), Dim(1))}));
  EXPECT_EQ(r.space->computed_broadcast, (std::set<const Value*>{scaled}));
  EXPECT_FALSE(r.space->computed_broadcast.count(y));
}

TEST(IterationSpace, ShapesWithoutACommonRefinementAreRefused) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(4), Dim(6)});
  Value* e = g.add_node("Exp", "exp", {x}, {"e"})->outputs[0];
  Value* r = reshape(g, e, {6, 4}, "r");
  g.add_output(g.add_node("Neg", "neg", {r}, {"y"})->outputs[0]);
  g.infer_shapes();
  const IterationSpaceResult result = derive_iteration_space(all_nodes(g));
  EXPECT_FALSE(result.space);
  EXPECT_NE(result.reason.find("no common iteration space for [4, 6] and [6, 4]"), std::string::npos) << result.reason;
}

TEST(IterationSpace, ReductionsOfDifferentElementsOnTheTwoSidesAreRefused) {
  // A row sum over [8, 16], then a reshape to [8, 4, 4] and a sum over its middle axis.
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(8), Dim(16)});
  Value* s = g.add_node("ReduceSum", "s", {x}, {"s"}, {{"axes", std::vector<int64_t>{1}}})->outputs[0];
  Value* d = g.add_node("Sub", "d", {x, s}, {"d"})->outputs[0];
  Value* r = reshape(g, d, {8, 4, 4}, "r");
  g.add_output(g.add_node("ReduceSum", "t", {r}, {"t"}, {{"axes", std::vector<int64_t>{1}}})->outputs[0]);
  g.infer_shapes();
  const IterationSpaceResult result = derive_iteration_space(all_nodes(g));
  EXPECT_FALSE(result.space);
  EXPECT_NE(result.reason.find("reduce different elements"), std::string::npos) << result.reason;
}

// Integer values make a kernel a scalar loop over native types: integer arithmetic and its
// Cast to f32 share one, but a reduction or f32 vector math next to them keeps SIMD lanes in a
// kernel of its own.
TEST(IterationSpace, IntegerValuesJoinOnlyScalarElementwiseWork) {
  Graph g;
  Value* ids = g.add_input("ids", DType::i64, {Dim(4), Dim(16)});
  Value* three = g.add_constant("three", Tensor::scalar_i64(3));
  Value* scaled = g.add_node("Mul", "scaled", {ids, three}, {"scaled"})->outputs[0];
  Value* as_float = g.add_node("Cast", "as_float", {scaled}, {"as_float"}, {{"to", int64_t{1}}})->outputs[0];
  Value* e = g.add_node("Exp", "exp", {as_float}, {"e"})->outputs[0];
  Value* sum = g.add_node("ReduceSum", "sum", {as_float}, {"sum"}, {{"axes", std::vector<int64_t>{1}}})->outputs[0];
  g.add_output(e);
  g.add_output(sum);
  g.infer_shapes();
  std::vector<Node*> n = all_nodes(g);
  const IterationSpaceResult cast = derive_iteration_space({n[0], n[1]});
  ASSERT_TRUE(cast.space) << cast.reason;
  EXPECT_EQ(cast.space->access.at(scaled).level, Level::Full);
  for (Node* heavy : {n[2], n[3]}) {
    const IterationSpaceResult r = derive_iteration_space({n[0], n[1], heavy});
    EXPECT_FALSE(r.space) << heavy->op;
    EXPECT_NE(r.reason.find("no reductions, no f32 vector math"), std::string::npos) << r.reason;
  }
  // Integer reductions are not generated at all.
  Node* int_sum = g.add_node("ReduceSum", "int_sum", {ids}, {"int_sum"}, {{"axes", std::vector<int64_t>{1}}});
  g.infer_shapes();
  EXPECT_FALSE(is_kernel_op(*int_sum));
}

// torch.gather along the last axis, then Exp: the gather is a load of the kernel; its indices
// are addresses (the kernel stays a float-lane kernel), and data is read with stride 0 along
// the gathered axis (the index supplies that coordinate).
TEST(IterationSpace, AGatherIsALoadThroughItsIndices) {
  Graph g;
  Value* data = g.add_input("data", DType::f32, {Dim(6), Dim(40)});
  Value* index = g.add_input("index", DType::i64, {Dim(6), Dim(10)});
  Value* picked = g.add_node("GatherElements", "gather", {data, index}, {"picked"}, {{"axis", int64_t{-1}}})->outputs[0];
  Value* e = g.add_node("Exp", "exp", {picked}, {"e"})->outputs[0];
  g.add_output(e);
  g.infer_shapes();
  const IterationSpaceResult r = derive_iteration_space(all_nodes(g));
  ASSERT_TRUE(r.space) << r.reason;
  EXPECT_EQ(r.space->domain, (Shape{Dim(6), Dim(10)}));
  ASSERT_EQ(r.space->gathers.size(), 1u);
  EXPECT_EQ(r.space->gathers[0].first, picked);
  EXPECT_EQ(r.space->gathers[0].second.axis, 1);
  EXPECT_EQ(r.space->gathers[0].second.extent, Dim(40));
  EXPECT_EQ(r.space->access.at(data).strides, (std::vector<Dim>{Dim(40), Dim(0)}));
  EXPECT_EQ(r.space->access.at(index).strides, (std::vector<Dim>{Dim(10), Dim(1)}));
  EXPECT_FALSE(has_native_values(*r.space));
  // The data also read as it is: two reads of one input, refused.
  Graph h;
  Value* square = h.add_input("data", DType::f32, {Dim(6), Dim(10)});
  Value* at = h.add_input("index", DType::i64, {Dim(6), Dim(10)});
  Value* again = h.add_node("GatherElements", "gather", {square, at}, {"again"}, {{"axis", int64_t{1}}})->outputs[0];
  h.add_output(h.add_node("Add", "add", {again, square}, {"both"})->outputs[0]);
  h.infer_shapes();
  const IterationSpaceResult twice = derive_iteration_space(all_nodes(h));
  EXPECT_FALSE(twice.space);
  EXPECT_NE(twice.reason.find("also read"), std::string::npos) << twice.reason;
}

}  // namespace
}  // namespace tilefuse::fusion
