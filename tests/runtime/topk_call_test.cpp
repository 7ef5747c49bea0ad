// The runtime's TopK against the reference kernel, exactly (values and indices): every axis,
// largest and smallest, k from 0 to the whole axis, lines with ties and NaN (NaN ranks first,
// equal values keep their order), on 1 and 2 workers.
#include "runtime/topk_call.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

TEST(TopKCall, MatchesTheReferenceExactly) {
  const std::vector<int64_t> dims = {3, 7, 5};
  Tensor x(DType::f32, dims);
  for (int64_t i = 0; i < x.numel(); ++i) {
    // Few distinct values (ties), some NaN.
    x.data<float>()[i] = i % 11 == 4 ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>((i * 7) % 5) - 2.0f;
  }
  for (int64_t axis : {0, 1, 2, -1}) {
    const int64_t n = dims[static_cast<size_t>(axis < 0 ? axis + 3 : axis)];
    for (int64_t largest : {0, 1}) {
      for (int64_t k : {int64_t{0}, int64_t{1}, n / 2, n}) {
        Graph g;
        Value* in = g.add_input("x", DType::f32, shape_of(dims));
        Value* kv = g.add_constant("k", Tensor::from_vector<int64_t>(DType::i64, {1}, {k}));
        Node* node = g.add_node("TopK", "topk", {in, kv}, {"values", "indices"}, {{"axis", axis}, {"largest", largest}});
        g.infer_shapes();
        ASSERT_TRUE(topk_call_supports(*node));
        const std::vector<Tensor> expected = reference::evaluate_node(*node, {x, *kv->constant});
        std::unique_ptr<LibraryCall> call = prepare_topk_call(*node);
        for (int workers : {1, 2}) {
          ThreadTeam team(workers);
          std::vector<Tensor> outs = {Tensor(DType::f32, expected[0].shape()), Tensor(DType::i64, expected[1].shape())};
          call->run(team, {x, *kv->constant}, outs);
          const std::string where = "axis " + std::to_string(axis) + " largest " + std::to_string(largest) + " k " +
                                    std::to_string(k) + " on " + std::to_string(workers) + " workers";
          EXPECT_TRUE(outs[0].same_bytes(expected[0])) << "values, " << where;
          EXPECT_TRUE(outs[1].same_bytes(expected[1])) << "indices, " << where;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tilefuse::runtime
