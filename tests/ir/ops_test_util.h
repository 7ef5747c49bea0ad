// Helpers for the op inference tests: build a node over prepared inputs, run inference, and
// capture the UserError message of a graph that must be rejected.
#pragma once

#include "support/user_error.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/graph.h"
#include "ir/op_registry.h"

namespace tilefuse::op_testing {

inline Dim sym(const char* name) { return Dim::symbol(name); }

inline Value* i64_vector(Graph& g, const std::string& name, const std::vector<int64_t>& values) {
  return g.add_constant(name, Tensor::from_vector(DType::i64, {static_cast<int64_t>(values.size())}, values));
}

inline Value* i64_scalar(Graph& g, const std::string& name, int64_t value) {
  return g.add_constant(name, Tensor::scalar_i64(value));
}

// Adds `op` over `inputs` with `num_outputs` outputs and runs inference on the whole graph.
inline Node* infer(Graph& g, const std::string& op, std::vector<Value*> inputs, AttributeMap attrs = {},
                   size_t num_outputs = 1) {
  Node* node = g.add_node(op, "", std::move(inputs), std::vector<std::string>(num_outputs), std::move(attrs));
  g.infer_shapes();
  return node;
}

using testing_support::user_error;

// Output `i` of `node`: shape as text ("[N, 3]") for compact expectations.
inline std::string shape_of_output(const Node* node, size_t i = 0) {
  return shape_to_string(node->outputs.at(i)->shape);
}

// sym_value of output `i` as text ("[N, 3]"), or "none".
inline std::string values_of_output(const Node* node, size_t i = 0) {
  const auto& v = node->outputs.at(i)->sym_value;
  return v ? shape_to_string(*v) : "none";
}

}  // namespace tilefuse::op_testing
