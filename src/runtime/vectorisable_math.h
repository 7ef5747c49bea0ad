// exp, sigmoid and tanh of floats without calls or branches, so that a loop of them in a runtime
// call vectorises (the runtime is built for baseline x86-64; a caller's loop cloned for wider
// ISAs with target_clones takes their registers). The C library's expf and tanhf are calls, one
// element at a time: a third of an LSTM's time went into them. Cephes' single-precision
// polynomials; within 2 ulp (exp), 3 (sigmoid) and 2 (tanh) of the exact result, infinities and
// NaN as the C library gives them (tests/runtime/vectorisable_math_test.cpp). Not for generated
// kernels, which have tilefuse_vector_math.h.
#pragma once

#include <bit>
#include <cstdint>

namespace tilefuse::runtime::vmath {

// e^x: 2^n e^r with n = round(x / ln 2), |r| <= ln 2 / 2; 0 below -103.98, infinity above 88.72.
inline float exp(float x) {
  const float clamped = x < -104.5f ? -104.5f : x > 89.0f ? 89.0f : x;  // NaN passes: both compare false
  const float t = clamped * 1.44269504f + 0x1.8p23f;  // round to nearest, in the low bits
  const float n = t - 0x1.8p23f;
  const float r = (clamped - n * 0.693359375f) + n * 2.12194440e-4f;
  const float z = r * r;
  const float p = ((((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r + 4.1665795894e-2f) * r +
                     1.6666665459e-1f) * r + 5.0000001201e-1f) * z + r) + 1.0f;
  // 2^n in two factors, each a normal float for n in [-150, 128]: subnormals round once, 89 overflows.
  const int32_t k = std::bit_cast<int32_t>(t) - std::bit_cast<int32_t>(0x1.8p23f);
  const int32_t half = k >> 1;
  return p * std::bit_cast<float>((half + 127) << 23) * std::bit_cast<float>((k - half + 127) << 23);
}

// 1 / (1 + e^-x), from e^-|x| (which never overflows).
inline float sigmoid(float x) {
  const float e = exp(x < 0.0f ? x : -x), s = 1.0f / (1.0f + e);
  return x >= 0.0f ? s : e * s;
}

// Below |x| = 0.625 an odd polynomial; above, 1 - 2 / (e^2|x| + 1) with x's sign.
inline float tanh(float x) {
  const float a = x < 0.0f ? -x : x;
  const float z = x * x;
  const float small = ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z + 1.33314422036e-1f) * z -
                       3.33332819422e-1f) * z * x + x;
  const float large = 1.0f - 2.0f / (exp(2.0f * a) + 1.0f);
  return a < 0.625f ? small : x < 0.0f ? -large : large;
}

}  // namespace tilefuse::runtime::vmath
