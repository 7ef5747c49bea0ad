// An Einsum equation ("bhqd,bhkd->bhqk", "...ij,...jk", "ii->i") parsed against the ranks of its
// operands. Every subscript becomes a label: letters keep their identity, and the dims an
// ellipsis stands for get labels of their own, right-aligned across operands as in numpy
// broadcasting. Shape inference and the reference kernel share this parse.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace tilefuse {

struct EinsumEquation {
  std::vector<std::vector<int>> inputs;  // labels of each operand's dims, in order
  std::vector<int> output;               // labels of the output's dims
  int num_labels = 0;                    // labels are 0 .. num_labels-1
};

// Parses `equation` for operands of the given ranks; throws UserError naming `node` on a
// malformed equation or a rank that does not match its term.
EinsumEquation parse_einsum(const Node& node, const std::string& equation, const std::vector<int64_t>& ranks);

}  // namespace tilefuse
