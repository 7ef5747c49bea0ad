// ArgMax and ArgMin of f32 into the executor's buffer (torch.argmax/argmin exports): the index
// of the extremum along one axis, with the reference's rules (the first extremum, or the last
// with select_last_index; a NaN is the extremum and the first NaN wins). A scan per output
// element, the outer rows spread over the team: along the innermost axis each scan reads one
// contiguous row; along an outer axis the scan runs over a tile of kept columns at once, so
// every load is contiguous.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

bool arg_extremum_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_arg_extremum_call(const Node& node);

}  // namespace tilefuse::runtime
