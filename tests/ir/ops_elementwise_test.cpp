// Shape/dtype inference of the elementwise ops, and sym_value through integer arithmetic.
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

TEST(ElementwiseOps, AddBroadcastsNumpyStyle) {
  Graph g;
  Node* n = infer(g, "Add", {g.add_input("a", DType::f32, {2, 3, 4}), g.add_input("b", DType::f32, {4})});
  EXPECT_EQ(n->outputs[0]->dtype, DType::f32);
  EXPECT_EQ(shape_of_output(n), "[2, 3, 4]");
}

TEST(ElementwiseOps, BroadcastKeepsSymbols) {
  Graph g;
  Node* n = infer(g, "Mul", {g.add_input("a", DType::f16, {sym("N"), 1, 64}), g.add_input("b", DType::f16, {1, sym("S"), 64})});
  EXPECT_EQ(n->outputs[0]->dtype, DType::f16);
  EXPECT_EQ(shape_of_output(n), shape_to_string({sym("N"), sym("S"), 64}));
}

TEST(ElementwiseOps, BroadcastConflictNamesNodeAndRule) {
  Graph g;
  std::string msg = user_error([&] {
    infer(g, "Add", {g.add_input("a", DType::f32, {2, 3}), g.add_input("b", DType::f32, {4})});
  });
  EXPECT_THAT(msg, HasSubstr("node 'Add_0' (Add)"));
  EXPECT_THAT(msg, HasSubstr("[2, 3] and [4] cannot be broadcast"));
}

TEST(ElementwiseOps, MixedElementTypesAreRejected) {
  Graph g;
  std::string msg = user_error([&] {
    infer(g, "Sub", {g.add_input("a", DType::f32, {3}), g.add_input("b", DType::i64, {3})});
  });
  EXPECT_THAT(msg, HasSubstr("input 1 ('b') has element type i64"));
}

TEST(ElementwiseOps, ArithmeticRejectsBool) {
  Graph g;
  EXPECT_THROW(infer(g, "Add", {g.add_input("a", DType::boolean, {3}), g.add_input("b", DType::boolean, {3})}),
               UserError);
}

TEST(ElementwiseOps, FloatOnlyUnaryRejectsIntegers) {
  Graph g;
  EXPECT_THROW(infer(g, "Exp", {g.add_input("a", DType::i32, {3})}), UserError);
}

TEST(ElementwiseOps, UnaryKeepsTypeAndShape) {
  Graph g;
  Node* n = infer(g, "Sqrt", {g.add_input("a", DType::bf16, {sym("N"), 7})});
  EXPECT_EQ(n->outputs[0]->dtype, DType::bf16);
  EXPECT_EQ(shape_of_output(n), shape_to_string({sym("N"), 7}));
}

TEST(ElementwiseOps, PowTakesAnExponentOfAnotherType) {
  Graph g;
  Node* n = infer(g, "Pow", {g.add_input("a", DType::f32, {2, 3}), g.add_input("b", DType::i64, {})});
  EXPECT_EQ(n->outputs[0]->dtype, DType::f32);
  EXPECT_EQ(shape_of_output(n), "[2, 3]");
}

TEST(ElementwiseOps, ComparisonsProduceBool) {
  Graph g;
  Node* n = infer(g, "LessOrEqual", {g.add_input("a", DType::i64, {4, 1}), g.add_input("b", DType::i64, {5})});
  EXPECT_EQ(n->outputs[0]->dtype, DType::boolean);
  EXPECT_EQ(shape_of_output(n), "[4, 5]");
}

TEST(ElementwiseOps, LogicNeedsBool) {
  Graph g;
  EXPECT_THROW(infer(g, "And", {g.add_input("a", DType::i32, {2}), g.add_input("b", DType::i32, {2})}), UserError);
  Graph g2;
  Node* n = infer(g2, "Not", {g2.add_input("a", DType::boolean, {2})});
  EXPECT_EQ(n->outputs[0]->dtype, DType::boolean);
}

TEST(ElementwiseOps, WhereBroadcastsAllThreeAndTakesTheValueType) {
  Graph g;
  Node* n = infer(g, "Where", {g.add_input("c", DType::boolean, {1, sym("S")}), g.add_input("x", DType::f64, {sym("N"), 1}),
                               g.add_input("y", DType::f64, {})});
  EXPECT_EQ(n->outputs[0]->dtype, DType::f64);
  EXPECT_EQ(shape_of_output(n), shape_to_string({sym("N"), sym("S")}));
}

TEST(ElementwiseOps, WhereNeedsABoolCondition) {
  Graph g;
  EXPECT_THROW(infer(g, "Where", {g.add_input("c", DType::f32, {2}), g.add_input("x", DType::f32, {2}),
                                  g.add_input("y", DType::f32, {2})}),
               UserError);
}

TEST(ElementwiseOps, ClipTakesOptionalScalarBounds) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {2, 3});
  Value* hi = g.add_constant("hi", Tensor::scalar_f32(6.0f));
  Node* n = infer(g, "Clip", {x, nullptr, hi});
  EXPECT_EQ(shape_of_output(n), "[2, 3]");
  Graph g2;
  std::string msg = user_error([&] {
    infer(g2, "Clip", {g2.add_input("x", DType::f32, {2, 3}), g2.add_input("lo", DType::f32, {3})});
  });
  EXPECT_THAT(msg, HasSubstr("must be a scalar"));
}

TEST(ElementwiseOps, MaxIsVariadicAndBroadcasts) {
  Graph g;
  Node* n = infer(g, "Max", {g.add_input("a", DType::i32, {3, 1}), g.add_input("b", DType::i32, {1, 4}),
                             g.add_input("c", DType::i32, {2, 1, 1})});
  EXPECT_EQ(shape_of_output(n), "[2, 3, 4]");
}

TEST(ElementwiseOps, CastUsesOnnxTypeCodes) {
  Graph g;
  Node* n = infer(g, "Cast", {g.add_input("a", DType::f32, {sym("N")})}, {{"to", int64_t{10}}});
  EXPECT_EQ(n->outputs[0]->dtype, DType::f16);
  EXPECT_EQ(shape_of_output(n), "[N]");
}

TEST(ElementwiseOps, CastToUnsupportedTypeIsAUserError) {
  Graph g;
  std::string msg = user_error([&] { infer(g, "Cast", {g.add_input("a", DType::f32, {2})}, {{"to", int64_t{8}}}); });
  EXPECT_THAT(msg, HasSubstr("'to' = 8"));
  Graph g2;
  EXPECT_THROW(infer(g2, "Cast", {g2.add_input("a", DType::f32, {2})}), UserError);  // `to` is required
}

TEST(ElementwiseOps, IntegerArithmeticPropagatesKnownValues) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {sym("N"), 12, 64});
  Node* shape = g.add_node("Shape", "shape", {x}, {""});
  Node* mul = g.add_node("Mul", "mul", {shape->outputs[0], i64_scalar(g, "two", 2)}, {""});
  Node* div = g.add_node("Div", "div", {mul->outputs[0], i64_vector(g, "d", {2, 4, 16})}, {""});
  Node* sub = g.add_node("Sub", "sub", {div->outputs[0], i64_scalar(g, "one", 1)}, {""});
  g.infer_shapes();
  EXPECT_EQ(values_of_output(mul), shape_to_string({sym("N") * 2, 24, 128}));
  EXPECT_EQ(values_of_output(div), shape_to_string({sym("N"), 6, 8}));
  EXPECT_EQ(values_of_output(sub), shape_to_string({sym("N") - 1, 5, 7}));
}

TEST(ElementwiseOps, IntegerDivisionOfConstantsTruncatesTowardZero) {
  Graph g;
  Node* n = infer(g, "Div", {i64_vector(g, "a", {-7, 7}), i64_scalar(g, "b", 2)});
  EXPECT_EQ(values_of_output(n), "[-3, 3]");
}

TEST(ElementwiseOps, ModOfConstantsFollowsTheDivisorSignUnlessFmod) {
  Graph g;
  Node* py = infer(g, "Mod", {i64_vector(g, "a", {-7, 7}), i64_scalar(g, "b", 3)});
  EXPECT_EQ(values_of_output(py), "[2, 1]");
  Node* c = infer(g, "Mod", {i64_vector(g, "a2", {-7, 7}), i64_scalar(g, "b2", 3)}, {{"fmod", int64_t{1}}});
  EXPECT_EQ(values_of_output(c), "[-1, 1]");
}

TEST(ElementwiseOps, FloatModNeedsFmod) {
  Graph g;
  EXPECT_THAT(user_error([&] {
                infer(g, "Mod", {g.add_constant("a", Tensor::scalar_f32(1)), g.add_constant("b", Tensor::scalar_f32(2))});
              }),
              HasSubstr("needs attribute fmod=1"));
}

TEST(ElementwiseOps, FloatArithmeticCarriesNoValues) {
  Graph g;
  Node* n = infer(g, "Add", {g.add_constant("a", Tensor::scalar_f32(1)), g.add_constant("b", Tensor::scalar_f32(2))});
  EXPECT_EQ(values_of_output(n), "none");
}

TEST(ElementwiseOps, CastBetweenIntegersAndIdentityKeepValues) {
  Graph g;
  Node* shape = g.add_node("Shape", "shape", {g.add_input("x", DType::f32, {sym("N"), 3})}, {""});
  Node* to_i32 = g.add_node("Cast", "to_i32", {shape->outputs[0]}, {""}, {{"to", int64_t{6}}});
  Node* same = g.add_node("Identity", "same", {to_i32->outputs[0]}, {""});
  Node* to_f32 = g.add_node("Cast", "to_f32", {shape->outputs[0]}, {""}, {{"to", int64_t{1}}});
  g.infer_shapes();
  EXPECT_EQ(to_i32->outputs[0]->dtype, DType::i32);
  EXPECT_EQ(values_of_output(same), shape_to_string({sym("N"), 3}));
  EXPECT_EQ(values_of_output(to_f32), "none");
}

TEST(ElementwiseOps, EqualAndWhereResolvePyTorchsExpandShapeTest) {
  // PyTorch writes Where(Equal(shape, -1), 1, shape) before Expand; a dim is never -1.
  Graph g;
  Node* shape = g.add_node("Shape", "shape", {g.add_input("x", DType::f32, {sym("N"), 1, 4})}, {""});
  Value* minus_ones = i64_vector(g, "m", {-1, -1, -1});
  Value* ones = i64_vector(g, "ones", {1, 1, 1});
  Node* eq = g.add_node("Equal", "eq", {shape->outputs[0], minus_ones}, {""});
  Node* where = g.add_node("Where", "where", {eq->outputs[0], ones, shape->outputs[0]}, {""});
  g.infer_shapes();
  EXPECT_EQ(values_of_output(eq), "[0, 0, 0]");
  EXPECT_EQ(values_of_output(where), shape_to_string({sym("N"), 1, 4}));
}

TEST(ElementwiseOps, RerunningInferenceDropsStaleValues) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {sym("N")});
  Node* shape = g.add_node("Shape", "shape", {x}, {""});
  Node* id = g.add_node("Identity", "id", {shape->outputs[0]}, {""});
  g.infer_shapes();
  ASSERT_EQ(values_of_output(id), "[N]");
  Value* unknown = g.add_input("u", DType::i64, {1});
  g.replace_all_uses(shape->outputs[0], unknown);
  g.infer_shapes();
  EXPECT_EQ(values_of_output(id), "none");
}

}  // namespace
}  // namespace tilefuse
