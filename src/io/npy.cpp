#include "io/npy.h"

#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <span>

#include "io/atomic_file.h"
#include "io/npy_header.h"
#include "ir/checked_size.h"
#include "ir/error.h"
#include "ir/log.h"
#include "ir/shape.h"

namespace tilefuse::io {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the .npy reader and writer assume a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kPreambleSize = 8;  // magic + major + minor version bytes
constexpr size_t kHeaderAlignment = 64;
// numpy refuses to read headers longer than this (numpy.lib.format's max_header_size, 10000
// since numpy 1.24), since parsing a huge header is a denial of service; so do we.
constexpr size_t kMaxHeaderLength = 10000;

// numpy's dtype strings without the byte-order character, for each of our dtypes except bf16.
struct DescrEntry {
  std::string_view type_code;
  DType dtype;
};
constexpr DescrEntry kDescrs[] = {
    {"f4", DType::f32}, {"f2", DType::f16}, {"f8", DType::f64}, {"i1", DType::i8},
    {"i4", DType::i32}, {"i8", DType::i64}, {"u1", DType::u8},  {"b1", DType::boolean},
};
constexpr std::string_view kSupportedDescrs = "<f4 <f2 <f8 |i1 <i4 <i8 |u1 |b1";

DType dtype_from_descr(const std::string& descr, const std::string& path) {
  if (descr.find('O') != std::string::npos) {
    fail_user("{}: object arrays (dtype '{}') are not supported; save a numeric array", path, descr);
  }
  if (descr.empty()) fail_user("{}: empty dtype in the .npy header", path);
  char byte_order = descr[0];
  if (byte_order == '>') {
    fail_user("{}: big-endian data (dtype '{}') is not supported; save with a.astype(a.dtype.newbyteorder('<'))",
              path, descr);
  }
  // '=' is native order, which is little-endian on every host we run on (see static_assert).
  std::string_view code = (byte_order == '<' || byte_order == '|' || byte_order == '=')
                              ? std::string_view(descr).substr(1)
                              : std::string_view(descr);
  for (const DescrEntry& entry : kDescrs) {
    if (entry.type_code == code) return entry.dtype;
  }
  fail_user("{}: unsupported dtype '{}' (supported: {})", path, descr, kSupportedDescrs);
}

std::string descr_for(DType dtype) {
  for (const DescrEntry& entry : kDescrs) {
    if (entry.dtype == dtype) return std::string(dtype_size(dtype) == 1 ? "|" : "<") + std::string(entry.type_code);
  }
  fail_internal("no .npy dtype for {}", dtype_name(dtype));
}

uint32_t little_endian_u32(const char* bytes, size_t count) {
  uint32_t value = 0;
  for (size_t i = 0; i < count; ++i) value |= uint32_t(static_cast<uint8_t>(bytes[i])) << (8 * i);
  return value;
}

// Reads exactly `size` bytes at the stream's position or fails naming what was being read.
void read_exactly(std::ifstream& in, char* out, size_t size, const std::string& path, std::string_view what) {
  in.read(out, static_cast<std::streamsize>(size));
  if (static_cast<size_t>(in.gcount()) != size) fail_user("{}: truncated file: {} is incomplete", path, what);
}

struct HeaderInfo {
  NpyHeader header;
  size_t data_offset = 0;
};

HeaderInfo read_header(std::ifstream& in, uintmax_t file_size, const std::string& path) {
  std::array<char, kPreambleSize> preamble{};
  in.read(preamble.data(), preamble.size());
  if (static_cast<size_t>(in.gcount()) != preamble.size() ||
      std::string_view(preamble.data(), kMagic.size()) != kMagic) {
    fail_user("{}: not an .npy file (it does not start with the \\x93NUMPY magic)", path);
  }
  int major = static_cast<uint8_t>(preamble[6]);
  int minor = static_cast<uint8_t>(preamble[7]);
  // Version 1.0 stores the header length in 2 bytes; 2.0 and 3.0 (utf-8 header) in 4.
  size_t length_bytes = major == 1 ? 2 : (major == 2 || major == 3) ? 4 : 0;
  if (length_bytes == 0) fail_user("{}: unsupported .npy format version {}.{} (supported: 1.0, 2.0, 3.0)", path, major, minor);
  std::array<char, 4> length_field{};
  read_exactly(in, length_field.data(), length_bytes, path, "the header length");
  size_t header_length = little_endian_u32(length_field.data(), length_bytes);
  // Checked before the header is allocated: a 12-byte file may claim a 4 GiB header.
  if (header_length > kMaxHeaderLength) {
    fail_user("{}: the .npy header claims {} bytes, more than numpy's limit of {}", path, header_length,
              kMaxHeaderLength);
  }
  if (kPreambleSize + length_bytes + header_length > file_size) {
    fail_user("{}: truncated file: the .npy header claims {} bytes, but the file has only {} bytes", path,
              header_length, file_size);
  }
  std::string text(header_length, '\0');
  read_exactly(in, text.data(), header_length, path, "the header");
  return {parse_npy_header(text, path), kPreambleSize + length_bytes + header_length};
}

uintmax_t file_size_or_fail(const std::string& path) {
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) fail_user("cannot read '{}': {}", path, ec.message());
  return size;
}

// numpy only ever writes 0 or 1 for bool, but a hand-made file may hold other bytes; our
// kernels assume 0/1.
void normalise_booleans(Tensor& tensor) {
  auto* bytes = tensor.data<uint8_t>();
  for (int64_t i = 0; i < tensor.numel(); ++i) bytes[i] = bytes[i] != 0 ? 1 : 0;
}

std::string encode_header(const Tensor& tensor) {
  std::string dict = format_npy_header({descr_for(tensor.dtype()), false, tensor.shape()});
  // Pad with spaces and end with '\n' so the data starts on a 64-byte boundary, as numpy does.
  auto padded_length = [&](size_t length_bytes) {
    size_t unpadded = kPreambleSize + length_bytes + dict.size() + 1;
    return dict.size() + 1 + (kHeaderAlignment - unpadded % kHeaderAlignment) % kHeaderAlignment;
  };
  const bool fits_v1 = padded_length(2) <= std::numeric_limits<uint16_t>::max();
  const size_t length_bytes = fits_v1 ? 2 : 4;
  const size_t header_length = padded_length(length_bytes);
  std::string out(kMagic);
  out += static_cast<char>(fits_v1 ? 1 : 2);
  out += '\0';
  for (size_t i = 0; i < length_bytes; ++i) out += static_cast<char>((header_length >> (8 * i)) & 0xff);
  out += dict;
  out.append(header_length - dict.size() - 1, ' ');
  out += '\n';
  return out;
}

}  // namespace

Tensor read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_user("cannot open '{}': {}", path, std::strerror(errno));
  const uintmax_t file_size = file_size_or_fail(path);
  HeaderInfo info = read_header(in, file_size, path);
  if (info.header.fortran_order) {
    fail_user("{}: Fortran-order arrays are not supported; save np.ascontiguousarray(a) instead", path);
  }
  DType dtype = dtype_from_descr(info.header.descr, path);
  uintmax_t expected = checked_nbytes(dtype, info.header.shape, fmt::format("{}: the array", path));
  uintmax_t available = file_size - info.data_offset;
  const std::string type = std::string(dtype_name(dtype)) + dims_to_string(info.header.shape);
  if (available < expected) {
    fail_user("{}: truncated data: {} needs {} bytes, the file holds {}", path, type, expected, available);
  }
  if (available > expected) {
    fail_user("{}: {} bytes of unexpected data after the {} array", path, available - expected, type);
  }
  Tensor tensor(dtype, info.header.shape);
  read_exactly(in, static_cast<char*>(tensor.raw()), tensor.nbytes(), path, "the array data");
  if (dtype == DType::boolean) normalise_booleans(tensor);
  return tensor;
}

void write_npy(const std::string& path, const Tensor& tensor) {
  Tensor stored = tensor;
  if (tensor.dtype() == DType::bf16) {
    logger().warn("{}: numpy has no bfloat16 dtype; writing the bf16 tensor as float32", path);
    stored = tensor.cast(DType::f32);
  }
  const std::string header = encode_header(stored);
  const std::span<const char> pieces[] = {
      {header.data(), header.size()},
      {static_cast<const char*>(stored.raw()), stored.nbytes()},
  };
  write_file_atomically(path, pieces);
}

}  // namespace tilefuse::io
