// Integer and f64 reductions against the reference kernels, bit for bit: every fold, runs of axes
// at the front, middle and end (rows, columns, a block of both), axes that are not one run,
// keepdims either way, axes as attribute or input, int32 sums that wrap, NaN in Max/Min, empty
// reductions, on 1 and 2 workers; which nodes it takes; and the reference's error for the mean
// of no integers.
#include "runtime/reduce_call.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/error.h"
#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

using Ints = std::vector<int64_t>;

Tensor sample(DType dtype, const Ints& shape) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = dtype == DType::i32 ? 2147483000.0 - 1000.0 * static_cast<double>(i % 7) : (i * 37) % 11 - 5.25;
    // f64 thirds round at every step of a sum, so a fold in another order than the reference's
    // differs in the last bits.
    t.set_f64(i, dtype == DType::f64 ? v / 3.0 : std::trunc(v));
  }
  if (dtype == DType::f64 && t.numel() > 7) t.set_f64(7, NAN);  // Max and Min must let it win
  return t;
}

Node* reduction(Graph& g, const std::string& op, DType dtype, const Ints& shape, const Ints& axes, int64_t keepdims,
                bool axes_as_input) {
  Value* x = g.add_input("x", dtype, shape_of(shape));
  std::vector<Value*> inputs = {x};
  AttributeMap attrs = {{"keepdims", keepdims}};
  if (axes_as_input) {
    inputs.push_back(g.add_constant("axes", Tensor::from_vector<int64_t>(DType::i64, {static_cast<int64_t>(axes.size())}, axes)));
  } else {
    attrs["axes"] = axes;
  }
  Node* node = g.add_node(op, "reduce", inputs, {"y"}, attrs);
  g.infer_shapes();
  return node;
}

std::vector<int64_t> static_shape(const Value* v) {
  std::vector<int64_t> s;
  for (const Dim& d : v->shape) s.push_back(d.value());
  return s;
}

TEST(ReduceCall, MatchesTheReferenceBitForBit) {
  const Ints shape = {3, 5, 4, 6};
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"}) {
    for (DType dtype : {DType::f64, DType::i32, DType::i64}) {
      for (const Ints& axes : {Ints{3}, Ints{0}, Ints{1, 2}, Ints{-3}, Ints{0, 1, 2, 3}, Ints{0, 2}, Ints{1, 3}, Ints{0, 3},
                               Ints{0, 1, 3}, Ints{0, 2, 3}}) {
        for (int64_t keepdims : {0, 1}) {
          Graph g;
          Node* node = reduction(g, op, dtype, shape, axes, keepdims, keepdims == 0);
          ASSERT_TRUE(reduce_call_supports(*node)) << op;
          std::unique_ptr<LibraryCall> call = prepare_reduce_call(*node);
          const std::vector<Tensor> ins = node->inputs.size() > 1 ? std::vector<Tensor>{sample(dtype, shape), *node->input(1)->constant}
                                                                  : std::vector<Tensor>{sample(dtype, shape)};
          const Tensor expected = reference::evaluate_node(*node, ins)[0];
          for (int workers : {1, 2}) {
            ThreadTeam team(workers);
            std::vector<Tensor> outs = {Tensor(dtype, static_shape(node->outputs[0]))};
            call->run(team, ins, outs);
            EXPECT_TRUE(outs[0].same_bytes(expected)) << op << " " << dtype_name(dtype) << " axes "
                                                      << ::testing::PrintToString(axes) << " keepdims " << keepdims << " on "
                                                      << workers << ": " << outs[0].summary() << " vs " << expected.summary();
          }
        }
      }
    }
  }
}

// Wide column runs; empty reductions; and (axes 0 and 2 of [3, 70, 5]) outputs folded side by
// side, 64 at a time and 8 chains at a time with a remainder of each; rows of 21 (axes 0 and 2
// of [3, 70, 21], axis 2 of [4, 19, 21]) summed eight at a time in vector lanes, with a tail.
TEST(ReduceCall, WideColumnsSideBySideRowsAndEmptyReductions) {
  struct Case {
    Ints shape, axes;
  };
  for (const Case& c : {Case{{2, 3, 1300}, {1}}, Case{{2, 0, 7}, {1}}, Case{{3, 70, 5}, {0, 2}}, Case{{3, 70, 21}, {0, 2}},
                        Case{{4, 19, 21}, {2}}}) {
    for (const char* op : {"ReduceSum", "ReduceMax"}) {
      const Ints& shape = c.shape;
      Graph g;
      Node* node = reduction(g, op, DType::f64, shape, c.axes, 1, false);
      std::unique_ptr<LibraryCall> call = prepare_reduce_call(*node);
      const std::vector<Tensor> ins = {sample(DType::f64, shape)};
      const Tensor expected = reference::evaluate_node(*node, ins)[0];
      ThreadTeam team(2);
      std::vector<Tensor> outs = {Tensor(DType::f64, static_shape(node->outputs[0]))};
      call->run(team, ins, outs);
      EXPECT_TRUE(outs[0].same_bytes(expected)) << op << " " << expected.summary();
    }
  }
}

TEST(ReduceCall, TakesConstantAxesOfIntegersAndF64) {
  Graph g;
  EXPECT_TRUE(reduce_call_supports(*reduction(g, "ReduceSum", DType::i64, {2, 3, 4}, {0, 2}, 1, false)));
  Graph deep;
  EXPECT_FALSE(reduce_call_supports(*reduction(deep, "ReduceSum", DType::i64, Ints(17, 1), {0, 2}, 1, false)));
  Graph f32;
  EXPECT_FALSE(reduce_call_supports(*reduction(f32, "ReduceSum", DType::f32, {2, 3, 4}, {2}, 1, false)));
  Graph l2;
  EXPECT_FALSE(reduce_call_supports(*reduction(l2, "ReduceL2", DType::f64, {2, 3, 4}, {2}, 1, false)));
  Graph runtime_axes;
  Value* x = runtime_axes.add_input("x", DType::i64, shape_of({2, 3}));
  Value* axes = runtime_axes.add_input("axes", DType::i64, shape_of({1}));
  Node* node = runtime_axes.add_node("ReduceSum", "reduce", {x, axes}, {"y"});
  EXPECT_FALSE(reduce_call_supports(*node));
}

TEST(ReduceCall, TheMeanOfNoIntegersIsAUserError) {
  Graph g;
  Node* node = reduction(g, "ReduceMean", DType::i64, {2, 0}, {1}, 1, false);
  std::unique_ptr<LibraryCall> call = prepare_reduce_call(*node);
  ThreadTeam team(2);
  std::vector<Tensor> outs = {Tensor(DType::i64, {2, 1})};
  try {
    call->run(team, {sample(DType::i64, {2, 0})}, outs);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("the mean of an empty integer set is undefined"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tilefuse::runtime
