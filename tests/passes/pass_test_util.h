// What the rewrite-pass tests share: inputs with varied values, counting a graph's ops, and the
// check that a rewritten graph computes what the original did (reference interpreter, the same
// inputs for both).
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor_compare.h"
#include "reference/interpreter.h"

namespace tilefuse::pass_testing {

// An f32 tensor of values in [-2, 2), different for each salt.
inline Tensor filled(std::vector<int64_t> shape, int salt) {
  Tensor t(DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, ((i * 7 + salt * 3) % 13) / 3.0 - 2.0);
  return t;
}

inline int count_op(const Graph& g, const std::string& op) {
  int n = 0;
  for (Node* node : g.nodes()) n += node->op == op;
  return n;
}

// Each graph input filled (salted by its name's first letter), run through both graphs.
inline void expect_same_results(const Graph& before, const Graph& after) {
  std::map<std::string, Tensor> feeds;
  for (const Value* v : before.inputs()) {
    std::vector<int64_t> dims;
    for (const Dim& d : v->shape) dims.push_back(d.value());
    feeds[v->name] = filled(dims, v->name[0]);
  }
  const std::vector<Tensor> want = reference::run_graph(before, feeds);
  const std::vector<Tensor> got = reference::run_graph(after, feeds);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CompareResult r = compare_tensors(got[i], want[i], {1e-6, 1e-6});
    EXPECT_TRUE(r.ok) << r.message;
  }
}

}  // namespace tilefuse::pass_testing
