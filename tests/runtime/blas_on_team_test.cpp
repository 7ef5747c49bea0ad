// blas_sgemm_on_team against one whole cblas_sgemm call: C sliced by columns (wide C) and by
// rows (tall C), every transpose of A and B, alpha and beta, several calls in one run, on teams
// of 1 to 3 workers.
#include "runtime/blas_on_team.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "reference/openblas.h"

namespace tilefuse::runtime {
namespace {

std::vector<float> filled(int64_t n, int salt) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(((i * 17 + salt * 5) % 29) / 7.0 - 2.0);
  return v;
}

struct Operands {
  std::vector<float> a, b, c;
  BlasGemm gemm;
  Operands(int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b, int salt)
      : a(filled(m * k, salt)), b(filled(k * n, salt + 1)), c(filled(m * n, salt + 2)) {
    gemm.trans_a = trans_a ? CblasTrans : CblasNoTrans, gemm.trans_b = trans_b ? CblasTrans : CblasNoTrans;
    gemm.m = m, gemm.n = n, gemm.k = k, gemm.alpha = 0.5f, gemm.beta = 1.0f;
    gemm.a = a.data(), gemm.lda = trans_a ? m : k;
    gemm.b = b.data(), gemm.ldb = trans_b ? k : n;
    gemm.c = c.data(), gemm.ldc = n;
  }
};

std::vector<float> whole_call(const BlasGemm& g, std::vector<float> c) {
  reference::openblas::use_one_thread();
  reference::openblas::sgemm(g.trans_a, g.trans_b, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, c.data(), g.ldc);
  return c;
}

TEST(BlasOnTeam, SlicesMatchOneWholeCall) {
  const int64_t shapes[][3] = {{20, 70, 9}, {70, 20, 9}, {5, 3, 4}, {33, 33, 40}};
  for (int workers : {1, 2, 3}) {
    ThreadTeam team(workers);
    for (const auto& mnk : shapes) {
      for (bool trans_a : {false, true}) {
        for (bool trans_b : {false, true}) {
          Operands first(mnk[0], mnk[1], mnk[2], trans_a, trans_b, 1), second(mnk[1], mnk[0], mnk[2], trans_b, trans_a, 2);
          const std::vector<float> want_first = whole_call(first.gemm, first.c);
          const std::vector<float> want_second = whole_call(second.gemm, second.c);
          blas_sgemm_on_team(team, {first.gemm, second.gemm});
          const std::string what = std::to_string(mnk[0]) + "x" + std::to_string(mnk[1]) + "x" + std::to_string(mnk[2]) +
                                   (trans_a ? " A^T" : "") + (trans_b ? " B^T" : "") + " on " +
                                   std::to_string(workers) + " workers";
          for (size_t i = 0; i < want_first.size(); ++i) {
            ASSERT_NEAR(first.c[i], want_first[i], 1e-4) << what << ", first call, element " << i;
          }
          for (size_t i = 0; i < want_second.size(); ++i) {
            ASSERT_NEAR(second.c[i], want_second[i], 1e-4) << what << ", second call, element " << i;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace tilefuse::runtime
