// Reads the text form written by print_graph (see printer.h for the format) back into a Graph:
// parse_graph(print_graph(g)) prints exactly as g does. Hand-written text may leave out the
// types of a node's outputs (`%y = Relu(%x)`): they are then inferred through the op registry.
// Node names (`@name`) may be left out too; add_node then makes one up.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace tilefuse {

struct ParseOptions {
  // The data of an `external<OFFSET>` tensor of the given dtype and dims (printer.h,
  // PrintOptions::place_data). Unset: such text is refused.
  std::function<Tensor(DType dtype, const std::vector<int64_t>& dims, int64_t offset)> external_data;
};

// Throws UserError naming the line:column and what was expected there.
Graph parse_graph(std::string_view text, const ParseOptions& options = {});

}  // namespace tilefuse
