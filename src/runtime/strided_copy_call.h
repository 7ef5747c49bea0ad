// Slice, Expand, Gather, GatherND and GatherElements into the executor's buffers. Each is a copy
// whose source is an index map of the output: Slice and Expand read through strides (a step, or 0
// where Expand broadcasts), Gather picks rows by index, GatherND slices by coordinate tuples and
// GatherElements single elements (torch.gather). The copy moves whole contiguous runs (memcpy) where
// the map has them and elements otherwise, spread over the team, where the reference kernels
// build an index list and allocate every result. Transformer exports run these in every layer
// (Llama's rotary halves and mask expansion, position-id and embedding lookups). Any dtype.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

bool strided_copy_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_strided_copy_call(const Node& node);

}  // namespace tilefuse::runtime
