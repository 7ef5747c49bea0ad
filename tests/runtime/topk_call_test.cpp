// The runtime's TopK against the reference kernel, exactly (values and indices): every axis,
// largest and smallest, k from 0 to the whole axis (a partial sort for few, a full sort for
// many), f32, f64, i32 and i64, lines with ties and NaN (NaN ranks first, equal values keep their
// order), on 1 and 2 workers.
#include "runtime/topk_call.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

// Few distinct values (ties), some NaN where the type has it.
Tensor sample(DType dtype, const std::vector<int64_t>& dims) {
  Tensor x(dtype, dims);
  const bool floating = dtype == DType::f32 || dtype == DType::f64;
  for (int64_t i = 0; i < x.numel(); ++i) {
    x.set_f64(i, floating && i % 11 == 4 ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>((i * 7) % 5) - 2.0);
  }
  return x;
}

void expect_matches_reference(DType dtype) {
  const std::vector<int64_t> dims = {3, 7, 20};
  const Tensor x = sample(dtype, dims);
  for (int64_t axis : {0, 1, 2, -1}) {
    const int64_t n = dims[static_cast<size_t>(axis < 0 ? axis + 3 : axis)];
    for (int64_t largest : {0, 1}) {
      for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{2}, n / 2, n}) {
        Graph g;
        Value* in = g.add_input("x", dtype, shape_of(dims));
        Value* kv = g.add_constant("k", Tensor::from_vector<int64_t>(DType::i64, {1}, {k}));
        Node* node = g.add_node("TopK", "topk", {in, kv}, {"values", "indices"}, {{"axis", axis}, {"largest", largest}});
        g.infer_shapes();
        ASSERT_TRUE(topk_call_supports(*node));
        const std::vector<Tensor> expected = reference::evaluate_node(*node, {x, *kv->constant});
        std::unique_ptr<LibraryCall> call = prepare_topk_call(*node);
        for (int workers : {1, 2}) {
          ThreadTeam team(workers);
          std::vector<Tensor> outs = {Tensor(dtype, expected[0].shape()), Tensor(DType::i64, expected[1].shape())};
          call->run(team, {x, *kv->constant}, outs);
          const std::string where = std::string(dtype_name(dtype)) + " axis " + std::to_string(axis) + " largest " + std::to_string(largest) + " k " +
                                    std::to_string(k) + " on " + std::to_string(workers) + " workers";
          EXPECT_TRUE(outs[0].same_bytes(expected[0])) << "values, " << where;
          EXPECT_TRUE(outs[1].same_bytes(expected[1])) << "indices, " << where;
        }
      }
    }
  }
}

TEST(TopKCall, MatchesTheReferenceExactly) {
  for (DType dtype : {DType::f32, DType::f64, DType::i32, DType::i64}) expect_matches_reference(dtype);
}

}  // namespace
}  // namespace tilefuse::runtime
