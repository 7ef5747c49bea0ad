// The targets a generated kernel may meet, for tests that compile a probe (probe_library.h) for
// each: the host, AVX-512 (x86-64-v4), AVX2 with FMA and F16C (x86-64-v3), and baseline x86-64
// (SSE2, no F16C). A target the host cannot run is listed with runs = false: a test that runs the
// probe skips it, one that only compiles for it does not.
#pragma once

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tf_test {

struct ProbeTarget {
  const char* march;
  bool runs;
};
inline void PrintTo(const ProbeTarget& target, std::ostream* out) { *out << "-march=" << target.march; }

inline std::vector<ProbeTarget> probe_targets() {
#if defined(__x86_64__)
  __builtin_cpu_init();  // the parameters are made before main, maybe before the library's own init
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c") && __builtin_cpu_supports("fma") &&
                  __builtin_cpu_supports("bmi2");
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  return {{"native", true}, {"x86-64", true}, {"x86-64-v3", v3}, {"x86-64-v4", v4}};
#else
  return {{"native", true}};
#endif
}

// native, x86_64, x86_64_v3, x86_64_v4: the parameterised tests' names.
inline std::string probe_target_name(const testing::TestParamInfo<ProbeTarget>& info) {
  std::string n = info.param.march;
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

}  // namespace tf_test
