#include "runtime/random_fill.h"

#include <cmath>

namespace tilefuse::runtime {
namespace {

// Significand precision of each float type. Drawing multiples of 2^-(bits-1) keeps every value
// exactly representable, so rounding can never turn 0.99999 into 1.0 and break [-1, 1).
int significand_bits(DType dtype) {
  switch (dtype) {
    case DType::f16: return 11;
    case DType::bf16: return 8;
    case DType::f64: return 53;
    default: return 24;
  }
}

void fill_floats(Tensor& tensor, std::mt19937_64& rng) {
  const int bits = significand_bits(tensor.dtype());
  std::uniform_int_distribution<uint64_t> steps(0, (uint64_t{1} << bits) - 1);
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    tensor.set_f64(i, -1.0 + std::ldexp(static_cast<double>(steps(rng)), 1 - bits));
  }
}

void fill_integers(Tensor& tensor, std::mt19937_64& rng) {
  std::uniform_int_distribution<int64_t> uniform(0, tensor.dtype() == DType::boolean ? 1 : 3);
  for (int64_t i = 0; i < tensor.numel(); ++i) tensor.set_i64(i, uniform(rng));
}

}  // namespace

std::mt19937_64 input_rng(uint64_t seed, std::string_view input_name) {
  // FNV-1a: a name hash that is the same on every platform and standard library (std::hash is not).
  uint64_t hash = 14695981039346656037ull;
  for (char c : input_name) hash = (hash ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  std::seed_seq sequence{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                         static_cast<uint32_t>(hash), static_cast<uint32_t>(hash >> 32)};
  return std::mt19937_64(sequence);
}

Tensor random_tensor(DType dtype, const std::vector<int64_t>& dims, std::mt19937_64& rng) {
  Tensor tensor(dtype, dims);
  if (is_float(dtype)) {
    fill_floats(tensor, rng);
  } else {
    fill_integers(tensor, rng);
  }
  return tensor;
}

}  // namespace tilefuse::runtime
