#include "api/tensor_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tilefuse::api {

TensorStats compute_stats(const Tensor& tensor) {
  TensorStats stats;
  double sum = 0;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    double v = tensor.get_f64(i);
    if (std::isnan(v)) {
      ++stats.nan_count;
      continue;
    }
    ++stats.count;
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (stats.count > 0) {
    stats.min = lo;
    stats.max = hi;
    stats.mean = sum / static_cast<double>(stats.count);
  }
  return stats;
}

}  // namespace tilefuse::api
