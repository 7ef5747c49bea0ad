// Shape inference of the data-movement ops, with constant, symbolic and run-time shape inputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "ir/graph.h"
#include "ir/ops/slice_dims.h"
#include "ops_test_util.h"

namespace tilefuse {
namespace {

using ::testing::HasSubstr;
using op_testing::i64_scalar;
using op_testing::i64_vector;
using op_testing::infer;
using op_testing::shape_of_output;
using op_testing::sym;
using op_testing::user_error;
using op_testing::values_of_output;

constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();
constexpr int64_t kBegin = std::numeric_limits<int64_t>::min();

TEST(MovementOps, TransposeDefaultsToReversedDims) {
  Graph g;
  EXPECT_EQ(shape_of_output(infer(g, "Transpose", {g.add_input("x", DType::f32, {sym("N"), 3, 4})})), "[4, 3, N]");
  Graph g2;
  Node* n = infer(g2, "Transpose", {g2.add_input("x", DType::f32, {sym("N"), 3, 4})}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
  EXPECT_EQ(shape_of_output(n), "[N, 4, 3]");
  Graph g3;
  EXPECT_THROW(infer(g3, "Transpose", {g3.add_input("x", DType::f32, {2, 3})}, {{"perm", std::vector<int64_t>{0, 0}}}),
               UserError);
}

Node* reshape(Graph& g, Shape in, const std::vector<int64_t>& target, int64_t allowzero = 0) {
  return infer(g, "Reshape", {g.add_input("x", DType::f32, std::move(in)), i64_vector(g, "shape", target)},
               {{"allowzero", allowzero}});
}

TEST(MovementOps, ReshapeResolvesZeroAndMinusOne) {
  Graph g1, g2, g3;
  EXPECT_EQ(shape_of_output(reshape(g1, {2, 3, 4}, {4, -1})), "[4, 6]");
  EXPECT_EQ(shape_of_output(reshape(g2, {2, 3, 4}, {0, -1})), "[2, 12]");
  EXPECT_EQ(shape_of_output(reshape(g3, {0, 3}, {3, 0}, 1)), "[3, 0]");  // allowzero: 0 is a size, not a copy
}

TEST(MovementOps, ReshapeKeepsSymbolsWhenDimsCancel) {
  Graph g1, g2, g3;
  EXPECT_EQ(shape_of_output(reshape(g1, {sym("N"), 12, 64}, {0, -1})), "[N, 768]");
  EXPECT_EQ(shape_of_output(reshape(g2, {sym("N"), 768}, {0, 12, -1})), "[N, 12, 64]");
  EXPECT_EQ(shape_of_output(reshape(g3, {sym("N"), 12, 64}, {-1, 64})), shape_to_string({sym("N") * 12, 64}));
}

TEST(MovementOps, ReshapeRejectsImpossibleTargets) {
  Graph g1, g2, g3, g4;
  EXPECT_THAT(user_error([&] { reshape(g1, {2, 3}, {4, -1}); }), HasSubstr("cannot reshape [2, 3] into [4, -1]"));
  EXPECT_THAT(user_error([&] { reshape(g2, {2, 3}, {5}); }), HasSubstr("(6 elements) into [5] (5 elements)"));
  EXPECT_THAT(user_error([&] { reshape(g3, {2, 3}, {-1, -1}); }), HasSubstr("more than one -1"));
  EXPECT_THAT(user_error([&] { reshape(g4, {2, 3}, {0, -1}, 1); }), HasSubstr("both 0 and -1"));
}

TEST(MovementOps, ReshapeWithRuntimeShapeKeepsTheRank) {
  Graph g;
  Node* n = infer(g, "Reshape", {g.add_input("x", DType::f32, {6}), g.add_input("s", DType::i64, {2})});
  ASSERT_EQ(n->outputs[0]->shape.size(), 2u);
  EXPECT_TRUE(n->outputs[0]->shape[0].is_symbol());
  Graph g2;
  EXPECT_THAT(user_error([&] {
                infer(g2, "Reshape", {g2.add_input("x", DType::f32, {6}), g2.add_input("s", DType::i64, {sym("K")})});
              }),
              HasSubstr("node 'Reshape_0' (Reshape): input 1 ('s') is not known at compile time"));
}

TEST(MovementOps, FlattenCollapsesAroundTheAxis) {
  Graph g1, g2, g3;
  EXPECT_EQ(shape_of_output(infer(g1, "Flatten", {g1.add_input("x", DType::f32, {sym("N"), 3, 4})})),
            shape_to_string({sym("N"), 12}));
  EXPECT_EQ(shape_of_output(infer(g2, "Flatten", {g2.add_input("x", DType::f32, {2, 3, 4})}, {{"axis", int64_t{0}}})),
            "[1, 24]");
  EXPECT_THROW(infer(g3, "Flatten", {g3.add_input("x", DType::f32, {2, 3})}, {{"axis", int64_t{3}}}), UserError);
}

TEST(MovementOps, SqueezeWithAndWithoutAxes) {
  Graph g1, g2, g3, g4;
  EXPECT_EQ(shape_of_output(infer(g1, "Squeeze", {g1.add_input("x", DType::f32, {sym("N"), 1, 4}), i64_vector(g1, "a", {-2})})),
            "[N, 4]");
  EXPECT_EQ(shape_of_output(infer(g2, "Squeeze", {g2.add_input("x", DType::f32, {1, 3, 1})})), "[3]");
  EXPECT_THAT(user_error([&] { infer(g3, "Squeeze", {g3.add_input("x", DType::f32, {sym("N"), 1})}); }),
              HasSubstr("dim 0 of [N, 1] is symbolic; give axes"));
  EXPECT_THAT(user_error([&] { infer(g4, "Squeeze", {g4.add_input("x", DType::f32, {2, 3}), i64_vector(g4, "a", {1})}); }),
              HasSubstr("cannot squeeze axis 1"));
}

TEST(MovementOps, UnsqueezeAxesCountInTheOutputRank) {
  Graph g;
  Node* n = infer(g, "Unsqueeze", {g.add_input("x", DType::f32, {3, sym("N")}), i64_vector(g, "a", {0, -1})});
  EXPECT_EQ(shape_of_output(n), "[1, 3, N, 1]");
  Graph g2;
  Node* runtime = infer(g2, "Unsqueeze", {g2.add_input("x", DType::f32, {3}), g2.add_input("a", DType::i64, {2})});
  EXPECT_EQ(runtime->outputs[0]->shape.size(), 3u);
}

TEST(MovementOps, ExpandBroadcastsBothWays) {
  Graph g;
  Node* n = infer(g, "Expand", {g.add_input("x", DType::f32, {3, 1}), i64_vector(g, "s", {2, 1, 6})});
  EXPECT_EQ(shape_of_output(n), "[2, 3, 6]");
  Graph g2;
  EXPECT_THROW(infer(g2, "Expand", {g2.add_input("x", DType::f32, {3}), i64_vector(g2, "s", {4})}), UserError);
}

TEST(MovementOps, ExpandWithRuntimeShapeKeepsTheDimsItCan) {
  Graph g;
  Node* n = infer(g, "Expand", {g.add_input("x", DType::f32, {1, 5}), g.add_input("s", DType::i64, {3})});
  const Shape& out = n->outputs[0]->shape;
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0].is_symbol());
  EXPECT_TRUE(out[1].is_symbol());
  EXPECT_EQ(out[2], Dim(5));
}

TEST(MovementOps, ConcatAddsTheAxisAndChecksTheRest) {
  Graph g;
  Node* n = infer(g, "Concat", {g.add_input("a", DType::f32, {sym("N"), 2}), g.add_input("b", DType::f32, {sym("N"), 3})},
                  {{"axis", int64_t{-1}}});
  EXPECT_EQ(shape_of_output(n), "[N, 5]");
  Graph g2;
  EXPECT_THAT(user_error([&] {
                infer(g2, "Concat", {g2.add_input("a", DType::f32, {4, 2}), g2.add_input("b", DType::f32, {5, 2})},
                      {{"axis", int64_t{1}}});
              }),
              HasSubstr("dim 0 of every input (non-concat axis) must be equal, got 4 and 5"));
  Graph g3;
  EXPECT_THROW(infer(g3, "Concat", {g3.add_input("a", DType::f32, {2})}), UserError);  // axis is required
}

TEST(MovementOps, ConcatRejectsAMissingInput) {
  Graph g;
  EXPECT_THAT(user_error([&] {
                infer(g, "Concat", {g.add_input("a", DType::f32, {2}), nullptr}, {{"axis", int64_t{0}}});
              }),
              HasSubstr("input 1 is missing"));
}

TEST(MovementOps, SplitEquallyOrBySizes) {
  Graph g;
  Node* even = infer(g, "Split", {g.add_input("x", DType::f32, {6, sym("N")})}, {}, 3);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(shape_of_output(even, i), "[2, N]");
  Graph g2;
  Node* sized = infer(g2, "Split", {g2.add_input("x", DType::f32, {sym("N"), 6}), i64_vector(g2, "s", {1, 5})},
                      {{"axis", int64_t{1}}}, 2);
  EXPECT_EQ(shape_of_output(sized, 0), "[N, 1]");
  EXPECT_EQ(shape_of_output(sized, 1), "[N, 5]");
  Graph g3;
  EXPECT_THAT(user_error([&] { infer(g3, "Split", {g3.add_input("x", DType::f32, {7})}, {}, 2); }),
              HasSubstr("does not split into 2 equal parts"));
  Graph g4;
  EXPECT_THAT(user_error([&] {
                infer(g4, "Split", {g4.add_input("x", DType::f32, {6}), i64_vector(g4, "s", {2, 2})}, {}, 2);
              }),
              HasSubstr("add up to 4, not the axis size 6"));
}

Node* slice(Graph& g, Shape in, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
            std::vector<int64_t> steps = {}) {
  std::vector<Value*> inputs = {g.add_input("x", DType::f32, std::move(in)), i64_vector(g, "starts", starts),
                                i64_vector(g, "ends", ends), i64_vector(g, "axes", axes)};
  if (!steps.empty()) inputs.push_back(i64_vector(g, "steps", steps));
  return infer(g, "Slice", inputs);
}

TEST(MovementOps, SliceClampsLikeOnnx) {
  Graph g1, g2, g3, g4, g5;
  EXPECT_EQ(shape_of_output(slice(g1, {10, 20}, {1}, {-1}, {1})), "[10, 18]");
  EXPECT_EQ(shape_of_output(slice(g2, {10, 20}, {-1}, {kBegin}, {1}, {-1})), "[10, 20]");
  EXPECT_EQ(shape_of_output(slice(g3, {10, 20}, {0, 2}, {1000, 20}, {0, 1}, {3, 5})), "[4, 4]");
  EXPECT_EQ(shape_of_output(slice(g4, {10, 20}, {5}, {2}, {0})), "[0, 20]");
  EXPECT_EQ(shape_of_output(slice(g5, {10, 20}, {8}, {-100}, {0}, {-2})), "[5, 20]");  // 8 6 4 2 0
}

TEST(MovementOps, SliceOfSymbolicDims) {
  Graph g1, g2, g3;
  EXPECT_EQ(shape_of_output(slice(g1, {sym("N"), sym("S"), 64}, {1}, {kEnd}, {1})),
            shape_to_string({sym("N"), sym("S") - 1, 64}));
  EXPECT_EQ(shape_of_output(slice(g2, {sym("S")}, {0}, {-1}, {0})), shape_to_string({sym("S") - 1}));
  EXPECT_EQ(shape_of_output(slice(g3, {sym("S")}, {-1}, {kBegin}, {0}, {-1})), "[S]");
}

TEST(MovementOps, SliceEndFromAShapeKeepsTheSymbol) {
  // position_ids[:, :S] with S read from another input's shape
  Graph g;
  Node* shape = g.add_node("Shape", "shape", {g.add_input("ids", DType::i64, {sym("N"), sym("S")})}, {""});
  Node* s = g.add_node("Slice", "s", {shape->outputs[0], i64_vector(g, "one", {1}), i64_vector(g, "two", {2})}, {""});
  Value* table = g.add_input("pos", DType::i64, {1, 512});
  Node* n = g.add_node("Slice", "n", {table, i64_vector(g, "zero", {0}), s->outputs[0], i64_vector(g, "ax", {1})}, {""});
  g.infer_shapes();
  EXPECT_EQ(values_of_output(s), "[S]");
  EXPECT_EQ(shape_of_output(n), "[1, S]");
}

TEST(MovementOps, SliceOfKnownValuesKeepsThem) {
  Graph g;
  Node* shape = g.add_node("Shape", "shape", {g.add_input("x", DType::f32, {sym("N"), 3, 4})}, {""});
  Node* tail = g.add_node("Slice", "tail", {shape->outputs[0], i64_vector(g, "b", {1}), i64_vector(g, "e", {kEnd})}, {""});
  Node* rev = g.add_node("Slice", "rev",
                         {shape->outputs[0], i64_vector(g, "rb", {-1}), i64_vector(g, "re", {kBegin}),
                          i64_vector(g, "ra", {0}), i64_vector(g, "rs", {-1})},
                         {""});
  g.infer_shapes();
  EXPECT_EQ(values_of_output(tail), "[3, 4]");
  EXPECT_EQ(values_of_output(rev), "[4, 3, N]");
}

TEST(MovementOps, SliceWithRuntimeBoundsGivesFreshDimsOnTheSlicedAxes) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {sym("N"), 8});
  Node* n = infer(g, "Slice", {x, g.add_input("b", DType::i64, {1}), g.add_input("e", DType::i64, {1}), i64_vector(g, "a", {1})});
  const Shape& out = n->outputs[0]->shape;
  EXPECT_EQ(out[0], sym("N"));
  EXPECT_TRUE(out[1].is_symbol());
  EXPECT_NE(out[1], sym("N"));
}

TEST(MovementOps, SliceRejectsZeroStepsAndMismatchedLengths) {
  Graph g1, g2;
  EXPECT_THAT(user_error([&] { slice(g1, {4}, {0}, {4}, {0}, {0}); }), HasSubstr("non-zero steps"));
  EXPECT_THAT(user_error([&] { slice(g2, {4, 4}, {0, 1}, {4}, {0, 1}); }), HasSubstr("equal lengths"));
}

TEST(MovementOps, GatherReplacesTheAxisWithTheIndexShape) {
  Graph g;
  Node* n = infer(g, "Gather", {g.add_input("x", DType::f32, {5, 6, sym("N")}), g.add_input("i", DType::i32, {2, 3})},
                  {{"axis", int64_t{1}}});
  EXPECT_EQ(shape_of_output(n), "[5, 2, 3, N]");
  Graph g2;
  Node* scalar = infer(g2, "Gather", {g2.add_input("x", DType::f32, {5, 6}), i64_scalar(g2, "i", -1)});
  EXPECT_EQ(shape_of_output(scalar), "[6]");
}

TEST(MovementOps, GatherChecksConstantIndices) {
  Graph g;
  EXPECT_THAT(user_error([&] { infer(g, "Gather", {g.add_input("x", DType::f32, {5}), i64_vector(g, "i", {5})}); }),
              HasSubstr("index 5 is out of range for axis 0 of size 5"));
  Graph g2;
  EXPECT_THROW(infer(g2, "Gather", {g2.add_input("x", DType::f32, {5}), g2.add_input("i", DType::f32, {1})}), UserError);
}

TEST(SliceDims, ConstantCasesFollowOnnx) {
  EXPECT_EQ(ops::slice_dim(10, 2, 7, 1), Dim(5));
  EXPECT_EQ(ops::slice_dim(10, -3, kEnd, 1), Dim(3));
  EXPECT_EQ(ops::slice_dim(10, 9, -11, -1), Dim(10));
  EXPECT_EQ(ops::slice_dim(10, 0, 10, 4), Dim(3));  // 0 4 8
  EXPECT_EQ(ops::slice_dim(10, 20, 30, 1), Dim(0));
  EXPECT_EQ(ops::slice_dim(10, kEnd, kBegin, -3), Dim(4));  // 9 6 3 0
}

TEST(SliceDims, SymbolicBoundsAreTakenInRange) {
  Dim n = sym("N");
  EXPECT_EQ(ops::slice_dim(n, 0, kEnd, 2), floordiv(n + 1, 2));
  EXPECT_EQ(ops::slice_dim(n, -4, kEnd, 1), Dim(4));
  EXPECT_EQ(ops::slice_dim(64, 0, sym("S"), 1), sym("S"));
}

// What those formulas take to hold is stated, so runs outside it are refused: x[-4:] needs
// N >= 4, x[1:-1] N >= 2 (bounds that do not cross), x[S:] of 64 needs S <= 64, x[-2::-1] N >= 1.
TEST(SliceDims, SymbolicFormulasStateTheirAssumptions) {
  Dim n = sym("N");
  auto has = [](const std::vector<Dim>& dims, const Dim& d) { return std::find(dims.begin(), dims.end(), d) != dims.end(); };
  EXPECT_TRUE(ops::slice_dim_assumptions(10, 2, 7, 1).empty());  // constant: ONNX's clamps are exact
  EXPECT_TRUE(ops::slice_dim_assumptions(n, 0, kEnd, 2).empty());
  EXPECT_TRUE(has(ops::slice_dim_assumptions(n, -4, kEnd, 1), n - Dim(4)));
  EXPECT_TRUE(has(ops::slice_dim_assumptions(n, 1, -1, 1), n - Dim(2)));
  EXPECT_TRUE(has(ops::slice_dim_assumptions(64, sym("S"), kEnd, 1), Dim(64) - sym("S")));
  EXPECT_TRUE(ops::slice_dim_assumptions(n, -1, kBegin, -1).empty());  // x[::-1] holds for every N
  EXPECT_TRUE(has(ops::slice_dim_assumptions(n, -2, kBegin, -1), n - Dim(1)));
}

// x[1:] records N - 1 >= 0, and a run with N = 0 is refused by the slice's name.
TEST(MovementOps, SliceOfASymbolicDimIsCheckedAtRunTime) {
  Graph g;
  slice(g, {sym("N")}, {1}, {kEnd}, {0});
  ASSERT_EQ(g.assumptions().size(), 1u);
  EXPECT_NO_THROW(g.check_assumptions({{"N", 1}}));
  const std::string msg = op_testing::user_error([&] { g.check_assumptions({{"N", 0}}); });
  EXPECT_NE(msg.find("N - 1 = -1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(Slice) slices axis 0 of [N]"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tilefuse
