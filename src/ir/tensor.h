// Tensors (the class is public: include/tilefuse/tensor.h) and the IR's helpers for their shapes.
// Constants in the IR, inputs and outputs of every executor, and all of the reference
// interpreter's data are Tensors.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/error.h"
#include "tilefuse/tensor.h"

namespace tilefuse {

int64_t product(const std::vector<int64_t>& dims);
// Row-major strides in elements.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& dims);

}  // namespace tilefuse
