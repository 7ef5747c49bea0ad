// Binding the user's inputs to a graph's inputs: every given tensor is checked against the
// declared type (dtype, rank, constant dims, and symbols consistent across inputs), the symbols
// get their values, and inputs not given are either an error or filled with seeded random data.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/sym_expr.h"
#include "ir/tensor.h"

namespace tilefuse::runtime {

struct BindOptions {
  // Fill inputs that were not given with random data (see random_fill.h) instead of failing.
  bool fill_missing_randomly = false;
  uint64_t seed = 0;
  // A symbolic dim no given input fixes takes this value (a random input needs a size); unset:
  // UserError asking for the input as a file.
  std::optional<int64_t> unbound_symbol_value;
};

struct BoundInput {
  std::string name;
  Tensor tensor;
  bool random = false;  // filled by tilefuse rather than given
};

struct BoundInputs {
  std::vector<BoundInput> inputs;  // in the graph's input order
  SymbolBindings symbols;          // value of every symbol in the input shapes

  std::map<std::string, Tensor> by_name() const;
};

// Throws UserError naming the input, the expected and the actual type, e.g.
//   input 'x': expected f32[N, 128], got f32[4, 64] (dim 1 is 64, expected 128)
BoundInputs bind_inputs(const Graph& graph, const std::map<std::string, Tensor>& given,
                        const BindOptions& options = {});

}  // namespace tilefuse::runtime
