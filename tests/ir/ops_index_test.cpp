// Shape inference of the index ops (Gather/Scatter ND and Elements, Tile, Pad, Trilu, CumSum,
// TopK, NonZero, Size), Einsum and Resize.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/graph.h"
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

TEST(IndexOps, GatherElementsTakesTheIndicesShape) {
  Graph g;
  Node* n = infer(g, "GatherElements", {g.add_input("x", DType::f32, {sym("N"), 5}), g.add_input("i", DType::i64, {sym("N"), 2})},
                  {{"axis", int64_t{1}}});
  EXPECT_EQ(shape_of_output(n), "[N, 2]");
}

TEST(IndexOps, GatherNDWithBatchDims) {
  Graph g;
  Node* n = infer(g, "GatherND", {g.add_input("x", DType::f32, {2, 3, 4, 5}), g.add_input("i", DType::i64, {2, 7, 2})},
                  {{"batch_dims", int64_t{1}}});
  EXPECT_EQ(shape_of_output(n), "[2, 7, 5]");
  Graph g2;
  std::string msg = user_error([&] {
    infer(g2, "GatherND", {g2.add_input("x", DType::f32, {2, 3}), g2.add_input("i", DType::i64, {4, sym("K")})});
  });
  EXPECT_THAT(msg, HasSubstr("must be static"));
}

TEST(IndexOps, TileMultipliesKnownRepeatsAndKeepsTheRankOtherwise) {
  Graph g;
  Node* n = infer(g, "Tile", {g.add_input("x", DType::f32, {sym("N"), 3}), i64_vector(g, "r", {2, 4})});
  EXPECT_EQ(shape_of_output(n), "[2*N, 12]");
  Graph g2;
  Node* u = infer(g2, "Tile", {g2.add_input("x", DType::f32, {2, 3}), g2.add_input("r", DType::i64, {2})});
  EXPECT_EQ(u->outputs[0]->rank(), 2);
}

TEST(IndexOps, PadAddsBothEnds) {
  Graph g;
  Node* n = infer(g, "Pad", {g.add_input("x", DType::f32, {sym("N"), 3, 4}), i64_vector(g, "p", {0, 1, 2, 0, 1, 3})});
  EXPECT_EQ(shape_of_output(n), "[N, 5, 9]");
  Graph g2;
  std::string msg = user_error([&] {
    infer(g2, "Pad", {g2.add_input("x", DType::f32, {3, 4}), i64_vector(g2, "p", {1, 1})}, {{"mode", std::string("mirror")}});
  });
  EXPECT_THAT(msg, HasSubstr("must be constant, reflect, edge or wrap"));
}

TEST(IndexOps, TopKUsesAKnownK) {
  Graph g;
  Node* n = infer(g, "TopK", {g.add_input("x", DType::f32, {sym("N"), 10}), i64_vector(g, "k", {3})}, {}, 2);
  EXPECT_EQ(shape_of_output(n, 0), "[N, 3]");
  EXPECT_EQ(n->outputs[1]->dtype, DType::i64);
}

TEST(IndexOps, NonZeroHasADataDependentCount) {
  Graph g;
  Node* n = infer(g, "NonZero", {g.add_input("x", DType::f32, {3, 4})});
  EXPECT_EQ(n->outputs[0]->shape.size(), 2u);
  EXPECT_EQ(n->outputs[0]->shape[0], Dim(2));
  EXPECT_FALSE(n->outputs[0]->shape[1].is_const());
}

TEST(IndexOps, SizeIsKnownFromTheShape) {
  Graph g;
  Node* n = infer(g, "Size", {g.add_input("x", DType::f32, {sym("N"), 4})});
  EXPECT_EQ(shape_of_output(n), "[]");
  EXPECT_EQ(values_of_output(n), "[4*N]");
}

TEST(IndexOps, TriluAndCumSumKeepTheShape) {
  Graph g;
  Node* t = infer(g, "Trilu", {g.add_input("x", DType::f32, {sym("N"), 4, 4}), i64_scalar(g, "k", 1)});
  EXPECT_EQ(shape_of_output(t), "[N, 4, 4]");
  Node* c = infer(g, "CumSum", {g.add_input("y", DType::i64, {sym("N"), 7}), i64_scalar(g, "a", 1)});
  EXPECT_EQ(shape_of_output(c), "[N, 7]");
}

TEST(IndexOps, SplitNumOutputsGivesASmallerLastPart) {
  Graph g;
  Node* n = infer(g, "Split", {g.add_input("x", DType::f32, {7, 2})}, {{"num_outputs", int64_t{3}}}, 3);
  EXPECT_EQ(shape_of_output(n, 0), "[3, 2]");
  EXPECT_EQ(shape_of_output(n, 2), "[1, 2]");
}

TEST(EinsumOp, ContractionsBroadcastsAndImplicitOutput) {
  Graph g;
  Node* n = infer(g, "Einsum", {g.add_input("q", DType::f32, {sym("B"), 4, 16, 8}), g.add_input("k", DType::f32, {sym("B"), 4, 32, 8})},
                  {{"equation", std::string("bhqd,bhkd->bhqk")}});
  EXPECT_EQ(shape_of_output(n), "[B, 4, 16, 32]");
  Graph g2;
  Node* e = infer(g2, "Einsum", {g2.add_input("a", DType::f32, {5, 2, 3}), g2.add_input("b", DType::f32, {1, 3, 4})},
                  {{"equation", std::string("...ij,...jk")}});
  EXPECT_EQ(shape_of_output(e), "[5, 2, 4]");
  Graph g3;
  std::string msg = user_error([&] {
    infer(g3, "Einsum", {g3.add_input("a", DType::f32, {2, 3})}, {{"equation", std::string("ijk->i")}});
  });
  EXPECT_THAT(msg, HasSubstr("has 3 subscripts but input 0 has rank 2"));
}

TEST(ResizeOp, SizesAndIntegerScalesKeepSymbols) {
  Graph g;
  Tensor scales = Tensor::from_vector(DType::f32, {4}, std::vector<double>{1, 1, 2, 2});
  Node* n = infer(g, "Resize", {g.add_input("x", DType::f32, {sym("N"), 3, sym("H"), 8}), g.add_constant("roi", Tensor(DType::f32, {0})),
                                g.add_constant("scales", scales)},
                  {{"mode", std::string("nearest")}});
  EXPECT_EQ(shape_of_output(n), "[N, 3, 2*H, 16]");
  Graph g2;
  std::string msg = user_error([&] {
    infer(g2, "Resize", {g2.add_input("x", DType::f32, {1, 1, 4, 4}), g2.add_constant("roi", Tensor(DType::f32, {0})),
                         g2.add_constant("scales", Tensor::from_vector(DType::f32, {4}, std::vector<double>{1, 1, 2, 2}))},
          {{"mode", std::string("area")}});
  });
  EXPECT_THAT(msg, HasSubstr("must be nearest, linear or cubic"));
}

}  // namespace
}  // namespace tilefuse
