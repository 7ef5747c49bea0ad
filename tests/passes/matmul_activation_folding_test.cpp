// MatMul [+ bias] + activation -> FusedMatMul with `activation`: GELU and its tanh approximation
// as PyTorch's exporters write them (in several arrangements of ops), the ONNX Gelu op (both
// forms) and the clamp activations are folded; a product with another reader, a GELU with a
// wrong constant or a function that is only close to GELU are left alone; the folded graph
// computes what the original did (reference interpreter, before and after).
#include "passes/matmul_activation_folding.h"

#include <gtest/gtest.h>

#include <cmath>

#include "pass_test_util.h"
#include "passes/matmul_bias_folding.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;

// How the GELU after the product is written.
enum class GeluForm { div_then_half, half_first, half_of_sum, mul_by_inverse_sqrt2 };
enum class TanhGeluForm { gpt2, cube_by_products };

// x[2, 5, 8] @ w[8, 6] + bias -> p; then whatever a test adds after it.
struct Linear {
  Graph g;
  Value* p = nullptr;
  Linear() {
    Value* x = g.add_input("x", DType::f32, {2, 5, 8});
    Node* mm = g.add_node("MatMul", "mm", {x, g.add_constant("w", filled({8, 6}, 1))}, {"mm_out"});
    p = g.add_node("Add", "bias", {mm->outputs[0], g.add_constant("b", filled({6}, 2))}, {"p"})->outputs[0];
  }
  Value* scalar(float v) { return g.add_constant(g.unique_value_name("c"), Tensor::scalar_f32(v)); }
  Value* op(const std::string& name, std::vector<Value*> in, AttributeMap attrs = {}) {
    return g.add_node(name, g.unique_value_name(name), std::move(in), {g.unique_value_name(name + "_out")}, std::move(attrs))
        ->outputs[0];
  }
  // 0.5 * p * (1 + erf(p / sqrt 2)) in the given form.
  Value* gelu(GeluForm form, float sqrt2 = std::sqrt(2.0f)) {
    Value* scaled = form == GeluForm::mul_by_inverse_sqrt2 ? op("Mul", {scalar(1.0f / sqrt2), p}) : op("Div", {p, scalar(sqrt2)});
    Value* one_plus = op("Add", {scalar(1.0f), op("Erf", {scaled})});
    if (form == GeluForm::half_first) return op("Mul", {op("Mul", {p, scalar(0.5f)}), one_plus});
    if (form == GeluForm::half_of_sum) return op("Mul", {p, op("Mul", {scalar(0.5f), one_plus})});
    return op("Mul", {op("Mul", {p, one_plus}), scalar(0.5f)});
  }
  // 0.5 * p * (1 + tanh(sqrt(2 / pi) * (p + c * p^3))), p^3 as Pow (GPT-2's NewGELU through
  // TorchScript) or as p * p * p.
  Value* tanh_gelu(TanhGeluForm form, float c = 0.044715f) {
    Value* cube = form == TanhGeluForm::gpt2 ? op("Pow", {p, scalar(3.0f)}) : op("Mul", {op("Mul", {p, p}), p});
    Value* inner = op("Mul", {scalar(std::sqrt(2.0f / static_cast<float>(M_PI))), op("Add", {p, op("Mul", {scalar(c), cube})})});
    Value* one_plus = op("Add", {op("Tanh", {inner}), scalar(1.0f)});
    return op("Mul", {op("Mul", {scalar(0.5f), p}), one_plus});
  }
  void finish(std::vector<Value*> outputs) {
    g.set_outputs(outputs);
    g.infer_shapes();
  }
};

// Folds the bias, then the activation; returns how many activations were folded.
int fold(Graph& g) {
  fold_matmul_biases(g);
  return fold_matmul_activations(g);
}

TEST(MatMulActivationFolding, FoldsEachFormOfTheExportedGelu) {
  for (GeluForm form : {GeluForm::div_then_half, GeluForm::half_first, GeluForm::half_of_sum, GeluForm::mul_by_inverse_sqrt2}) {
    Linear before, after;
    before.finish({before.gelu(form)});
    after.finish({after.gelu(form)});
    const std::string output = after.g.outputs()[0]->name;
    EXPECT_EQ(fold(after.g), 1);
    ASSERT_EQ(after.g.num_nodes(), 1u);
    const Node& fused = *after.g.nodes()[0];
    EXPECT_EQ(fused.op, "FusedMatMul");
    EXPECT_EQ(fused.attr_string("activation", ""), "Gelu");
    EXPECT_TRUE(fused.has_input(2)) << "the bias stays folded";
    EXPECT_EQ(after.g.outputs()[0]->name, output);
    expect_same_results(before.g, after.g);
  }
}

TEST(MatMulActivationFolding, FoldsEachFormOfTheExportedTanhGelu) {
  for (TanhGeluForm form : {TanhGeluForm::gpt2, TanhGeluForm::cube_by_products}) {
    Linear before, after;
    before.finish({before.tanh_gelu(form)});
    after.finish({after.tanh_gelu(form)});
    EXPECT_EQ(fold(after.g), 1);
    ASSERT_EQ(after.g.num_nodes(), 1u);
    EXPECT_EQ(after.g.nodes()[0]->attr_string("activation", ""), "GeluTanh");
    expect_same_results(before.g, after.g);
  }
}

TEST(MatMulActivationFolding, FoldsAnActivationAfterReshapesOfTheProduct) {
  // GPT-2's MLP: the [128, 3072] product is reshaped to [1, 128, 3072] before its GELU.
  auto build = [](bool written_out) {
    Linear l;
    l.p = l.op("Reshape", {l.p, l.g.add_constant("shape", Tensor::from_vector<int64_t>(DType::i64, {2}, {10, 6}))});
    l.finish({written_out ? l.tanh_gelu(TanhGeluForm::gpt2) : l.op("Relu", {l.p})});
    return l;
  };
  for (bool written_out : {true, false}) {
    Linear before = build(written_out), after = build(written_out);
    const std::string output = after.g.outputs()[0]->name;
    EXPECT_EQ(fold(after.g), 1);
    EXPECT_EQ(count_op(after.g, "FusedMatMul"), 1);
    EXPECT_EQ(count_op(after.g, "Reshape"), 1);
    EXPECT_EQ(after.g.num_nodes(), 2u);
    EXPECT_EQ(after.g.outputs()[0]->name, output);
    expect_same_results(before.g, after.g);
  }
}

TEST(MatMulActivationFolding, FoldsSiluWrittenOut) {
  for (bool sigmoid_first : {false, true}) {
    auto build = [&] {
      Linear l;
      Value* s = l.op("Sigmoid", {l.p});
      l.finish({sigmoid_first ? l.op("Mul", {s, l.p}) : l.op("Mul", {l.p, s})});
      return l;
    };
    Linear before = build(), after = build();
    EXPECT_EQ(fold(after.g), 1);
    ASSERT_EQ(after.g.num_nodes(), 1u);
    EXPECT_EQ(after.g.nodes()[0]->attr_string("activation", ""), "Silu");
    expect_same_results(before.g, after.g);
  }
}

TEST(MatMulActivationFolding, FoldsTheTanhGeluOp) {
  Linear before, after;
  before.finish({before.op("Gelu", {before.p}, {{"approximate", std::string("tanh")}})});
  after.finish({after.op("Gelu", {after.p}, {{"approximate", std::string("tanh")}})});
  EXPECT_EQ(fold(after.g), 1);
  ASSERT_EQ(after.g.num_nodes(), 1u);
  EXPECT_EQ(after.g.nodes()[0]->attr_string("activation", ""), "GeluTanh");
  expect_same_results(before.g, after.g);
}

TEST(MatMulActivationFolding, FoldsTheGeluOpAndTheClampActivations) {
  for (const char* act : {"Gelu", "Relu", "HardSwish", "HardSigmoid", "Sigmoid"}) {
    Linear before, after;
    before.finish({before.op(act, {before.p})});
    after.finish({after.op(act, {after.p})});
    EXPECT_EQ(fold(after.g), 1) << act;
    ASSERT_EQ(after.g.num_nodes(), 1u) << act;
    EXPECT_EQ(after.g.nodes()[0]->attr_string("activation", ""), act);
    expect_same_results(before.g, after.g);
  }
}

TEST(MatMulActivationFolding, LeavesAnythingElseAlone) {
  Linear second_reader;  // the product is also read by a Neg
  second_reader.finish({second_reader.gelu(GeluForm::div_then_half), second_reader.op("Neg", {second_reader.p})});
  EXPECT_EQ(fold(second_reader.g), 0);
  Linear product_out;  // the product is a graph output
  product_out.finish({product_out.op("Relu", {product_out.p}), product_out.p});
  EXPECT_EQ(fold(product_out.g), 0);
  Linear wrong_constant;  // x / 1.5 is not GELU's
  wrong_constant.finish({wrong_constant.gelu(GeluForm::div_then_half, 1.5f)});
  EXPECT_EQ(fold(wrong_constant.g), 0);
  Linear near_tanh_gelu;  // 0.045 for 0.044715: within 1e-3 of GELU, but not GELU
  near_tanh_gelu.finish({near_tanh_gelu.tanh_gelu(TanhGeluForm::gpt2, 0.045f)});
  EXPECT_EQ(fold(near_tanh_gelu.g), 0);
  Linear scaled_gelu;  // GELU times 1.01 is not GELU; GELU itself still folds, the scale stays
  Value* gelu = scaled_gelu.gelu(GeluForm::div_then_half);
  scaled_gelu.finish({scaled_gelu.op("Mul", {gelu, scaled_gelu.scalar(1.01f)})});
  EXPECT_EQ(fold(scaled_gelu.g), 1);
  EXPECT_EQ(count_op(scaled_gelu.g, "Mul"), 1);
  Graph vector_product;  // a MatMul of a vector stays a MatMul (FusedMatMul takes matrices)
  Value* v = vector_product.add_input("v", DType::f32, {8});
  Value* m = vector_product.add_node("MatMul", "mm", {v, vector_product.add_constant("w", filled({8, 6}, 1))}, {"m"})->outputs[0];
  vector_product.set_outputs({vector_product.add_node("Relu", "relu", {m}, {"r"})->outputs[0]});
  vector_product.infer_shapes();
  EXPECT_EQ(fold(vector_product), 0);
  Linear inner_read;  // erf's sum is read by another op too
  Value* out = inner_read.gelu(GeluForm::div_then_half);
  Value* erf_sum = out->producer->input(0)->producer->input(1);
  inner_read.finish({out, inner_read.op("Neg", {erf_sum})});
  EXPECT_EQ(fold(inner_read.g), 0);
}

}  // namespace
}  // namespace tilefuse::passes
