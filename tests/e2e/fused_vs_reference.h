// The differential check most e2e suites share: a graph built by the case runs fused (2 workers,
// the e2e kernel cache) on each of the case's inputs and must match the reference interpreter
// within rtol/atol 1e-5. A case may also bound how many kernels the fused plan has, so that a
// fusion the suite is about cannot silently stop happening.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "e2e/e2e_cache_dir.h"
#include "fusion/shape_only_steps.h"
#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "driver/executor.h"

namespace tilefuse::e2e {

struct GraphCase {
  std::string name;
  // Adds inputs, nodes and outputs; returns the inputs of each run (several runs: a symbolic
  // dim takes several values).
  std::function<std::vector<std::map<std::string, Tensor>>(Graph&)> build;
  size_t max_kernels = 0;  // when > 0: the fused plan has at most this many kernels
  // Every step of the fused plan is a kernel or a view (no op left outside), but for steps that
  // compute shapes only, once per set of input shapes (fusion/shape_only_steps.h).
  bool kernels_only = false;
};

inline void expect_fused_matches_reference(const GraphCase& c) {
  Graph g;
  const std::vector<std::map<std::string, Tensor>> runs = c.build(g);
  g.infer_shapes();
  const driver::ExecutorOptions options = executor_options();
  driver::ExecutorCounters counters;
  driver::Executor exe(g, options, counters);
  if (c.max_kernels > 0) {
    size_t kernels = 0;
    for (const auto& step : exe.plan().steps) kernels += step.kind == fusion::StepKind::Kernel;
    EXPECT_LE(kernels, c.max_kernels) << c.name << ":\n" << fusion::print_plan(exe.plan());
  }
  if (c.kernels_only) {
    const std::vector<bool> shape_only = fusion::find_shape_only_steps(exe.plan());
    for (size_t s = 0; s < exe.plan().steps.size(); ++s) {
      const auto kind = exe.plan().steps[s].kind;
      EXPECT_TRUE(shape_only[s] || kind == fusion::StepKind::Kernel || kind == fusion::StepKind::View)
          << c.name << ":\n" << fusion::print_plan(exe.plan());
    }
  }
  for (const auto& inputs : runs) {
    const std::vector<Tensor> expected = reference::run_graph(g, inputs);
    const std::vector<Tensor> actual = exe.run(inputs);
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i) {
      CompareResult r = compare_tensors(actual[i], expected[i], {1e-5, 1e-5});
      EXPECT_TRUE(r.ok) << c.name << " output " << i << ": " << r.message;
    }
  }
}

// Deterministic values in [-2, 2), different per salt; `offset` moves them off zero, so a long
// sum does not cancel into a value whose relative error means nothing.
inline Tensor filled(DType dtype, std::vector<int64_t> shape, int salt = 0, double offset = 0.0) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, ((i * 37 + salt * 11) % 97) / 24.25 - 2.0 + offset);
  return t;
}
inline Tensor filled(std::vector<int64_t> shape, int salt = 0, double offset = 0.0) {
  return filled(DType::f32, std::move(shape), salt, offset);
}

inline Value* node(Graph& g, const std::string& op, std::vector<Value*> inputs, AttributeMap attrs = {}) {
  return g.add_node(op, op, std::move(inputs), {op + "_out"}, std::move(attrs))->outputs[0];
}

// One static input x of `t`'s shape; `body` builds the outputs from it.
inline GraphCase on_input(std::string name, Tensor t, std::function<std::vector<Value*>(Graph&, Value*)> body,
                          size_t max_kernels = 0) {
  return {std::move(name),
          [t, body](Graph& g) {
            Value* x = g.add_input("x", t.dtype(), std::vector<Dim>(t.shape().begin(), t.shape().end()));
            for (Value* out : body(g, x)) g.add_output(out);
            return std::vector<std::map<std::string, Tensor>>{{{"x", t}}};
          },
          max_kernels};
}

}  // namespace tilefuse::e2e
