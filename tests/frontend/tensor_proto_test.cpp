// TensorProto files -> Tensors: every dtype, raw_data and typed fields, size checks.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/model_builder.h"
#include "frontend/tensor_proto.h"

namespace tilefuse::frontend {
namespace {

using ::testing::HasSubstr;

// ctest runs tests in parallel processes: each writes its own files.
std::string write_proto(const onnx::TensorProto& t, const std::string& file) {
  auto path = (std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_" + file)).string();
  std::ofstream(path, std::ios::binary) << t.SerializeAsString();
  return path;
}

// The file is removed once read, whatever the read did.
struct RemovedAfter {
  std::string path;
  ~RemovedAfter() { std::filesystem::remove(path); }
};

Tensor round_trip(const onnx::TensorProto& t) {
  RemovedAfter file{write_proto(t, "tilefuse_t.pb")};
  return read_tensor_proto_file(file.path);
}

std::string read_error(const onnx::TensorProto& t) {
  RemovedAfter file{write_proto(t, "tilefuse_bad_t.pb")};
  const std::string& path = file.path;
  try {
    read_tensor_proto_file(path);
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
    return e.what();
  }
  ADD_FAILURE() << "read succeeded";
  return "";
}

template <typename T>
std::string raw_bytes(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

TEST(TensorProto, TypedFieldsOfEveryDType) {
  struct Case {
    int onnx_type;
    DType dtype;
  };
  for (Case c : {Case{onnx::TensorProto::UINT8, DType::u8}, Case{onnx::TensorProto::INT8, DType::i8},
                 Case{onnx::TensorProto::INT32, DType::i32}, Case{onnx::TensorProto::BOOL, DType::boolean}}) {
    onnx::TensorProto t = test::make_tensor("t", c.onnx_type, {3});
    for (int v : {0, 1, 1}) t.add_int32_data(v);
    Tensor out = round_trip(t);
    EXPECT_EQ(out.dtype(), c.dtype);
    EXPECT_EQ(out.to_i64_vector(), (std::vector<int64_t>{0, 1, 1}));
  }
  onnx::TensorProto i64 = test::i64_tensor("t", {2}, {-5, int64_t{1} << 40});
  EXPECT_EQ(round_trip(i64).to_i64_vector(), (std::vector<int64_t>{-5, int64_t{1} << 40}));
  onnx::TensorProto f64 = test::make_tensor("t", onnx::TensorProto::DOUBLE, {1});
  f64.add_double_data(0.1);
  EXPECT_EQ(round_trip(f64).get_f64(0), 0.1);
  onnx::TensorProto f16 = test::make_tensor("t", onnx::TensorProto::FLOAT16, {1});
  f16.add_int32_data(0x3C00);  // 1.0 in IEEE half
  EXPECT_EQ(round_trip(f16).get_f64(0), 1.0);
  onnx::TensorProto bf16 = test::make_tensor("t", onnx::TensorProto::BFLOAT16, {1});
  bf16.add_int32_data(0xC000);  // -2.0 in bfloat16
  EXPECT_EQ(round_trip(bf16).get_f64(0), -2.0);
}

TEST(TensorProto, RawData) {
  onnx::TensorProto f = test::make_tensor("t", onnx::TensorProto::FLOAT, {2, 2});
  f.set_raw_data(raw_bytes(std::vector<float>{1.5f, -2.f, 3.f, 0.25f}));
  Tensor out = round_trip(f);
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(out.get_f64(3), 0.25);
  onnx::TensorProto i = test::make_tensor("t", onnx::TensorProto::INT32, {});
  i.set_raw_data(raw_bytes(std::vector<int32_t>{-7}));
  EXPECT_EQ(round_trip(i).to_i64_vector(), (std::vector<int64_t>{-7}));
}

TEST(TensorProto, NameIsReturned) {
  std::string name;
  RemovedAfter file{write_proto(test::f32_tensor("input_0", {1}, {1}), "tilefuse_named.pb")};
  read_tensor_proto_file(file.path, &name);
  EXPECT_EQ(name, "input_0");
}

TEST(TensorProto, SizeMismatchesAreErrors) {
  EXPECT_THAT(read_error(test::f32_tensor("t", {2, 2}, {1, 2, 3})), HasSubstr("3 elements but the dims say 4"));
  onnx::TensorProto raw = test::make_tensor("t", onnx::TensorProto::INT64, {3});
  raw.set_raw_data(std::string(23, '\0'));
  EXPECT_THAT(read_error(raw), HasSubstr("raw_data has 23 bytes"));
  // Huge dims with no data: an error before any allocation.
  EXPECT_THAT(read_error(test::f32_tensor("t", {int64_t{1} << 40, 1 << 20}, {})), HasSubstr("dims say"));
  EXPECT_THAT(read_error(test::f32_tensor("t", {int64_t{1} << 40, int64_t{1} << 40}, {})), HasSubstr("its element count does not fit in 64 bits"));
  EXPECT_THAT(read_error(test::f32_tensor("t", {-1}, {})), HasSubstr("negative"));
}

TEST(TensorProto, UnsupportedTypeAndBadFiles) {
  onnx::TensorProto s = test::make_tensor("t", onnx::TensorProto::STRING, {1});
  s.add_string_data("hello");
  EXPECT_THAT(read_error(s), HasSubstr("STRING"));
  EXPECT_THROW(read_tensor_proto_file("/nonexistent/input_0.pb"), UserError);
}

}  // namespace
}  // namespace tilefuse::frontend
