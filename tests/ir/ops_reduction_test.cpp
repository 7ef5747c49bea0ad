// Shape inference of the Reduce* ops: axes as attribute or input, keepdims, empty axes, and
// axes only known at run time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ops_test_util.h"

namespace tilefuse {
namespace {

using ::testing::HasSubstr;
using op_testing::i64_vector;
using op_testing::infer;
using op_testing::shape_of_output;
using op_testing::sym;
using op_testing::user_error;

Value* nsx4(Graph& g) { return g.add_input("x", DType::f32, {sym("N"), 3, 4}); }

TEST(ReductionOps, AxesAttributeWithAndWithoutKeepdims) {
  Graph g;
  Node* kept = infer(g, "ReduceSum", {nsx4(g)}, {{"axes", std::vector<int64_t>{1}}});
  EXPECT_EQ(shape_of_output(kept), "[N, 1, 4]");
  Graph g2;
  Node* dropped = infer(g2, "ReduceMax", {nsx4(g2)}, {{"axes", std::vector<int64_t>{-1, 0}}, {"keepdims", int64_t{0}}});
  EXPECT_EQ(shape_of_output(dropped), "[3]");
  EXPECT_EQ(dropped->outputs[0]->dtype, DType::f32);
}

TEST(ReductionOps, AxesFromConstantInput) {
  Graph g;
  Node* n = infer(g, "ReduceMean", {nsx4(g), i64_vector(g, "axes", {-1})}, {{"keepdims", int64_t{0}}});
  EXPECT_EQ(shape_of_output(n), "[N, 3]");
}

TEST(ReductionOps, NoAxesReducesEverything) {
  Graph g;
  Node* kept = infer(g, "ReduceProd", {nsx4(g)});
  EXPECT_EQ(shape_of_output(kept), "[1, 1, 1]");
  Graph g2;
  Node* scalar = infer(g2, "ReduceMin", {nsx4(g2), i64_vector(g2, "axes", {})}, {{"keepdims", int64_t{0}}});
  EXPECT_EQ(shape_of_output(scalar), "[]");
}

TEST(ReductionOps, NoopWithEmptyAxesKeepsTheShape) {
  Graph g;
  Node* n = infer(g, "ReduceSum", {nsx4(g)}, {{"noop_with_empty_axes", int64_t{1}}, {"keepdims", int64_t{0}}});
  EXPECT_EQ(shape_of_output(n), "[N, 3, 4]");
}

TEST(ReductionOps, RuntimeAxesWithKeepdimsGiveFreshDims) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {sym("N"), 1, 4});
  Node* n = infer(g, "ReduceSum", {x, g.add_input("axes", DType::i64, {sym("K")})});
  const Shape& out = n->outputs[0]->shape;
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0].is_symbol());
  EXPECT_NE(out[0], sym("N"));  // may have become 1: a new symbol, not N
  EXPECT_EQ(out[1], Dim(1));
  EXPECT_TRUE(out[2].is_symbol());
  EXPECT_NE(out[0], out[2]);
}

TEST(ReductionOps, RuntimeAxesWithoutKeepdimsNeedAStaticAxisCount) {
  Graph g;
  Node* n = infer(g, "ReduceSum", {nsx4(g), g.add_input("axes", DType::i64, {2})}, {{"keepdims", int64_t{0}}});
  EXPECT_EQ(n->outputs[0]->shape.size(), 1u);
  Graph g2;
  std::string msg = user_error([&] {
    infer(g2, "ReduceSum", {nsx4(g2), g2.add_input("axes", DType::i64, {sym("K")})}, {{"keepdims", int64_t{0}}});
  });
  EXPECT_THAT(msg, HasSubstr("node 'ReduceSum_0' (ReduceSum)"));
  EXPECT_THAT(msg, HasSubstr("input 1 ('axes') is not known at compile time"));
}

TEST(ReductionOps, AxesAsBothAttributeAndInputIsRejected) {
  Graph g;
  std::string msg = user_error([&] {
    infer(g, "ReduceSum", {nsx4(g), i64_vector(g, "axes", {0})}, {{"axes", std::vector<int64_t>{0}}});
  });
  EXPECT_THAT(msg, HasSubstr("both as attribute and as input 1"));
}

TEST(ReductionOps, BadAxesAreRejected) {
  Graph g;
  EXPECT_THAT(user_error([&] { infer(g, "ReduceSum", {nsx4(g)}, {{"axes", std::vector<int64_t>{3}}}); }),
              HasSubstr("axis 3 is out of range for rank 3"));
  Graph g2;
  EXPECT_THAT(user_error([&] { infer(g2, "ReduceSum", {nsx4(g2)}, {{"axes", std::vector<int64_t>{1, -2}}}); }),
              HasSubstr("names axis 1 twice"));
}

TEST(ReductionOps, ElementTypesFollowTheSpec) {
  Graph g;
  EXPECT_THROW(infer(g, "ReduceSum", {g.add_input("x", DType::i8, {3})}), UserError);
  Graph g2;
  Node* n = infer(g2, "ReduceMax", {g2.add_input("x", DType::u8, {3})});
  EXPECT_EQ(n->outputs[0]->dtype, DType::u8);
}

}  // namespace
}  // namespace tilefuse
