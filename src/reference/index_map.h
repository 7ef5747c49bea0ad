// Flat index maps. Broadcasting, transposition, slicing and reduction all read a tensor through a
// strided view of it; each map below lists, for every element of the result in row-major order,
// the flat index of the element it comes from (or goes to). Spelling every access out as an
// explicit list keeps the kernels short and obviously correct.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace tilefuse::reference {

// For every index of `shape` in row-major order: base + sum(index[d] * strides[d]).
std::vector<int64_t> strided_indices(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                                     int64_t base = 0);

// For every element of `out_shape`, the flat index of the element of a tensor of shape
// `in_shape` that numpy broadcasting places there. `in_shape` must broadcast to `out_shape`.
std::vector<int64_t> broadcast_indices(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape);

// The numpy broadcast of the shapes of all defined `tensors`; UserError naming `node` if they
// do not broadcast.
std::vector<int64_t> broadcast_shape(const Node& node, const std::vector<Tensor>& tensors);

// A tensor of `shape` whose element i is element indices[i] of `source` (any dtype).
Tensor gather_elements(const Tensor& source, const std::vector<int64_t>& indices, std::vector<int64_t> shape);

// Pad's rule for one axis: the input coordinate that padded coordinate `p` (already shifted by
// the begin pad) reads in a dim of size n under `mode` (constant, edge, reflect, wrap), or -1
// for the constant. Shared with the runtime's Pad (runtime/axis_map_call.h).
int64_t pad_source(const std::string& mode, int64_t p, int64_t n);

}  // namespace tilefuse::reference
