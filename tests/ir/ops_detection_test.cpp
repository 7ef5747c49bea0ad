// Inference of the detection ops: NonMaxSuppression's [selected, 3] rows (a symbol: only the run
// knows how many), RoiAlign's [rois, C, output_height, output_width]; and the shapes and
// attributes they refuse.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ops_test_util.h"

namespace tilefuse {
namespace {

using ::testing::HasSubstr;
using op_testing::infer;
using op_testing::shape_of_output;
using op_testing::sym;
using op_testing::user_error;

TEST(DetectionOps, NonMaxSuppressionSelectsAnUnknownNumberOfRows) {
  Graph g;
  Node* n = infer(g, "NonMaxSuppression",
                  {g.add_input("boxes", DType::f32, {1, sym("B"), 4}), g.add_input("scores", DType::f32, {1, 80, sym("B")})});
  EXPECT_EQ(n->outputs[0]->dtype, DType::i64);
  EXPECT_EQ(n->outputs[0]->rank(), 2);
  EXPECT_EQ(n->outputs[0]->shape[1], Dim(3));
  EXPECT_FALSE(n->outputs[0]->shape[0].is_const());
}

TEST(DetectionOps, NonMaxSuppressionRefusesMismatchedBoxesAndScores) {
  Graph g;
  EXPECT_THAT(user_error([&] {
                infer(g, "NonMaxSuppression",
                      {g.add_input("boxes", DType::f32, {1, 10, 4}), g.add_input("scores", DType::f32, {1, 3, 11})});
              }),
              HasSubstr("the box counts of boxes and scores differ"));
  Graph g2;
  EXPECT_THAT(user_error([&] {
                infer(g2, "NonMaxSuppression",
                      {g2.add_input("boxes", DType::f32, {1, 10, 4}), g2.add_input("scores", DType::f32, {1, 3, 10})},
                      {{"center_point_box", int64_t{2}}});
              }),
              HasSubstr("'center_point_box' is 2"));
}

TEST(DetectionOps, RoiAlignPoolsEveryRegionToTheOutputGrid) {
  Graph g;
  Node* n = infer(g, "RoiAlign",
                  {g.add_input("x", DType::f32, {2, 256, 50, 50}), g.add_input("rois", DType::f32, {sym("R"), 4}),
                   g.add_input("batch", DType::i64, {sym("R")})},
                  {{"output_height", int64_t{7}}, {"output_width", int64_t{7}}});
  EXPECT_EQ(shape_of_output(n), "[R, 256, 7, 7]");
  Graph g2;
  EXPECT_THAT(user_error([&] {
                infer(g2, "RoiAlign",
                      {g2.add_input("x", DType::f32, {2, 256, 50, 50}), g2.add_input("rois", DType::f32, {5, 4}),
                       g2.add_input("batch", DType::i64, {5})},
                      {{"mode", std::string("median")}});
              }),
              HasSubstr("'mode' is 'median'"));
}

}  // namespace
}  // namespace tilefuse
