// The runtime's run loop on its own, without the compile pipeline: a plan of library calls,
// a view and a reference host step, and a KernelProvider
// that has no kernels to give. Results against the reference interpreter, sequential and from
// four threads at once; contexts per shape, and the oldest shape forgotten.
#include "runtime/step_runner.h"

#include <gtest/gtest.h>

#include <latch>
#include <thread>

#include "fusion/execution_plan.h"
#include "fusion/shape_only_steps.h"
#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "runtime/sgemm.h"

namespace tilefuse::runtime {
namespace {

// A plan without kernel steps needs nothing from a provider; asking is a bug.
class NoKernels : public KernelProvider {
 public:
  explicit NoKernels(size_t steps) : steps_(steps) {}
  std::vector<StepKernel*> kernels_for(const std::vector<std::vector<int64_t>>&) override {
    return std::vector<StepKernel*>(steps_, nullptr);
  }
  void tune(size_t, StepKernel&, const std::vector<Tensor>&, const std::vector<int64_t>&) override {
    ADD_FAILURE() << "tune() called for a plan without kernels";
  }

 private:
  size_t steps_;
};

// y = Trilu(CumSum(Concat(x @ w, Reshape(x @ w)) along axis 1)), x: f32[N, 8]: library calls
// (MatMul, Concat, CumSum), a view (Reshape) and a host step on the reference kernels (Trilu).
struct Model {
  Graph g;
  Model() {
    Value* x = g.add_input("x", DType::f32, {SymExpr::symbol("N"), Dim(8)});
    std::vector<double> weights(8 * 4);
    for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<double>(i % 7) / 7.0 - 0.5;
    Value* w = g.add_constant("w", Tensor::from_vector(DType::f32, {8, 4}, weights));
    Value* h = g.add_node("MatMul", "mm", {x, w}, {"h"})->outputs[0];
    Value* shape = g.add_constant("shape", Tensor::from_vector<int64_t>(DType::i64, {2}, {-1, 4}));
    Value* r = g.add_node("Reshape", "reshape", {h, shape}, {"r"})->outputs[0];
    Value* c = g.add_node("Concat", "cat", {h, r}, {"c"}, {{"axis", int64_t{1}}})->outputs[0];
    Value* axis = g.add_constant("axis", Tensor::scalar_i64(1));
    Value* sums = g.add_node("CumSum", "cumsum", {c, axis}, {"sums"})->outputs[0];
    g.add_output(g.add_node("Trilu", "trilu", {sums}, {"y"})->outputs[0]);
    g.infer_shapes();
  }
};

Tensor input(int64_t rows, int salt) {
  Tensor t(DType::f32, {rows, 8});
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, static_cast<double>((i * 5 + salt) % 11) / 4.0 - 1.0);
  return t;
}

struct Runner {
  fusion::ExecutionPlan planned;
  std::vector<std::unique_ptr<LibraryCall>> calls;
  ThreadTeam team{2};
  NoKernels provider;
  RunCounters counters;
  std::unique_ptr<StepRunner> runner;
  int library_steps = 0, view_steps = 0, host_steps = 0;

  Runner(const Graph& g, size_t max_shapes)
      : planned(fusion::plan_for_execution(g, /*fuse=*/false)), provider(planned.plan.steps.size()) {
    const std::vector<bool> shape_only = fusion::find_shape_only_steps(planned.plan);
    calls.resize(planned.plan.steps.size());
    for (size_t i = 0; i < planned.plan.steps.size(); ++i) {
      const fusion::PlanStep& step = planned.plan.steps[i];
      EXPECT_NE(step.kind, fusion::StepKind::Kernel) << "the test plan should have no kernels";
      if (step.node != nullptr && !shape_only[i] && library_call_supports(*step.node)) {
        calls[i] = prepare_library_call(*step.node, default_blocking(48 << 10, 1 << 20));
      }
      library_steps += calls[i] != nullptr;
      view_steps += step.kind == fusion::StepKind::View;
      host_steps += step.kind == fusion::StepKind::Host && calls[i] == nullptr;
    }
    runner = std::make_unique<StepRunner>(planned.graph, planned.plan,
                                          std::vector<KernelStep>(planned.plan.steps.size()), calls, shape_only,
                                          team, provider, RunOptions{nullptr, max_shapes}, counters);
  }
};

void expect_reference(const Graph& g, const Tensor& x, const Tensor& y) {
  const Tensor want = reference::run_graph(g, {{"x", x}})[0];
  CompareResult r = compare_tensors(y, want, {1e-5, 1e-6});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(StepRunner, RunsAPlanOfLibraryCallsViewsAndHostStepsLikeTheReference) {
  Model m;
  Runner r(m.g, 16);
  EXPECT_EQ(r.library_steps, 3);  // MatMul, Concat, CumSum
  EXPECT_EQ(r.view_steps, 1);     // Reshape
  EXPECT_EQ(r.host_steps, 1);     // Trilu
  std::vector<Tensor> outputs;
  for (int64_t rows : {3, 5, 3}) {
    const Tensor x = input(rows, static_cast<int>(rows));
    r.runner->run({{"x", x}}, outputs);
    ASSERT_EQ(outputs.size(), 1u);
    EXPECT_EQ(outputs[0].shape(), (std::vector<int64_t>{rows, 8}));
    expect_reference(m.g, x, outputs[0]);
  }
  EXPECT_EQ(r.counters.runs.load(), 3);
  EXPECT_EQ(r.counters.prepared_shapes.load(), 2);  // 3 rows and 5 rows
}

TEST(StepRunner, ForgetsTheLeastRecentlyRunShapeBeyondItsLimit) {
  Model m;
  Runner r(m.g, 2);
  std::vector<Tensor> outputs;
  for (int64_t rows : {1, 2, 3, 1}) r.runner->run({{"x", input(rows, 0)}}, outputs);
  EXPECT_EQ(r.counters.prepared_shapes.load(), 2);
  EXPECT_EQ(r.counters.evicted_shapes.load(), 2);  // 1 went for 3, then 2 went for 1 again
}

TEST(StepRunner, ConcurrentRunsOfOneShapeAndOfSeveralAgreeWithTheReference) {
  Model m;
  Runner r(m.g, 16);
  constexpr int kThreads = 4;
  std::vector<std::string> failures(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const Tensor x = input(t % 2 == 0 ? 64 : 7 + t, t);  // two threads share a shape
      const Tensor want = reference::run_graph(m.g, {{"x", x}})[0];
      start.arrive_and_wait();
      std::vector<Tensor> outputs;
      for (int run = 0; run < 50 && failures[t].empty(); ++run) {
        r.runner->run({{"x", x}}, outputs);
        CompareResult c = compare_tensors(outputs[0], want, {1e-5, 1e-6});
        if (!c.ok) failures[t] = "run " + std::to_string(run) + ": " + c.message;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
  EXPECT_EQ(r.counters.runs.load(), kThreads * 50);
}

}  // namespace
}  // namespace tilefuse::runtime
