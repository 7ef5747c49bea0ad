#include "runtime/bf16_pairs.h"

#include <cstring>

namespace tilefuse::runtime {

namespace {

// The word of one pair, as the float whose bits it is (panels are float arrays).
float pair_word(float lo, float hi) {
  const uint32_t word = static_cast<uint32_t>(bf16_bits(lo)) | static_cast<uint32_t>(bf16_bits(hi)) << 16;
  float f;
  std::memcpy(&f, &word, sizeof f);
  return f;
}

}  // namespace

uint16_t bf16_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // a quiet NaN
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

float bf16_value(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

void pack_a_bf16_strided(const MatrixView& a, int64_t row, int rows, int64_t k0, int64_t kc, float* dst) {
  for (int64_t step = 0; step < (kc + 1) / 2; ++step) {
    const int64_t k = 2 * step;
    for (int r = 0; r < kMR; ++r) {
      const bool in = r < rows;
      const float lo = in ? *a.at(row + r, k0 + k) : 0.0f;
      const float hi = in && k + 1 < kc ? *a.at(row + r, k0 + k + 1) : 0.0f;
      dst[step * kMR + r] = pair_word(lo, hi);
    }
  }
}

void pack_b_bf16(const MatrixView& b, int64_t depth, int64_t cols, float* dst) {
  const int64_t steps = (depth + 1) / 2;
  for (int64_t p = 0; p * kNR < cols; ++p, dst += steps * kNR) {
    for (int64_t step = 0; step < steps; ++step) {
      const int64_t k = 2 * step;
      for (int j = 0; j < kNR; ++j) {
        const int64_t col = p * kNR + j;
        const bool in = col < cols;
        const float lo = in ? *b.at(k, col) : 0.0f;
        const float hi = in && k + 1 < depth ? *b.at(k + 1, col) : 0.0f;
        dst[step * kNR + j] = pair_word(lo, hi);
      }
    }
  }
}

}  // namespace tilefuse::runtime
