// Add, Sub, Mul and Div on f32 whose broadcast the planner could not prove at compile time and
// no kernel takes, into the executor's buffers. A broadcast to a dim like max(s50, s6*s81//s33)
// (GPT-2's dynamic attention mask) is read inside kernels at a stride the run settles
// (fusion/iteration_space.cpp); this call is what runs such an op where no iteration space fits
// it. At run time the shapes are numbers: each operand's broadcast strides (0 where it has 1)
// are worked out then, checked against the planned output, and the rows are computed over the
// team with the inner loop specialised for the contiguous and the broadcast cases.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

bool broadcast_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_broadcast_call(const Node& node);

}  // namespace tilefuse::runtime
