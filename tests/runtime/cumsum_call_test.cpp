// CumSum against the reference kernels: every axis (negative too), inclusive and exclusive,
// forward and reversed, f32/f64/i32/i64 (int32 sums that wrap), on 1 and 2 workers; and the
// error for an axis out of range.
#include "runtime/cumsum_call.h"

#include <gtest/gtest.h>

#include "ir/error.h"
#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

using Ints = std::vector<int64_t>;

Tensor sample(DType dtype, const Ints& shape) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = dtype == DType::i32 ? 2147483000.0 - 1000.0 * static_cast<double>(i % 7) : (i * 37) % 11 - 5.25;
    t.set_f64(i, dtype == DType::i64 || dtype == DType::i32 ? std::trunc(v) : v);
  }
  return t;
}

Node* cumsum(Graph& g, DType dtype, const Ints& shape, int64_t exclusive, int64_t reverse) {
  Value* x = g.add_input("x", dtype, shape_of(shape));
  Value* axis = g.add_input("axis", DType::i64, {});
  Node* node = g.add_node("CumSum", "cumsum", {x, axis}, {"y"}, {{"exclusive", exclusive}, {"reverse", reverse}});
  g.infer_shapes();
  return node;
}

TEST(CumSumCall, MatchesReferenceOnEveryAxisAndMode) {
  const Ints shape = {3, 5, 4};
  for (DType dtype : {DType::f32, DType::f64, DType::i32, DType::i64}) {
    for (int64_t exclusive : {0, 1}) {
      for (int64_t reverse : {0, 1}) {
        Graph g;
        Node* node = cumsum(g, dtype, shape, exclusive, reverse);
        ASSERT_TRUE(cumsum_call_supports(*node));
        std::unique_ptr<LibraryCall> call = prepare_cumsum_call(*node);
        for (int64_t axis : {0, 1, 2, -1}) {
          const std::vector<Tensor> ins = {sample(dtype, shape), Tensor::scalar_i64(axis)};
          const Tensor expected = reference::evaluate_node(*node, ins)[0];
          for (int workers : {1, 2}) {
            ThreadTeam team(workers);
            std::vector<Tensor> outs = {Tensor(dtype, shape)};
            call->run(team, ins, outs);
            EXPECT_TRUE(outs[0].same_bytes(expected)) << dtype_name(dtype) << " axis " << axis << " exclusive "
                                                      << exclusive << " reverse " << reverse << " on " << workers;
          }
        }
      }
    }
  }
}

TEST(CumSumCall, AnAxisOutOfRangeIsAUserError) {
  Graph g;
  Node* node = cumsum(g, DType::f32, {2, 3}, 0, 0);
  std::unique_ptr<LibraryCall> call = prepare_cumsum_call(*node);
  ThreadTeam team(2);
  std::vector<Tensor> outs = {Tensor(DType::f32, {2, 3})};
  try {
    call->run(team, {sample(DType::f32, {2, 3}), Tensor::scalar_i64(2)}, outs);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("axis 2 is out of range"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tilefuse::runtime
