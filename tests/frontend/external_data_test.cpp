// Models whose weights live in an external data file next to them, as PyTorch's dynamo exporter
// writes them.
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/onnx_importer.h"
#include "model_builder.h"
#include "support/user_error.h"

namespace tilefuse::frontend {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing_support::user_error;

class ExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "tilefuse_external_XXXXXX").string();
    dir_ = mkdtemp(templ.data());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // y = x + w, w (4 floats) stored at `offset` of `location`, `length` bytes long.
  std::string write_model(const std::string& location, int64_t offset, const std::string& length = "16") {
    test::ModelBuilder b;
    b.input("x", onnx::TensorProto::FLOAT, {4}).output("y", onnx::TensorProto::FLOAT, {4});
    onnx::TensorProto w = test::make_tensor("w", onnx::TensorProto::FLOAT, {4});
    w.set_data_location(onnx::TensorProto::EXTERNAL);
    auto add_entry = [&](const std::string& key, const std::string& value) {
      auto* e = w.add_external_data();
      e->set_key(key);
      e->set_value(value);
    };
    add_entry("location", location);
    add_entry("offset", std::to_string(offset));
    add_entry("length", length);
    b.initializer(w);
    b.node("Add", {"x", "w"}, {"y"}, "add");
    std::string path = (fs::path(dir_) / "model.onnx").string();
    std::ofstream(path, std::ios::binary) << b.bytes();
    return path;
  }

  std::string dir_;
};

TEST_F(ExternalData, WeightsAreReadFromTheFileNextToTheModel) {
  const float weights[4] = {1.5f, -2.0f, 0.25f, 8.0f};
  std::ofstream data(fs::path(dir_) / "model.onnx.data", std::ios::binary);
  data.write("padding!", 8);  // the tensor starts at offset 8
  data.write(reinterpret_cast<const char*>(weights), sizeof(weights));
  data.close();
  Graph g = import_onnx_file(write_model("model.onnx.data", 8));
  const Value* w = g.find_value("w");
  ASSERT_NE(w, nullptr);
  ASSERT_TRUE(w->constant);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(w->constant->get_f64(i), weights[i]);
}

TEST_F(ExternalData, LocationsOutsideTheModelFolderAreRefused) {
  EXPECT_THAT(user_error([&] { import_onnx_file(write_model("../secret.bin", 0)); }),
              HasSubstr("must be a relative path inside the model's folder"));
}

TEST_F(ExternalData, RangesBeyondTheFileAreRefused) {
  std::ofstream(fs::path(dir_) / "short.data", std::ios::binary) << "1234";
  EXPECT_THAT(user_error([&] { import_onnx_file(write_model("short.data", 0)); }), HasSubstr("lies outside"));
}

// A link inside the folder that points out of it is refused like "..": symlinks are followed
// first, then the resolved file must lie inside the model's folder.
TEST_F(ExternalData, SymlinksPointingOutOfTheModelFolderAreRefused) {
  const fs::path outside = fs::path(dir_ + "_outside");
  fs::create_directory(outside);
  std::ofstream(outside / "secret.bin", std::ios::binary) << std::string(16, 'x');
  fs::create_symlink(outside / "secret.bin", fs::path(dir_) / "weights.bin");
  const std::string message = user_error([&] { import_onnx_file(write_model("weights.bin", 0)); });
  fs::remove_all(outside);
  EXPECT_THAT(message, HasSubstr("outside the model's folder"));
  EXPECT_THAT(message, HasSubstr("initializer 'w'"));
}

TEST_F(ExternalData, SymlinksInsideTheModelFolderAreFollowed) {
  const float weights[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  fs::create_directory(fs::path(dir_) / "blobs");
  std::ofstream(fs::path(dir_) / "blobs" / "w.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(weights), sizeof(weights));
  fs::create_symlink("blobs/w.bin", fs::path(dir_) / "w.link");
  Graph g = import_onnx_file(write_model("w.link", 0));
  EXPECT_EQ(g.find_value("w")->constant->get_f64(3), 4.0);
}

// The length must be what the dims and type need, checked before anything is read: a model
// cannot make us read a 1 TB file into memory for a 4-float initializer.
TEST_F(ExternalData, LengthMustMatchTheTensorBeforeReading) {
  std::ofstream(fs::path(dir_) / "big.data", std::ios::binary) << std::string(64, 'x');
  EXPECT_THAT(user_error([&] { import_onnx_file(write_model("big.data", 0, "64")); }),
              HasSubstr("has 64 bytes at offset 0, but its dims and element type need 16"));
}

TEST_F(ExternalData, DirectoriesAreNotDataFiles) {
  fs::create_directory(fs::path(dir_) / "folder");
  EXPECT_THAT(user_error([&] { import_onnx_file(write_model("folder", 0)); }), HasSubstr("is not a regular file"));
}

TEST_F(ExternalData, BytesWithoutAFileCannotUseExternalData) {
  std::string path = write_model("model.onnx.data", 0);
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(user_error([&] { import_onnx_bytes(bytes, "<memory>"); }), HasSubstr("external tensor data"));
}

}  // namespace
}  // namespace tilefuse::frontend
