// cblas_sgemm calls spread over the runtime's thread team, for CPUs where tilefuse's own GEMM
// does not run (neither AVX-512 nor AVX2). OpenBLAS runs single-threaded inside each worker on a slice of C, so
// its own thread pool never starts: that pool keeps spinning long after each call and took a core
// from the team's next kernel, and the team's spinning workers took it back from OpenBLAS's next
// call (MobileNetV3 ran no faster on 2 threads than on 1). The team is then the one owner of the
// cores, and the device limit is its size.
#pragma once

#include <cblas.h>  // the CBLAS_TRANSPOSE values; the library itself is reference/openblas.h

#include <cstdint>
#include <vector>

#include "runtime/thread_team.h"

namespace tilefuse::runtime {

// One row-major cblas_sgemm call: C = alpha * op(A) op(B) + beta * C.
struct BlasGemm {
  CBLAS_TRANSPOSE trans_a = CblasNoTrans, trans_b = CblasNoTrans;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f;
  const float* a = nullptr;
  int64_t lda = 0;
  const float* b = nullptr;
  int64_t ldb = 0;
  float beta = 0.0f;
  float* c = nullptr;
  int64_t ldc = 0;
};

// Runs every call, each split into slices of C's columns (or rows, where C has few columns) so
// that the team's workers share the work; returns when all are done.
void blas_sgemm_on_team(ThreadTeam& team, const std::vector<BlasGemm>& calls);

}  // namespace tilefuse::runtime
