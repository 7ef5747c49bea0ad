// f32 Add, Sub, Mul and Div with run-time broadcasts against the reference kernels: equal
// shapes, a broadcast inner axis, a broadcast outer axis, a scalar, operands of lower rank, both
// sides broadcasting, on 1 and 2 workers; and the error for shapes that do not broadcast.
#include "runtime/broadcast_call.h"

#include <gtest/gtest.h>

#include "ir/error.h"
#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

using Ints = std::vector<int64_t>;

Tensor sample(const Ints& shape, int seed) {
  Tensor t(DType::f32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, static_cast<double>((i * 7 + seed) % 29) / 3.0 - 4.5);
  return t;
}

struct BroadcastCase {
  std::string name;
  Ints a, b;
};

class BroadcastCall : public ::testing::TestWithParam<BroadcastCase> {};

TEST_P(BroadcastCall, MatchesReference) {
  const BroadcastCase& c = GetParam();
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    Graph g;
    Value* a = g.add_input("a", DType::f32, shape_of(c.a));
    Value* b = g.add_input("b", DType::f32, shape_of(c.b));
    Node* node = g.add_node(op, op, {a, b}, {"y"});
    g.infer_shapes();
    ASSERT_TRUE(broadcast_call_supports(*node));
    const std::vector<Tensor> ins = {sample(c.a, 1), sample(c.b, 5)};
    const Tensor expected = reference::evaluate_node(*node, ins)[0];
    std::unique_ptr<LibraryCall> call = prepare_broadcast_call(*node);
    for (int workers : {1, 2}) {
      ThreadTeam team(workers);
      std::vector<Tensor> outs = {Tensor(DType::f32, expected.shape())};
      call->run(team, ins, outs);
      EXPECT_TRUE(outs[0].same_bytes(expected)) << c.name << " " << op << " on " << workers << " workers";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, BroadcastCall,
    ::testing::Values(BroadcastCase{"SameShape", {3, 5, 7}, {3, 5, 7}},
                      // GPT-2's scores [B, H, S, S] plus its mask [B, 1, S, S].
                      BroadcastCase{"MaskOverHeads", {2, 3, 4, 4}, {2, 1, 4, 4}},
                      BroadcastCase{"InnerAxisBroadcast", {4, 6}, {4, 1}},
                      BroadcastCase{"LowerRankRow", {3, 4, 6}, {6}},
                      BroadcastCase{"ScalarLeft", {}, {5, 2}},
                      BroadcastCase{"BothSides", {4, 1, 3}, {1, 5, 1}},
                      BroadcastCase{"Empty", {0, 3}, {1, 3}}),
    [](const auto& info) { return info.param.name; });

TEST(BroadcastCallErrors, OperandThatDoesNotBroadcast) {
  Graph g;
  Value* a = g.add_input("a", DType::f32, {Dim::symbol("N"), Dim(4)});
  Value* b = g.add_input("b", DType::f32, {Dim::symbol("M"), Dim(4)});
  Node* node = g.add_node("Add", "add_mask", {a, b}, {"y"});
  g.infer_shapes();
  std::unique_ptr<LibraryCall> call = prepare_broadcast_call(*node);
  ThreadTeam team(1);
  std::vector<Tensor> outs = {Tensor(DType::f32, {3, 4})};
  try {
    call->run(team, {sample({3, 4}, 0), sample({2, 4}, 0)}, outs);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("does not broadcast to the planned output [3, 4] (axis 0 is 2, not 1 or 3)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tilefuse::runtime
