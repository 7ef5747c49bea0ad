// Which Concats become views (fusion/concat_in_place.h): inputs that are contiguous blocks of
// the result (dims before the axis all 1), each written by a kernel or a library call, each once;
// or strided parts, each stored by its kernel at the result's strides (one kernel may store
// several). Left copies: a part also read elsewhere, a graph input among the inputs, an input
// given twice, a symbolic dim from the axis on. Offsets count the elements before a block. A Concat whose inputs
// are a run of another's blocks is a view of that run (DenseNet), unless it is a graph output.
#include "fusion/concat_in_place.h"

#include <gtest/gtest.h>

#include "fusion/execution_plan.h"

namespace tilefuse::fusion {
namespace {

// The sum of `c`: a reader of the Concat that is not pointwise (a pointwise op would move into
// the parts, passes/pointwise_through_concat.h).
Value* sum_of(Graph& g, Value* c) { return g.add_node("ReduceSum", "sum", {c}, {"sum"})->outputs[0]; }

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
    g.set_outputs({sum_of(g, c)});
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

TEST(ConcatInPlace, TwoStridedPartsFromOneKernelEachHaveTheirAccess) {
  Catted siblings({Dim(2), Dim(3), Dim(5)}, 1);  // exp(x) and neg(x) in one kernel, which reads x once
  EXPECT_TRUE(in_place(siblings));
  // A symbolic batch before the axis: the parts' offsets lie along constant dims.
  Catted batch({Dim::symbol("N"), Dim(3), Dim(5)}, 1), last({Dim::symbol("N"), Dim(3), Dim(5)}, -1);
  EXPECT_TRUE(in_place(batch));
  EXPECT_TRUE(in_place(last));
}

TEST(ConcatInPlace, BlocksWrittenByKernelsBecomeAView) {
  Catted rows({Dim(4), Dim(6)}, 0), channels({Dim(1), Dim(3), Dim(5)}, 1), negative({Dim(1), Dim(7)}, -1);
  EXPECT_TRUE(in_place(rows));
  EXPECT_TRUE(in_place(channels));
  EXPECT_TRUE(in_place(negative));
}

TEST(ConcatInPlace, LeavesWhatCannotBeWrittenInPlace) {
  Catted with_input({Dim(4), Dim(6)}, 0, true), twice({Dim(4), Dim(6)}, 0, false, true),
      symbolic({Dim::symbol("N"), Dim(6)}, 0);
  EXPECT_FALSE(in_place(with_input));  // a graph input is the caller's: nothing writes it into the result
  EXPECT_FALSE(in_place(twice));       // one value at two places
  EXPECT_FALSE(in_place(symbolic));    // concatenated along the symbolic dim: offsets unknown
}

// cat(exp(a), neg(b)) on the last axis of [3, 4] and [3, 2]: each part from a kernel of its own,
// `also_read`: exp(a) read again outside its kernel.
Graph strided_parts(bool also_read) {
  Graph g;
  Value* a = g.add_input("a", DType::f32, {3, 4});
  Value* b = g.add_input("b", DType::f32, {3, 2});
  Value* e = g.add_node("Exp", "exp", {a}, {"e"})->outputs[0];
  Value* n = g.add_node("Neg", "neg", {b}, {"n"})->outputs[0];
  Value* c = g.add_node("Concat", "cat", {e, n}, {"c"}, {{"axis", int64_t{-1}}})->outputs[0];
  std::vector<Value*> outs = {sum_of(g, c)};
  if (also_read) {  // by a product: a library call outside exp's kernel
    Value* w = g.add_constant("w", Tensor::from_vector<float>(DType::f32, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}));
    outs.push_back(g.add_node("MatMul", "product", {e, w}, {"p"})->outputs[0]);
  }
  g.set_outputs(outs);
  g.infer_shapes();
  return g;
}

TEST(ConcatInPlace, StridedPartsAreStoredByTheirKernelsAtTheResultsStrides) {
  Graph g = strided_parts(false);
  ExecutionPlan planned = plan_for_execution(g, true);
  const PlanStep* step = concat_step(planned.plan);
  ASSERT_NE(step, nullptr);
  EXPECT_TRUE(is_concat_in_place(*step));
  EXPECT_TRUE(concat_parts_strided(*step->node));
  EXPECT_EQ(concat_input_offset(*step->node, 1), 0);  // the kernel's access holds the offset
  for (const PlanStep& s : planned.plan.steps) {
    if (s.kind != StepKind::Kernel) continue;
    for (const Value* out : s.kernel.outputs) {
      if (out->name == "n") {
        const TensorAccess& access = s.kernel.space.access.at(out);
        EXPECT_EQ(access.offset, Dim(4));  // after exp(a)'s 4 columns
        EXPECT_EQ(access.strides, (std::vector<Dim>{Dim(6), Dim(1)}));
      }
    }
  }
  Graph read_again = strided_parts(true);
  ExecutionPlan replanned = plan_for_execution(read_again, true);
  const PlanStep* kept = concat_step(replanned.plan);
  ASSERT_NE(kept, nullptr);
  EXPECT_FALSE(is_concat_in_place(*kept));  // exp(a) must also exist as a tensor of its own
}

TEST(ConcatInPlace, UnfusedModeKeepsTheCopy) {
  Catted rows({Dim(4), Dim(6)}, 0);
  ExecutionPlan unfused = plan_for_execution(rows.g, false);
  const PlanStep* step = concat_step(unfused.plan);
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

// A DenseNet block at batch 1: layer k convolves the Concat of the block's input and the layers
// before it; `middle`: a Concat of layers 1 and 2 too; `block_is_output`: the middle Concat is a
// graph output (it then owns its bytes and stays a copy).
Graph dense_block(bool middle_is_output) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {1, 2, 5, 5});
  std::vector<Value*> parts = {g.add_node("Exp", "stem", {x}, {"stem"})->outputs[0]};
  for (int k = 1; k <= 3; ++k) {
    const std::string name = "layer" + std::to_string(k);
    Value* in = g.add_node("Concat", name + "_cat", parts, {name + "_in"}, {{"axis", int64_t{1}}})->outputs[0];
    Value* w = g.add_constant(name + "_w", Tensor(DType::f32, {2, 2 * k, 1, 1}));
    parts.push_back(g.add_node("Conv", name, {in, w}, {name + "_out"})->outputs[0]);
  }
  Value* middle = g.add_node("Concat", "middle", {parts[1], parts[2]}, {"middle"}, {{"axis", int64_t{1}}})->outputs[0];
  Value* block = g.add_node("Concat", "block", parts, {"block"}, {{"axis", int64_t{1}}})->outputs[0];
  g.set_outputs({g.add_node("Neg", "neg", {block}, {"y"})->outputs[0]});
  g.add_output(middle_is_output ? middle : g.add_node("Abs", "abs", {middle}, {"z"})->outputs[0]);
  g.infer_shapes();
  return g;
}

const PlanStep& step_named(const FusionPlan& plan, const std::string& name, size_t* index = nullptr) {
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (plan.steps[i].node != nullptr && plan.steps[i].node->name == name) {
      if (index != nullptr) *index = i;
      return plan.steps[i];
    }
  }
  throw std::runtime_error("no step " + name);
}

TEST(ConcatInPlace, EachLayersConcatIsARunOfTheBlocksLast) {
  Graph g = dense_block(false);
  ExecutionPlan planned = plan_for_execution(g, true);
  const FusionPlan& plan = planned.plan;
  size_t block_at = 0;
  EXPECT_TRUE(is_concat_in_place(step_named(plan, "block", &block_at)));
  EXPECT_EQ(enclosing_concat(plan, block_at), nullptr);  // its inputs live inside it
  for (const char* name : {"layer1_cat", "layer2_cat", "layer3_cat", "middle"}) {
    size_t at = 0;
    EXPECT_TRUE(is_concat_in_place(step_named(plan, name, &at))) << name;
    const Node* outer = enclosing_concat(plan, at);
    ASSERT_NE(outer, nullptr) << name;
    EXPECT_EQ(outer->name, "block") << name;
  }
  // layer k's inputs start at the block's start; the middle pair after the stem's 2 * 25 elements.
  const Node& block = *step_named(plan, "block").node;
  EXPECT_EQ(enclosing_concat_offset(*step_named(plan, "layer3_cat").node, block), 0);
  EXPECT_EQ(enclosing_concat_offset(*step_named(plan, "middle").node, block), 50);
}

TEST(ConcatInPlace, ARunThatIsAGraphOutputStaysACopy) {
  Graph g = dense_block(true);
  ExecutionPlan planned = plan_for_execution(g, true);
  EXPECT_FALSE(is_concat_in_place(step_named(planned.plan, "middle")));
  EXPECT_TRUE(is_concat_in_place(step_named(planned.plan, "layer2_cat")));
}

}  // namespace
}  // namespace tilefuse::fusion
