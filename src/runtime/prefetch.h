// Software prefetches the compiler cannot delete. GCC 12 takes __builtin_prefetch (and
// _mm_prefetch, which is the same builtin) for a statement without effects: a function or a loop
// that does nothing but prefetch is removed at -O1 and above, silently. That had emptied the
// GatherElements call's fetch of the next rows (torch.gather over f32[24, 512, 512]: 6.4 ms at 1
// thread, 2.2-2.5 with the fetch) and the AVX2 GEMM's fetch of the next C tile. An asm statement
// with volatile is never removed; tests/runtime/prefetch_test.cpp compiles prefetch-only
// functions and checks the instructions are there.
#pragma once

#include <cstddef>

namespace tilefuse::runtime {

// The line holding `p` into every cache level (prefetcht0).
inline void prefetch_line(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 0, 3);
#endif
}

// Every line of [p, p + bytes) into every cache level.
inline void prefetch_bytes(const void* p, size_t bytes) {
  const auto* first = static_cast<const char*>(p);
  for (size_t offset = 0; offset < bytes; offset += 64) prefetch_line(first + offset);
}

}  // namespace tilefuse::runtime
