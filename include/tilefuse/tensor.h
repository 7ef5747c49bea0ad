// A dense, row-major, 64-byte aligned tensor with a concrete shape: what callers give tilefuse
// and get back, and all the data tilefuse itself works on. Copies share storage (like a
// shared_ptr); clone() makes an independent copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "tilefuse/dtype.h"

namespace tilefuse {

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled tensor of the given type and shape.
  Tensor(DType dtype, std::vector<int64_t> shape);

  template <typename T>
  static Tensor from_vector(DType dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
    Tensor t(dtype, std::move(shape));
    check_value_count(values.size(), t.numel());
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64_or_int(i, values[i]);
    return t;
  }
  // A tensor over memory it does not own (the executor's arena, a caller's buffer): the memory
  // must outlive every copy of the view.
  static Tensor view(DType dtype, std::vector<int64_t> shape, void* data);
  // A tensor over memory that `owner` keeps alive (e.g. a mapped file's bytes, which a model
  // package's weights are): copies of the tensor share that ownership. `data` must be 64-byte
  // aligned.
  static Tensor shared(DType dtype, std::vector<int64_t> shape, std::shared_ptr<void> owner, void* data);
  static Tensor scalar_i64(int64_t v);
  static Tensor scalar_f32(float v);

  bool defined() const { return storage_ != nullptr; }
  // Whether this tensor owns its memory and no copy or reshape of it is alive: writing into it
  // then changes nothing anyone else can see. False for views (they own nothing).
  bool sole_owner() const { return storage_.use_count() == 1; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }

  void* raw() { return storage_.get(); }
  const void* raw() const { return storage_.get(); }
  template <typename T>
  T* data() {
    return static_cast<T*>(raw());
  }
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(raw());
  }

  // Element access converting through double / int64 (f16/bf16 decoded). For generic code paths
  // (constant folding, tests), not for hot loops.
  double get_f64(int64_t index) const;
  void set_f64(int64_t index, double value);
  int64_t get_i64(int64_t index) const;
  void set_i64(int64_t index, int64_t value);

  // Contents of an integer tensor as int64 (shape tensors, axes, indices).
  std::vector<int64_t> to_i64_vector() const;

  Tensor clone() const;
  // Same storage viewed with another shape of equal element count.
  Tensor reshaped(std::vector<int64_t> shape) const;
  // Element-wise conversion (ONNX Cast semantics: float->int truncates, ->bool is != 0).
  Tensor cast(DType to) const;
  // The same conversion of elements [begin, end) into `out` (same element count, any dtype).
  void cast_into(Tensor& out, int64_t begin, int64_t end) const;
  bool same_bytes(const Tensor& other) const;

  std::string summary() const;  // "f32[2, 3]"

 private:
  static void check_value_count(size_t values, int64_t numel);  // throws InternalError unless equal

  template <typename T>
  void set_f64_or_int(int64_t i, T v) {
    if constexpr (std::is_floating_point_v<T>) {
      set_f64(i, static_cast<double>(v));
    } else {
      set_i64(i, static_cast<int64_t>(v));
    }
  }

  DType dtype_ = DType::f32;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  std::shared_ptr<uint8_t> storage_;
};

}  // namespace tilefuse
