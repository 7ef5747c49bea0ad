// Successful imports: dtypes, shapes, symbols, constants, attributes, opset handling.
#include <set>

#include <gtest/gtest.h>

#include "frontend/model_builder.h"
#include "frontend/onnx_importer.h"

namespace tilefuse::frontend {
namespace {

using test::ModelBuilder;
constexpr int kF32 = onnx::TensorProto::FLOAT;
constexpr int kI64 = onnx::TensorProto::INT64;

Graph import(const ModelBuilder& b, ImportOptions options = {}) { return import_onnx_bytes(b.bytes(), "test.onnx", options); }

Node* only_node(const Graph& g, const std::string& op) {
  Node* found = nullptr;
  for (Node* n : g.nodes()) {
    if (n->op == op) {
      EXPECT_EQ(found, nullptr) << "more than one " << op;
      found = n;
    }
  }
  EXPECT_NE(found, nullptr) << "no " << op;
  return found;
}

TEST(OnnxImport, AddWithInitializer) {
  ModelBuilder b;
  b.input("x", kF32, {int64_t{2}, int64_t{3}}).output("y", kF32, {int64_t{2}, int64_t{3}});
  b.initializer(test::f32_tensor("bias", {3}, {1.5f, -2.0f, 4.0f}));
  b.node("Add", {"x", "bias"}, {"y"}, "add0");
  Graph g = import(b);
  ASSERT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.inputs()[0]->name, "x");
  EXPECT_EQ(g.inputs()[0]->dtype, DType::f32);
  EXPECT_EQ(g.inputs()[0]->shape, shape_of({2, 3}));
  Node* add = only_node(g, "Add");
  EXPECT_EQ(add->name, "add0");
  ASSERT_TRUE(add->inputs[1]->is_constant());
  EXPECT_EQ(add->inputs[1]->name, "bias");
  const Tensor& bias = *add->inputs[1]->constant;
  EXPECT_EQ(bias.shape(), (std::vector<int64_t>{3}));
  EXPECT_DOUBLE_EQ(bias.get_f64(0), 1.5);
  EXPECT_DOUBLE_EQ(bias.get_f64(1), -2.0);
  EXPECT_DOUBLE_EQ(bias.get_f64(2), 4.0);
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.outputs()[0]->name, "y");
  EXPECT_EQ(g.outputs()[0]->shape, shape_of({2, 3}));
}

// ONNX Runtime accepts a graph output whose type leaves the shape out (onnx's checker does not);
// the shape comes from inference.
TEST(OnnxImport, AGraphOutputWithoutAShapeGetsTheInferredOne) {
  ModelBuilder b;
  b.input("x", kF32, {int64_t{4}, int64_t{2}}).output("y", kF32, {});
  b.proto().mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  b.node("Transpose", {"x"}, {"y"});
  Graph g = import(b);
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.outputs()[0]->shape, shape_of({2, 4}));
}

TEST(OnnxImport, SymbolicDimsBecomeSymbols) {
  ModelBuilder b;
  b.input("a", kF32, {std::string("batch"), std::string("seq len"), std::monostate{}});
  b.input("c", kF32, {std::string("batch"), int64_t{1}, int64_t{1}});
  b.output("y", kF32, {std::string("batch"), std::string("seq len"), std::monostate{}});
  b.node("Mul", {"a", "c"}, {"y"}, "mul");
  Graph g = import(b);
  const Shape& a = g.inputs()[0]->shape;
  ASSERT_EQ(a.size(), 3u);
  ASSERT_TRUE(a[0].is_symbol());
  EXPECT_EQ(a[0].name(), "batch");
  ASSERT_TRUE(a[1].is_symbol());
  EXPECT_EQ(a[1].name(), "seq_len");  // sanitised to an identifier
  ASSERT_TRUE(a[2].is_symbol());      // missing dim: a fresh symbol
  EXPECT_NE(a[2].name(), "batch");
  EXPECT_NE(a[2].name(), "seq_len");
  EXPECT_EQ(g.inputs()[1]->shape[0], a[0]);  // same dim_param, same symbol
  EXPECT_EQ(g.outputs()[0]->shape, a);
}

TEST(OnnxImport, AttributesAreConverted) {
  ModelBuilder b;
  b.input("x", kF32, {int64_t{2}, int64_t{3}}).output("y", kF32, {int64_t{3}, int64_t{2}});
  auto& t = b.node("Transpose", {"x"}, {"t"}, "tr");
  test::add_attr(t, "perm", std::vector<int64_t>{1, 0});
  auto& lr = b.node("LeakyRelu", {"t"}, {"l"}, "lr");
  test::add_attr(lr, "alpha", 0.25f);
  auto& sm = b.node("Softmax", {"l"}, {"y"}, "sm");
  test::add_attr(sm, "axis", int64_t{0});
  Graph g = import(b);
  EXPECT_EQ(only_node(g, "Transpose")->attr_ints("perm"), (std::vector<int64_t>{1, 0}));
  EXPECT_DOUBLE_EQ(only_node(g, "LeakyRelu")->attr_float("alpha", 0), 0.25);
  EXPECT_EQ(only_node(g, "Softmax")->attr_int("axis", -1), 0);
  EXPECT_EQ(g.outputs()[0]->shape, shape_of({3, 2}));
}

TEST(OnnxImport, ConstantNodesBecomeConstants) {
  ModelBuilder b;
  b.input("x", kF32, {int64_t{4}}).output("y", kF32, {int64_t{4}});
  auto& c = b.node("Constant", {}, {"k"}, "const_k");
  test::add_attr(c, "value", test::f32_tensor("", {4}, {1, 2, 3, 4}));
  auto& s = b.node("Constant", {}, {"s"}, "const_s");
  test::add_attr(s, "value_float", 0.5f);
  b.node("Mul", {"x", "k"}, {"m"}, "mul");
  b.node("Add", {"m", "s"}, {"y"}, "add");
  Graph g = import(b);
  EXPECT_EQ(g.num_nodes(), 2u);  // the Constants are values, not nodes
  Value* k = only_node(g, "Mul")->inputs[1];
  ASSERT_TRUE(k->is_constant());
  EXPECT_EQ(k->constant->to_i64_vector(), (std::vector<int64_t>{1, 2, 3, 4}));
  Value* half = only_node(g, "Add")->inputs[1];
  ASSERT_TRUE(half->is_constant());
  EXPECT_EQ(half->constant->rank(), 0);
  EXPECT_DOUBLE_EQ(half->constant->get_f64(0), 0.5);
}

TEST(OnnxImport, UnnamedAndDuplicateNodesGetUniqueNames) {
  ModelBuilder b;
  b.input("x", kF32, {int64_t{2}}).output("y", kF32, {int64_t{2}});
  b.node("Relu", {"x"}, {"a"}, "");
  b.node("Neg", {"a"}, {"b"}, "dup");
  b.node("Abs", {"b"}, {"y"}, "dup");
  Graph g = import(b);
  std::set<std::string> names;
  for (Node* n : g.nodes()) {
    EXPECT_FALSE(n->name.empty());
    names.insert(n->name);
  }
  EXPECT_EQ(names.size(), 3u);
  EXPECT_EQ(only_node(g, "Neg")->name, "dup");
}

TEST(OnnxImport, TrailingOmittedOutputIsDropped) {
  ModelBuilder b;
  b.input("x", kF32, {int64_t{2}}).output("y", kF32, {int64_t{2}});
  b.node("Dropout", {"x"}, {"y", ""}, "drop");
  Graph g = import(b);
  EXPECT_EQ(g.outputs()[0]->name, "y");
  for (Node* n : g.nodes()) EXPECT_EQ(n->outputs.size(), 1u);
}

TEST(OnnxImport, MicrosoftGeluMapsToGelu) {
  ModelBuilder b;
  b.opset("com.microsoft", 1);
  b.input("x", kF32, {int64_t{2}}).output("y", kF32, {int64_t{2}});
  b.node("Gelu", {"x"}, {"y"}, "gelu", "com.microsoft");
  Graph g = import(b);
  Node* gelu = only_node(g, "Gelu");
  EXPECT_EQ(gelu->attr_string("approximate", "none"), "none");
  EXPECT_EQ(g.outputs()[0]->shape, shape_of({2}));
}

TEST(OnnxImport, Opset18ReduceMeanAxesInput) {
  ModelBuilder b(18);
  b.input("x", kF32, {int64_t{2}, int64_t{5}}).output("y", kF32, {int64_t{2}, int64_t{1}});
  b.initializer(test::i64_tensor("axes", {1}, {1}));
  b.node("ReduceMean", {"x", "axes"}, {"y"}, "mean");
  Graph g = import(b);
  EXPECT_EQ(g.outputs()[0]->shape, shape_of({2, 1}));
}

TEST(OnnxImport, OldOpsetIsConverted) {
  // Opset 11 Unsqueeze takes `axes` as an attribute; opset 13 made it an input.
  ModelBuilder b(11);
  b.input("x", kF32, {int64_t{3}}).output("y", kF32, {int64_t{1}, int64_t{3}});
  auto& u = b.node("Unsqueeze", {"x"}, {"y"}, "unsq");
  test::add_attr(u, "axes", std::vector<int64_t>{0});
  Graph g = import(b);
  EXPECT_EQ(g.outputs()[0]->shape, shape_of({1, 3}));
}

// x[batch, 4, 8] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [32])): what PyTorch writes
// for x.view(x.size(0), -1).
ModelBuilder pytorch_flatten(const test::DimSpec& batch) {
  ModelBuilder b;
  b.input("x", kF32, {batch, int64_t{4}, int64_t{8}}).output("y", kF32, {batch, int64_t{32}});
  b.initializer(test::i64_tensor("zero", {}, {0}));
  b.initializer(test::i64_tensor("axes0", {1}, {0}));
  b.initializer(test::i64_tensor("rest", {1}, {32}));
  b.node("Shape", {"x"}, {"shape"}, "/Shape");
  auto& gather = b.node("Gather", {"shape", "zero"}, {"dim0"}, "/Gather");
  test::add_attr(gather, "axis", int64_t{0});
  b.node("Unsqueeze", {"dim0", "axes0"}, {"dim0_1d"}, "/Unsqueeze");
  auto& concat = b.node("Concat", {"dim0_1d", "rest"}, {"new_shape"}, "/Concat");
  test::add_attr(concat, "axis", int64_t{0});
  b.node("Reshape", {"x", "new_shape"}, {"y"}, "/Reshape");
  return b;
}

TEST(OnnxImport, PyTorchReshapeKeepsSymbolicBatch) {
  Graph g = import(pytorch_flatten(std::string("batch")));
  ASSERT_EQ(g.outputs()[0]->shape.size(), 2u);
  ASSERT_TRUE(g.outputs()[0]->shape[0].is_symbol());
  EXPECT_EQ(g.outputs()[0]->shape[0].name(), "batch");
  EXPECT_EQ(g.outputs()[0]->shape[1], Dim(32));
  EXPECT_NE(g.find_node("/Shape"), nullptr);  // depends on the input's run-time shape: kept
}

TEST(OnnxImport, PyTorchReshapeChainFoldsWhenStatic) {
  Graph g = import(pytorch_flatten(int64_t{2}));
  ASSERT_EQ(g.num_nodes(), 1u);
  Node* reshape = only_node(g, "Reshape");
  ASSERT_TRUE(reshape->inputs[1]->is_constant());
  EXPECT_EQ(reshape->inputs[1]->constant->to_i64_vector(), (std::vector<int64_t>{2, 32}));
  EXPECT_EQ(g.outputs()[0]->shape, shape_of({2, 32}));
}

TEST(OnnxImport, FoldingCanBeTurnedOff) {
  ImportOptions options;
  options.fold_constants = false;
  Graph g = import(pytorch_flatten(int64_t{2}), options);
  EXPECT_EQ(g.num_nodes(), 5u);
}

}  // namespace
}  // namespace tilefuse::frontend
