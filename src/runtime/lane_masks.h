// Lane masks for the runtime's AVX-512 routines (the GEMM micro-kernel and its packing, the
// convolution's unfolding), which are compiled for AVX-512 whatever the build's target and run
// only where the CPU has it.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace tilefuse::runtime {

// The lanes [0, n) of a 16-lane vector, n clamped to [0, 16].
__attribute__((target("avx512f"))) inline __mmask16 lanes(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xffff) : n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1);
}

}  // namespace tilefuse::runtime
