// The C++ expression of one pointwise op over its operands, for generated kernels. Operands are
// expressions already of the compute type `V` (a SIMD batch or float; masks for bool values),
// so the same text serves the vector main loop and the scalar tail.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace tilefuse::codegen {

// `value_type` is the C++ type name of float values in scope ("V" in loop bodies, "float" at
// row level). Throws InternalError for an op the kernel op set does not contain.
std::string pointwise_expr(const Node& node, const std::vector<std::string>& operands, const std::string& value_type);

// Whether pointwise_expr knows the op (tests check it covers fusion's kernel op set).
bool has_pointwise_expr(const std::string& op);

// Whether the node's expression calls vector math (exp, log, tanh, sigmoid, softplus, erf, a
// general pow): tens of instructions per vector, where plain arithmetic takes one.
bool calls_vector_math(const Node& node);

}  // namespace tilefuse::codegen
