#include "runtime/row_chain.h"

#include <algorithm>

#include "runtime/bf16_pairs.h"
#include "runtime/scratch_buffer.h"
#include "runtime/sgemm_microkernel.h"

namespace tilefuse::runtime {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The B operand sgemm_rows reads for `p`: its own where it was packed ahead, else packed into
// `buffer` (a worker's, kept across runs) and viewed through `view`.
const PackedOperand* packed_b(const GemmProblem& p, ScratchBuffer& buffer, PackedOperand& view) {
  if (p.b.packed != nullptr) return p.b.packed;
  const int64_t width = ceil_div(p.n, kNR) * kNR;
  if (p.bf16) {
    float* dst = buffer.floats(static_cast<size_t>(width * ((p.k + 1) / 2)));
    pack_b_bf16(p.b.view, p.k, p.n, dst);
    view = PackedOperand::view(dst, kNR, p.k, true);
  } else {
    float* dst = buffer.floats(static_cast<size_t>(width * p.k));
    pack_b(p.b.view, 0, p.k, 0, p.n, dst);
    view = PackedOperand::view(dst, kNR, p.k);
  }
  return &view;
}

// Rows [row0, row0 + rows) of `p` as a problem of their own, its C at `c` (ldc as p's).
GemmProblem rows_of(const GemmProblem& p, int64_t row0, int64_t rows, float* c) {
  GemmProblem r = p;
  r.m = rows;
  r.a.view.data = p.a.view.at(row0, 0);
  r.c = c;
  if (p.row_bias != nullptr) r.row_bias = p.row_bias + row0;
  if (p.residual != nullptr) r.residual = p.residual + row0 * p.ldc;
  return r;
}

}  // namespace

bool row_chain_fits(std::span<const GemmProblem> first, std::span<const GemmProblem> second, int64_t kernel_rows) {
  if (first.empty() || first.size() != second.size()) return false;
  const int64_t m = first[0].m, length = first[0].n;
  if (m <= 0 || static_cast<int64_t>(first.size()) * m != kernel_rows) return false;
  const float* x = first[0].c;
  const float* y = second[0].a.view.data;
  for (size_t i = 0; i < first.size(); ++i) {
    const GemmProblem& p = first[i];
    const GemmProblem& q = second[i];
    const int64_t offset = static_cast<int64_t>(i) * m * length;
    if (p.m != m || p.n != length || p.ldc != length || p.c != x + offset || p.a.packed != nullptr) return false;
    if (q.m != m || q.k != length || q.a.packed != nullptr || q.a.view.data != y + offset ||
        q.a.view.row_stride != length || q.a.view.col_stride != 1) {
      return false;
    }
  }
  return true;
}

void run_row_chain(ThreadTeam& team, std::span<const GemmProblem> first, std::span<const GemmProblem> second,
                   const KernelRows& kernel, const GemmBlocking& first_blocking,
                   const GemmBlocking& second_blocking, int64_t band_bytes) {
  const int64_t m = first[0].m, length = first[0].n;
  // Whole micro-kernel row panels, at least one, at most the batch's rows.
  const int64_t fit = band_bytes / (2 * length * static_cast<int64_t>(sizeof(float))) / kMR * kMR;
  const int64_t band = std::clamp<int64_t>(fit, kMR, ceil_div(m, kMR) * kMR);
  const int64_t bands = ceil_div(m, band);  // per batch
  team.run(static_cast<int64_t>(first.size()) * bands, [&](int worker, int64_t begin, int64_t end) {
    thread_local ScratchBuffer first_b, second_b, x_band, y_band;  // kept across runs
    float* x = x_band.floats(static_cast<size_t>(band * length));
    float* y = y_band.floats(static_cast<size_t>(band * length));
    PackedOperand first_view, second_view;
    GemmProblem p, q;
    int64_t batch = -1;
    for (int64_t t = begin; t < end; ++t) {
      const int64_t i = t / bands, row0 = t % bands * band, rows = std::min(band, m - row0);
      if (i != batch) {
        batch = i;
        p = first[static_cast<size_t>(i)], q = second[static_cast<size_t>(i)];
        p.b.packed = packed_b(p, first_b, first_view);
        q.b.packed = packed_b(q, second_b, second_view);
      }
      sgemm_rows(rows_of(p, row0, rows, x), 0, rows, first_blocking);
      kernel(worker, i * m + row0, i * m + row0 + rows, x, y);
      GemmProblem q_rows = rows_of(q, row0, rows, q.c + row0 * q.ldc);
      q_rows.a.view.data = y;
      sgemm_rows(q_rows, 0, rows, second_blocking);
    }
  });
}

}  // namespace tilefuse::runtime
