// Split and Concat into the executor's buffers against the reference kernels: every axis
// (negative too), uneven and empty parts, num_outputs, a non-float dtype, a Split output nothing
// reads, on 1 and 2 workers.
#include "runtime/axis_parts_call.h"

#include <gtest/gtest.h>

#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

struct SplitCase {
  std::string name;
  std::vector<int64_t> x;
  AttributeMap attrs;
  std::vector<int64_t> sizes;  // empty: equal parts from the attributes
  int outputs;
  DType dtype = DType::f32;
  int unread = -1;  // an output left unbound
};

class SplitCall : public ::testing::TestWithParam<SplitCase> {};

TEST_P(SplitCall, MatchesReference) {
  const SplitCase& c = GetParam();
  Graph g;
  std::vector<Value*> inputs = {g.add_input("x", c.dtype, shape_of(c.x))};
  if (!c.sizes.empty()) {
    inputs.push_back(g.add_constant("sizes", Tensor::from_vector(DType::i64, {static_cast<int64_t>(c.sizes.size())},
                                                                 std::vector<double>(c.sizes.begin(), c.sizes.end()))));
  }
  std::vector<std::string> names;
  for (int i = 0; i < c.outputs; ++i) names.push_back("y" + std::to_string(i));
  Node* split = g.add_node("Split", "split", inputs, names, c.attrs);
  g.infer_shapes();
  ASSERT_TRUE(axis_parts_call_supports(*split));
  Tensor x(c.dtype, c.x);
  for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, static_cast<double>(i));
  std::vector<Tensor> ins = {x};
  if (!c.sizes.empty()) ins.push_back(*inputs[1]->constant);
  std::vector<Tensor> expected = reference::evaluate_node(*split, ins);
  std::unique_ptr<LibraryCall> call = prepare_axis_parts_call(*split);
  for (int workers : {1, 2}) {
    ThreadTeam team(workers);
    std::vector<Tensor> outs;
    for (int i = 0; i < c.outputs; ++i) outs.push_back(i == c.unread ? Tensor() : Tensor(c.dtype, expected[i].shape()));
    call->run(team, ins, outs);
    for (int i = 0; i < c.outputs; ++i) {
      if (i == c.unread) continue;
      EXPECT_TRUE(outs[i].same_bytes(expected[i])) << c.name << " output " << i << " on " << workers << " workers";
    }
  }
}

using Ints = std::vector<int64_t>;

INSTANTIATE_TEST_SUITE_P(
    Parts, SplitCall,
    ::testing::Values(SplitCase{"LastAxisQkv", {2, 5, 12}, {{"axis", int64_t{2}}}, {}, 3},
                      SplitCase{"NegativeAxisUneven", {3, 4, 10}, {{"axis", int64_t{-1}}}, {2, 7, 1}, 3},
                      SplitCase{"FirstAxis", {6, 3}, {{"axis", int64_t{0}}}, {1, 5}, 2},
                      SplitCase{"MiddleAxisInt64", {2, 9, 3}, {{"axis", int64_t{1}}}, {4, 0, 5}, 3, DType::i64},
                      SplitCase{"NumOutputs", {2, 7}, {{"axis", int64_t{1}}, {"num_outputs", int64_t{3}}}, {}, 3},
                      SplitCase{"UnreadOutput", {4, 8}, {{"axis", int64_t{1}}}, {3, 5}, 2, DType::f32, 0}),
    [](const auto& info) { return info.param.name; });

TEST(ConcatCall, MatchesReferenceOnEveryAxis) {
  for (int64_t axis : {0, 1, 2, -1}) {
    Graph g;
    const std::vector<std::vector<int64_t>> shapes = axis == 0   ? std::vector<std::vector<int64_t>>{{1, 3, 4}, {2, 3, 4}}
                                                     : axis == 1 ? std::vector<std::vector<int64_t>>{{2, 1, 4}, {2, 0, 4}, {2, 3, 4}}
                                                                 : std::vector<std::vector<int64_t>>{{2, 3, 5}, {2, 3, 4}};
    std::vector<Value*> inputs;
    std::vector<Tensor> ins;
    for (size_t i = 0; i < shapes.size(); ++i) {
      ins.emplace_back(DType::f32, shapes[i]);
      for (int64_t e = 0; e < ins.back().numel(); ++e) ins.back().set_f64(e, static_cast<double>(100 * i + e));
      // The first part a constant: constants are inputs like any other.
      inputs.push_back(i == 0 ? g.add_constant("c", ins.back())
                              : g.add_input("x" + std::to_string(i), DType::f32, shape_of(shapes[i])));
    }
    Node* concat = g.add_node("Concat", "concat", inputs, {"y"}, {{"axis", axis}});
    g.infer_shapes();
    ASSERT_TRUE(axis_parts_call_supports(*concat));
    const Tensor expected = reference::evaluate_node(*concat, ins).at(0);
    std::unique_ptr<LibraryCall> call = prepare_axis_parts_call(*concat);
    for (int workers : {1, 2}) {
      ThreadTeam team(workers);
      std::vector<Tensor> outs = {Tensor(DType::f32, expected.shape())};
      call->run(team, ins, outs);
      EXPECT_TRUE(outs[0].same_bytes(expected)) << "axis " << axis << " on " << workers << " workers";
    }
  }
}

// Parts whose sizes along the axis are symbols, as a dynamic export's: bound only when it runs.
TEST(ConcatCall, TakesPartsOfSymbolicSize) {
  Graph g;
  Value* a = g.add_input("a", DType::f32, {Dim(2), Dim::symbol("past"), Dim(3)});
  Value* b = g.add_input("b", DType::f32, {Dim(2), Dim::symbol("new"), Dim(3)});
  Node* concat = g.add_node("Concat", "concat", {a, b}, {"y"}, {{"axis", int64_t{1}}});
  g.infer_shapes();
  ASSERT_TRUE(axis_parts_call_supports(*concat));
  std::unique_ptr<LibraryCall> call = prepare_axis_parts_call(*concat);
  for (int64_t past : {0, 1, 5}) {
    std::vector<Tensor> ins = {Tensor(DType::f32, {2, past, 3}), Tensor(DType::f32, {2, 4, 3})};
    for (size_t i = 0; i < ins.size(); ++i) {
      for (int64_t e = 0; e < ins[i].numel(); ++e) ins[i].set_f64(e, static_cast<double>(100 * i + e));
    }
    const Tensor expected = reference::evaluate_node(*concat, ins).at(0);
    ThreadTeam team(2);
    std::vector<Tensor> outs = {Tensor(DType::f32, expected.shape())};
    call->run(team, ins, outs);
    EXPECT_TRUE(outs[0].same_bytes(expected)) << "past " << past;
  }
}

}  // namespace
}  // namespace tilefuse::runtime
