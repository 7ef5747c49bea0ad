// NumPy .npy files (format versions 1.0-3.0, little-endian, C order), so people can hand inputs
// to tilefuse and open its outputs with numpy.load.
#pragma once

#include <string>

#include "ir/tensor.h"

namespace tilefuse::io {

// Throws UserError naming the file and what is wrong (not an .npy, unsupported dtype,
// Fortran order, truncated data).
Tensor read_npy(const std::string& path);
// Writes atomically (temporary file, then rename).
void write_npy(const std::string& path, const Tensor& tensor);

}  // namespace tilefuse::io
