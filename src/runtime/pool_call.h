// MaxPool and AveragePool (1-D and 2-D, f32) as direct loops, planes spread over the team. MaxPool: each output row starts at -inf and takes the maximum of every kernel
// tap's shifted input row over the tap's valid columns (strided_max, vectorised); padding never
// wins; NaN propagates, as in PyTorch. AveragePool: the window's rows summed into one row, each
// output the sum of its columns over the taps counted (count_include_pad counts the pads, not
// ceil_mode's reach beyond them). The reference kernel walks one window per output element:
// it made MaxPool 17% of ResNet-50's time, and Inception-v3's nine AveragePools host steps.
// Pools at stride 1 whose output keeps the input's size go a whole plane at a time
// (same_size_pool.h): Inception-v3's pools 2.9-3.4 -> 1.9-2.0 ms a run at 1 thread. A MaxPool
// whose Indices are read scans each window for its first maximum (max_pool_with_indices): the
// reference kernel took 48 ms for [1, 64, 128, 128], ONNX Runtime 10.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

bool pool_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_pool_call(const Node& node);

}  // namespace tilefuse::runtime
