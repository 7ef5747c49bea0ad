// NumPy .npy files: what `tilefuse run` reads inputs from and writes outputs to, for programs on
// the public API (numpy.load opens what write_npy writes). Part of libtilefuse_runtime.
#pragma once

#include <string>

#include "tilefuse/tensor.h"

namespace tilefuse {

// Format versions 1.0-3.0, little-endian, C order. Throws UserError naming the file and what is
// wrong (not an .npy, unsupported dtype, Fortran order, truncated data).
Tensor read_npy(const std::string& path);
// Writes atomically (a temporary file, then a rename).
void write_npy(const std::string& path, const Tensor& tensor);

}  // namespace tilefuse
