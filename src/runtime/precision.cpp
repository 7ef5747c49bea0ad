#include "runtime/precision.h"

#include <cstdlib>

#include "ir/error.h"
#include "ir/log.h"
#include "runtime/sgemm_microkernel.h"

namespace tilefuse::runtime {

Precision parse_precision(std::string_view text, std::string_view what) {
  if (text == "f32") return Precision::f32;
  if (text == "bf16") return Precision::bf16;
  if (text == "f16") {
    fail_user("{} f16 is not supported: CPUs without AVX512-FP16 (this one included) have no f16 arithmetic; use bf16",
              what);
  }
  fail_user("{} must be f32 or bf16, got '{}'", what, text);
}

const char* precision_name(Precision precision) { return precision == Precision::bf16 ? "bf16" : "f32"; }

Precision precision_from_environment() {
  const char* value = std::getenv("TILEFUSE_PRECISION");
  if (value == nullptr || *value == '\0') return Precision::f32;
  return parse_precision(value, "TILEFUSE_PRECISION");
}

Precision effective_precision(Precision asked) {
  if (asked == Precision::bf16 && !bf16_supported()) {
    static const bool warned = [] {
      logger().warn("bf16 asked for, but this CPU has no avx512_bf16 (or AVX-512 is not in use): products run in f32");
      return true;
    }();
    (void)warned;
    return Precision::f32;
  }
  return asked;
}

}  // namespace tilefuse::runtime
