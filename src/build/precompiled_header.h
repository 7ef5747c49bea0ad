// A precompiled header for the one header every generated kernel includes: parsing xsimd is most
// of a kernel's compile time, so GCC's .gch (picked up automatically next to the header when the
// flags match) makes each kernel compile about 4x faster. Best effort: with another compiler, or
// if precompiling fails, kernels compile from the plain header, only slower.
#pragma once

#include <string>

#include "build/toolchain.h"

namespace tilefuse::build {

// Creates `<header_path>.gch` once (under a lock next to it) if the toolchain is GCC.
void ensure_precompiled_header(const Toolchain& toolchain, const std::string& header_path);

}  // namespace tilefuse::build
