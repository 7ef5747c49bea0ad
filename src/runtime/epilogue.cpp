#include "runtime/epilogue.h"

#include "runtime/activation_vectors.h"
#include "runtime/cpu_isa.h"

namespace tilefuse::runtime {

namespace {

__attribute__((target("avx2,fma"))) int64_t avx2_epilogue(float* y, const float* residual, int64_t count,
                                                            const FusedActivation& a) {
  const Avx2Activation act(a);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    __m256 v = _mm256_loadu_ps(y + i);
    if (residual != nullptr) v = _mm256_add_ps(v, _mm256_loadu_ps(residual + i));
    _mm256_storeu_ps(y + i, act(v));
  }
  return i;
}

}  // namespace

void apply_epilogue(float* y, const float* residual, int64_t count, const FusedActivation& act) {
  const int64_t done = vector_isa() != VectorIsa::scalar ? avx2_epilogue(y, residual, count, act) : 0;
  for (int64_t i = done; i < count; ++i) y[i] = act(residual != nullptr ? y[i] + residual[i] : y[i]);
}

}  // namespace tilefuse::runtime
