#include "io/npy.h"

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/test_support.h"
#include "ir/error.h"
#include "support/user_error.h"

namespace tilefuse::io {
namespace {

using ::testing::HasSubstr;
using tilefuse::testing::ScratchDir;
using tilefuse::testing::read_bytes;
using tilefuse::testing::run_python;
using tilefuse::testing::write_bytes;

// Values every dtype can hold exactly: small signed integers (non-negative for u8/bool-ish).
Tensor sample_tensor(DType dtype, std::vector<int64_t> shape) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == DType::boolean) {
      t.set_i64(i, i % 3 == 0);
    } else if (dtype == DType::u8) {
      t.set_i64(i, (i * 7) % 251);
    } else if (is_float(dtype)) {
      t.set_f64(i, (i % 11) * 0.5 - 2.5);
    } else {
      t.set_i64(i, (i % 13) - 6);
    }
  }
  return t;
}

using testing_support::user_error;

TEST(Npy, RoundTripsEveryNumpyDtype) {
  ScratchDir dir;
  for (DType dtype : kAllDTypes) {
    if (dtype == DType::bf16) continue;  // numpy has no bf16; see Bf16IsWrittenAsFloat32
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    Tensor original = sample_tensor(dtype, {2, 3, 5});
    const std::string path = dir.file("t.npy");
    write_npy(path, original);
    Tensor loaded = read_npy(path);
    EXPECT_EQ(loaded.dtype(), dtype);
    EXPECT_EQ(loaded.shape(), original.shape());
    EXPECT_TRUE(loaded.same_bytes(original));
  }
}

TEST(Npy, RoundTripsScalarsAndEmptyTensors) {
  ScratchDir dir;
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{}, {0}, {4, 0, 2}, {7}}) {
    Tensor original = sample_tensor(DType::f32, shape);
    write_npy(dir.file("t.npy"), original);
    Tensor loaded = read_npy(dir.file("t.npy"));
    EXPECT_EQ(loaded.shape(), shape);
    EXPECT_TRUE(loaded.same_bytes(original));
  }
}

TEST(Npy, Bf16IsWrittenAsFloat32) {
  ScratchDir dir;
  Tensor original = sample_tensor(DType::bf16, {4});
  write_npy(dir.file("b.npy"), original);
  Tensor loaded = read_npy(dir.file("b.npy"));
  ASSERT_EQ(loaded.dtype(), DType::f32);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(loaded.get_f64(i), original.get_f64(i));
}

TEST(Npy, DataStartsOn64ByteBoundary) {
  ScratchDir dir;
  write_npy(dir.file("t.npy"), sample_tensor(DType::i64, {3, 1}));
  std::string bytes = read_bytes(dir.file("t.npy"));
  ASSERT_GT(bytes.size(), 10u);
  EXPECT_EQ(bytes[6], 1) << "small headers use format 1.0";
  size_t header_length = static_cast<uint8_t>(bytes[8]) | static_cast<uint8_t>(bytes[9]) << 8;
  EXPECT_EQ((10 + header_length) % 64, 0u);
  EXPECT_EQ(bytes[10 + header_length - 1], '\n');
}

// A header too long for version 1.0's 2-byte length is written as version 2.0, as numpy does;
// like numpy (max_header_size), the reader refuses headers over 10000 bytes.
TEST(Npy, HugeHeaderUsesFormatVersion2) {
  ScratchDir dir;
  Tensor original = sample_tensor(DType::u8, std::vector<int64_t>(25000, 1));
  write_npy(dir.file("t.npy"), original);
  EXPECT_EQ(read_bytes(dir.file("t.npy"))[6], 2);
  EXPECT_THAT(user_error([&] { read_npy(dir.file("t.npy")); }), HasSubstr("more than numpy's limit of 10000"));
}

// A 12-byte file that claims a 4 GiB header is refused before anything is allocated.
TEST(Npy, HeaderLengthIsCheckedBeforeAllocating) {
  ScratchDir dir;
  const std::string path = dir.file("bomb.npy");
  {
    std::string bytes = "\x93NUMPY";
    bytes += std::string("\x02\x00\xff\xff\xff\xff", 6);
    std::ofstream(path, std::ios::binary) << bytes;
  }
  EXPECT_THAT(user_error([&] { read_npy(path); }), HasSubstr("more than numpy's limit of 10000"));
  {
    std::string bytes = "\x93NUMPY";
    bytes += std::string("\x01\x00\x10\x27", 4);  // 10000 bytes claimed, none there
    std::ofstream(path, std::ios::binary) << bytes;
  }
  EXPECT_THAT(user_error([&] { read_npy(path); }), HasSubstr("the .npy header claims 10000 bytes, but the file has only 10"));
}

// numpy writes each dtype in format versions 1.0, 2.0 and 3.0; values are i - 3 for i in 0..5
// (bool: i odd), checked here without our writer involved.
TEST(Npy, ReadsFilesWrittenByNumpy) {
  ScratchDir dir;
  ASSERT_EQ(run_python(dir, R"(
import numpy as np, sys
d = sys.argv[0].rsplit('/', 1)[0]
for code in ['<f4', '<f2', '<f8', '|i1', '<i4', '<i8', '|u1', '|b1']:
    a = (np.arange(6) % 2 == 1) if code == '|b1' else (np.arange(6) - (0 if code == '|u1' else 3)).astype(code)
    a = a.reshape(2, 3)
    for v in [(1, 0), (2, 0), (3, 0)]:
        with open(f"{d}/{code[1:]}_v{v[0]}.npy", 'wb') as f:
            np.lib.format.write_array(f, a, version=v)
)"),
            0);
  const std::pair<const char*, DType> codes[] = {
      {"f4", DType::f32}, {"f2", DType::f16}, {"f8", DType::f64}, {"i1", DType::i8},
      {"i4", DType::i32}, {"i8", DType::i64}, {"u1", DType::u8},  {"b1", DType::boolean}};
  for (auto [code, dtype] : codes) {
    for (int version = 1; version <= 3; ++version) {
      SCOPED_TRACE(fmt::format("{} v{}", code, version));
      Tensor t = read_npy(dir.file(fmt::format("{}_v{}.npy", code, version)));
      ASSERT_EQ(t.dtype(), dtype);
      ASSERT_EQ(t.shape(), (std::vector<int64_t>{2, 3}));
      for (int64_t i = 0; i < 6; ++i) {
        int64_t expected = dtype == DType::boolean ? i % 2 : dtype == DType::u8 ? i : i - 3;
        EXPECT_EQ(t.get_f64(i), static_cast<double>(expected)) << "element " << i;
      }
    }
  }
}

TEST(Npy, NumpyLoadsOurFiles) {
  ScratchDir dir;
  for (DType dtype : kAllDTypes) {
    write_npy(dir.file(std::string(dtype_name(dtype)) + ".npy"), sample_tensor(dtype, {3, 4}));
  }
  // The expected values are recomputed in numpy from the same formulas as sample_tensor.
  EXPECT_EQ(run_python(dir, R"(
import numpy as np, sys
d = sys.argv[0].rsplit('/', 1)[0]
i = np.arange(12).reshape(3, 4)
floats = (i % 11) * 0.5 - 2.5
expect = {'f32': ('<f4', floats), 'f16': ('<f2', floats), 'bf16': ('<f4', floats), 'f64': ('<f8', floats),
          'i8': ('|i1', i % 13 - 6), 'i32': ('<i4', i % 13 - 6), 'i64': ('<i8', i % 13 - 6),
          'u8': ('|u1', i * 7 % 251), 'bool': ('|b1', i % 3 == 0)}
for name, (code, values) in expect.items():
    a = np.load(f"{d}/{name}.npy")
    assert a.dtype == np.dtype(code), (name, a.dtype)
    assert a.shape == (3, 4), (name, a.shape)
    assert (a == values.astype(code)).all(), (name, a)
)"),
            0);
}

TEST(Npy, NormalisesNonCanonicalBooleans) {
  ScratchDir dir;
  Tensor raw(DType::u8, {3});
  raw.data<uint8_t>()[1] = 7;
  write_npy(dir.file("b.npy"), raw);
  std::string bytes = read_bytes(dir.file("b.npy"));
  bytes.replace(bytes.find("|u1"), 3, "|b1");
  write_bytes(dir.file("b.npy"), bytes);
  Tensor loaded = read_npy(dir.file("b.npy"));
  EXPECT_EQ(loaded.data<uint8_t>()[1], 1);
}

// Writes a valid f32[2, 3] file and lets `mutate` damage it.
std::string damaged_file(const ScratchDir& dir, const std::function<void(std::string&)>& mutate) {
  const std::string path = dir.file("bad.npy");
  write_npy(path, sample_tensor(DType::f32, {2, 3}));
  std::string bytes = read_bytes(path);
  mutate(bytes);
  write_bytes(path, bytes);
  return path;
}

void replace_in_header(std::string& bytes, const std::string& from, const std::string& to) {
  size_t at = bytes.find(from);
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, from.size(), to);
}

struct ErrorCase {
  const char* name;
  std::function<void(std::string&)> mutate;
  const char* expected_message;
};

TEST(Npy, RejectsDamagedOrUnsupportedFilesNamingTheProblem) {
  const ErrorCase cases[] = {
      {"truncated data", [](std::string& b) { b.resize(b.size() - 5); }, "truncated data: f32[2, 3] needs 24 bytes, the file holds 19"},
      {"trailing data", [](std::string& b) { b += "xyz"; }, "3 bytes of unexpected data"},
      {"truncated header", [](std::string& b) { b.resize(40); }, "truncated file: the .npy header claims"},
      {"no magic", [](std::string& b) { b[1] = 'X'; }, "not an .npy file"},
      {"random bytes", [](std::string& b) { b = "\x01\x02garbage\xff"; }, "not an .npy file"},
      {"empty file", [](std::string& b) { b.clear(); }, "not an .npy file"},
      {"version 4", [](std::string& b) { b[6] = 4; }, "unsupported .npy format version 4.0"},
      {"big endian", [](std::string& b) { replace_in_header(b, "<f4", ">f4"); }, "big-endian data (dtype '>f4') is not supported"},
      {"fortran order", [](std::string& b) { replace_in_header(b, "False", "True "); }, "Fortran-order arrays are not supported"},
      {"object array", [](std::string& b) { replace_in_header(b, "<f4", "|O8"); }, "object arrays (dtype '|O8') are not supported"},
      {"unsupported dtype", [](std::string& b) { replace_in_header(b, "<f4", "<u2"); }, "unsupported dtype '<u2' (supported: <f4"},
      {"structured dtype", [](std::string& b) { replace_in_header(b, "'<f4'", "[('a','<f4')]"); }, "structured dtypes"},
      {"bad shape", [](std::string& b) { replace_in_header(b, "(2, 3)", "(2, -3)"); }, "expected a dimension (a non-negative integer)"},
      {"missing key", [](std::string& b) { replace_in_header(b, "'shape'", "'shope'"); }, "unexpected key 'shope'"},
      {"huge shape", [](std::string& b) { replace_in_header(b, "(2, 3)", "(999999999999999999, 99)"); }, "shape [999999999999999999, 99]: its element count does not fit in 64 bits"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    ScratchDir dir;
    std::string path = damaged_file(dir, c.mutate);
    std::string message = user_error([&] { read_npy(path); });
    EXPECT_THAT(message, HasSubstr(path));
    EXPECT_THAT(message, HasSubstr(c.expected_message));
  }
}

TEST(Npy, MissingFileIsAUserError) {
  ScratchDir dir;
  std::string message = user_error([&] { read_npy(dir.file("absent.npy")); });
  EXPECT_THAT(message, HasSubstr("absent.npy"));
}

TEST(Npy, FailedWriteNamesTheFileAndLeavesNoTemporary) {
  ScratchDir dir;
  std::string message = user_error([&] { write_npy(dir.file("no/such/dir/x.npy"), Tensor(DType::f32, {1})); });
  EXPECT_THAT(message, HasSubstr("no/such/dir/x.npy"));
  write_npy(dir.file("x.npy"), Tensor(DType::f32, {1}));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1)
      << "only x.npy, no temporary file, should remain";
}

}  // namespace
}  // namespace tilefuse::io
