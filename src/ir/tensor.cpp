#include "ir/tensor.h"

#include <sys/mman.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

#include "ir/checked_size.h"
#include "ir/half.h"
#include "ir/memory_budget.h"
#include "ir/shape.h"

namespace tilefuse {

namespace {

// Float to int64 as ONNX Cast does it: truncate toward zero; NaN/inf (undefined in ONNX) give 0
// and out-of-range values saturate instead of being undefined behaviour.
int64_t truncate_to_i64(double v) {
  if (!std::isfinite(v)) return 0;
  constexpr double kLimit = 9223372036854775807.0;  // 2^63
  if (v >= kLimit) return std::numeric_limits<int64_t>::max();
  if (v <= -kLimit) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(std::trunc(v));
}

// Large tensors start on a 2 MiB boundary and ask for transparent huge pages: kernels stream
// them, and with 4 KiB pages the same kernels measured 15-20% slower (TLB walks every 4 KiB;
// bench/README.md). Advisory: where THP is off, this is an ordinary allocation.
constexpr size_t kHugePageBytes = size_t{2} << 20;
constexpr size_t kHugePagesFrom = 2 * kHugePageBytes;

void* allocate_storage(size_t bytes) {
  if (bytes < kHugePagesFrom) return std::aligned_alloc(64, bytes);
  void* p = nullptr;
  if (posix_memalign(&p, kHugePageBytes, bytes) != 0) return nullptr;
  madvise(p, bytes / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);
  return p;
}

}  // namespace

int64_t product(const std::vector<int64_t>& dims) { return checked_numel(dims, "a tensor"); }

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  // Messages are only formatted when a check fails: tensors are made on every host step.
  std::optional<size_t> exact = nbytes_if_valid(dtype_, shape_);
  if (!exact) exact = checked_nbytes(dtype_, shape_, fmt::format("a {} tensor", dtype_name(dtype_)));
  // Round up to a whole cache line and never allocate zero bytes, so data() is always valid.
  const size_t bytes = std::max<size_t>(64, (*exact + 63) / 64 * 64);
  numel_ = static_cast<int64_t>(*exact / dtype_size(dtype_));
  if (!try_reserve_memory(bytes)) reserve_memory(bytes, "a tensor " + summary());
  void* p = allocate_storage(bytes);
  if (p == nullptr) {
    release_memory(bytes);
    fail_user("cannot allocate {} bytes for a tensor {}", bytes, summary());
  }
  std::memset(p, 0, bytes);
  storage_ = std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), [bytes](uint8_t* q) {
    std::free(q);
    release_memory(bytes);
  });
}

Tensor Tensor::view(DType dtype, std::vector<int64_t> shape, void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = product(t.shape_);
  // The aliasing constructor with no owner: a pointer without a control block, so a view
  // allocates nothing beyond its shape.
  t.storage_ = std::shared_ptr<uint8_t>(std::shared_ptr<uint8_t>(), static_cast<uint8_t*>(data));
  return t;
}

Tensor Tensor::shared(DType dtype, std::vector<int64_t> shape, std::shared_ptr<void> owner, void* data) {
  Tensor t = view(dtype, std::move(shape), data);
  t.storage_ = std::shared_ptr<uint8_t>(std::move(owner), static_cast<uint8_t*>(data));
  return t;
}

void Tensor::check_value_count(size_t values, int64_t numel) {
  if (static_cast<int64_t>(values) != numel) {
    fail_internal("Tensor::from_vector: {} values for {} elements", values, numel);
  }
}

Tensor Tensor::scalar_i64(int64_t v) {
  Tensor t(DType::i64, {});
  t.data<int64_t>()[0] = v;
  return t;
}

Tensor Tensor::scalar_f32(float v) {
  Tensor t(DType::f32, {});
  t.data<float>()[0] = v;
  return t;
}

double Tensor::get_f64(int64_t i) const {
  switch (dtype_) {
    case DType::f32: return data<float>()[i];
    case DType::f16: return f16_to_f32(data<uint16_t>()[i]);
    case DType::bf16: return bf16_to_f32(data<uint16_t>()[i]);
    case DType::f64: return data<double>()[i];
    case DType::i8: return data<int8_t>()[i];
    case DType::i32: return data<int32_t>()[i];
    case DType::i64: return static_cast<double>(data<int64_t>()[i]);
    case DType::u8: return data<uint8_t>()[i];
    case DType::boolean: return data<uint8_t>()[i] != 0 ? 1.0 : 0.0;
  }
  fail_internal("get_f64: bad dtype");
}

void Tensor::set_f64(int64_t i, double v) {
  switch (dtype_) {
    case DType::f32: data<float>()[i] = static_cast<float>(v); return;
    case DType::f16: data<uint16_t>()[i] = f32_to_f16(static_cast<float>(v)); return;
    case DType::bf16: data<uint16_t>()[i] = f32_to_bf16(static_cast<float>(v)); return;
    case DType::f64: data<double>()[i] = v; return;
    case DType::boolean: data<uint8_t>()[i] = v != 0.0 ? 1 : 0; return;
    default:
      set_i64(i, truncate_to_i64(v));
      return;
  }
}

int64_t Tensor::get_i64(int64_t i) const {
  switch (dtype_) {
    case DType::i8: return data<int8_t>()[i];
    case DType::i32: return data<int32_t>()[i];
    case DType::i64: return data<int64_t>()[i];
    case DType::u8: return data<uint8_t>()[i];
    case DType::boolean: return data<uint8_t>()[i] != 0;
    default: {
      return truncate_to_i64(get_f64(i));
    }
  }
}

void Tensor::set_i64(int64_t i, int64_t v) {
  switch (dtype_) {
    case DType::i8: data<int8_t>()[i] = static_cast<int8_t>(v); return;
    case DType::i32: data<int32_t>()[i] = static_cast<int32_t>(v); return;
    case DType::i64: data<int64_t>()[i] = v; return;
    case DType::u8: data<uint8_t>()[i] = static_cast<uint8_t>(v); return;
    case DType::boolean: data<uint8_t>()[i] = v != 0; return;
    default: set_f64(i, static_cast<double>(v)); return;
  }
}

std::vector<int64_t> Tensor::to_i64_vector() const {
  std::vector<int64_t> out(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) out[i] = get_i64(i);
  return out;
}

Tensor Tensor::clone() const {
  if (!defined()) return {};
  Tensor t(dtype_, shape_);
  std::memcpy(t.raw(), raw(), nbytes());
  return t;
}

Tensor Tensor::reshaped(std::vector<int64_t> shape) const {
  if (product(shape) != numel_) {
    fail_internal("Tensor::reshaped: {} to {} changes the element count", summary(), dims_to_string(shape));
  }
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::cast(DType to) const {
  Tensor out(to, shape_);
  cast_into(out, 0, numel_);
  return out;
}

void Tensor::cast_into(Tensor& out, int64_t begin, int64_t end) const {
  // Integers go through int64 (exact); anything with a float side goes through double.
  const bool int_to_int = !is_float(dtype_) && !is_float(out.dtype());
  for (int64_t i = begin; i < end; ++i) {
    if (int_to_int) {
      out.set_i64(i, get_i64(i));
    } else {
      out.set_f64(i, get_f64(i));
    }
  }
}

bool Tensor::same_bytes(const Tensor& other) const {
  return dtype_ == other.dtype_ && shape_ == other.shape_ && std::memcmp(raw(), other.raw(), nbytes()) == 0;
}

std::string Tensor::summary() const { return std::string(dtype_name(dtype_)) + dims_to_string(shape_); }

}  // namespace tilefuse
