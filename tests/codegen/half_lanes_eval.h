// f16 and bf16 converted the way generated kernels convert them (tilefuse_half.h through
// tilefuse_kernel.h's load, store, store_output and round_to), whole vectors first, then a
// scalar tail. half_lanes_test.cpp uses it directly (the test binary's own ISA) and compiles it
// into probe libraries with the kernels' flags at several targets.
#pragma once

#include <cstdint>

#include "codegen/support/tilefuse_kernel.h"

namespace tf_test {

enum HalfType : int { kF16, kBf16 };
// What is done to the n elements: widen 16-bit values to f32; narrow f32 to 16 bits by vectors
// (tf::store), or by packs as a kernel stores its outputs (tf::store_output), with ordinary or
// non-temporal (where aligned) stores; or round f32 to 16-bit precision in f32.
enum HalfOp : int { kWiden, kNarrow, kNarrowOutput, kNarrowStreamed, kRoundTrip };

template <typename T> void eval_half_as(int op, const void* in, void* out, int64_t n) {
  const T* halves = static_cast<const T*>(in);
  const float* floats = static_cast<const float*>(in);
  int64_t i = 0;
  // Packs first where a pack has a path of its own (the outputs of a kernel's main loop).
  constexpr int64_t kPackLanes = tf::kPackVectors * tf::kLanes;
  for (; op == kNarrowOutput && i + kPackLanes <= n; i += kPackLanes) {
    tf::store_output<false>(static_cast<T*>(out) + i, tf::load<tf::VP>(floats + i));
  }
  for (; op == kNarrowStreamed && i + kPackLanes <= n; i += kPackLanes) {
    tf::store_output<true>(static_cast<T*>(out) + i, tf::load<tf::VP>(floats + i));
  }
  for (; i + tf::kLanes <= n; i += tf::kLanes) {
    switch (op) {
      case kWiden: tf::store(static_cast<float*>(out) + i, tf::load<tf::VF>(halves + i)); break;
      case kNarrow: tf::store(static_cast<T*>(out) + i, tf::load<tf::VF>(floats + i)); break;
      case kNarrowOutput: tf::store_output<false>(static_cast<T*>(out) + i, tf::load<tf::VF>(floats + i)); break;
      case kNarrowStreamed: tf::store_output<true>(static_cast<T*>(out) + i, tf::load<tf::VF>(floats + i)); break;
      default: tf::store(static_cast<float*>(out) + i, tf::round_to<T>(tf::load<tf::VF>(floats + i)));
    }
  }
  for (; i < n; ++i) {
    switch (op) {
      case kWiden: static_cast<float*>(out)[i] = tf::to_f32(halves[i]); break;
      case kNarrow:
      case kNarrowOutput:
      case kNarrowStreamed: tf::from_f32(floats[i], static_cast<T*>(out) + i); break;
      default: static_cast<float*>(out)[i] = tf::round_to<T>(floats[i]);
    }
  }
  if (op == kNarrowStreamed) tf::stream_fence();
}

inline void eval_half(int type, int op, const void* in, void* out, int64_t n) {
  if (type == kF16) eval_half_as<tf::f16>(op, in, out, n);
  else eval_half_as<tf::bf16>(op, in, out, n);
}

}  // namespace tf_test
