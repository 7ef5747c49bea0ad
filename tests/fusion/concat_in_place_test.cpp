// Which Concats become views (fusion/concat_in_place.h): inputs that are contiguous blocks of
// the result (dims before the axis all 1), each written by a kernel or a library call, each once.
// Left copies: a leading dim above 1, a graph input among the inputs, an input given twice or
// already placed in another Concat, a symbolic dim. Offsets count the elements before an input.
#include "fusion/concat_in_place.h"

#include <gtest/gtest.h>

#include "fusion/execution_plan.h"

namespace tilefuse::fusion {
namespace {

// cat(exp(x), neg(x)[, extra]) on `axis` of x `shape`; `with_input`: x itself is a third input.
struct Catted {
  Graph g;
  Catted(std::vector<Dim> shape, int64_t axis, bool with_input = false, bool twice = false) {
    Value* x = g.add_input("x", DType::f32, shape);
    Value* e = g.add_node("Exp", "exp", {x}, {"e"})->outputs[0];
    Value* n = g.add_node("Neg", "neg", {x}, {"n"})->outputs[0];
    std::vector<Value*> parts = {e, n};
    if (with_input) parts.push_back(x);
    if (twice) parts.push_back(e);
    Value* c = g.add_node("Concat", "cat", parts, {"c"}, {{"axis", axis}})->outputs[0];
    g.set_outputs({g.add_node("Abs", "abs", {c}, {"y"})->outputs[0]});
    g.infer_shapes();
  }
};

const PlanStep* concat_step(const FusionPlan& plan) {
  for (const PlanStep& step : plan.steps) {
    if (step.node != nullptr && step.node->op == "Concat") return &step;
  }
  return nullptr;
}

bool in_place(Catted& c) {
  ExecutionPlan planned = plan_for_execution(c.g, true);
  const PlanStep* step = concat_step(planned.plan);
  return step != nullptr && is_concat_in_place(*step);
}

TEST(ConcatInPlace, BlocksWrittenByKernelsBecomeAView) {
  Catted rows({Dim(4), Dim(6)}, 0), channels({Dim(1), Dim(3), Dim(5)}, 1), negative({Dim(1), Dim(7)}, -1);
  EXPECT_TRUE(in_place(rows));
  EXPECT_TRUE(in_place(channels));
  EXPECT_TRUE(in_place(negative));
}

TEST(ConcatInPlace, LeavesWhatCannotBeWrittenInPlace) {
  Catted strided({Dim(2), Dim(3), Dim(5)}, 1), with_input({Dim(4), Dim(6)}, 0, true), twice({Dim(4), Dim(6)}, 0, false, true),
      symbolic({Dim::symbol("N"), Dim(6)}, 0);
  EXPECT_FALSE(in_place(strided));     // each input is 2 blocks of the result, not one
  EXPECT_FALSE(in_place(with_input));  // a graph input is the caller's: nothing writes it into the result
  EXPECT_FALSE(in_place(twice));       // one value at two places
  EXPECT_FALSE(in_place(symbolic));
}

TEST(ConcatInPlace, UnfusedModeKeepsTheCopy) {
  Catted rows({Dim(4), Dim(6)}, 0);
  const PlanStep* step = concat_step(plan_for_execution(rows.g, false).plan);
  ASSERT_NE(step, nullptr);
  EXPECT_FALSE(is_concat_in_place(*step));
}

TEST(ConcatInPlace, OffsetsCountTheElementsBefore) {
  Catted rows({Dim(4), Dim(6)}, 0);
  const Node* cat = rows.g.find_node("cat");
  ASSERT_NE(cat, nullptr);
  EXPECT_EQ(concat_input_offset(*cat, 0), 0);
  EXPECT_EQ(concat_input_offset(*cat, 1), 24);
}

}  // namespace
}  // namespace tilefuse::fusion
