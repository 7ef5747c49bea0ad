// Lane masks and masked-load addresses for the runtime's AVX-512 routines (the GEMM micro-kernel
// and its packing, the convolution's unfolding, the depthwise convolution), which are compiled
// for AVX-512 whatever the build's target and run only where the CPU has it.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace tilefuse::runtime {

// The lanes [0, n) of a 16-lane vector, n clamped to [0, 16].
__attribute__((target("avx512f"))) inline __mmask16 lanes(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xffff) : n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1);
}

// The address of x[offset], computed as an integer: a masked load may start before a row (in
// the padding) as long as the lanes it reads lie inside it, but pointer arithmetic that leaves
// the tensor is undefined in C++.
inline const float* address(const float* x, int64_t offset) {
  return reinterpret_cast<const float*>(reinterpret_cast<uintptr_t>(x) + offset * static_cast<int64_t>(sizeof(float)));
}

}  // namespace tilefuse::runtime
