// Shape/dtype inference of activations, Dropout, Softmax and LayerNormalization.
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

TEST(NnOps, ActivationsKeepTypeAndShape) {
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf", "Gelu", "LeakyRelu", "Softplus", "HardSwish"}) {
    Graph g;
    Node* n = infer(g, op, {g.add_input("x", DType::f32, {sym("N"), 8})});
    EXPECT_EQ(n->outputs[0]->dtype, DType::f32) << op;
    EXPECT_EQ(shape_of_output(n), "[N, 8]") << op;
  }
}

TEST(NnOps, ActivationTypesFollowTheSpec) {
  Graph g;
  EXPECT_EQ(infer(g, "Relu", {g.add_input("x", DType::i64, {2})})->outputs[0]->dtype, DType::i64);
  Graph g2;
  EXPECT_THROW(infer(g2, "Sigmoid", {g2.add_input("x", DType::i64, {2})}), UserError);
  Graph g3;
  EXPECT_THROW(infer(g3, "Elu", {g3.add_input("x", DType::bf16, {2})}), UserError);
}

TEST(NnOps, AttributeOfTheWrongKindIsRejected) {
  Graph g;
  std::string msg = user_error([&] { infer(g, "LeakyRelu", {g.add_input("x", DType::f32, {2})}, {{"alpha", int64_t{1}}}); });
  EXPECT_THAT(msg, HasSubstr("attribute 'alpha' must be of kind"));
}

TEST(NnOps, GeluApproximationMustBeKnown) {
  Graph g;
  EXPECT_EQ(shape_of_output(infer(g, "Gelu", {g.add_input("x", DType::f32, {2})}, {{"approximate", std::string("tanh")}})),
            "[2]");
  Graph g2;
  EXPECT_THAT(user_error([&] {
                infer(g2, "Gelu", {g2.add_input("x", DType::f32, {2})}, {{"approximate", std::string("erf")}});
              }),
              HasSubstr("'approximate' is 'erf'"));
}

TEST(NnOps, DropoutHasAnOptionalBoolMask) {
  Graph g;
  Value* ratio = g.add_constant("ratio", Tensor::scalar_f32(0.1f));
  Node* n = infer(g, "Dropout", {g.add_input("x", DType::f16, {sym("N"), 4}), ratio}, {}, 2);
  EXPECT_EQ(n->outputs[0]->dtype, DType::f16);
  EXPECT_EQ(n->outputs[1]->dtype, DType::boolean);
  EXPECT_EQ(shape_of_output(n, 1), "[N, 4]");
  Graph g2;
  EXPECT_THROW(infer(g2, "Dropout", {g2.add_input("x", DType::f32, {2}), g2.add_input("r", DType::f32, {2})}),
               UserError);
}

TEST(NnOps, SoftmaxChecksItsAxis) {
  Graph g;
  Node* n = infer(g, "LogSoftmax", {g.add_input("x", DType::f64, {sym("N"), 10})}, {{"axis", int64_t{-2}}});
  EXPECT_EQ(shape_of_output(n), "[N, 10]");
  Graph g2;
  EXPECT_THAT(user_error([&] { infer(g2, "Softmax", {g2.add_input("x", DType::f32, {2, 3})}, {{"axis", int64_t{2}}}); }),
              HasSubstr("axis 2 is out of range for rank 2"));
  Graph g3;
  EXPECT_THROW(infer(g3, "Softmax", {g3.add_input("x", DType::i32, {2})}), UserError);
}

TEST(NnOps, LayerNormalizationStatisticsShapes) {
  Graph g;
  Value* x = g.add_input("x", DType::f16, {sym("N"), sym("S"), 64});
  Value* scale = g.add_input("scale", DType::f16, {64});
  Value* bias = g.add_input("bias", DType::f16, {64});
  Node* n = infer(g, "LayerNormalization", {x, scale, bias}, {}, 3);
  EXPECT_EQ(n->outputs[0]->dtype, DType::f16);
  EXPECT_EQ(shape_of_output(n, 0), shape_to_string({sym("N"), sym("S"), 64}));
  EXPECT_EQ(n->outputs[1]->dtype, DType::f32);  // stash_type defaults to float
  EXPECT_EQ(shape_of_output(n, 1), shape_to_string({sym("N"), sym("S"), 1}));
  EXPECT_EQ(shape_of_output(n, 2), shape_to_string({sym("N"), sym("S"), 1}));
}

TEST(NnOps, LayerNormalizationOverSeveralAxes) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {sym("N"), 4, 8});
  Node* n = infer(g, "LayerNormalization", {x, g.add_input("scale", DType::f32, {4, 8})},
                  {{"axis", int64_t{1}}, {"stash_type", int64_t{11}}}, 2);
  EXPECT_EQ(shape_of_output(n, 1), "[N, 1, 1]");
  EXPECT_EQ(n->outputs[1]->dtype, DType::f64);
}

TEST(NnOps, LayerNormalizationScaleMustFitTheNormalizedDims) {
  Graph g;
  std::string msg = user_error([&] {
    infer(g, "LayerNormalization", {g.add_input("x", DType::f32, {2, 64}), g.add_input("scale", DType::f32, {32})});
  });
  EXPECT_THAT(msg, HasSubstr("input 1 ('scale') of shape [32] cannot be broadcast to [64]"));
}

}  // namespace
}  // namespace tilefuse
