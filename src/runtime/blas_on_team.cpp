#include "runtime/blas_on_team.h"

#include <algorithm>

#include "reference/openblas.h"

namespace tilefuse::runtime {

namespace {

constexpr int64_t kSliceAlign = 16;  // columns or rows per slice come in multiples of this

struct Slicing {
  bool by_columns;
  int64_t slices, step;
};

// As many slices as workers where the call is big enough, along the longer of C's dims.
Slicing slicing(const BlasGemm& g, int workers) {
  const bool by_columns = g.n >= g.m;
  const int64_t extent = by_columns ? g.n : g.m;
  const int64_t slices = std::clamp<int64_t>(extent / kSliceAlign, 1, workers);
  const int64_t step = (extent + slices - 1) / slices;
  return {by_columns, slices, (step + kSliceAlign - 1) / kSliceAlign * kSliceAlign};
}

void run_slice(const BlasGemm& g, const Slicing& s, int64_t slice) {
  const int64_t first = slice * s.step, count = std::min((s.by_columns ? g.n : g.m) - first, s.step);
  if (count <= 0) return;
  const float* a = g.a;
  const float* b = g.b;
  float* c = g.c;
  int64_t m = g.m, n = g.n;
  if (s.by_columns) {  // columns [first, first + count) of op(B) and C
    b += g.trans_b == CblasNoTrans ? first : first * g.ldb;
    c += first, n = count;
  } else {  // rows [first, first + count) of op(A) and C
    a += g.trans_a == CblasNoTrans ? first * g.lda : first;
    c += first * g.ldc, m = count;
  }
  reference::openblas::sgemm(g.trans_a, g.trans_b, m, n, g.k, g.alpha, a, g.lda, b, g.ldb, g.beta, c, g.ldc);
}

}  // namespace

void blas_sgemm_on_team(ThreadTeam& team, const std::vector<BlasGemm>& calls) {
  reference::openblas::use_one_thread();
  std::vector<Slicing> slicings;
  std::vector<int64_t> first_unit = {0};  // call i's slices are units [first_unit[i], first_unit[i + 1])
  for (const BlasGemm& g : calls) {
    slicings.push_back(slicing(g, team.size()));
    first_unit.push_back(first_unit.back() + slicings.back().slices);
  }
  team.run(first_unit.back(), [&](int, int64_t first, int64_t end) {
    size_t call = 0;
    for (int64_t unit = first; unit < end; ++unit) {
      while (unit >= first_unit[call + 1]) ++call;
      run_slice(calls[call], slicings[call], unit - first_unit[call]);
    }
  });
}

}  // namespace tilefuse::runtime
