// TF_VECTOR_CLONES: a loop function compiled three times, for AVX-512 (x86-64-v4), AVX2
// (x86-64-v3) and baseline x86-64, the CPU's best chosen at load time. The runtime is built for
// baseline x86-64, and -O2's vectoriser refuses loops that need a scalar tail or a run-time check
// that the arrays do not overlap; the clones use the cost model that accepts both. Where the
// compiler is not GCC (clang's target_clones differ), the function is compiled once, as written.
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#define TF_VECTOR_CLONES                                                       \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), \
                 optimize("tree-vectorize", "vect-cost-model=dynamic")))
#else
#define TF_VECTOR_CLONES
#endif
