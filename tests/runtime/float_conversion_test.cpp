// Conversions between f32, f16 and bf16 over arrays (runtime/float_conversion.h) give bit for bit
// what ir/half.h gives one element at a time, at every ISA (ctest runs these tests capped at
// AVX2 and at scalar code too: runtime_kernels_*).
#include "runtime/float_conversion.h"

#include <bit>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ir/half.h"
#include "runtime/cpu_isa.h"

namespace tilefuse::runtime {
namespace {

// Every value of a type's bit patterns that matters to a conversion from it: all 65536 of a
// 16-bit type; for f32, each high half with low halves at and around the rounding points of
// both 16-bit types, then random patterns.
std::vector<uint32_t> source_bits(DType from) {
  std::vector<uint32_t> bits;
  if (from != DType::f32) {
    for (uint32_t h = 0; h < 65536; ++h) bits.push_back(h);
    return bits;
  }
  const uint32_t lows[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x2000, 0x3000, 0x7fff, 0x8000, 0x8001, 0xe000, 0xffff};
  for (uint32_t high = 0; high < 65536; ++high) {
    for (uint32_t low : lows) bits.push_back(high << 16 | low);
  }
  std::mt19937 rng(7);
  for (int i = 0; i < (1 << 18); ++i) bits.push_back(uint32_t(rng()));
  return bits;
}

float value_of(DType type, uint32_t bits) {
  switch (type) {
    case DType::f16: return f16_to_f32(uint16_t(bits));
    case DType::bf16: return bf16_to_f32(uint16_t(bits));
    default: return std::bit_cast<float>(bits);
  }
}

uint32_t bits_of(DType type, float v) {
  switch (type) {
    case DType::f16: return f32_to_f16(v);
    case DType::bf16: return f32_to_bf16(v);
    default: return std::bit_cast<uint32_t>(v);
  }
}

// The source array of `from` holding `bits`, as raw bytes.
std::vector<char> array_of(DType from, const std::vector<uint32_t>& bits) {
  std::vector<char> bytes(bits.size() * dtype_size(from));
  for (size_t i = 0; i < bits.size(); ++i) {
    if (from == DType::f32) reinterpret_cast<uint32_t*>(bytes.data())[i] = bits[i];
    else reinterpret_cast<uint16_t*>(bytes.data())[i] = uint16_t(bits[i]);
  }
  return bytes;
}

uint32_t element(const std::vector<char>& bytes, DType type, size_t i) {
  return type == DType::f32 ? reinterpret_cast<const uint32_t*>(bytes.data())[i] : reinterpret_cast<const uint16_t*>(bytes.data())[i];
}

struct Pair {
  DType from, to;
};
void PrintTo(const Pair& p, std::ostream* out) { *out << dtype_name(p.from) << " -> " << dtype_name(p.to); }

class FloatConversion : public testing::TestWithParam<Pair> {};

TEST_P(FloatConversion, IsTheScalarConversionBitForBit) {
  const auto [from, to] = GetParam();
  ASSERT_TRUE(converts_floats(from, to));
  const std::vector<uint32_t> bits = source_bits(from);
  const std::vector<char> source = array_of(from, bits);
  const uint32_t untouched = 0xa5a5a5a5;
  std::vector<char> target(bits.size() * dtype_size(to), char(0xa5));
  // A range that starts and ends off a vector, so the scalar head and tail run too.
  const int64_t begin = 3, end = int64_t(bits.size()) - 5;
  convert_floats(source.data(), from, target.data(), to, begin, end);
  int wrong = 0;
  for (int64_t i = 0; i < int64_t(bits.size()) && wrong < 5; ++i) {
    const uint32_t got = element(target, to, size_t(i));
    // A cast to the same type copies: signalling NaNs stay as they are.
    const uint32_t converted = from == to ? bits[size_t(i)] : bits_of(to, value_of(from, bits[size_t(i)]));
    const uint32_t want = i >= begin && i < end ? converted
                          : to == DType::f32   ? untouched
                                               : uint16_t(untouched);
    if (got != want) {
      ++wrong;
      ADD_FAILURE() << isa_name(vector_isa()) << ": element " << i << ", " << dtype_name(from) << " 0x" << std::hex << bits[size_t(i)]
                    << " -> " << dtype_name(to) << " 0x" << got << ", want 0x" << want;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Pairs, FloatConversion,
                         testing::Values(Pair{DType::f32, DType::f16}, Pair{DType::f32, DType::bf16}, Pair{DType::f16, DType::f32},
                                         Pair{DType::bf16, DType::f32}, Pair{DType::f16, DType::bf16},
                                         Pair{DType::bf16, DType::f16}, Pair{DType::f16, DType::f16}),
                         [](const testing::TestParamInfo<Pair>& info) {
                           return std::string(dtype_name(info.param.from)) + "_to_" + std::string(dtype_name(info.param.to));
                         });

TEST(FloatConversionTypes, TakesOnlyTheFloatStorageTypes) {
  EXPECT_TRUE(converts_floats(DType::bf16, DType::f32));
  EXPECT_FALSE(converts_floats(DType::f64, DType::f32));
  EXPECT_FALSE(converts_floats(DType::f32, DType::i32));
}

}  // namespace
}  // namespace tilefuse::runtime
