// Cast into the executor's buffer against the reference kernel, for every pair of element types
// the IR has, on values that exercise truncation, negative numbers, bool and half rounding, on
// 1 and 2 workers and across work-unit boundaries.
#include "runtime/cast_call.h"

#include <gtest/gtest.h>

#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

const std::vector<DType> kTypes = {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i8,
                                   DType::i32, DType::i64, DType::u8,   DType::boolean};

// Values every type holds exactly or rounds in a defined way: 0, +-1, fractions, 100-ish.
Tensor sample(DType dtype, int64_t n) {
  Tensor t(dtype, {n});
  for (int64_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(i % 23) * 0.75 - (dtype == DType::u8 || dtype == DType::boolean ? 0 : 6);
    t.set_f64(i, v);
  }
  return t;
}

TEST(CastCall, MatchesReferenceForEveryTypePair) {
  const int64_t n = 40000;  // more than two units of work
  for (DType from : kTypes) {
    const Tensor x = sample(from, n);
    for (DType to : kTypes) {
      Graph g;
      Value* in = g.add_input("x", from, {Dim(n)});
      Node* node = g.add_node("Cast", "cast", {in}, {"y"}, {{"to", int64_t{dtype_to_onnx(to)}}});
      g.infer_shapes();
      ASSERT_TRUE(cast_call_supports(*node));
      const Tensor expected = reference::evaluate_node(*node, {x})[0];
      std::unique_ptr<LibraryCall> call = prepare_cast_call(*node);
      for (int workers : {1, 2}) {
        ThreadTeam team(workers);
        std::vector<Tensor> outs = {Tensor(to, {n})};
        call->run(team, {x}, outs);
        EXPECT_TRUE(outs[0].same_bytes(expected))
            << dtype_name(from) << " -> " << dtype_name(to) << " on " << workers << " workers";
      }
    }
  }
}

}  // namespace
}  // namespace tilefuse::runtime
