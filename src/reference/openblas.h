// OpenBLAS, loaded the first time something calls it rather than when the process starts.
//
// Linked, it was loaded by every process that loads tilefuse, and loading it starts its thread
// pool, whose threads spin for about the first 100 ms whatever openblas_set_num_threads says: a
// model run at 2 threads in that window found one of its cores taken (back-to-back runs of a
// small model took 0.04 ms in some processes and 0.09-0.16 in others). Only the reference
// interpreter and CPUs with neither AVX-512 nor AVX2 use it, so only they pay for it now.
#pragma once

#include <cblas.h>

#include <cstdint>

namespace tilefuse::reference::openblas {

// Row-major cblas_sgemm / cblas_dgemm: C = alpha * op(A) op(B) + beta * C. The first call loads
// the library; a UserError names it where it cannot be loaded.
void sgemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int64_t m, int64_t n, int64_t k, float alpha,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void dgemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int64_t m, int64_t n, int64_t k, double alpha,
           const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

// Keeps OpenBLAS's own threads out of the next calls from this process: for callers that run it
// inside the thread team's workers, which already own the cores.
void use_one_thread();

// Whether this process has loaded the library (tests: what runs on tilefuse's own GEMM must not).
bool loaded();

}  // namespace tilefuse::reference::openblas
