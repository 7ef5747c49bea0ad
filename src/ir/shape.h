// Shapes are lists of Dims (possibly symbolic). Helpers for the common questions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/sym_expr.h"

namespace tilefuse {

using Shape = std::vector<Dim>;

bool is_static(const Shape& shape);
// The integer dims; throws InternalError if any dim is symbolic.
std::vector<int64_t> static_dims(const Shape& shape);
Shape shape_of(const std::vector<int64_t>& dims);
Dim num_elements(const Shape& shape);
// "[N, 128, 4]"; a scalar prints as "[]".
std::string shape_to_string(const Shape& shape);
std::string dims_to_string(const std::vector<int64_t>& dims);

// Numpy (multidirectional) broadcasting. With symbols, two different dims broadcast to their
// max: under broadcasting rules they are either equal or one of them is 1. Throws UserError,
// prefixed with `where`, when two constant dims conflict.
Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& where);
std::vector<int64_t> broadcast_dims(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                    const std::string& where);

// Normalises a possibly negative axis against a rank; throws UserError naming `where`.
int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& where);

}  // namespace tilefuse
