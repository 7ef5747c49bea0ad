// pack_unfolded (the implicit GEMM's packing) against pack_b of the unfolded matrix that
// unfold writes whole: every depth block and column range, including blocks that start inside
// a channel's taps, panels that span several output rows, rows with padding at both ends, and
// strides 1, 2 and 3 (the three load paths).
#include "runtime/conv_unfold.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "runtime/sgemm_microkernel.h"

namespace tilefuse::runtime {
namespace {

struct Geometry {
  const char* name;
  ConvShape s;
};

ConvShape shape(int64_t c, int64_t h, int64_t w, int64_t k, int64_t stride, int64_t pad, int64_t dil) {
  ConvShape s{};
  s.batch = 1, s.channels = c, s.height = h, s.width = w, s.maps = 4, s.groups = 1, s.kh = k, s.kw = k;
  s.stride_h = s.stride_w = stride, s.dil_h = s.dil_w = dil, s.pad_top = s.pad_left = pad;
  s.out_h = (h + 2 * pad - dil * (k - 1) - 1) / stride + 1;
  s.out_w = (w + 2 * pad - dil * (k - 1) - 1) / stride + 1;
  return s;
}

float* aligned_64(std::vector<float>& v) {
  const auto misalignment = reinterpret_cast<uintptr_t>(v.data()) % 64 / sizeof(float);
  return v.data() + (misalignment == 0 ? 0 : 16 - misalignment);
}

class ConvUnfold : public ::testing::TestWithParam<Geometry> {
 protected:
  void SetUp() override {
    if (!microkernel_supported()) GTEST_SKIP() << "neither AVX-512 nor AVX2 in use (this CPU, or TILEFUSE_MAX_CPU_ISA)";
  }
};

TEST_P(ConvUnfold, PacksWhatUnfoldWrites) {
  const ConvShape& s = GetParam().s;
  std::vector<float> x(static_cast<size_t>(s.channels * s.height * s.width));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97) + 1.0f;  // no zeros: padding shows
  std::vector<float> cols(static_cast<size_t>(s.rows() * s.positions()));
  unfold(s, x.data(), cols.data());
  const MatrixView unfolded{cols.data(), s.positions(), 1};
  for (int64_t kc : {int64_t{5}, s.rows()}) {
    for (int64_t k0 = 0; k0 < s.rows(); k0 += kc) {
      const int64_t depth = std::min(kc, s.rows() - k0);
      for (int64_t col0 : {int64_t{0}, int64_t{7}}) {
        const int64_t n = s.positions() - col0;
        const size_t size = static_cast<size_t>((n + kNR - 1) / kNR * kNR * depth);
        std::vector<float> want(size + 16), got(size, -1.0f);
        float* want_at = aligned_64(want);  // pack_b stores whole aligned vectors
        pack_b(unfolded, k0, depth, col0, n, want_at);
        pack_unfolded(s, x.data(), k0, depth, col0, n, got.data());
        for (size_t i = 0; i < size; ++i) {
          ASSERT_EQ(got[i], want_at[i]) << GetParam().name << ": depth " << k0 << "+" << depth << ", column " << col0
                                        << ", packed index " << i;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Geometries, ConvUnfold,
                         ::testing::Values(Geometry{"Narrow3x3Padded", shape(3, 6, 5, 3, 1, 1, 1)},
                                           Geometry{"Wide3x3Padded", shape(2, 4, 70, 3, 1, 1, 1)},
                                           Geometry{"Stem7x7Stride2", shape(3, 15, 41, 7, 2, 3, 1)},
                                           Geometry{"Stride3Dilated", shape(2, 9, 50, 3, 3, 2, 2)},
                                           Geometry{"OneColumnOutput", shape(2, 5, 1, 1, 1, 0, 1)},
                                           Geometry{"Unpadded5x5", shape(2, 9, 40, 5, 1, 0, 1)}),
                         [](const ::testing::TestParamInfo<Geometry>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace tilefuse::runtime
