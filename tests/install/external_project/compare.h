// The largest difference between a model's outputs and the expected ones, printed per output.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include <tilefuse/npy.h>
#include <tilefuse/tilefuse.h>

// 0 when every output named in `expected_dir` (NAME.npy) is within `tolerance` of `outputs`.
inline int compare_outputs(const std::map<std::string, tilefuse::Tensor>& outputs, const std::string& expected_dir,
                           double tolerance = 1e-4) {
  int failures = 0;
  for (const auto& [name, actual] : outputs) {
    const tilefuse::Tensor expected = tilefuse::read_npy(expected_dir + "/" + name + ".npy");
    double worst = expected.shape() == actual.shape() ? 0.0 : INFINITY;
    for (int64_t i = 0; std::isfinite(worst) && i < actual.numel(); ++i) {
      worst = std::max(worst, std::abs(actual.get_f64(i) - expected.get_f64(i)));
    }
    std::printf("%s: %s, max |diff| %.3g\n", name.c_str(), actual.summary().c_str(), worst);
    failures += !(worst <= tolerance);
  }
  return failures == 0 ? 0 : 1;
}
