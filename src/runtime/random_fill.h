// Seeded random data for model inputs the user did not give, so `tilefuse run model.onnx` works
// without any files and two runs with the same seed see the same data.
#pragma once

#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "ir/tensor.h"

namespace tilefuse::runtime {

// A generator for one input, derived from the run's seed and the input's name, so giving one
// input from a file does not change the random data of the others.
std::mt19937_64 input_rng(uint64_t seed, std::string_view input_name);

// Floats uniform in [-1, 1); integers in [0, 4) (small and non-negative, so they are valid
// indices and exponents in most models); bools 0 or 1.
Tensor random_tensor(DType dtype, const std::vector<int64_t>& dims, std::mt19937_64& rng);

}  // namespace tilefuse::runtime
