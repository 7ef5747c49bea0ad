// The headers generated kernels include (tilefuse_kernel.h and the ABI header), embedded in the
// library at build time. The executor writes them next to the cache; their text is part of
// every kernel's artifact hash.
#pragma once

#include <string>
#include <vector>

namespace tilefuse::codegen {

struct SupportHeader {
  std::string relative_path;  // where generated code expects it on the include path
  std::string text;
};

const std::vector<SupportHeader>& support_headers();

// Bumped when the emitters change the code they generate for the same kernel.
inline constexpr int kCodegenVersion = 5;

}  // namespace tilefuse::codegen
