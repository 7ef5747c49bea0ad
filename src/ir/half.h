// IEEE half and bfloat16 conversions, bit-exact with round-to-nearest-even. NaNs come out quiet
// with the top bits of their payload, as x86's conversion instructions give them, so that the
// runtime's and the kernels' vector conversions agree with these bit for bit.
#pragma once

#include <bit>
#include <cstdint>
#include <cmath>

namespace tilefuse {

inline float bf16_to_f32(uint16_t bits) { return std::bit_cast<float>(uint32_t(bits) << 16); }

inline uint16_t f32_to_bf16(float value) {
  uint32_t u = std::bit_cast<uint32_t>(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

inline float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    if (mant == 0) return std::bit_cast<float>(sign);
    // Subnormal half: normalise into a float.
    int shift = 0;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      ++shift;
    }
    mant &= 0x3ffu;
    return std::bit_cast<float>(sign | uint32_t(127 - 15 - shift + 1) << 23 | mant << 13);
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | mant << 13 | (mant != 0 ? 0x00400000u : 0u));  // NaN made quiet
  return std::bit_cast<float>(sign | (exp + 127 - 15) << 23 | mant << 13);
}

inline uint16_t f32_to_f16(float value) {
  uint32_t u = std::bit_cast<uint32_t>(value);
  uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u | uint16_t((abs >> 13) & 0x3ffu);  // quiet NaN, payload's top bits
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // overflow to inf (incl. rounding)
  if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    // One half-subnormal ulp is 2^-24; scaling by 2^24 makes it 1, and nearbyint rounds to
    // nearest even exactly as the conversion requires.
    float scaled = std::bit_cast<float>(abs) * 16777216.0f;
    return sign | uint16_t(std::nearbyint(scaled));
  }
  // Normal: rebias exponent, round mantissa to nearest even.
  uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return sign | uint16_t(((rounded >> 13) - ((127 - 15) << 10)) & 0xffffu);
}

}  // namespace tilefuse
