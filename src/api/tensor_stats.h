// Summary statistics of a tensor's values, for run summaries (a quick sanity check that the
// outputs are not all zeros or NaN).
#pragma once

#include <cstdint>

#include "ir/tensor.h"

namespace tilefuse::api {

struct TensorStats {
  int64_t count = 0;      // finite or infinite values: every element except NaNs
  int64_t nan_count = 0;
  double min = 0;         // min/mean/max are over the non-NaN values; 0 when count is 0
  double mean = 0;
  double max = 0;
};

TensorStats compute_stats(const Tensor& tensor);

}  // namespace tilefuse::api
