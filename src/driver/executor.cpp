#include "driver/executor.h"

#include <algorithm>
#include <chrono>
#include <mutex>

#include "build/compile_pool.h"
#include "codegen/kernel_emitter.h"
#include "fusion/execution_plan.h"
#include "fusion/shape_only_steps.h"
#include "ir/error.h"
#include "driver/gemm_tuning.h"
#include "driver/hardware_calibration.h"
#include "driver/jit_buckets.h"
#include "driver/kernel_headers.h"
#include "driver/package_writer.h"
#include "driver/superkernel_record.h"
#include "ir/log.h"
#include "ir/ops/control_flow.h"
#include "runtime/branch_call.h"
#include "runtime/kernel_library.h"
#include "runtime/library_call.h"
#include "runtime/thread_team.h"

namespace tilefuse::driver {

namespace {

// Adds the wall time of its scope to phases[name]: where building an executor spends its time.
class PhaseTimer {
 public:
  PhaseTimer(std::map<std::string, double>& phases, const char* name)
      : phases_(phases), name_(name), start_(std::chrono::steady_clock::now()) {}
  ~PhaseTimer() {
    phases_[name_] += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  std::map<std::string, double>& phases_;
  const char* name_;
  std::chrono::steady_clock::time_point start_;
};

fusion::ExecutionPlan timed_plan(const Graph& g, bool fuse, std::map<std::string, double>& phases) {
  PhaseTimer timer(phases, "plan");
  return fusion::plan_for_execution(g, fuse);
}

// The kernel's name without the plan's running index, plus a hash of its source: equal kernels
// in different models share one cache entry.
std::string structural_name(const std::string& plan_name) {
  auto pos = plan_name.find_last_of('_');
  return pos == std::string::npos ? plan_name : plan_name.substr(0, pos);
}

// A branch of an If that planning could not inline, compiled as an executor of its own (the same
// options and cache), run through a runtime::BranchCall.
struct BranchExecutor : runtime::SubgraphRunner {
  const Graph& branch;
  ExecutorCounters counters;
  Executor executor;
  BranchExecutor(const Graph& g, const ExecutorOptions& options) : branch(g), executor(g, options, counters) {}
  const Graph& graph() const override { return branch; }
  void run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs) override {
    executor.run(inputs, outputs);
  }
};

}  // namespace

// The compile pipeline's half of an executor: it plans, builds the kernels and prepares the
// library calls, then hands running to a runtime::StepRunner, to which it provides kernels
// (jit shape buckets built as new shapes arrive) and first-launch tuning.
struct Executor::Impl : runtime::KernelProvider {
  fusion::ExecutionPlan planned;  // the graph as it runs (a decomposed copy) and its plan
  Graph& graph = planned.graph;
  ExecutorOptions options;
  ExecutorCounters& counters;
  fusion::FusionPlan& plan = planned.plan;
  std::vector<BuiltKernel> kernels;       // per step (empty for non-kernels)
  std::vector<std::string> kernel_names;  // per step: the structural name a kernel is built under
  JitBuckets jit_buckets{plan, kernels, kernel_names};
  std::vector<std::unique_ptr<runtime::LibraryCall>> library_calls;  // per step (null for non-library steps)
  std::shared_ptr<runtime::ThreadTeam> team_ptr;
  runtime::ThreadTeam& team;
  std::vector<bool> shape_only;  // per step: computed when shapes are prepared, not run
  runtime::GemmBlocking default_blocking;  // of the library calls, unless tuned
  int64_t row_chain_band_bytes = int64_t{1} << 20;  // half of L2 (runtime::RunOptions), set with the blocking
  // Per If step run by a branch call: its branches' executors (owned by the call), for packaging.
  std::map<size_t, std::pair<const BranchExecutor*, const BranchExecutor*>> branches;
  // What building and tuning kernels needs; kept because the first run may still tune.
  build::ArtifactCache cache;
  build::Toolchain toolchain = build::Toolchain::from_environment();
  tiling::HardwareModel hardware;
  std::unique_ptr<BuildContext> build_context;
  std::unique_ptr<runtime::StepRunner> runner;

  Impl(const Graph& g, const ExecutorOptions& o, ExecutorCounters& c)
      : planned(timed_plan(g, o.fuse, c.compile_phases_ms)),
        options(o),
        counters(c),
        team_ptr(runtime::ThreadTeam::shared(std::max(1, o.device.threads))),
        team(*team_ptr),
        cache(o.cache_dir.empty() ? build::ArtifactCache::default_root() : o.cache_dir) {
    shape_only = fusion::find_shape_only_steps(plan);
    compile_kernels_and_prepare_library_calls();
    runner = std::make_unique<runtime::StepRunner>(graph, plan, kernel_steps(), library_calls, shape_only, team, *this,
                                                   runtime::RunOptions{o.profile, o.max_prepared_shapes, o.superkernel, o.superkernel_floor_ns,
                                                                       row_chain_band_bytes},
                                                   counters);
  }

  // GEMM, convolution and the host steps the runtime has its own code for; constant weights are
  // packed now rather than on every run.
  void prepare_library_calls() {
    PhaseTimer timer(counters.compile_phases_ms, "library_calls");
    library_calls.resize(plan.steps.size());
    // compile_kernels has the (calibrated) model when the plan has kernels; caches are all we need.
    const tiling::HardwareModel caches = options.hardware ? *options.hardware
                                         : has_kernels()  ? hardware
                                                          : tiling::detect_hardware();
    const runtime::GemmBlocking blocking = default_blocking = runtime::default_blocking(caches.l1d_bytes, caches.l2_bytes);
    row_chain_band_bytes = caches.l2_bytes / 2;
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const auto& step = plan.steps[i];
      if (!runtime::runs_on_its_node(step, shape_only[i])) continue;
      if (step.node->op == "If") {
        library_calls[i] = compile_branches(i, *step.node);
        continue;
      }
      if (!runtime::library_call_supports(*step.node)) continue;
      library_calls[i] = runtime::prepare_library_call(*step.node, blocking, options.precision);
      counters.packed_weight_bytes += library_calls[i]->packed_bytes();
      tune_library_call(*library_calls[i], *step.node, blocking, caches);
    }
  }

  // Both branches of an If, compiled now: the first run takes one of them, so the other's TopN
  // candidates may never be measured (a package then takes their first candidate).
  std::unique_ptr<runtime::LibraryCall> compile_branches(size_t step, const Node& node) {
    ExecutorOptions branch_options = options;
    branch_options.profile = nullptr;
    auto then_branch = std::make_unique<BranchExecutor>(subgraph(node, "then_branch"), branch_options);
    auto else_branch = std::make_unique<BranchExecutor>(subgraph(node, "else_branch"), branch_options);
    branches[step] = {then_branch.get(), else_branch.get()};
    return runtime::make_branch_call(node, std::move(then_branch), std::move(else_branch));
  }

  // With --topn above 1, a GEMM's blocking is measured among candidates like a kernel's tiling
  // (gemm_tuning.h), or read from the record an earlier run left.
  void tune_library_call(runtime::LibraryCall& call, const Node& node, const runtime::GemmBlocking& model,
                         const tiling::HardwareModel& caches) {
    if (options.autotune_topn < 2) return;
    const BlockingTuneResult r = tune_blocking(
        call, node, model, {cache.root(), options.autotune_topn, team.size(), caches.l1d_bytes, caches.l2_bytes});
    if (r.reused) ++counters.tuning.records_reused;
    if (r.measured) ++counters.tuning.kernels_tuned;
    if (r.withheld) ++counters.tuning.records_withheld;
  }

  bool has_kernels() const {
    return std::any_of(plan.steps.begin(), plan.steps.end(),
                       [](const fusion::PlanStep& s) { return s.kind == fusion::StepKind::Kernel; });
  }

  // Weight packing could overlap the compiler processes, but measured on BERT-base it gained
  // nothing: packing 340 MB takes 0.12 s alone and stretched to 0.7-1.0 s beside two compilers.
  void compile_kernels_and_prepare_library_calls() {
    kernels.resize(plan.steps.size());  // indexed by step, kernels or not (a plan may have none)
    kernel_names.resize(plan.steps.size());
    if (has_kernels()) {
      std::vector<build::CompileJob> jobs = kernel_jobs();
      const size_t count = jobs.size();
      {
        PhaseTimer timer(counters.compile_phases_ms, "kernels");
        build::run_compile_jobs(std::move(jobs), options.compile_threads);
      }
      logger().info("executor: {} kernels ready ({} compiled, {} from cache, {} tuning records reused)", count,
                   counters.cache.compiles.load(), counters.cache.cache_hits.load(),
                   counters.tuning.records_reused.load());
    }
    prepare_library_calls();
  }

  // The support headers (and their precompiled form), the hardware model, and one compile job per
  // kernel step.
  std::vector<build::CompileJob> kernel_jobs() {
    std::string header_fingerprint;
    {
      PhaseTimer timer(counters.compile_phases_ms, "support_headers");
      const KernelHeaders headers = add_support_headers();
      header_fingerprint = headers.fingerprint;
      precompile_kernel_headers(headers, toolchain);
    }
    {
      PhaseTimer timer(counters.compile_phases_ms, "calibration");
      hardware = options.hardware ? *options.hardware : calibrated_hardware(cache.root());
    }
    build_context.reset(new BuildContext{cache, toolchain, header_fingerprint, hardware, team.size(),
                                         options.autotune_topn, options.debug_dir, counters.cache, counters.tuning});
    std::vector<build::CompileJob> jobs;
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const auto& step = plan.steps[i];
      if (step.kind != fusion::StepKind::Kernel) continue;
      fusion::FusedKernel named = step.kernel;
      named.name = kernel_names[i] = structural_name(step.kernel.name);
      jobs.push_back({named.name, [this, i, named] { kernels[i] = build_kernel(named, *build_context); }});
    }
    return jobs;
  }

  KernelHeaders add_support_headers() {
    KernelHeaders headers = install_kernel_headers(cache.root());
    if (toolchain.include_dirs.empty()) toolchain.include_dirs.push_back(headers.dir);
    return headers;
  }

  void save_package(const std::string& path) {
    add_support_headers();  // a plan without kernels has not needed them yet
    const auto save_branch = [this](size_t step, bool then_side, const std::string& branch_path) {
      const auto& [then_branch, else_branch] = branches.at(step);
      (then_side ? then_branch : else_branch)->executor.save_package(branch_path);
    };
    write_package({graph, plan, kernels, library_calls, default_blocking, toolchain, team.size(), options.fuse,
                   options.compile_threads, save_branch, runtime::effective_precision(options.precision)},
                  path);
  }

  // ---- the runner's kernels (runtime::KernelProvider) ----

  std::vector<runtime::StepKernel*> kernels_for(const std::vector<std::vector<int64_t>>& symbols) override {
    std::vector<runtime::StepKernel*> out(plan.steps.size(), nullptr);  // a plan without kernels
    if (!build_context) return out;
    const std::vector<BuiltKernel*> built = jit_buckets.kernels_for(symbols, *build_context, options.compile_threads);
    counters.jit_buckets = jit_buckets.size();
    std::copy(built.begin(), built.end(), out.begin());
    return out;
  }

  void tune(size_t step, runtime::StepKernel& kernel, const std::vector<Tensor>& buffers,
            const std::vector<int64_t>& symbols) override {
    KernelLaunch launch;
    launch.buffers = buffers;
    launch.num_inputs = plan.steps[step].kernel.inputs.size();
    launch.symbols = symbols;
    launch.workers = team.size();
    tune_kernel(static_cast<BuiltKernel&>(kernel), launch, *build_context);
  }

  std::optional<std::string> recorded_superkernel(const std::string& key) override {
    return read_superkernel_record(cache.root(), key);
  }
  void record_superkernel(const std::string& key, const std::string& choice) override {
    write_superkernel_record(cache.root(), key, choice);
  }

  std::vector<runtime::KernelStep> kernel_steps() const {
    std::vector<runtime::KernelStep> steps(plan.steps.size());
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      if (plan.steps[i].kind == fusion::StepKind::Kernel) steps[i] = {kernels[i].source.buffers, kernels[i].source.symbols};
    }
    return steps;
  }
};

Executor::Executor(const Graph& graph, const ExecutorOptions& options, ExecutorCounters& counters)
    : impl_(std::make_unique<Impl>(graph, options, counters)) {}

Executor::~Executor() = default;

void Executor::run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs) {
  impl_->runner->run(inputs, outputs);
}

std::vector<Tensor> Executor::run(const std::map<std::string, Tensor>& inputs) {
  std::vector<Tensor> outputs;
  impl_->runner->run(inputs, outputs);
  return outputs;
}

void Executor::save_package(const std::string& path) const { impl_->save_package(path); }

const fusion::FusionPlan& Executor::plan() const { return impl_->plan; }

runtime::SuperKernelReport Executor::superkernel_report() const { return impl_->runner->superkernel_report(); }

int64_t Executor::launches() const { return fusion::run_time_launches(impl_->plan, impl_->shape_only); }

std::vector<TuningSummary> Executor::tuning_summaries() const {
  std::vector<TuningSummary> out;
  for (size_t i = 0; i < impl_->kernels.size(); ++i) {
    if (impl_->kernels[i].tuning) out.push_back(*impl_->kernels[i].tuning);
    for (TuningSummary& bucket : impl_->jit_buckets.tunings(i)) out.push_back(std::move(bucket));
  }
  return out;
}

}  // namespace tilefuse::driver
