// Gathered and strided loads the way generated kernels read them (tilefuse_kernel.h's
// load_gathered and load_strided), by packs, then vectors, then lanes. gather_lanes_test.cpp
// uses it directly (the test binary's own ISA) and compiles it into probe libraries with the
// kernels' flags at several targets.
#pragma once

#include <cstdint>

#include "codegen/support/tilefuse_kernel.h"

namespace tf_test {

// out[i] = data[i * step + index[i] * stride] for i < n (index_bytes 4 or 8: int32 or int64
// indices, wrapped once if negative); an index out of range is recorded in error[0..1].
inline void eval_gather(const float* data, int64_t step, const void* index, int index_bytes, int64_t stride,
                        int64_t extent, float* out, int64_t n, int64_t* error) {
  auto run = [&](const auto* idx) {
    int64_t i = 0;
    constexpr int64_t kPackLanes = tf::kPackVectors * tf::kLanes;
    for (; i + kPackLanes <= n; i += kPackLanes) {
      tf::store(out + i, tf::load_gathered<tf::VP>(data + i * step, step, idx + i, 1, stride, extent, error, 1));
    }
    for (; i + tf::kLanes <= n; i += tf::kLanes) {
      tf::store(out + i, tf::load_gathered<tf::VF>(data + i * step, step, idx + i, 1, stride, extent, error, 1));
    }
    for (; i < n; ++i) out[i] = tf::load_gathered<float>(data + i * step, step, idx + i, 1, stride, extent, error, 1);
  };
  if (index_bytes == 4) {
    run(static_cast<const int32_t*>(index));
  } else {
    run(static_cast<const int64_t*>(index));
  }
}

// out[i] = p[i * stride] for i < n.
inline void eval_strided(const float* p, int64_t stride, float* out, int64_t n) {
  int64_t i = 0;
  constexpr int64_t kPackLanes = tf::kPackVectors * tf::kLanes;
  for (; i + kPackLanes <= n; i += kPackLanes) tf::store(out + i, tf::load_strided<tf::VP>(p + i * stride, stride));
  for (; i + tf::kLanes <= n; i += tf::kLanes) tf::store(out + i, tf::load_strided<tf::VF>(p + i * stride, stride));
  for (; i < n; ++i) out[i] = tf::load_strided<float>(p + i * stride, stride);
}

}  // namespace tf_test
