// Split into the executor's buffers against the reference kernel: every axis (negative too),
// uneven parts, num_outputs, a non-float dtype, an output nothing reads, on 1 and 2 workers.
#include "runtime/split_call.h"

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
  ASSERT_TRUE(split_call_supports(*split));
  Tensor x(c.dtype, c.x);
  for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, static_cast<double>(i));
  std::vector<Tensor> ins = {x};
  if (!c.sizes.empty()) ins.push_back(*inputs[1]->constant);
  std::vector<Tensor> expected = reference::evaluate_node(*split, ins);
  std::unique_ptr<LibraryCall> call = prepare_split_call(*split);
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

}  // namespace
}  // namespace tilefuse::runtime
