// tilefuse's own sgemm against a double-precision triple loop: shapes with tails in every
// dimension, depths over several blocks, transposed and strided operands, operands packed ahead
// of time, accumulate / alpha / row and column bias, the residual and activation epilogue,
// batches, and 1-3 workers.
#include "runtime/sgemm.h"

#include "runtime/bf16_pairs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace tilefuse::runtime {
namespace {

struct Shape {
  int64_t m, n, k;
};

std::vector<float> values(int64_t count, int salt) {
  std::vector<float> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) v[i] = static_cast<float>(((i * 37 + salt * 11) % 61) / 17.0 - 1.7);
  return v;
}

// Storage for an operand of rows x cols, row-major or transposed (column-major) in memory, one
// value in every `spread` (a strided view, as of a slice).
struct Operand {
  std::vector<float> data;
  MatrixView view;
  Operand(int64_t rows, int64_t cols, bool transposed, int salt, int64_t spread = 1)
      : data(values(rows * cols * spread, salt)) {
    view = transposed ? MatrixView{data.data(), spread, rows * spread} : MatrixView{data.data(), cols * spread, spread};
  }
  double at(int64_t i, int64_t j) const { return *view.at(i, j); }
};

struct Options {
  bool ta = false, tb = false, pack_a = false, pack_b = false, accumulate = false, row_bias = false, col_bias = false;
  float alpha = 1.0f;
  int batch = 1;
  bool residual = false;
  const FusedActivation* activation = nullptr;
  int64_t spread = 1;  // of the operands' values in memory
  bool bf16 = false;   // B packed in bf16 pairs: the product of bf16-rounded operands, in f32
};

// What the product sees of a value: itself, or its bf16 rounding.
double seen(double x, bool bf16) { return bf16 ? bf16_value(bf16_bits(static_cast<float>(x))) : x; }

void check(const Shape& s, const Options& o, int workers, const GemmBlocking& blocking) {
  SCOPED_TRACE(::testing::Message() << s.m << "x" << s.n << "x" << s.k << " ta=" << o.ta << " tb=" << o.tb
                                    << " pack_a=" << o.pack_a << " pack_b=" << o.pack_b << " acc=" << o.accumulate
                                    << " batch=" << o.batch << " spread=" << o.spread << " bf16=" << o.bf16
                                    << " workers=" << workers);
  ThreadTeam team(workers);
  std::vector<Operand> as, bs;
  std::vector<PackedOperand> packed_a, packed_b;
  packed_a.reserve(o.batch), packed_b.reserve(o.batch);
  const int64_t ldc = s.n + 3;  // C rows padded: the kernel must use ldc, not n
  std::vector<float> c = values(o.batch * s.m * ldc, 5);
  const std::vector<float> c0 = c;
  const std::vector<float> row_bias = values(s.m, 6), col_bias = values(s.n, 7);
  const std::vector<float> residual = values(o.batch * s.m * ldc, 8);
  std::vector<GemmProblem> problems;
  for (int b = 0; b < o.batch; ++b) {
    as.emplace_back(s.m, s.k, o.ta, 1 + b, o.spread);
    bs.emplace_back(s.k, s.n, o.tb, 3 + b, o.spread);
  }
  for (int b = 0; b < o.batch; ++b) {
    GemmProblem p;
    p.m = s.m, p.n = s.n, p.k = s.k;
    p.a.view = as[b].view, p.b.view = bs[b].view;
    if (o.pack_a) p.a.packed = &packed_a.emplace_back(PackedOperand::pack_a(as[b].view, s.m, s.k));
    if (o.pack_b) p.b.packed = &packed_b.emplace_back(PackedOperand::pack_b(bs[b].view, s.k, s.n));
    if (o.bf16) p.b.packed = &packed_b.emplace_back(PackedOperand::pack_b_bf16(bs[b].view, s.k, s.n));
    p.c = c.data() + b * s.m * ldc, p.ldc = ldc;
    p.accumulate = o.accumulate, p.alpha = o.alpha;
    if (o.row_bias) p.row_bias = row_bias.data();
    if (o.col_bias) p.col_bias = col_bias.data();
    if (o.residual) p.residual = residual.data() + b * s.m * ldc;
    p.activation = o.activation;
    problems.push_back(p);
  }
  sgemm(team, problems, blocking);
  for (int b = 0; b < o.batch; ++b) {
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < ldc; ++j) {
        const size_t at = static_cast<size_t>(b * s.m * ldc + i * ldc + j);
        if (j >= s.n) {
          ASSERT_EQ(c[at], c0[at]) << "padding column " << j << " of row " << i << " was written";
          continue;
        }
        double want = 0;
        for (int64_t q = 0; q < s.k; ++q) want += seen(as[b].at(i, q), o.bf16) * seen(bs[b].at(q, j), o.bf16);
        want *= o.alpha;
        if (o.accumulate) want += c0[at];
        if (o.row_bias) want += row_bias[i];
        if (o.col_bias) want += col_bias[j];
        if (o.residual) want += residual[at];
        if (o.activation != nullptr) want = (*o.activation)(static_cast<float>(want));
        ASSERT_NEAR(c[at], want, 1e-4 * (1 + std::abs(want)) * std::sqrt(static_cast<double>(s.k + 1)))
            << "at batch " << b << " (" << i << ", " << j << ")";
      }
    }
  }
}

class Sgemm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!microkernel_supported()) GTEST_SKIP() << "neither AVX-512 nor AVX2 in use (this CPU, or TILEFUSE_MAX_CPU_ISA)";
  }
  // Small blocks, so that small shapes already cross every block boundary.
  GemmBlocking small{.mc = 24, .kc = 16, .nc = 64, .nb = 32};
  GemmBlocking defaults = default_blocking(48 << 10, 2 << 20);
};

TEST_F(Sgemm, TailsInEveryDimension) {
  for (Shape s : {Shape{1, 1, 1}, Shape{12, 32, 16}, Shape{13, 33, 17}, Shape{11, 31, 15}, Shape{50, 70, 45},
                  Shape{25, 97, 3}, Shape{7, 200, 64}}) {
    check(s, {}, 1, small);
    check(s, {}, 2, small);
    check(s, {}, 3, defaults);
  }
}

TEST_F(Sgemm, TransposedAndPackedOperands) {
  const Shape s{37, 75, 41};
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (bool pa : {false, true}) {
        for (bool pb : {false, true}) {
          check(s, {.ta = ta, .tb = tb, .pack_a = pa, .pack_b = pb}, 2, small);
        }
      }
      check(s, {.ta = ta, .tb = tb, .spread = 2}, 2, small);  // strided in both dimensions
    }
  }
}

// Tiles of 1-4, 5-8 and 9-12 rows run micro-kernels of their own; operands stored across their
// depth are packed 16 depth steps at a time through an in-register transpose, with depth tails
// (41 = 16 + 16 + 9) and panels of fewer than 12 rows or 16 columns.
TEST_F(Sgemm, RowTailsAndTransposingPacks) {
  for (Shape s : {Shape{4, 45, 41}, Shape{5, 13, 70}, Shape{8, 33, 16}, Shape{9, 17, 41}, Shape{64, 50, 33}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        check(s, {.ta = ta, .tb = tb}, 2, defaults);
        check(s, {.ta = ta, .tb = tb, .pack_a = true, .pack_b = true, .row_bias = true}, 1, defaults);
      }
    }
  }
}

TEST_F(Sgemm, EpilogueAccumulatesScalesAndAddsBias) {
  const Shape s{29, 45, 40};  // three depth blocks of 16: bias must be added once
  check(s, {.accumulate = true}, 2, small);
  check(s, {.row_bias = true}, 2, small);
  check(s, {.col_bias = true, .alpha = -0.5f}, 2, small);
  check(s, {.pack_b = true, .accumulate = true, .row_bias = true, .col_bias = true, .alpha = 2.0f}, 1, small);
}

// The residual and the activation come once, after the last depth block (three blocks of 16
// here): applied to a partial sum, a clamp or a GELU would change values the later blocks add to.
TEST_F(Sgemm, EpilogueAddsResidualThenActivatesAfterTheWholeDepth) {
  const FusedActivation relu6{.lo = 0.0f, .hi = 6.0f};
  const FusedActivation hard_swish{.scale = 1.0f / 6.0f, .shift = 0.5f, .lo = 0.0f, .hi = 1.0f, .times_input = true};
  const FusedActivation gelu{.form = FusedActivation::Form::gelu};
  for (const FusedActivation* act : {&relu6, &hard_swish, &gelu}) {
    check({29, 45, 40}, {.row_bias = true, .residual = true, .activation = act}, 2, small);
    check({13, 70, 33}, {.tb = true, .pack_a = true, .residual = true, .activation = act}, 1, defaults);
    check({9, 10, 0}, {.row_bias = true, .residual = true, .activation = act}, 1, small);
  }
  check({30, 50, 20}, {.pack_b = true, .col_bias = true, .batch = 3, .residual = true}, 2, small);
}

// Without alpha, column bias, accumulation or a curve, a sub-tile is stored straight from its sums
// (the AVX2 micro-kernel's plain store): with the row bias, the residual and a clamp (HardSwish
// multiplies by the input too) on whole and cut sub-tiles, over one depth block and over three
// (where only the first is plain and the last activates).
TEST_F(Sgemm, PlainStoreAddsRowBiasAndClamps) {
  const FusedActivation relu{.lo = 0.0f};
  const FusedActivation hard_swish{.scale = 1.0f / 6.0f, .shift = 0.5f, .lo = 0.0f, .hi = 1.0f, .times_input = true};
  for (const FusedActivation* act : {static_cast<const FusedActivation*>(nullptr), &relu, &hard_swish}) {
    for (Shape s : {Shape{64, 96, 16}, Shape{29, 45, 16}, Shape{29, 45, 40}}) {
      check(s, {.pack_a = true, .row_bias = true, .activation = act}, 2, small);
      check(s, {.pack_a = true, .activation = act}, 1, defaults);
      check(s, {.pack_a = true, .row_bias = true, .residual = true, .activation = act}, 2, defaults);
    }
  }
}

TEST_F(Sgemm, BatchesShareOneCall) {
  check({20, 40, 24}, {.tb = true, .batch = 5}, 2, small);
  check({3, 5, 7}, {.pack_a = true, .batch = 4}, 3, defaults);
}

TEST_F(Sgemm, EmptyDepthIsBiasOnly) {
  check({9, 10, 0}, {.row_bias = true, .col_bias = true}, 2, small);
  check({9, 10, 0}, {.accumulate = true}, 1, small);
}

// A packed A is never split into row tiles for lack of L2 (each would pack B again): its rows
// pass by mc at a time inside a tile (mc = 30 walks them 24 at a time, whole panels), each
// block of B packed once for all of them, with the epilogue on every block of rows.
TEST_F(Sgemm, PackedARowsPassByInBlocksOfMc) {
  const GemmBlocking odd{.mc = 30, .kc = 16, .nc = 64, .nb = 32};
  const FusedActivation relu6{.lo = 0.0f, .hi = 6.0f};
  for (int workers : {1, 2, 3}) {
    check({61, 45, 40}, {.pack_a = true, .row_bias = true, .residual = true, .activation = &relu6}, workers, odd);
    check({100, 7, 33}, {.tb = true, .pack_a = true, .accumulate = true}, workers, odd);
  }
}

// Few tiles per worker: the split that balances the workers best, which may cut columns at a
// multiple of 16 (not of 32) where no B was packed ahead, and rows at any multiple of 12.
TEST_F(Sgemm, BalancedSplitsOfSmallProducts) {
  for (Shape s : {Shape{112, 196, 40}, Shape{49, 160, 50}, Shape{20, 100, 30}, Shape{64, 49, 70}, Shape{30, 12, 9}}) {
    for (int workers : {2, 3}) {
      check(s, {}, workers, defaults);
      check(s, {.pack_a = true, .row_bias = true}, workers, defaults);
      check(s, {.pack_b = true, .col_bias = true}, workers, defaults);
      check(s, {.ta = true, .pack_b = true, .residual = true}, workers, defaults);
    }
  }
}

// One column of C from a packed A or one row from a packed B is a matrix-vector product read

// A C of 1 MiB or more from two operands packed during the run (attention's Q K^T) is walked a
// row panel at a time, each tile fetching the next one's C: row and column tails, every depth
// block and part of B, a transposed B (K^T), batches, the epilogue.
TEST_F(Sgemm, LargeProductsOfActivationsWalkRows) {
  const FusedActivation relu6{.lo = 0.0f, .hi = 6.0f};
  const Shape s{517, 509, 70};
  check(s, {}, 2, small);
  check(s, {.tb = true, .batch = 2}, 2, defaults);
  check(s, {.accumulate = true, .row_bias = true, .col_bias = true, .residual = true, .activation = &relu6}, 1, small);
  check(s, {.ta = true, .alpha = 0.5f}, 3, defaults);
}

// An A of 1 MiB or more times a B of at most two micro-panels (attention's P V, 64 columns) is
// read in place, rows lda apart: row tails (the rows past the last repeat it), lda not a multiple
// of 16, every depth block, batches, the epilogue, B packed ahead; a transposed or spread A is
// packed instead.
TEST_F(Sgemm, SkinnyProductsReadAInPlace) {
  const FusedActivation gelu{.form = FusedActivation::Form::gelu};
  for (Shape s : {Shape{517, 40, 515}, Shape{600, 64, 450}, Shape{270, 16, 1000}}) {
    check(s, {}, 1, small);
    check(s, {.batch = 3}, 2, defaults);
    check(s, {.accumulate = true, .row_bias = true, .residual = true, .activation = &gelu}, 2, small);
    check(s, {.pack_b = true, .col_bias = true, .alpha = 0.5f}, 1, small);
    check(s, {.ta = true}, 2, small);
    check(s, {.spread = 2}, 1, defaults);
  }
}

// Against a packed A, a B whose rows are contiguous (a 1x1 convolution's input planes) is read
// in place on AVX-512, not packed: column tails of 1-31 read through masks (never past a row),
// rows ldb apart with ldb not a multiple of 16 (unaligned), every depth block, the epilogue.
// Spread B (strided columns) is packed instead and must agree.
TEST_F(Sgemm, PackedATimesRowsOfBReadInPlace) {
  const FusedActivation gelu{.form = FusedActivation::Form::gelu};
  for (Shape s : {Shape{64, 196, 40}, Shape{13, 49, 17}, Shape{25, 1, 9}, Shape{12, 33, 64}, Shape{40, 95, 3}}) {
    check(s, {.pack_a = true}, 1, small);
    check(s, {.pack_a = true, .row_bias = true, .residual = true, .activation = &gelu}, 2, small);
    check(s, {.pack_a = true, .accumulate = true, .alpha = 0.5f}, 3, defaults);
    check(s, {.pack_a = true, .spread = 2}, 2, small);
  }
}
// straight from the panels: panel and depth tails (the depth is unrolled by 4), every
// epilogue, strided vectors (gathered), batches and a weight large enough to split.
TEST_F(Sgemm, MatrixVectorProductsAgainstPackedOperands) {
  const FusedActivation relu6{.lo = 0.0f, .hi = 6.0f};
  for (int64_t k : {1, 3, 70}) {
    for (int workers : {1, 3}) {
      check({37, 1, k}, {.pack_a = true, .row_bias = true, .residual = true, .activation = &relu6}, workers, defaults);
      check({1, 75, k}, {.pack_b = true, .accumulate = true, .col_bias = true, .alpha = 0.5f}, workers, defaults);
      check({1, 1, k}, {.pack_a = true, .col_bias = true}, workers, defaults);
    }
  }
  check({25, 1, 40}, {.ta = true, .pack_a = true, .batch = 3, .spread = 3}, 2, defaults);
  check({1, 40, 41}, {.tb = true, .pack_b = true, .batch = 2, .residual = true, .spread = 2}, 2, defaults);
  check({300, 1, 1000}, {.pack_a = true, .row_bias = true}, 2, defaults);
  check({1, 700, 500}, {.pack_b = true, .col_bias = true}, 2, defaults);
}

TEST_F(Sgemm, LargeDefaultBlocking) {
  check({300, 260, 700}, {.pack_b = true, .col_bias = true}, 2, defaults);
}

// bf16 pairs: rounding to nearest even, NaN kept.
TEST(Bf16Pairs, RoundToNearestEven) {
  EXPECT_EQ(bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(bf16_bits(1.0f + 0x1p-8f), 0x3f80);      // halfway: to the even 1.0
  EXPECT_EQ(bf16_bits(1.0f + 3 * 0x1p-8f), 0x3f82);  // halfway: to the even 1 + 2^-6
  EXPECT_EQ(bf16_bits(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  EXPECT_EQ(bf16_bits(-2.5f), 0xc020);
  EXPECT_TRUE(std::isnan(bf16_value(bf16_bits(std::nanf("")))));
}

// A B in bf16 pairs multiplies the bf16 roundings of both operands and sums in f32: odd depths
// (a half-empty last pair), depth blocks that do not start on a pair (rounded up), A row-major,
// transposed and strided (the element-by-element packing), tails, epilogues, batches, workers.
TEST_F(Sgemm, Bf16PairsMultiplyRoundedOperandsInF32) {
  if (!bf16_supported()) GTEST_SKIP() << "this CPU has no avx512_bf16 (or AVX-512 is not in use)";
  FusedActivation relu;
  relu.lo = 0.0f;
  for (int workers : {1, 2, 3}) {
    for (const Shape& s : {Shape{1, 1, 1}, Shape{13, 37, 37}, Shape{29, 70, 64}, Shape{50, 33, 101}}) {
      check(s, {.bf16 = true}, workers, small);
      check(s, {.bf16 = true}, workers, defaults);
      check(s, {.ta = true, .bf16 = true}, workers, small);
      check(s, {.spread = 2, .bf16 = true}, workers, small);
      check(s, {.accumulate = true, .col_bias = true, .alpha = 0.5f, .residual = true, .activation = &relu, .bf16 = true},
            workers, small);
    }
    check({40, 40, 45}, {.batch = 3, .bf16 = true}, workers, GemmBlocking{.mc = 24, .kc = 15, .nc = 64, .nb = 32});
  }
}

}  // namespace
}  // namespace tilefuse::runtime
