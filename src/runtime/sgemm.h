// tilefuse's own f32 GEMM: C = alpha * A x B (+ C) (+ bias), Goto/BLIS style, on the runtime's
// thread team. Operands are strided views (a transpose is a swap of strides, never a copy) or,
// for constant weights, packed once into micro-panels (PackedOperand) so a run packs only the
// activations. A batch of problems (batched MatMul, a convolution's images and groups) is one
// call: its tiles are spread over the team together.
//
// Loop nest per tile of C (mc x nc): for each depth block of kc, pack (or look up) the A block,
// then for each part of nb columns pack (or look up) that part of B, and for each kNR-column
// micro-panel of it (kept in L1) run the micro-kernel down the kMR-row micro-panels of A
// (streamed from L2). Bias is added with the first depth block, alpha on every block. A tile
// whose A was packed ahead of time keeps all its rows (each row tile would pack B again) and
// walks the other way round: each kMR-row A micro-panel (in L1, the next one fetched meanwhile)
// along every micro-panel of the B part (in L2), so C is written a row panel at a time. A
// product with one row or column against a packed operand (n = 1 with a packed A, m = 1 with a
// packed B) is a matrix-vector product read straight from the panels.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "runtime/memory_planner.h"
#include "runtime/sgemm_microkernel.h"
#include "runtime/thread_team.h"

namespace tilefuse::runtime {

// The largest blocks of a tile: mc rows (a multiple of kMR), kc depth, nc columns (a multiple
// of kNR). Problems smaller than a block use their own size. A B operand packed during the run
// is packed nb columns at a time (0: the whole tile), each part used while it is still in L2.
struct GemmBlocking {
  int64_t mc = 0;
  int64_t kc = 0;
  int64_t nc = 0;
  int64_t nb = 0;
};

// Blocks from the cache sizes and vector_isa(): the B values of a micro-kernel pass fill half
// (AVX-512) or three quarters (AVX2) of L1, an mc x kc A block half of L2, a kc x nb packed part
// of B a quarter of L2.
GemmBlocking default_blocking(int64_t l1d_bytes, int64_t l2_bytes);

// An operand packed once, over its whole depth, into the micro-kernel's panels: kMR-row panels
// for an A operand, kNR-column panels for a B operand. Panel p at depth k starts at panel(p, k).
class PackedOperand {
 public:
  static PackedOperand pack_a(const MatrixView& a, int64_t rows, int64_t depth);
  static PackedOperand pack_b(const MatrixView& b, int64_t depth, int64_t cols);
  // B in bf16 pairs (bf16_pairs.h): a problem with such a B multiplies in bf16, its A rounded to
  // bf16 as it is packed, and accumulates in f32. Only where bf16_supported(). A problem's two
  // operands, where both are packed ahead, are both f32 or both bf16.
  static PackedOperand pack_b_bf16(const MatrixView& b, int64_t depth, int64_t cols);
  // A in bf16 pairs (a convolution's weight): its problems multiply in bf16 likewise, a B packed
  // during the run converted to pairs as it is packed.
  static PackedOperand pack_a_bf16(const MatrixView& a, int64_t rows, int64_t depth);
  // Panels packed elsewhere, in this layout, and owned by the caller for as long as the view is
  // used (a Winograd convolution's transformed input, written straight into B panels).
  static PackedOperand view(const float* panels, int64_t width, int64_t depth, bool bf16 = false);

  // k is even for bf16 pairs.
  const float* panel(int64_t p, int64_t k) const { return data() + (p * steps() + (bf16_ ? k / 2 : k)) * width_; }
  int64_t depth() const { return depth_; }
  bool bf16() const { return bf16_; }
  int64_t panel_stride() const { return steps() * width_; }  // floats (words) from one panel to the next
  size_t bytes() const { return bytes_; }  // of the packed panels, padding included
  const float* data() const { return external_ ? external_ : reinterpret_cast<const float*>(storage_.data()); }

 private:
  // Storage for `panels` panels of `width` over `depth`, packed by fill(destination), or taken
  // from the thread's PrepackedOperands.
  static PackedOperand packed(int64_t width, int64_t panels, int64_t depth, const std::function<void(float*)>& fill);
  Arena storage_;
  const float* external_ = nullptr;            // packed elsewhere (PrepackedOperands) ...
  std::shared_ptr<const void> external_owner_;  // ... and kept alive by this
  int64_t steps() const { return bf16_ ? (depth_ + 1) / 2 : depth_; }
  int64_t depth_ = 0;
  int64_t width_ = 0;
  bool bf16_ = false;
  size_t bytes_ = 0;
};

// Operands packed ahead of time and kept elsewhere: a model package maps the panels its compiler
// packed instead of packing them again at every load. While a scope lives on a thread, each
// operand that thread packs takes the next region instead (UserError if its size differs: the
// regions belong to another plan). The panel layout depends on the micro-kernel (vector_isa()),
// which whoever supplies the regions must have checked.
class PrepackedOperands {
 public:
  struct Region {
    const float* data = nullptr;  // 64-byte aligned
    size_t bytes = 0;
  };
  PrepackedOperands(std::vector<Region> regions, std::shared_ptr<const void> owner);
  ~PrepackedOperands();
  PrepackedOperands(const PrepackedOperands&) = delete;
  PrepackedOperands& operator=(const PrepackedOperands&) = delete;

  size_t left() const { return regions_.size() - next_; }  // regions no operand took

 private:
  friend class PackedOperand;
  std::vector<Region> regions_;
  size_t next_ = 0;
  std::shared_ptr<const void> owner_;
  PrepackedOperands* previous_;
};

// Packs depth [k0, k0 + kc) x columns [col0, col0 + cols) of a B operand into `dst` in
// pack_b's layout: for an operand computed while it is packed, such as a convolution's unfolded
// input (implicit GEMM: the unfolded matrix never exists in memory).
using PackB = std::function<void(int64_t k0, int64_t kc, int64_t col0, int64_t cols, float* dst)>;

// The bytes of all of them.
size_t total_bytes(const std::vector<PackedOperand>& packed);
// Pointers to each, in order.
std::vector<const PackedOperand*> operands_of(const std::vector<PackedOperand>& packed);

// An operand: its strided view, or its packed form when it was packed ahead of the run, or (B
// only) a function that packs it.
struct GemmOperand {
  MatrixView view;
  const PackedOperand* packed = nullptr;
  const PackB* pack = nullptr;
};

// One C[m, n] = alpha * A[m, k] x B[k, n] (+ C when accumulate) (+ row_bias[i]) (+ col_bias[j]).
struct GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  GemmOperand a, b;
  float* c = nullptr;
  int64_t ldc = 0;
  bool accumulate = false;
  float alpha = 1.0f;
  const float* row_bias = nullptr;  // m values, or null
  const float* col_bias = nullptr;  // n values, or null
  // After the whole depth: C = activation(C + residual); the residual (m x n, row stride ldc) may
  // be null, the activation is null for none.
  const float* residual = nullptr;
  const FusedActivation* activation = nullptr;
  // Multiply in bf16 (bf16_pairs.h), operands packed during the run rounded as they are packed;
  // a problem with an operand packed ahead in bf16 pairs does so whatever this says.
  bool bf16 = false;
};

// The micro-kernel's work for rows x cols of C, in full kMR x kNR tiles: a tail of 4 or 8 rows
// costs a third or two thirds of a tile's rows, one of 16 columns or fewer half its columns
// (sgemm_avx512.cpp's tile shapes).
double micro_tiles(int64_t rows, int64_t cols);

// Solves every problem on the team; requires microkernel_supported().
void sgemm(ThreadTeam& team, std::span<const GemmProblem> problems, const GemmBlocking& blocking);

// Rows [row0, row0 + rows) of one problem (row0 a multiple of kMR when A is packed), every
// column, on the calling thread alone: for a caller that has already spread its work over the
// team (one worker's share of a Winograd convolution).
void sgemm_rows(const GemmProblem& problem, int64_t row0, int64_t rows, const GemmBlocking& blocking);

}  // namespace tilefuse::runtime
