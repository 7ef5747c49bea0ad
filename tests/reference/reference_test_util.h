// Helpers for the reference interpreter tests: make tensors from literal values, run one node,
// compare results with hand-computed values, capture the UserError of a rejected node.
#pragma once

#include "support/user_error.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/graph.h"
#include "ir/tensor_compare.h"
#include "reference/interpreter.h"

namespace tilefuse::testing {

inline Tensor make(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  return Tensor::from_vector(dtype, std::move(shape), values);
}
inline Tensor f32(std::vector<int64_t> shape, const std::vector<double>& values) {
  return make(DType::f32, std::move(shape), values);
}
inline Tensor i64(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  return Tensor::from_vector(DType::i64, std::move(shape), values);
}
inline Tensor i64s(const std::vector<int64_t>& values) { return i64({static_cast<int64_t>(values.size())}, values); }

// Runs a node of `op` over `inputs` (an undefined Tensor is an omitted optional input) with
// `num_outputs` outputs, through reference::evaluate_node.
inline std::vector<Tensor> run_node(const std::string& op, const std::vector<Tensor>& inputs, AttributeMap attrs = {},
                                    size_t num_outputs = 1) {
  Graph g;
  std::vector<Value*> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    values.push_back(inputs[i].defined() ? g.add_constant("in" + std::to_string(i), inputs[i]) : nullptr);
  }
  Node* node = g.add_node(op, "n", values, std::vector<std::string>(num_outputs), std::move(attrs));
  return reference::evaluate_node(*node, inputs);
}
inline Tensor run1(const std::string& op, const std::vector<Tensor>& inputs, AttributeMap attrs = {}) {
  return run_node(op, inputs, std::move(attrs)).at(0);
}

// Checks dtype, shape and values (within rtol/atol, NaN equal to NaN).
inline void expect_tensor(const Tensor& actual, DType dtype, const std::vector<int64_t>& shape,
                          const std::vector<double>& values, Tolerance tolerance = {1e-6, 1e-7}) {
  Tensor expected = Tensor::from_vector(dtype, shape, values);
  CompareResult r = compare_tensors(actual, expected, tolerance);
  EXPECT_TRUE(r.ok) << r.message;
}

using testing_support::user_error;

}  // namespace tilefuse::testing
