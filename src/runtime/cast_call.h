// Cast into the executor's buffer, over the team, with the reference's conversion rules
// (Tensor::cast_into: integers exact through int64, float to integer truncates, to bool is != 0).
// Transformer exports cast their int64 attention mask to bool or float on every run; the
// reference kernel would allocate the result each time.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

// Cast to a type the IR has (the importer has checked `to`).
bool cast_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_cast_call(const Node& node);

// to[i] = from[i] converted to to's type, by the rules above, over the team (sizes must agree).
void cast_on_team(ThreadTeam& team, const Tensor& from, Tensor& to);

}  // namespace tilefuse::runtime
