#include "runtime/cpu_isa.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "ir/error.h"

namespace tilefuse::runtime {

namespace {

constexpr const char* kEnvVar = "TILEFUSE_MAX_CPU_ISA";

VectorIsa detected() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma")) {
    return VectorIsa::avx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return VectorIsa::avx2;
  return VectorIsa::scalar;
}

VectorIsa cap() {
  const char* env = std::getenv(kEnvVar);
  if (env == nullptr || *env == '\0') return VectorIsa::avx512;
  for (VectorIsa isa : {VectorIsa::scalar, VectorIsa::avx2, VectorIsa::avx512}) {
    if (std::string_view(env) == isa_name(isa)) return isa;
  }
  fail_user("{} must be one of scalar, avx2 or avx512, got '{}'", kEnvVar, env);
}

}  // namespace

VectorIsa vector_isa() {
  static const VectorIsa isa = std::min(detected(), cap());
  return isa;
}

const char* isa_name(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::avx512:
      return "avx512";
    case VectorIsa::avx2:
      return "avx2";
    case VectorIsa::scalar:
      break;
  }
  return "scalar";
}

}  // namespace tilefuse::runtime
