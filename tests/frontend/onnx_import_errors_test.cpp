// Import failures: each is a UserError naming the file and what is wrong, never a crash.
#include <filesystem>
#include <fstream>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/model_builder.h"
#include "frontend/onnx_importer.h"

namespace tilefuse::frontend {
namespace {

using ::testing::HasSubstr;
using test::ModelBuilder;
constexpr int kF32 = onnx::TensorProto::FLOAT;

// The message of the UserError importing `bytes` throws (fails the test if none is thrown).
std::string import_error(const std::string& bytes, const std::string& origin = "model.onnx") {
  try {
    import_onnx_bytes(bytes, origin);
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "import succeeded";
  return "";
}

ModelBuilder relu_model() {
  ModelBuilder b;
  b.input("x", kF32, {int64_t{2}, int64_t{3}}).output("y", kF32, {int64_t{2}, int64_t{3}});
  b.initializer(test::f32_tensor("w", {2, 3}, {1, 2, 3, 4, 5, 6}));
  b.node("Mul", {"x", "w"}, {"m"}, "mul");
  b.node("Relu", {"m"}, {"y"}, "relu");
  return b;
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

TEST(OnnxImportErrors, UnsupportedOpNamesOpNodeDomainOpset) {
  ModelBuilder b;
  b.input("x", kF32, {int64_t{4}}).output("y", onnx::TensorProto::INT64, {int64_t{1}, std::monostate{}});
  b.node("Unique", {"x"}, {"y"}, "nz_3");
  EXPECT_EQ(import_error(b.bytes()),
            "model.onnx: unsupported op 'Unique' (node 'nz_3', domain 'ai.onnx', opset 17)");
}

TEST(OnnxImportErrors, EveryUnsupportedOpIsListed) {
  ModelBuilder b;
  b.opset("com.example", 3);
  b.input("x", kF32, {int64_t{4}}).output("y", kF32, {int64_t{4}});
  b.node("Relu", {"x"}, {"a"}, "ok");
  b.node("Hardmax", {"a"}, {"b"}, "hm");
  b.node("Frobnicate", {"b"}, {"y"}, "fr", "com.example");
  std::string msg = import_error(b.bytes());
  EXPECT_THAT(msg, HasSubstr("unsupported op 'Hardmax' (node 'hm', domain 'ai.onnx', opset 17)"));
  EXPECT_THAT(msg, HasSubstr("unsupported op 'Frobnicate' (node 'fr', domain 'com.example', opset 3)"));
  EXPECT_THAT(msg, ::testing::Not(HasSubstr("'Relu'")));
}

TEST(OnnxImportErrors, UnknownDomain) {
  ModelBuilder b;
  b.input("x", kF32, {int64_t{4}}).output("y", kF32, {int64_t{4}});
  b.node("Relu", {"x"}, {"y"}, "r", "org.unknown");
  EXPECT_EQ(import_error(b.bytes()),
            "model.onnx: unsupported op 'Relu' (node 'r', domain 'org.unknown', opset not imported)");
}

TEST(OnnxImportErrors, TruncatedFile) {
  std::string bytes = relu_model().bytes();
  // Every cut must fail cleanly; most land inside a field and fail to parse.
  int parse_failures = 0;
  for (size_t cut = 0; cut < bytes.size(); cut += 7) {
    std::string msg = import_error(bytes.substr(0, cut));
    EXPECT_THAT(msg, HasSubstr("model.onnx:")) << "cut at " << cut;
    parse_failures += msg.find("not a valid or complete ONNX protobuf") != std::string::npos;
  }
  EXPECT_GT(parse_failures, 0);
  EXPECT_THAT(import_error(bytes.substr(0, bytes.size() / 2)), HasSubstr("model.onnx"));
}

TEST(OnnxImportErrors, RandomBytes) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 50; ++trial) {
    std::string bytes(1 + rng() % 512, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    EXPECT_THAT(import_error(bytes, "random.onnx"), HasSubstr("random.onnx:"));
  }
}

TEST(OnnxImportErrors, EmptyFile) {
  std::string path = write_temp("tilefuse_empty_model.onnx", "");
  try {
    import_onnx_file(path);
    ADD_FAILURE() << "import succeeded";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
    EXPECT_THAT(e.what(), HasSubstr("empty"));
  }
}

TEST(OnnxImportErrors, MissingFile) {
  try {
    import_onnx_file("/nonexistent/dir/model.onnx");
    ADD_FAILURE() << "import succeeded";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/dir/model.onnx"));
    EXPECT_THAT(e.what(), HasSubstr("not found"));
  }
}

TEST(OnnxImportErrors, ValidFileImports) {
  std::string path = write_temp("tilefuse_relu_model.onnx", relu_model().bytes());
  EXPECT_EQ(import_onnx_file(path).num_nodes(), 2u);
}

TEST(OnnxImportErrors, InitializerDataSizeMismatch) {
  ModelBuilder b = relu_model();
  b.proto().mutable_graph()->mutable_initializer(0)->add_float_data(7);  // 7 values for 2x3
  EXPECT_THAT(import_error(b.bytes()), HasSubstr("'w'"));
  EXPECT_THAT(import_error(b.bytes()), HasSubstr("7 elements but the dims say 6"));
}

TEST(OnnxImportErrors, RawDataTooShort) {
  ModelBuilder b = relu_model();
  auto* w = b.proto().mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_raw_data(std::string(20, '\0'));  // 20 bytes for 6 floats
  EXPECT_THAT(import_error(b.bytes()), HasSubstr("raw_data has 20 bytes"));
}

TEST(OnnxImportErrors, ExternalData) {
  ModelBuilder b = relu_model();
  auto* w = b.proto().mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = w->add_external_data();
  entry->set_key("location");
  entry->set_value("weights.bin");
  std::string msg = import_error(b.bytes());
  EXPECT_THAT(msg, HasSubstr("'w'"));
  EXPECT_THAT(msg, HasSubstr("external"));
}

TEST(OnnxImportErrors, InputWithoutShape) {
  ModelBuilder b = relu_model();
  b.proto().mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  EXPECT_THAT(import_error(b.bytes()), HasSubstr("graph input 'x' has no shape"));
}

TEST(OnnxImportErrors, UndefinedNodeInput) {
  ModelBuilder b = relu_model();
  b.proto().mutable_graph()->mutable_node(1)->set_input(0, "undefined_value");
  EXPECT_EQ(import_error(b.bytes()),
            "model.onnx: node 'relu' (Relu) uses value 'undefined_value', which is not defined before it");
}

// Found by fuzzing: onnx's checker lets this through and its version converter crashed on it.
TEST(OnnxImportErrors, UndefinedGraphOutputInOldOpset) {
  ModelBuilder b(11);
  b.input("x", kF32, {int64_t{3}}).output("y", kF32, {int64_t{1}, int64_t{3}});
  auto& u = b.node("Unsqueeze", {"x"}, {"not_y"}, "unsq");
  test::add_attr(u, "axes", std::vector<int64_t>{0});
  EXPECT_EQ(import_error(b.bytes()), "model.onnx: graph output 'y' is not defined");
}

TEST(OnnxImportErrors, CheckerErrorNamesFile) {
  ModelBuilder b = relu_model();
  b.proto().mutable_graph()->mutable_node(1)->add_input("x");  // Relu takes one input
  std::string msg = import_error(b.bytes());
  EXPECT_THAT(msg, HasSubstr("model.onnx: invalid ONNX model"));
  EXPECT_THAT(msg, HasSubstr("Relu"));
}

TEST(OnnxImportErrors, OpsetTooNew) {
  ModelBuilder b = relu_model();
  b.proto().mutable_opset_import(0)->set_version(24);
  EXPECT_THAT(import_error(b.bytes()), HasSubstr("opset 24 of domain 'ai.onnx' is too new"));
}

TEST(OnnxImportErrors, SubgraphAttributeOutsideIfAndLoop) {
  ModelBuilder b = relu_model();
  auto* attr = b.proto().mutable_graph()->mutable_node(1)->add_attribute();
  attr->set_name("body");
  attr->set_type(onnx::AttributeProto::GRAPH);
  EXPECT_THAT(import_error(b.bytes()), HasSubstr("attribute 'body' holds a subgraph; subgraphs are supported for If and Loop only"));
}

TEST(OnnxImportErrors, ShapeMismatchNamesFileAndNode) {
  ModelBuilder b;
  b.input("x", kF32, {int64_t{2}, int64_t{3}}).output("y", kF32, {int64_t{2}, int64_t{3}});
  b.initializer(test::f32_tensor("w", {4}, {1, 2, 3, 4}));
  b.node("Add", {"x", "w"}, {"y"}, "bad_add");
  std::string msg = import_error(b.bytes());
  EXPECT_THAT(msg, HasSubstr("model.onnx"));
}

}  // namespace
}  // namespace tilefuse::frontend
