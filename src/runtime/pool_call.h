// MaxPool (1-D and 2-D, f32, no Indices output) as direct loops: each output row starts at -inf
// and takes the maximum of every kernel tap's shifted input row over the tap's valid columns
// (strided_max, vectorised); padding never wins. Planes are spread over the team. NaN
// propagates, as in PyTorch. The reference kernel walks one window per output element and is
// what made MaxPool 17% of ResNet-50's time.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

bool pool_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_pool_call(const Node& node);

}  // namespace tilefuse::runtime
