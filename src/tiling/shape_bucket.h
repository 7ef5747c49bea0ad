// The shape buckets of a jit kernel. A kernel with symbolic dims has one generic library whose
// column tile, store kind and prefetch were planned at kJitPlanningSize; a run at very different
// sizes (a batch of 8192 rows rather than 128) wants other ones (non-temporal stores once the
// outputs outgrow the caches, longer column tiles). Sizes are grouped into buckets, each symbol
// rounded up to a power of two, and each bucket gets the tiling the cost model (and, with TopN,
// measurement) picks at the bucket's sizes, recorded in the cache under the bucket's key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/shape.h"

namespace tilefuse::tiling {

struct ShapeBucket {
  SymbolBindings sizes;  // every symbol at its bucket's upper end, what the tiling is planned for
  std::string key;       // "N=8192;S=128": names the bucket in the cache and in logs
};

// The bucket of `values` (the kernel's symbol values, in the order of `symbols`): each value v
// becomes the least power of two >= v (0 stays 0).
ShapeBucket shape_bucket(const std::vector<std::string>& symbols, const std::vector<int64_t>& values);

}  // namespace tilefuse::tiling
