// Opsets 19 and 20 (what PyTorch's dynamo exporter writes) read as opset 18: native Gelu, Cast's
// `saturate`, the Reduce* axes input; float8 types, too-new opsets and changed ops are rejected.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/model_builder.h"
#include "frontend/onnx_importer.h"
#include "frontend/opset_support.h"
#include "reference/interpreter.h"
#include "support/user_error.h"

namespace tilefuse::frontend {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using test::ModelBuilder;
using testing_support::user_error;
constexpr int kF32 = onnx::TensorProto::FLOAT;
constexpr int kF64 = onnx::TensorProto::DOUBLE;
constexpr int kFloat8E4M3FN = 17;

Graph import(const ModelBuilder& b) { return import_onnx_bytes(b.bytes(), "m.onnx"); }

std::string import_error(const ModelBuilder& b) {
  return user_error([&] { import_onnx_bytes(b.bytes(), "m.onnx"); });
}

Node* only_node(const Graph& g, const std::string& op) {
  Node* found = nullptr;
  for (Node* n : g.nodes()) {
    if (n->op == op) found = n;
  }
  EXPECT_NE(found, nullptr) << "no " << op;
  return found;
}

std::vector<double> run(const Graph& g, const std::string& input, const Tensor& value) {
  std::vector<Tensor> outs = reference::run_graph(g, {{input, value}});
  EXPECT_EQ(outs.size(), 1u);
  std::vector<double> result;
  for (int64_t i = 0; i < outs[0].numel(); ++i) result.push_back(outs[0].get_f64(i));
  return result;
}

double gelu_exact(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

double gelu_tanh(double x) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

const std::vector<float> kX = {-2.5f, -1.0f, -0.25f, 0.0f, 0.5f, 1.0f, 2.0f, 3.5f};

TEST(Opset20, NativeGeluImportsAndRuns) {
  ModelBuilder b(20);
  b.input("x", kF32, {int64_t{2}, int64_t{4}}).output("y", kF32, {std::monostate{}, std::monostate{}});
  test::add_attr(b.node("Gelu", {"x"}, {"y"}, "gelu"), "approximate", std::string("tanh"));
  Graph g = import(b);
  Node* gelu = only_node(g, "Gelu");
  ASSERT_NE(gelu, nullptr);
  EXPECT_EQ(gelu->attr_string("approximate", "none"), "tanh");
  EXPECT_EQ(g.outputs()[0]->shape, shape_of({2, 4}));
  std::vector<double> y = run(g, "x", Tensor::from_vector(DType::f32, {2, 4}, kX));
  ASSERT_EQ(y.size(), kX.size());
  for (size_t i = 0; i < kX.size(); ++i) EXPECT_NEAR(y[i], gelu_tanh(kX[i]), 1e-5) << "x=" << kX[i];
}

TEST(Opset20, RewriteMovesGeluAndImportsMicrosoftDomainOnce) {
  for (bool already_imported : {false, true}) {
    ModelBuilder b(20);
    if (already_imported) b.opset("com.microsoft", 1);
    b.input("x", kF32, {int64_t{3}}).output("y", kF32, {int64_t{3}});
    b.node("Gelu", {"x"}, {"g"}, "gelu1");
    b.node("Gelu", {"g"}, {"y"}, "gelu2");
    adapt_opset20_to_18(b.proto(), "m.onnx");
    const onnx::ModelProto& m = b.proto();
    for (const auto& node : m.graph().node()) EXPECT_EQ(node.domain(), "com.microsoft") << node.name();
    ASSERT_EQ(m.opset_import_size(), 2) << "already imported: " << already_imported;
    EXPECT_EQ(m.opset_import(0).domain(), "");
    EXPECT_EQ(m.opset_import(0).version(), 18);
    EXPECT_EQ(m.opset_import(1).domain(), "com.microsoft");
  }
}

TEST(Opset20, CastWithSaturateAtOpset19) {
  ModelBuilder b(19);
  b.input("x", kF32, {int64_t{4}}).output("y", kF64, {int64_t{4}});
  onnx::NodeProto& cast = b.node("Cast", {"x"}, {"y"}, "cast");
  test::add_attr(cast, "to", int64_t{kF64});
  test::add_attr(cast, "saturate", int64_t{1});
  Graph g = import(b);
  Node* node = only_node(g, "Cast");
  ASSERT_NE(node, nullptr);
  EXPECT_FALSE(node->has_attr("saturate"));
  EXPECT_EQ(g.outputs()[0]->dtype, DType::f64);
  std::vector<float> x = {1.5f, -2.25f, 0.0f, 1e30f};
  std::vector<double> y = run(g, "x", Tensor::from_vector(DType::f32, {4}, x));
  EXPECT_EQ(y, (std::vector<double>{1.5, -2.25, 0.0, static_cast<double>(1e30f)}));
}

TEST(Opset20, GeluThenReduceMeanWithAxesInput) {
  ModelBuilder b(20);
  b.input("x", kF32, {std::string("batch"), int64_t{4}}).output("y", kF32, {std::string("batch")});
  b.initializer(test::i64_tensor("axes", {1}, {-1}));
  b.node("Gelu", {"x"}, {"g"}, "gelu");
  test::add_attr(b.node("ReduceMean", {"g", "axes"}, {"y"}, "mean"), "keepdims", int64_t{0});
  Graph g = import(b);
  EXPECT_EQ(only_node(g, "Gelu")->attr_string("approximate", "none"), "none");
  ASSERT_EQ(g.outputs()[0]->shape.size(), 1u);
  EXPECT_EQ(g.outputs()[0]->shape[0], g.inputs()[0]->shape[0]);
  std::vector<double> y = run(g, "x", Tensor::from_vector(DType::f32, {2, 4}, kX));
  ASSERT_EQ(y.size(), 2u);
  for (int row = 0; row < 2; ++row) {
    double mean = 0;
    for (int j = 0; j < 4; ++j) mean += gelu_exact(kX[row * 4 + j]) / 4;
    EXPECT_NEAR(y[row], mean, 1e-5) << "row " << row;
  }
}

TEST(Opset20, GeluAtOpset19IsNotAnOp) {
  ModelBuilder b(19);
  b.input("x", kF32, {int64_t{3}}).output("y", kF32, {int64_t{3}});
  b.node("Gelu", {"x"}, {"y"}, "gelu");
  EXPECT_THAT(import_error(b), HasSubstr("Gelu"));
}

TEST(Opset20, Float8CastIsRejected) {
  ModelBuilder b(19);
  b.input("x", kF32, {int64_t{4}}).output("y", kF32, {int64_t{4}});
  test::add_attr(b.node("Cast", {"x"}, {"q"}, "to_fp8"), "to", int64_t{kFloat8E4M3FN});
  onnx::NodeProto& back = b.node("Cast", {"q"}, {"y"}, "from_fp8");
  test::add_attr(back, "to", int64_t{kF32});
  EXPECT_EQ(import_error(b),
            "m.onnx: node 'to_fp8' (Cast, opset 19): attribute 'to' has the float8 type FLOAT8E4M3FN (opset 19); "
            "tilefuse does not support float8 or 4-bit types");
}

TEST(Opset20, Float8InputIsRejected) {
  ModelBuilder b(20);
  b.input("x", kFloat8E4M3FN + 2, {int64_t{4}}).output("y", kF32, {int64_t{4}});
  test::add_attr(b.node("Cast", {"x"}, {"y"}, "c"), "to", int64_t{kF32});
  EXPECT_EQ(import_error(b),
            "m.onnx: graph input 'x' has the float8 type FLOAT8E5M2 (opset 19); tilefuse does not support float8 "
            "or 4-bit types");
}

TEST(Opset20, ChangedOpIsRejectedFromItsOpsetOn) {
  for (int64_t opset : {18, 19}) {
    ModelBuilder b(opset);
    b.input("x", kF32, {int64_t{1}, int64_t{1}, int64_t{8}}).output("y", kF32, {std::monostate{}, std::monostate{}, std::monostate{}});
    onnx::NodeProto& pool = b.node("AveragePool", {"x"}, {"y"}, "pool");
    test::add_attr(pool, "kernel_shape", std::vector<int64_t>{2});
    test::add_attr(pool, "dilations", std::vector<int64_t>{2});
    if (opset == 18) {
      adapt_opset20_to_18(b.proto(), "m.onnx");  // nothing to do below opset 19
      EXPECT_EQ(b.proto().opset_import(0).version(), 18);
      continue;
    }
    std::string msg = user_error([&] { adapt_opset20_to_18(b.proto(), "m.onnx"); });
    EXPECT_THAT(msg, HasSubstr("node 'pool' (AveragePool, opset 19): attribute 'dilations' (opset 19) other than 1"));
  }
}

// Pad's 'wrap' mode (opset 19) is an attribute value our kernel implements.
TEST(Opset20, PadWrapAtOpset19Runs) {
  ModelBuilder b(19);
  b.input("x", kF32, {int64_t{4}}).output("y", kF32, {std::monostate{}});
  b.initializer(test::i64_tensor("pads", {2}, {1, 2}));
  test::add_attr(b.node("Pad", {"x", "pads"}, {"y"}, "pad"), "mode", std::string("wrap"));
  Graph g = import(b);
  std::vector<double> y = run(g, "x", Tensor::from_vector(DType::f32, {4}, std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(y, (std::vector<double>{4, 1, 2, 3, 4, 1, 2}));
}

// Opsets 21-23 only added types (rejected) and new ops; everything else reads as opset 18, and
// ops newer than the onnx library (GroupNormalization, RMSNormalization) get past its checker.
TEST(Opset20, Opsets21To23ReadAsOpset18) {
  for (int64_t opset : {21, 22, 23}) {
    ModelBuilder b(opset);
    b.input("x", kF32, {int64_t{1}, int64_t{2}, int64_t{2}}).output("y", kF32, {std::monostate{}, std::monostate{}, std::monostate{}});
    b.initializer(test::f32_tensor("s", {2}, {1.0f, 2.0f}));
    b.initializer(test::f32_tensor("b", {2}, {0.0f, 1.0f}));
    test::add_attr(b.node("GroupNormalization", {"x", "s", "b"}, {"g"}, "gn"), "num_groups", int64_t{2});
    b.node("Relu", {"g"}, {"y"}, "relu");
    Graph g = import(b);
    ASSERT_NE(only_node(g, "GroupNormalization"), nullptr) << "opset " << opset;
    std::vector<double> y = run(g, "x", Tensor::from_vector(DType::f32, {1, 2, 2}, std::vector<double>{1, 3, 5, 5}));
    // Group 0 is (1, 3): normalised to -1, +1 (epsilon aside); group 1 is constant: 0, then * 2 + 1.
    ASSERT_EQ(y.size(), 4u);
    EXPECT_NEAR(y[0], 0.0, 1e-4);
    EXPECT_NEAR(y[1], 1.0, 1e-4);
    EXPECT_NEAR(y[2], 1.0, 1e-4);
    EXPECT_NEAR(y[3], 1.0, 1e-4);
  }
}

TEST(Opset20, TooNewOpsetSaysWhatIsSupportedAndHowToExport) {
  ModelBuilder b(24);
  b.input("x", kF32, {int64_t{3}}).output("y", kF32, {int64_t{3}});
  b.node("Relu", {"x"}, {"y"}, "relu");
  std::string msg = import_error(b);
  EXPECT_THAT(msg, HasSubstr("m.onnx: opset 24 of domain 'ai.onnx' is too new; tilefuse reads opsets up to 23"));
  EXPECT_THAT(msg, HasSubstr("torch.onnx.export(..., dynamo=False, opset_version=17)"));
  EXPECT_THAT(msg, Not(HasSubstr("converted")));
}

}  // namespace
}  // namespace tilefuse::frontend
