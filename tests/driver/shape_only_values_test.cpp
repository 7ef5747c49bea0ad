// Shape-only steps (position ids from a tensor's shape, a causal mask from Range and a compare)
// are computed when the executor prepares a set of input shapes and never on a run: results
// match the reference for each shape, also when shapes alternate and an output is such a value,
// and the run's launches leave them out. compute_shape_only_values reports a result whose shape
// is not the planned one.
#include "runtime/shape_only_values.h"

#include <gtest/gtest.h>

#include "build/build_test_support.h"
#include "fusion/execution_plan.h"
#include "fusion/shape_only_steps.h"
#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "driver/executor.h"

namespace tilefuse::driver {
namespace {

using tilefuse::testing::TempDir;

Value* scalar_i64(Graph& g, const std::string& name, int64_t v) { return g.add_constant(name, Tensor::scalar_i64(v)); }

// scores: f32[S, S]; y = Where(col <= row, scores, -1e9) with row/col from Range(Shape(scores)[0]).
Graph causal_mask_graph() {
  Graph g;
  Value* scores = g.add_input("scores", DType::f32, {Dim::symbol("S"), Dim::symbol("S")});
  Value* shape = g.add_node("Shape", "shape", {scores}, {"shape"}, {{"start", int64_t{-1}}})->outputs[0];
  Value* s = g.add_node("Squeeze", "s", {shape}, {"s"})->outputs[0];
  Value* ids =
      g.add_node("Range", "range", {scalar_i64(g, "start", 0), s, scalar_i64(g, "step", 1)}, {"ids"})->outputs[0];
  Value* axes = g.add_constant("axes", Tensor::from_vector<int64_t>(DType::i64, {1}, {1}));
  Value* rows = g.add_node("Unsqueeze", "rows", {ids, axes}, {"rows"})->outputs[0];
  Value* causal = g.add_node("LessOrEqual", "causal", {ids, rows}, {"causal"})->outputs[0];
  Value* floor = g.add_constant("floor", Tensor::scalar_f32(-1e9f));
  g.add_output(g.add_node("Where", "masked", {causal, scores, floor}, {"y"})->outputs[0]);
  g.add_output(causal);
  g.infer_shapes();
  return g;
}

Tensor counting(int64_t s) {
  Tensor t(DType::f32, {s, s});
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, static_cast<double>(i % 17) - 8);
  return t;
}

class ShapeOnlyValuesRun : public ::testing::TestWithParam<bool> {};

TEST_P(ShapeOnlyValuesRun, ComputedPerShapeAndNeverRun) {
  const Graph g = causal_mask_graph();
  TempDir cache;
  ExecutorOptions o;
  o.fuse = GetParam();
  o.device.threads = 2;
  o.cache_dir = cache.path();
  ExecutorCounters counters;
  Executor executor(g, o, counters);
  const std::vector<bool> shape_only = fusion::find_shape_only_steps(executor.plan());
  EXPECT_EQ(executor.launches(), fusion::run_time_launches(executor.plan(), shape_only));
  EXPECT_LT(executor.launches(), executor.plan().num_kernels());
  for (int64_t s : {5, 9, 5, 1, 9}) {
    const std::map<std::string, Tensor> inputs = {{"scores", counting(s)}};
    const std::vector<Tensor> expected = reference::run_graph(g, inputs);
    std::vector<Tensor> actual = executor.run(inputs);
    ASSERT_EQ(actual.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      const CompareResult r = compare_tensors(actual[i], expected[i], {0, 0});
      EXPECT_TRUE(r.ok) << "output " << i << " at S = " << s << ": " << r.message;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FusedAndUnfused, ShapeOnlyValuesRun, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "fused" : "unfused"; });

TEST(ShapeOnlyValuesCompute, ResultOfAnotherShapeIsAUserError) {
  const fusion::ExecutionPlan planned = fusion::plan_for_execution(causal_mask_graph(), true);
  const std::vector<bool> shape_only = fusion::find_shape_only_steps(planned.plan);
  runtime::ValueShapes shapes;
  for (const Value* v : planned.graph.values()) {
    if (v->constant) continue;
    std::vector<int64_t> dims;
    for (const Dim& d : v->shape) dims.push_back(d.evaluate({{"S", 4}}));
    shapes[v] = dims;
  }
  // The plan says the ids have 3 elements, but S = 4 makes Range give 4.
  for (const Value* v : planned.graph.values()) {
    if (v->name == "ids") shapes[v] = {3};
  }
  std::map<const Value*, const Value*> alias_of;  // views read their input's bytes
  auto root = [&](const Value* v) { return alias_of.count(v) ? alias_of.at(v) : v; };
  for (const fusion::PlanStep& step : planned.plan.steps) {
    if (step.kind == fusion::StepKind::View) alias_of[step.node->outputs[0]] = root(step.node->input(0));
  }
  try {
    runtime::compute_shape_only_values(planned.plan, shape_only, shapes, root);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("output 'ids' has shape [4] for these input shapes, but [3] was planned"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tilefuse::driver
