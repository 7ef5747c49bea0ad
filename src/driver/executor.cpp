#include "driver/executor.h"

#include <algorithm>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <list>
#include <mutex>
#include <set>
#include <shared_mutex>

#include <spdlog/spdlog.h>

#include "build/compile_pool.h"
#include "build/hashing.h"
#include "build/precompiled_header.h"
#include "codegen/kernel_emitter.h"
#include "codegen/support_headers.h"
#include "fusion/execution_plan.h"
#include "fusion/shape_only_steps.h"
#include "io/atomic_file.h"
#include "ir/checked_size.h"
#include "ir/error.h"
#include "reference/interpreter.h"
#include "driver/gemm_tuning.h"
#include "driver/hardware_calibration.h"
#include "driver/jit_buckets.h"
#include "runtime/kernel_library.h"
#include "runtime/library_call.h"
#include "runtime/memory_planner.h"
#include "runtime/shape_only_values.h"
#include "runtime/thread_team.h"

namespace tilefuse::driver {

namespace {

namespace fs = std::filesystem;

// Writes the embedded support headers under <cache root>/include/<fingerprint>/ (once) and
// returns that directory for the compiler's include path.
std::string install_support_headers(const std::string& cache_root, std::string& fingerprint) {
  std::string all;
  for (const auto& h : codegen::support_headers()) all += h.relative_path + '\0' + h.text + '\0';
  fingerprint = build::sha256_hex(all).substr(0, 16);
  fs::path dir = fs::path(cache_root) / "include" / fingerprint;
  for (const auto& h : codegen::support_headers()) {
    fs::path file = dir / h.relative_path;
    if (fs::exists(file) && fs::file_size(file) == h.text.size()) continue;
    fs::create_directories(file.parent_path());
    io::write_file_atomically(file.string(), h.text);
  }
  return dir.string();
}

// One thread team per process and size: executors of the same device limit share it (the team
// serialises concurrent runs), so a process never oversubscribes its cores with idle teams.
std::shared_ptr<runtime::ThreadTeam> shared_team(int threads) {
  static std::mutex mutex;
  static std::map<int, std::weak_ptr<runtime::ThreadTeam>> teams;
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<runtime::ThreadTeam> team = teams[threads].lock();
  if (!team) {
    team = std::make_shared<runtime::ThreadTeam>(threads);
    teams[threads] = team;
  }
  return team;
}

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

// Where each value's bytes are during a run: constants, the arena and shape-only values are
// bound once per context, graph inputs and outputs on every run.
struct Bound {
  std::map<const Value*, void*> data;
};

// Buffers and launch parameters for one set of input shapes, used by one run at a time:
// concurrent runs of the same shapes each check out a context of their own.
struct Prepared {
  bool in_use = false;  // checked out by a run (guarded by Impl::pool_mutex)
  SymbolBindings bindings;
  std::map<const Value*, std::vector<int64_t>> shapes;
  std::map<const Value*, size_t> arena_offset;  // intermediates
  runtime::ShapeOnlyValues shape_only_values;   // results of the shape-only steps, for these shapes
  runtime::Arena arena;
  Bound bound;
  std::vector<bool> writes_output;    // per graph output: its producer writes the caller's buffer
  std::vector<BuiltKernel*> kernels;  // per step: what runs (a jit kernel's bucket); null for non-kernels
  std::vector<std::vector<int64_t>> kernel_symbols;          // per step (empty for non-kernels)
  std::vector<int64_t> kernel_blocks;                        // per step, for the library in block_library
  std::vector<const runtime::KernelLibrary*> block_library;  // per step: the library kernel_blocks was split for
  std::vector<std::vector<void*>> kernel_buffers;            // per step: the `buffers` argument
  std::vector<std::vector<Tensor>> call_inputs;              // per library-call step: views kept across runs
  std::vector<std::vector<Tensor>> call_outputs;
  size_t scratch_bytes = 0;
  std::vector<runtime::Arena> scratch;  // one per worker
};

// The contexts prepared for one set of input shapes.
struct ShapeEntry {
  std::vector<std::vector<int64_t>> input_dims;  // per graph input
  std::vector<std::unique_ptr<Prepared>> contexts;
};

}  // namespace

struct Executor::Impl {
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
  std::map<const Value*, const Value*> alias_of;  // view outputs -> the value whose bytes they are
  std::vector<bool> shape_only;                   // per step: computed when shapes are prepared, not run
  // Runs check contexts out of `shapes` under pool_mutex. They run under a shared tuning_mutex,
  // or alone under an exclusive one while a kernel they launch is still to be tuned (tuning
  // replaces kernels' libraries) or a profile is recorded.
  std::list<ShapeEntry> shapes;  // most recently run first
  std::mutex pool_mutex;
  std::shared_mutex tuning_mutex;
  std::unique_ptr<std::mutex[]> call_mutex;  // per step: a library call keeps scratch between runs
  // What building and tuning kernels needs; kept because the first run may still tune.
  build::ArtifactCache cache;
  build::Toolchain toolchain = build::Toolchain::from_environment();
  tiling::HardwareModel hardware;
  std::unique_ptr<BuildContext> build_context;

  Impl(const Graph& g, const ExecutorOptions& o, ExecutorCounters& c)
      : planned(timed_plan(g, o.fuse, c.compile_phases_ms)),
        options(o),
        counters(c),
        team_ptr(shared_team(std::max(1, o.device.threads))),
        team(*team_ptr),
        cache(o.cache_dir.empty() ? build::ArtifactCache::default_root() : o.cache_dir) {
    for (const auto& step : plan.steps) {
      if (step.kind == fusion::StepKind::View) alias_of[step.node->outputs[0]] = root(step.node->input(0));
    }
    shape_only = fusion::find_shape_only_steps(plan);
    call_mutex = std::make_unique<std::mutex[]>(plan.steps.size());
    compile_kernels_and_prepare_library_calls();
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
    const runtime::GemmBlocking blocking = runtime::default_blocking(caches.l1d_bytes, caches.l2_bytes);
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const auto& step = plan.steps[i];
      const bool runs_on_node = step.kind == fusion::StepKind::LibraryCall || step.kind == fusion::StepKind::Host;
      if (!runs_on_node || shape_only[i] || !runtime::library_call_supports(*step.node)) continue;
      library_calls[i] = runtime::prepare_library_call(*step.node, blocking);
      counters.packed_weight_bytes += library_calls[i]->packed_bytes();
      tune_library_call(*library_calls[i], *step.node, blocking, caches);
    }
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
  }

  const Value* root(const Value* v) const {
    auto it = alias_of.find(v);
    return it == alias_of.end() ? v : it->second;
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
      spdlog::info("executor: {} kernels ready ({} compiled, {} from cache, {} tuning records reused)", count,
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
      toolchain.include_dirs.push_back(install_support_headers(cache.root(), header_fingerprint));
      build::ensure_precompiled_header(toolchain, toolchain.include_dirs.back() + "/tilefuse_kernel.h");
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

  // ---- preparing buffers for a set of symbol values ----

  SymbolBindings bind_symbols(const std::map<std::string, Tensor>& inputs) const {
    SymbolBindings b;
    for (const Value* in : graph.inputs()) {
      const Tensor& t = inputs.at(in->name);
      for (size_t d = 0; d < in->shape.size(); ++d) {
        if (in->shape[d].is_symbol()) b[in->shape[d].name()] = t.shape()[d];
      }
    }
    return b;
  }

  std::vector<int64_t> concrete(const Value* v, const SymbolBindings& b) const {
    std::vector<int64_t> dims;
    for (const Dim& d : v->shape) {
      for (const auto& s : d.symbols()) {
        if (!b.count(s)) {
          // Name the op: a data-dependent shape (NonZero, or a shape operand computed from data).
          std::string origin = v->producer ? fmt::format(", output of {},", v->producer->describe()) : "";
          fail_user(
              "tensor '{}'{} has shape {} whose symbol '{}' is not fixed by any input: its size depends on "
              "tensor data, and fused execution plans every buffer from the input shapes (use --mode reference)",
              v->name, origin, shape_to_string(v->shape), s);
        }
      }
      try {
        dims.push_back(d.evaluate(b));
      } catch (const UserError& error) {
        fail_user("tensor '{}' of shape {}: {}", v->name, shape_to_string(v->shape), error.what());
      }
    }
    return dims;
  }

  static size_t value_bytes(const Value* v, const std::vector<int64_t>& dims) {
    return checked_nbytes(v->dtype, dims, fmt::format("tensor '{}'", v->name));
  }

  bool is_graph_io(const Value* v) const {
    const auto& ins = graph.inputs();
    const auto& outs = graph.outputs();
    return v->constant || std::find(ins.begin(), ins.end(), v) != ins.end() ||
           std::find(outs.begin(), outs.end(), v) != outs.end();
  }

  std::vector<const Value*> step_outputs(const fusion::PlanStep& step) const {
    if (step.kind == fusion::StepKind::Kernel) return {step.kernel.outputs.begin(), step.kernel.outputs.end()};
    return {step.node->outputs.begin(), step.node->outputs.end()};
  }

  std::vector<const Value*> step_inputs(const fusion::PlanStep& step) const {
    if (step.kind == fusion::StepKind::Kernel) return {step.kernel.inputs.begin(), step.kernel.inputs.end()};
    std::vector<Value*> data = fusion::data_inputs(*step.node);
    return {data.begin(), data.end()};
  }

  static bool same_dims(const std::vector<std::vector<int64_t>>& dims, const std::vector<Value*>& graph_inputs,
                        const std::map<std::string, Tensor>& inputs) {
    for (size_t j = 0; j < graph_inputs.size(); ++j) {
      auto it = inputs.find(graph_inputs[j]->name);
      if (it == inputs.end() || it->second.shape() != dims[j]) return false;
    }
    return true;
  }

  // A context for these inputs' shapes that no other run is using: a free one if there is one,
  // else a new one (the least recently run shapes are forgotten beyond max_prepared_shapes).
  Prepared& check_out(const std::map<std::string, Tensor>& inputs) {
    std::lock_guard lock(pool_mutex);
    for (auto it = shapes.begin(); it != shapes.end(); ++it) {
      if (!same_dims(it->input_dims, graph.inputs(), inputs)) continue;
      shapes.splice(shapes.begin(), shapes, it);
      for (auto& context : it->contexts) {
        if (!context->in_use) {
          context->in_use = true;
          return *context;
        }
      }
      return add_context(*it, it->contexts.front()->bindings);
    }
    const SymbolBindings b = bind_symbols(inputs);
    graph.check_assumptions(b);
    forget_old_shapes();
    ShapeEntry entry;
    for (const Value* in : graph.inputs()) entry.input_dims.push_back(inputs.at(in->name).shape());
    shapes.push_front(std::move(entry));
    try {
      return add_context(shapes.front(), b);
    } catch (...) {
      shapes.pop_front();
      throw;
    }
  }

  void check_in(Prepared& p) {
    std::lock_guard lock(pool_mutex);
    p.in_use = false;
  }

  void forget_old_shapes() {
    const size_t keep = std::max<size_t>(1, options.max_prepared_shapes);
    for (auto it = shapes.end(); shapes.size() >= keep && it != shapes.begin();) {
      --it;
      const bool busy = std::any_of(it->contexts.begin(), it->contexts.end(), [](const auto& c) { return c->in_use; });
      if (busy) continue;
      it = shapes.erase(it);
      ++counters.evicted_shapes;
    }
  }

  Prepared& add_context(ShapeEntry& entry, const SymbolBindings& b) {
    entry.contexts.push_back(prepare(b));
    counters.prepared_shapes = static_cast<int64_t>(shapes.size());
    Prepared& p = *entry.contexts.back();
    p.in_use = true;
    return p;
  }

  std::unique_ptr<Prepared> prepare(const SymbolBindings& b) {
    auto context = std::make_unique<Prepared>();
    Prepared& p = *context;
    p.bindings = b;
    for (const auto& step : plan.steps) {
      for (const Value* v : step_inputs(step)) p.shapes[v] = concrete(v, b);
      for (const Value* v : step_outputs(step)) p.shapes[v] = concrete(v, b);
    }
    for (const Value* v : graph.outputs()) p.shapes[v] = concrete(v, b);
    p.shape_only_values =
        runtime::compute_shape_only_values(plan, shape_only, p.shapes, [this](const Value* v) { return root(v); });
    place_intermediates(p);
    bind_fixed(p);
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      std::vector<int64_t> syms;
      if (plan.steps[i].kind == fusion::StepKind::Kernel) {
        for (const auto& s : kernels[i].source.symbols) syms.push_back(b.at(s));
      }
      p.kernel_symbols.push_back(std::move(syms));
    }
    if (build_context) p.kernels = jit_buckets.kernels_for(p.kernel_symbols, *build_context, options.compile_threads);
    counters.jit_buckets = jit_buckets.size();
    if (p.kernels.empty()) p.kernels.assign(plan.steps.size(), nullptr);  // a plan without kernels
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      if (const BuiltKernel* k = p.kernels[i]) {
        const int64_t* syms = p.kernel_symbols[i].data();
        for (const auto& lib : k->library ? std::vector{k->library} : k->candidate_libraries) {
          p.scratch_bytes = std::max(p.scratch_bytes, lib->scratch_bytes(syms));
        }
      }
      p.kernel_buffers.emplace_back().reserve(kernels[i].source.buffers.size());
    }
    p.kernel_blocks.assign(plan.steps.size(), 0);
    p.block_library.assign(plan.steps.size(), nullptr);
    p.call_inputs.resize(plan.steps.size());
    p.call_outputs.resize(plan.steps.size());
    for (int w = 0; w < team.size(); ++w) p.scratch.emplace_back(std::max<size_t>(p.scratch_bytes, 64));
    return context;
  }

  // Every value that is not a graph input/output/constant and not a view gets arena space for
  // its lifetime: from the step writing it to the last step reading it (or a view of it). A value
  // whose view is a graph output is read once more after the last step, when the outputs are
  // copied out, so it lives to the end: no later step may reuse its bytes.
  void place_intermediates(Prepared& p) {
    std::map<const Value*, runtime::BufferRequest> lifetimes;
    const int end_of_run = static_cast<int>(plan.steps.size());
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const auto& step = plan.steps[i];
      if (step.kind == fusion::StepKind::View || shape_only[i]) continue;
      int s = static_cast<int>(i);
      for (const Value* out : step_outputs(step)) {
        if (is_graph_io(out)) continue;
        lifetimes[out] = {value_bytes(out, p.shapes.at(out)), s, s};
      }
      for (const Value* in : step_inputs(step)) {
        auto it = lifetimes.find(root(in));
        if (it != lifetimes.end()) it->second.last_step = s;
      }
    }
    for (const Value* out : graph.outputs()) {
      auto it = lifetimes.find(root(out));
      if (it != lifetimes.end()) it->second.last_step = end_of_run;
    }
    std::vector<const Value*> order;
    std::vector<runtime::BufferRequest> requests;
    for (const auto& [v, r] : lifetimes) {
      order.push_back(v);
      requests.push_back(r);
    }
    runtime::MemoryPlan mp = runtime::plan_memory(requests);
    try {
      p.arena = runtime::Arena(std::max<size_t>(mp.arena_bytes, 64));
    } catch (const UserError& error) {
      // Name the tensor that asks the most, so a user can tell which shape is to blame.
      if (order.empty()) throw;
      size_t largest = 0;
      for (size_t i = 1; i < requests.size(); ++i) largest = requests[i].bytes > requests[largest].bytes ? i : largest;
      fail_user("{} (its largest tensor is '{}' of shape {}: {} bytes)", error.what(), order[largest]->name,
                dims_to_string(p.shapes.at(order[largest])), requests[largest].bytes);
    }
    for (size_t i = 0; i < order.size(); ++i) p.arena_offset[order[i]] = mp.offsets[i];
  }

  // ---- running ----

  void* data_of(const Bound& bound, const Value* v) const {
    auto it = bound.data.find(root(v));
    if (it == bound.data.end()) fail_internal("executor: no buffer for '{}'", v->name);
    return it->second;
  }

  Tensor view_of(const Bound& bound, const Prepared& p, const Value* v) const {
    return Tensor::view(v->dtype, p.shapes.at(v), data_of(bound, v));
  }

  static bool overlaps(const Tensor& a, const Tensor& b) {
    const auto* a0 = static_cast<const uint8_t*>(a.raw());
    const auto* b0 = static_cast<const uint8_t*>(b.raw());
    return a.nbytes() > 0 && b.nbytes() > 0 && a0 < b0 + b.nbytes() && b0 < a0 + a.nbytes();
  }

  static bool overlaps_inputs_or_outputs(const Tensor& out, const std::map<std::string, Tensor>& inputs,
                                         const std::vector<Tensor>& outputs, size_t index) {
    for (const auto& [name, in] : inputs) {
      if (overlaps(out, in)) return true;
    }
    for (size_t j = 0; j < index; ++j) {
      if (outputs[j].defined() && overlaps(out, outputs[j])) return true;
    }
    return false;
  }

  // The bytes that stay put for a context's life: constants, the arena, the shape-only values.
  void bind_fixed(Prepared& p) const {
    for (const Value* v : graph.values()) {
      if (v->constant) p.bound.data[v] = const_cast<void*>(v->constant->raw());
    }
    for (const auto& [v, offset] : p.arena_offset) p.bound.data[v] = p.arena.data() + offset;
    for (const auto& [v, t] : p.shape_only_values) p.bound.data[v] = const_cast<void*>(t.raw());
    // A graph output that is a view, an input, a constant or a shape-only value is copied at the
    // end instead of written in place.
    for (const Value* out : graph.outputs()) {
      p.writes_output.push_back(out->producer != nullptr && !alias_of.count(out) && !p.bound.data.count(out));
    }
  }

  // The bytes that may move between runs: the caller's inputs and outputs. Rebinding existing
  // keys allocates nothing.
  void bind_run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs, Prepared& p) const {
    for (const Value* in : graph.inputs()) p.bound.data[in] = const_cast<void*>(inputs.at(in->name).raw());
    const auto& outs = graph.outputs();
    outputs.resize(outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      const auto& shape = p.shapes.at(outs[i]);
      // A caller's buffer that shares bytes with an input or an earlier output would be written
      // while still being read (or written twice): such an output gets its own tensor instead.
      const bool aliased = outputs[i].defined() && overlaps_inputs_or_outputs(outputs[i], inputs, outputs, i);
      if (aliased || !outputs[i].defined() || outputs[i].dtype() != outs[i]->dtype || outputs[i].shape() != shape) {
        value_bytes(outs[i], shape);  // names the output if its size overflows
        outputs[i] = Tensor(outs[i]->dtype, shape);
      }
      if (p.writes_output[i]) p.bound.data[outs[i]] = outputs[i].raw();
    }
  }

  // The first run of a kernel that still has TopN candidates measures them on this run's data.
  void tune_step(size_t i, const Bound& bound, Prepared& p) {
    BuiltKernel& k = *p.kernels[i];
    KernelLaunch launch;
    for (const Value* v : k.source.buffers) launch.buffers.push_back(view_of(bound, p, v));
    launch.num_inputs = plan.steps[i].kernel.inputs.size();
    launch.symbols = p.kernel_symbols[i];
    launch.workers = team.size();
    tune_kernel(k, launch, *build_context);
  }

  void run_kernel_step(size_t i, Prepared& p) {
    const Bound& bound = p.bound;
    BuiltKernel& k = *p.kernels[i];
    if (k.needs_tuning()) tune_step(i, bound, p);
    // The pointer array is reused across runs: only user inputs/outputs can move between runs.
    std::vector<void*>& buffers = p.kernel_buffers[i];
    buffers.clear();
    for (const Value* v : k.source.buffers) buffers.push_back(data_of(bound, v));
    const runtime::KernelLibrary& lib = *k.library;
    const int64_t* syms = p.kernel_symbols[i].data();
    const int64_t workers = team.size();
    if (p.block_library[i] != &lib) {  // the first run, or tuning chose another library
      p.kernel_blocks[i] = lib.num_blocks(syms, workers);
      p.block_library[i] = &lib;
    }
    runtime::StepProfile* profile = options.profile;
    const auto& gathers = plan.steps[i].kernel.space.gathers;
    if (!gathers.empty()) {
      for (runtime::Arena& scratch : p.scratch) std::memset(scratch.data(), 0, 2 * sizeof(int64_t));
    }
    team.run(
        p.kernel_blocks[i],
        [&](int worker, int64_t first, int64_t end) {
          const auto start = profile ? runtime::StepProfile::Clock::now() : runtime::StepProfile::Clock::time_point{};
          lib.run_blocks(buffers.data(), syms, workers, first, end, p.scratch[worker].data());
          if (profile) profile->record(static_cast<int64_t>(i), worker, start, runtime::StepProfile::Clock::now());
        },
        k.block_dim);
    if (!gathers.empty()) check_gathers(gathers, p);
  }

  // A kernel's gathers record an index out of range at the start of the worker's scratch
  // (tilefuse_kernel.h: load_gathered); the first one found is reported.
  void check_gathers(const std::vector<std::pair<const Value*, fusion::GatherLoad>>& gathers, const Prepared& p) const {
    for (const runtime::Arena& scratch : p.scratch) {
      const auto* error = reinterpret_cast<const int64_t*>(scratch.data());
      if (error[0] <= 0 || error[0] > static_cast<int64_t>(gathers.size())) continue;
      const auto& [value, g] = gathers[static_cast<size_t>(error[0] - 1)];
      const int64_t n = p.shapes.at(g.data)[static_cast<size_t>(g.axis)];
      fail_user("{}: index {} is out of range for axis {} of size {} (allowed [{}, {}])", value->producer->describe(),
                error[1], g.axis, n, -n, n - 1);
    }
  }

  // A view of `v` for a library call, kept across runs: remade only when the bytes moved (a
  // caller's new input or output buffer).
  void refresh_view(Tensor& view, const Value* v, const Prepared& p) const {
    void* data = data_of(p.bound, v);
    if (!view.defined() || view.raw() != data) view = Tensor::view(v->dtype, p.shapes.at(v), data);
  }

  void run_library_call(size_t i, Prepared& p) {
    const Node& node = *plan.steps[i].node;
    std::vector<Tensor>& ins = p.call_inputs[i];
    std::vector<Tensor>& outs = p.call_outputs[i];
    ins.resize(node.inputs.size());
    outs.resize(node.outputs.size());
    for (size_t j = 0; j < node.inputs.size(); ++j) {
      const Value* v = node.inputs[j];
      if (v == nullptr) continue;
      if (v->constant) {
        if (!ins[j].defined()) ins[j] = *v->constant;
      } else {
        refresh_view(ins[j], v, p);
      }
    }
    for (size_t j = 0; j < node.outputs.size(); ++j) {
      if (p.bound.data.count(node.outputs[j])) refresh_view(outs[j], node.outputs[j], p);  // else an unused output
    }
    std::lock_guard lock(call_mutex[i]);
    library_calls[i]->run(team, ins, outs);
  }

  void run_node_step(size_t i, Prepared& p) {
    if (library_calls[i] != nullptr) return run_library_call(i, p);
    const Bound& bound = p.bound;
    const Node& node = *plan.steps[i].node;
    std::vector<Tensor> ins;
    for (const Value* v : node.inputs) {
      // Shape operands of reductions are constants; everything else was bound for this run.
      ins.push_back(v == nullptr ? Tensor() : v->constant ? *v->constant : view_of(bound, p, v));
    }
    std::vector<Tensor> results = reference::evaluate_node(node, ins);
    for (size_t o = 0; o < node.outputs.size() && o < results.size(); ++o) {
      if (!bound.data.count(node.outputs[o])) continue;  // an unused optional output
      if (results[o].shape() != p.shapes.at(node.outputs[o])) {
        fail_user("{}: output '{}' has shape {} at run time, but {} was planned", node.describe(),
                  node.outputs[o]->name, dims_to_string(results[o].shape()),
                  dims_to_string(p.shapes.at(node.outputs[o])));
      }
      std::memcpy(data_of(bound, node.outputs[o]), results[o].raw(), results[o].nbytes());
    }
  }

  // ---- profiling (only with options.profile) ----

  double step_flops(const fusion::PlanStep& step, const Prepared& p) const {
    if (step.kind == fusion::StepKind::Kernel) {
      const auto& out = p.shapes.at(step.kernel.outputs.front());
      return static_cast<double>(product(out)) * static_cast<double>(step.kernel.nodes.size());
    }
    const Node& n = *step.node;
    const bool conv = n.op == "Conv" || n.op == "FusedConv";
    if (n.op != "MatMul" && n.op != "FusedMatMul" && n.op != "Gemm" && !conv) return 0;
    const double outputs = static_cast<double>(product(p.shapes.at(n.outputs[0])));
    const auto& w = p.shapes.at(n.input(1));
    if (conv) return 2 * outputs * static_cast<double>(product(w) / w[0]);  // per output: C/g * kernel MACs
    const auto& a = p.shapes.at(n.input(0));
    const bool ta = n.op == "Gemm" && n.attr_int("transA", 0) != 0;
    return 2 * outputs * static_cast<double>(ta ? a[a.size() - 2] : a.back());
  }

  void describe_steps(runtime::StepProfile& profile, const Prepared& p) const {
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const auto& step = plan.steps[i];
      runtime::ProfiledStep s;
      for (const Value* v : step_inputs(step)) s.bytes += static_cast<int64_t>(value_bytes(v, p.shapes.at(v)));
      for (const Value* v : step_outputs(step)) s.bytes += static_cast<int64_t>(value_bytes(v, p.shapes.at(v)));
      if (step.kind == fusion::StepKind::Kernel) {
        s.name = step.kernel.name, s.kind = "kernel";
        for (const Node* n : step.kernel.nodes) s.ops += (s.ops.empty() ? "" : " ") + n->op;
      } else {
        s.name = step.node->name.empty() ? step.node->op : step.node->name;
        s.ops = step.node->op;
        const bool library = library_calls[i] != nullptr;  // runtime code, not the reference kernels
        s.kind = step.kind == fusion::StepKind::View ? "view"
                 : shape_only[i]                     ? "per-shape"
                 : library                           ? "library"
                                                     : "host";
      }
      s.flops = step.kind == fusion::StepKind::View ? 0 : step_flops(step, p);
      profile.steps.push_back(std::move(s));
    }
    profile.steps.push_back({"outputs", "copy", "copy of outputs that are views, inputs or constants", 0, 0});
  }

  bool needs_tuning(const Prepared& p) const {
    return std::any_of(p.kernels.begin(), p.kernels.end(), [](const BuiltKernel* k) { return k && k->needs_tuning(); });
  }

  void run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs) {
    std::shared_lock shared(tuning_mutex);
    Prepared& p = check_out(inputs);
    struct CheckIn {
      Impl& impl;
      Prepared& p;
      ~CheckIn() { impl.check_in(p); }
    } check_in_at_exit{*this, p};
    std::unique_lock<std::shared_mutex> alone;
    if (options.profile || needs_tuning(p)) {
      shared.unlock();
      alone = std::unique_lock(tuning_mutex);
    }
    run_steps(inputs, outputs, p);
  }

  void run_steps(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs, Prepared& p) {
    bind_run(inputs, outputs, p);
    runtime::StepProfile* profile = options.profile;
    if (profile) {
      if (profile->steps.empty()) describe_steps(*profile, p);
      profile->begin_run();
    }
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const auto& step = plan.steps[i];
      if (step.kind == fusion::StepKind::View || shape_only[i]) continue;
      if (step.kind == fusion::StepKind::Kernel) {
        run_kernel_step(i, p);
        continue;
      }
      const auto start = profile ? runtime::StepProfile::Clock::now() : runtime::StepProfile::Clock::time_point{};
      run_node_step(i, p);
      if (profile) profile->record(static_cast<int64_t>(i), 0, start, runtime::StepProfile::Clock::now());
    }
    const auto start = profile ? runtime::StepProfile::Clock::now() : runtime::StepProfile::Clock::time_point{};
    const auto& outs = graph.outputs();
    bool copied = false;
    for (size_t i = 0; i < outs.size(); ++i) {
      void* src = data_of(p.bound, outs[i]);
      if (src != outputs[i].raw()) std::memcpy(outputs[i].raw(), src, outputs[i].nbytes()), copied = true;
    }
    if (profile && copied)
      profile->record(static_cast<int64_t>(plan.steps.size()), 0, start, runtime::StepProfile::Clock::now());
    ++counters.runs;
  }
};

Executor::Executor(const Graph& graph, const ExecutorOptions& options, ExecutorCounters& counters)
    : impl_(std::make_unique<Impl>(graph, options, counters)) {}

Executor::~Executor() = default;

void Executor::run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs) {
  impl_->run(inputs, outputs);
}

std::vector<Tensor> Executor::run(const std::map<std::string, Tensor>& inputs) {
  std::vector<Tensor> outputs;
  impl_->run(inputs, outputs);
  return outputs;
}

const fusion::FusionPlan& Executor::plan() const { return impl_->plan; }

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
