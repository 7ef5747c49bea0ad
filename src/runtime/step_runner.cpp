#include "runtime/step_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <list>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <sstream>
#include <string>

#include "fusion/concat_in_place.h"
#include "fusion/execution_plan.h"
#include "ir/checked_size.h"
#include "ir/error.h"
#include "ir/log.h"
#include "reference/interpreter.h"
#include "runtime/cpu_wait.h"
#include "runtime/memory_planner.h"
#include "runtime/row_chain.h"
#include "runtime/shape_only_values.h"
#include "runtime/superkernel_schedule.h"

namespace tilefuse::runtime {

namespace {

// How a context's runs go: step by step, or in one parallel region whose steps estimated below
// `floor_ns` run on one worker. Recorded as "off" or "on floor_ns=<n>", followed by the team's
// handoff when it was measured (" handoff_us=<h>"; absent: unknown).
struct RegionChoice {
  bool on = false;
  double floor_ns = kDefaultParallelFloorNs;
  std::optional<double> handoff_us;

  // As reports show it: the way alone.
  std::string text() const { return on ? fmt::format("on floor_ns={}", floor_ns) : "off"; }
  std::string record_text() const {
    return handoff_us ? fmt::format("{} handoff_us={:.2f}", text(), *handoff_us) : text();
  }
  static std::optional<RegionChoice> parse(const std::string& text) {
    std::istringstream in(text);
    std::string way, field;
    RegionChoice choice;
    if (!(in >> way) || (way != "off" && way != "on")) return std::nullopt;
    choice.on = way == "on";
    bool has_floor = false;
    while (in >> field) {
      double value = 0;
      if (std::sscanf(field.c_str(), "floor_ns=%lf", &value) == 1 && choice.on && value >= 0) {
        choice.floor_ns = value, has_floor = true;
      } else if (std::sscanf(field.c_str(), "handoff_us=%lf", &value) == 1 && value >= 0) {
        choice.handoff_us = value;
      } else {
        return std::nullopt;
      }
    }
    if (choice.on != has_floor) return std::nullopt;
    return choice;
  }
};

// A step's completion counter in a SuperKernel region, alone on its cache line: workers finishing
// parts of different steps do not contend.
struct alignas(64) StepCounter {
  std::atomic<int64_t> value{0};
};

// Buffers and launch parameters for one set of input shapes, used by one run at a time:
// concurrent runs of the same shapes each check out a context of their own.
struct Prepared {
  bool in_use = false;  // checked out by a run (guarded by Impl::pool_mutex)
  SymbolBindings bindings;
  std::map<const Value*, std::vector<int64_t>> shapes;
  std::map<const Value*, size_t> arena_offset;  // intermediates
  ShapeOnlyValues shape_only_values;            // results of the shape-only steps, for these shapes
  Arena arena;
  // Where each value's bytes are during a run: constants, the arena and shape-only values are
  // bound once per context, graph inputs and outputs on every run.
  std::map<const Value*, void*> bound;
  std::vector<bool> writes_output;                   // per graph output: its producer writes the caller's buffer
  std::vector<StepKernel*> kernels;                  // per step: what runs (a jit kernel's bucket); null for others
  std::vector<std::vector<int64_t>> kernel_symbols;  // per step (empty for non-kernels)
  std::vector<int64_t> kernel_blocks;                // per step, for the library in block_library
  std::vector<const KernelLibrary*> block_library;   // per step: the library kernel_blocks was split for
  std::vector<std::vector<void*>> kernel_buffers;    // per step: the `buffers` argument
  std::vector<std::vector<Tensor>> call_inputs;      // per library-call step: views kept across runs
  std::vector<std::vector<Tensor>> call_outputs;
  size_t scratch_bytes = 0;
  std::vector<Arena> scratch;                        // one per worker
  // The SuperKernel for these shapes: its schedule for the parallel floor it was made with, one
  // completion counter per scheduled step, and how runs go (unset: not measured yet).
  std::vector<RegionStep> region_schedule;
  std::optional<double> scheduled_floor_ns;
  bool region_alone = false;  // every scheduled step on one worker: the others are never needed
  int64_t region_waits = 0;   // waits in the schedule, for the counters
  std::unique_ptr<StepCounter[]> region_done;
  std::optional<RegionChoice> superkernel;
};

// The contexts prepared for one set of input shapes.
struct ShapeEntry {
  std::vector<std::vector<int64_t>> input_dims;  // per graph input
  std::vector<std::unique_ptr<Prepared>> contexts;
};

}  // namespace

struct StepRunner::Impl {
  const Graph& graph;
  const fusion::FusionPlan& plan;
  const std::vector<KernelStep> kernel_steps;
  const std::vector<std::unique_ptr<LibraryCall>>& library_calls;
  const std::vector<bool> shape_only;  // per step: computed when shapes are prepared, not run
  ThreadTeam& team;
  KernelProvider& provider;
  const RunOptions options;
  RunCounters& counters;
  // Values whose bytes lie inside another's: a view's result (at offset 0 of its input) and the
  // inputs of a Concat in place (fusion/concat_in_place.h: a block at its place in the result,
  // or a strided part that its kernel writes across the whole result), and the result of a
  // Concat whose inputs are a run of another's blocks (at that run's place).
  struct Alias {
    const Value* of;
    size_t byte_offset;
    bool spans_owner = false;  // a strided part: its bytes are interleaved with the others'
  };
  std::map<const Value*, Alias> alias_of;
  // Runs check contexts out of `shapes` under pool_mutex. They run under a shared tuning_mutex,
  // or alone under an exclusive one while a kernel they launch is still to be tuned (tuning
  // replaces kernels' libraries) or a profile is recorded.
  std::list<ShapeEntry> shapes;  // most recently run first
  std::mutex pool_mutex;
  std::shared_mutex tuning_mutex;
  // A library call keeps scratch between runs, so two runs must not be inside one call at once.
  // On a team of several workers, a run holds team_mutex for its whole length: a region holds
  // the team for the run anyway, and a call's own mutex taken inside it, with step-by-step runs
  // taking that mutex before the team, would deadlock. (The team runs one job at a time, so
  // little is lost.) On a one-worker team runs stay concurrent, each on its own thread, and
  // each call has its own mutex.
  std::mutex team_mutex;
  std::unique_ptr<std::mutex[]> call_mutex;  // per step, used on a one-worker team
  // Per step, the row chain (fusion/row_chains.h) it belongs to, or -1. A chain runs as its first
  // step; its other two do not run on their own.
  std::vector<int> chain_of;
  // Per chain, where its kernel's buffer list has the first product's result and its own.
  struct ChainBuffers {
    size_t x = 0, y = 0;
  };
  std::vector<ChainBuffers> chain_buffers;

  Impl(const Graph& g, const fusion::FusionPlan& p, std::vector<KernelStep> k,
       const std::vector<std::unique_ptr<LibraryCall>>& calls, std::vector<bool> only, ThreadTeam& t,
       KernelProvider& kp, const RunOptions& o, RunCounters& c)
      : graph(g), plan(p), kernel_steps(std::move(k)), library_calls(calls), shape_only(std::move(only)), team(t),
        provider(kp), options(o), counters(c), call_mutex(std::make_unique<std::mutex[]>(p.steps.size())),
        chain_of(p.steps.size(), -1) {
    for (size_t c = 0; c < plan.row_chains.size(); ++c) {
      const fusion::RowChain& chain = plan.row_chains[c];
      const std::vector<const Value*>& values = kernel_steps[chain.kernel].buffers;
      auto at = [&](const Value* v) { return static_cast<size_t>(std::find(values.begin(), values.end(), v) - values.begin()); };
      chain_buffers.push_back({at(plan.steps[chain.first_product].node->outputs[0]), at(plan.steps[chain.kernel].kernel.outputs[0])});
      if (!library_calls[chain.first_product] || !library_calls[chain.second_product]) continue;  // prepared without
      for (size_t s : {chain.first_product, chain.kernel, chain.second_product}) chain_of[s] = static_cast<int>(c);
    }
    for (size_t s = 0; s < plan.steps.size(); ++s) {
      const fusion::PlanStep& step = plan.steps[s];
      if (step.kind != fusion::StepKind::View) continue;
      const Node& n = *step.node;
      const size_t element = dtype_size(n.outputs[0]->dtype);
      if (const Node* outer = fusion::enclosing_concat(plan, s)) {
        const auto offset = static_cast<size_t>(fusion::enclosing_concat_offset(n, *outer));
        alias_of[n.outputs[0]] = {outer->outputs[0], offset * element};
      } else if (fusion::is_concat_in_place(step)) {
        const bool strided = fusion::concat_parts_strided(n);
        for (size_t i = 0; i < n.inputs.size(); ++i) {
          alias_of[n.inputs[i]] = {n.outputs[0], static_cast<size_t>(fusion::concat_input_offset(n, i)) * element, strided};
        }
      } else {
        alias_of[n.outputs[0]] = {n.input(0), 0};
      }
    }
  }

  // The value that owns `v`'s bytes (v itself unless it is an alias), and v's byte offset in them.
  struct Place {
    const Value* owner;
    size_t byte_offset;
    bool spans_owner;  // a strided part somewhere on the way: v's bytes are the owner's whole range
  };
  Place place_of(const Value* v) const {
    size_t offset = 0;
    bool spans = false;
    for (auto it = alias_of.find(v); it != alias_of.end(); it = alias_of.find(v)) {
      offset += it->second.byte_offset;
      spans = spans || it->second.spans_owner;
      v = it->second.of;
    }
    return {v, offset, spans};
  }
  const Value* root(const Value* v) const { return place_of(v).owner; }
  // Whether `v` has bytes this run (an unused optional output has none).
  bool has_buffer(const Prepared& p, const Value* v) const { return p.bound.count(root(v)) != 0; }

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
          throw NeedsReferenceMode(fmt::format(
              "tensor '{}'{} has shape {} whose symbol '{}' is not fixed by any input: its size depends on "
              "tensor data, and fused execution plans every buffer from the input shapes (use --mode reference)",
              v->name, origin, shape_to_string(v->shape), s));
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

  // The steps [first, last] that run together with step i: its row chain's, or i alone.
  std::pair<int, int> chain_span(size_t i) const {
    if (chain_of[i] < 0) return {static_cast<int>(i), static_cast<int>(i)};
    const fusion::RowChain& c = plan.row_chains[static_cast<size_t>(chain_of[i])];
    return {static_cast<int>(c.first_product), static_cast<int>(c.second_product)};
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
        compute_shape_only_values(plan, shape_only, p.shapes, [this](const Value* v) { return root(v); });
    place_intermediates(p);
    bind_fixed(p);
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      std::vector<int64_t> syms;
      if (plan.steps[i].kind == fusion::StepKind::Kernel) {
        for (const auto& s : kernel_steps[i].symbols) syms.push_back(b.at(s));
      }
      p.kernel_symbols.push_back(std::move(syms));
    }
    p.kernels = provider.kernels_for(p.kernel_symbols);
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      if (const StepKernel* k = p.kernels[i]) {
        const int64_t* syms = p.kernel_symbols[i].data();
        for (const auto& lib : k->library ? std::vector{k->library} : k->candidate_libraries) {
          p.scratch_bytes = std::max(p.scratch_bytes, lib->scratch_bytes(syms));
        }
      }
      p.kernel_buffers.emplace_back().reserve(kernel_steps[i].buffers.size());
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
    std::map<const Value*, BufferRequest> lifetimes;
    const int end_of_run = static_cast<int>(plan.steps.size());
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const auto& step = plan.steps[i];
      if (step.kind == fusion::StepKind::View || shape_only[i]) continue;
      // A row chain's steps run at once: what they write lives from its first, what they read
      // to its last.
      const auto [first, last] = chain_span(i);
      for (const Value* out : step_outputs(step)) {
        const Value* owner = root(out);  // a Concat in place's result lives from its first input's step
        if (is_graph_io(owner)) continue;
        lifetimes.try_emplace(owner, BufferRequest{value_bytes(owner, p.shapes.at(owner)), first, first});
      }
      for (const Value* in : step_inputs(step)) {
        auto it = lifetimes.find(root(in));
        if (it != lifetimes.end()) it->second.last_step = std::max(it->second.last_step, last);
      }
    }
    for (const Value* out : graph.outputs()) {
      auto it = lifetimes.find(root(out));
      if (it != lifetimes.end()) it->second.last_step = end_of_run;
    }
    std::vector<const Value*> order;
    std::vector<BufferRequest> requests;
    for (const auto& [v, r] : lifetimes) {
      order.push_back(v);
      requests.push_back(r);
    }
    MemoryPlan mp = plan_memory(requests);
    try {
      p.arena = Arena(std::max<size_t>(mp.arena_bytes, 64));
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

  void* data_of(const Prepared& p, const Value* v) const {
    const Place place = place_of(v);
    auto it = p.bound.find(place.owner);
    if (it == p.bound.end()) fail_internal("executor: no buffer for '{}'", v->name);
    return static_cast<uint8_t*>(it->second) + place.byte_offset;
  }

  Tensor view_of(const Prepared& p, const Value* v) const {
    return Tensor::view(v->dtype, p.shapes.at(v), data_of(p, v));
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
      if (v->constant) p.bound[v] = const_cast<void*>(v->constant->raw());
    }
    for (const auto& [v, offset] : p.arena_offset) p.bound[v] = p.arena.data() + offset;
    for (const auto& [v, t] : p.shape_only_values) p.bound[v] = const_cast<void*>(t.raw());
    // A graph output that is a view, an input, a constant or a shape-only value is copied at the
    // end instead of written in place.
    for (const Value* out : graph.outputs()) {
      p.writes_output.push_back(out->producer != nullptr && !alias_of.count(out) && !p.bound.count(out));
    }
  }

  // The bytes that may move between runs: the caller's inputs and outputs. Rebinding existing
  // keys allocates nothing.
  void bind_run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs, Prepared& p) const {
    for (const Value* in : graph.inputs()) p.bound[in] = const_cast<void*>(inputs.at(in->name).raw());
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
      if (p.writes_output[i]) p.bound[outs[i]] = outputs[i].raw();
    }
  }

  // The first launch of a kernel that still has TopN candidates measures them on this run's data.
  void tune_step(size_t i, Prepared& p) {
    std::vector<Tensor> views;
    for (const Value* v : kernel_steps[i].buffers) {
      // A strided part is written across its owner: candidates get (and copy) the owner whole.
      const Place place = place_of(v);
      views.push_back(place.spans_owner ? view_of(p, place.owner) : view_of(p, v));
    }
    provider.tune(i, *p.kernels[i], views, p.kernel_symbols[i]);
  }

  void run_kernel_step(size_t i, Prepared& p) {
    StepKernel& k = *p.kernels[i];
    if (k.needs_tuning()) tune_step(i, p);
    bind_kernel(i, p);
    team.run(
        p.kernel_blocks[i],
        [&](int worker, int64_t first, int64_t end) { run_kernel_blocks(i, worker, first, end, p); }, k.block_dim);
  }

  // The launch data of kernel step i: its buffers' addresses (the array is reused across runs:
  // only a caller's inputs and outputs move) and its block count.
  void bind_kernel(size_t i, Prepared& p) {
    std::vector<void*>& buffers = p.kernel_buffers[i];
    buffers.clear();
    for (const Value* v : kernel_steps[i].buffers) buffers.push_back(data_of(p, v));
    const KernelLibrary& lib = *p.kernels[i]->library;
    if (p.block_library[i] != &lib) {  // the first run, or tuning chose another library
      p.kernel_blocks[i] = lib.num_blocks(p.kernel_symbols[i].data(), team.size());
      p.block_library[i] = &lib;
    }
  }

  // Blocks [first, end) of kernel step i, on `worker`. A kernel's gathers record an index out of
  // range at the start of the worker's scratch (tilefuse_kernel.h: load_gathered): cleared
  // before, reported after.
  void run_kernel_blocks(size_t i, int worker, int64_t first, int64_t end, Prepared& p) {
    const auto& gathers = plan.steps[i].kernel.space.gathers;
    void* scratch = p.scratch[worker].data();
    if (!gathers.empty()) std::memset(scratch, 0, 2 * sizeof(int64_t));
    StepProfile* profile = options.profile;
    const auto start = profile ? StepProfile::Clock::now() : StepProfile::Clock::time_point{};
    p.kernels[i]->library->run_blocks(p.kernel_buffers[i].data(), p.kernel_symbols[i].data(), team.size(), first, end,
                                      scratch);
    if (profile) profile->record(static_cast<int64_t>(i), worker, start, StepProfile::Clock::now());
    if (!gathers.empty()) check_gathers(gathers, scratch, p);
  }

  void check_gathers(const std::vector<std::pair<const Value*, fusion::GatherLoad>>& gathers, const void* scratch,
                     const Prepared& p) const {
    const auto* error = static_cast<const int64_t*>(scratch);
    if (error[0] <= 0 || error[0] > static_cast<int64_t>(gathers.size())) return;
    const auto& [value, g] = gathers[static_cast<size_t>(error[0] - 1)];
    const int64_t n = p.shapes.at(g.data)[static_cast<size_t>(g.axis)];
    fail_user("{}: index {} is out of range for axis {} of size {} (allowed [{}, {}])", value->producer->describe(),
              error[1], g.axis, n, -n, n - 1);
  }

  // A view of `v` for a library call, kept across runs: remade only when the bytes moved (a
  // caller's new input or output buffer).
  void refresh_view(Tensor& view, const Value* v, const Prepared& p) const {
    void* data = data_of(p, v);
    if (!view.defined() || view.raw() != data) view = Tensor::view(v->dtype, p.shapes.at(v), data);
  }

  // Library call i's inputs and outputs as tensors over this run's buffers (p.call_inputs[i],
  // p.call_outputs[i]).
  void bind_call(size_t i, Prepared& p) {
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
      if (has_buffer(p, node.outputs[j])) refresh_view(outs[j], node.outputs[j], p);  // else an unused output
    }
  }

  // True where every output the plan keeps is empty. Calls divide by dims that are then 0 (a
  // GatherElements over an empty sequence did: SIGFPE).
  static bool all_empty(const std::vector<Tensor>& outputs) {
    bool any = false;
    for (const Tensor& t : outputs) {
      if (!t.defined()) continue;
      if (t.numel() != 0) return false;
      any = true;
    }
    return any;
  }

  // A call keeps scratch between runs: on a one-worker team each has its own mutex (else the run
  // holds team_mutex).
  std::unique_lock<std::mutex> lock_call(size_t i) {
    return team.size() == 1 ? std::unique_lock(call_mutex[i]) : std::unique_lock<std::mutex>();
  }

  void run_library_call(size_t i, Prepared& p) {
    bind_call(i, p);
    if (all_empty(p.call_outputs[i])) return;  // an empty batch or sequence: nothing to compute
    const auto lock = lock_call(i);
    library_calls[i]->run(team, p.call_inputs[i], p.call_outputs[i]);
  }

  // A row chain, a band of rows at a time (runtime/row_chain.h); step by step while its kernel
  // awaits tuning (its first launch measures its candidates on the whole tensors) or where the
  // products do not line up with the kernel's rows at this run's shapes.
  void run_row_chain_steps(size_t chain, Prepared& p) {
    const fusion::RowChain& c = plan.row_chains[chain];
    if (!p.kernels[c.kernel]->needs_tuning()) {
      bind_kernel(c.kernel, p);
      bind_call(c.first_product, p);
      bind_call(c.second_product, p);
      const auto first_lock = lock_call(c.first_product);
      const auto second_lock = lock_call(c.second_product);
      LibraryCall& first_call = *library_calls[c.first_product];
      LibraryCall& second_call = *library_calls[c.second_product];
      const auto first = first_call.row_problems(p.call_inputs[c.first_product], p.call_outputs[c.first_product]);
      const auto second = second_call.row_problems(p.call_inputs[c.second_product], p.call_outputs[c.second_product]);
      if (row_chain_fits(first, second, p.kernel_blocks[c.kernel])) {
        const int64_t row_length = p.shapes.at(plan.steps[c.kernel].kernel.outputs[0]).back();
        const auto kernel_rows = [&](int worker, int64_t row0, int64_t row1, const float* x, float* y) {
          run_chain_kernel_rows(chain, p, worker, row0, row1, row_length, x, y);
        };
        run_row_chain(team, first, second, kernel_rows, first_call.blocking(), second_call.blocking(),
                      options.row_chain_band_bytes);
        return;
      }
    }
    run_library_call(c.first_product, p);
    run_kernel_step(c.kernel, p);
    run_library_call(c.second_product, p);
  }

  // Rows [row0, row1) of a chain's kernel, reading the first product's rows from the band `x` and
  // writing its own to the band `y`. The kernel addresses row r at r * row_length floats from a
  // buffer's start, so it is handed each band's address less row0's offset.
  void run_chain_kernel_rows(size_t chain, Prepared& p, int worker, int64_t row0, int64_t row1, int64_t row_length,
                             const float* x, float* y) {
    const size_t step = plan.row_chains[chain].kernel;
    const auto shift = static_cast<uintptr_t>(row0 * row_length) * sizeof(float);
    thread_local std::vector<void*> buffers;
    buffers = p.kernel_buffers[step];
    buffers[chain_buffers[chain].x] = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(x) - shift);
    buffers[chain_buffers[chain].y] = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(y) - shift);
    p.kernels[step]->library->run_blocks(buffers.data(), p.kernel_symbols[step].data(), team.size(), row0, row1,
                                         p.scratch[worker].data());
  }

  void run_node_step_timed(size_t i, Prepared& p) {
    StepProfile* profile = options.profile;
    const auto start = profile ? StepProfile::Clock::now() : StepProfile::Clock::time_point{};
    run_node_step(i, p);
    if (profile) profile->record(static_cast<int64_t>(i), 0, start, StepProfile::Clock::now());
  }

  void run_node_step(size_t i, Prepared& p) {
    if (chain_of[i] >= 0) return run_row_chain_steps(static_cast<size_t>(chain_of[i]), p);
    if (library_calls[i] != nullptr) return run_library_call(i, p);
    const Node& node = *plan.steps[i].node;
    std::vector<Tensor> ins;
    for (const Value* v : node.inputs) {
      // Shape operands of reductions are constants; everything else was bound for this run.
      ins.push_back(v == nullptr ? Tensor() : v->constant ? *v->constant : view_of(p, v));
    }
    std::vector<Tensor> results = reference::evaluate_node(node, ins);
    for (size_t o = 0; o < node.outputs.size() && o < results.size(); ++o) {
      if (!has_buffer(p, node.outputs[o])) continue;  // an unused optional output
      if (results[o].shape() != p.shapes.at(node.outputs[o])) {
        fail_user("{}: output '{}' has shape {} at run time, but {} was planned", node.describe(),
                  node.outputs[o]->name, dims_to_string(results[o].shape()),
                  dims_to_string(p.shapes.at(node.outputs[o])));
      }
      std::memcpy(data_of(p, node.outputs[o]), results[o].raw(), results[o].nbytes());
    }
  }

  // ---- profiling (only with options.profile) ----

  // Bytes a step reads and writes, each input and output counted once.
  int64_t step_bytes(const fusion::PlanStep& step, const Prepared& p) const {
    int64_t bytes = 0;
    for (const Value* v : step_inputs(step)) bytes += static_cast<int64_t>(value_bytes(v, p.shapes.at(v)));
    for (const Value* v : step_outputs(step)) bytes += static_cast<int64_t>(value_bytes(v, p.shapes.at(v)));
    return bytes;
  }

  double step_flops(const fusion::PlanStep& step, const Prepared& p) const {
    if (step.kind == fusion::StepKind::Kernel) {
      const auto& out = p.shapes.at(step.kernel.outputs.front());
      return static_cast<double>(product(out)) * static_cast<double>(step.kernel.nodes.size());
    }
    const Node& n = *step.node;
    const bool conv = n.op == "Conv" || n.op == "FusedConv";
    const double outputs = static_cast<double>(product(p.shapes.at(n.outputs[0])));
    if (n.op == "PointwiseDepthwiseConv") {  // the 1x1 convolution's MACs (E per input value), then the depthwise one's
      const auto& w2 = p.shapes.at(n.input(2));
      return 2 * static_cast<double>(product(p.shapes.at(n.input(0)))) * static_cast<double>(p.shapes.at(n.input(1))[0]) +
             2 * outputs * static_cast<double>(product(w2) / w2[0]);
    }
    if (n.op != "MatMul" && n.op != "FusedMatMul" && n.op != "Gemm" && !conv) return 0;
    const auto& w = p.shapes.at(n.input(1));
    if (conv) return 2 * outputs * static_cast<double>(product(w) / w[0]);  // per output: C/g * kernel MACs
    const auto& a = p.shapes.at(n.input(0));
    // The contracted dim: A's last, or the one Gemm's transA or FusedMatMul's perm_a puts last.
    size_t k_dim = a.size() - 1;
    if (n.op == "Gemm" && n.attr_int("transA", 0) != 0) k_dim = 0;
    if (n.has_attr("perm_a")) k_dim = static_cast<size_t>(n.attr_ints("perm_a").back());
    return 2 * outputs * static_cast<double>(a[k_dim]);
  }

  void describe_steps(StepProfile& profile, const Prepared& p) const {
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const auto& step = plan.steps[i];
      ProfiledStep s;
      s.name = step_name(i);
      s.bytes = step_bytes(step, p);
      if (step.kind == fusion::StepKind::Kernel) {
        s.kind = "kernel";
        for (const Node* n : step.kernel.nodes) {
          s.ops += (s.ops.empty() ? "" : " ") + n->op;
          s.nodes.push_back(n->name);
        }
      } else {
        s.ops = step.node->op;
        s.nodes.push_back(step.node->name);
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
    return std::any_of(p.kernels.begin(), p.kernels.end(), [](const StepKernel* k) { return k && k->needs_tuning(); });
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
    run_steps(inputs, outputs, p, region_for(p));
    if (chooses_superkernel_now(p)) {
      choose_superkernel(inputs, outputs, p);
      run_steps(inputs, outputs, p, *p.superkernel);  // so that the counters describe the chosen way
    }
    ++counters.runs;
  }

  // How this run of context p goes.
  RegionChoice region_for(const Prepared& p) const {
    if (!region_possible(p)) return {};
    if (options.superkernel == SuperKernelMode::on) return {true, options.superkernel_floor_ns};
    return p.superkernel.value_or(RegionChoice{});
  }

  bool region_possible(const Prepared& p) const {
    return options.superkernel != SuperKernelMode::off && team.size() > 1 && !team.in_region() && !needs_tuning(p);
  }

  bool chooses_superkernel_now(const Prepared& p) const {
    return options.superkernel == SuperKernelMode::automatic && !p.superkernel && region_possible(p) &&
           options.profile == nullptr;
  }

  // The per-model choice: the recorded one, else every way measured on this run's inputs, in
  // turns (best of up to 9 rounds, while 250 ms have not passed), and recorded. Of the ways
  // within 10% of the fastest, the one with the fewest barriers wins: runs measured back to back
  // find the other workers awake, while a model called now and then pays a wake-up (tens of
  // microseconds on a virtual machine) for each barrier. A run that takes half a second pays
  // for a barrier a thousand times over: such shapes run step by step, unmeasured.
  //
  // The choice holds for the placement of the workers' CPUs it was measured in. On this
  // project's VM that placement changes for seconds to minutes at a time: with handoffs of 0.1-0.3
  // us, MobileNetV2 (64 x 64) ran fastest step by step (0.55-0.85 ms) and 1.5x slower with most
  // steps on one worker; with handoffs of 1.1-1.3 us both ways took about 1 ms and the latter won
  // by 2-20%, in 19 of 30 processes. So a record keeps the handoff it was measured with, and a
  // process whose team hands off more than twice as fast measures again and records what it finds:
  // the record moves to the placement where the team is at its best, and stays there.
  void choose_superkernel(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs, Prepared& p) {
    const std::string key = superkernel_key(p);
    const double handoff_now = probe_handoff_us();
    if (const std::optional<std::string> recorded = provider.recorded_superkernel(key)) {
      if ((p.superkernel = RegionChoice::parse(*recorded))) {
        if (!measured_with_slower_handoffs(*p.superkernel, handoff_now)) return;
        logger().info("superkernel: the recorded choice was measured with handoffs of {:.2f} us, {:.2f} now; measuring "
                      "again", *p.superkernel->handoff_us, handoff_now);
      } else {
        logger().warn("superkernel: ignoring the recorded choice '{}' (not 'off' or 'on floor_ns=<n>', with an "
                      "optional 'handoff_us=<h>'); measuring again", *recorded);
      }
    }
    std::vector<RegionChoice> choices = {RegionChoice{}};
    for (double floor : kParallelFloorsNs) choices.push_back({true, floor});
    std::vector<double> best;
    std::vector<int64_t> barriers;
    // Workers that had to wait for a CPU (another busy process, or two of them woken onto one
    // CPU), or whose handoffs were slow (cpu_wait.h), time every way that splits work as slow as
    // one worker: measured again, twice at most, and then left step by step, for this process only.
    double waited = 0, handoff = handoff_now;
    for (int attempt = 0; attempt < 3; ++attempt) {
      if (attempt > 0) handoff = probe_handoff_us();
      waited = time_region_choices(inputs, outputs, p, choices, best, barriers);
      handoff = std::max(handoff, probe_handoff_us());
      if (trusted_measurement(waited) && handoff <= kTrustedHandoffUs) break;
    }
    const double fastest = *std::min_element(best.begin(), best.end());
    size_t winner = 0;
    for (size_t c = 0; c < choices.size(); ++c) {
      if (best[c] > 1.1 * fastest) continue;
      const bool fewer = barriers[c] < barriers[winner] || best[winner] > 1.1 * fastest;
      if (fewer || (barriers[c] == barriers[winner] && best[c] < best[winner])) winner = c;
    }
    std::string measured;
    for (size_t c = 0; c < choices.size(); ++c) {
      measured += fmt::format("{}{}: {:.1f} us, {} barriers", c ? "; " : "", choices[c].text(), best[c], barriers[c]);
    }
    const bool trusted = may_record(waited, handoff, "the SuperKernel choice");
    p.superkernel = choices[trusted ? winner : 0];
    p.superkernel->handoff_us = handoff;
    logger().info("superkernel: {} for these shapes ({}; handoffs {:.2f} us)", p.superkernel->text(), measured, handoff);
    if (trusted) provider.record_superkernel(key, p.superkernel->record_text());
  }

  // Whether `recorded` was measured while the team handed off more than twice as slowly as it
  // does now (plus 0.2 us, a margin for the noise of the probe's fastest results).
  static bool measured_with_slower_handoffs(const RegionChoice& recorded, double handoff_now) {
    return recorded.handoff_us && *recorded.handoff_us > 2 * handoff_now + 0.2;
  }

  // The team's handoff now (cpu_wait.h), with the team held as a run holds it.
  double probe_handoff_us() {
    std::unique_lock<std::mutex> team_held(team_mutex);
    return handoff_us(team);
  }

  // Times each way in turns, best of up to 9 rounds while 250 ms have not passed, into `best`
  // (microseconds) and `barriers`; returns the share of the time the workers waited for a CPU.
  double time_region_choices(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs, Prepared& p,
                             const std::vector<RegionChoice>& choices, std::vector<double>& best,
                             std::vector<int64_t>& barriers) {
    using Clock = std::chrono::steady_clock;
    best.assign(choices.size(), std::numeric_limits<double>::infinity());
    barriers.assign(choices.size(), 0);
    team.spread_workers();
    const CpuWaitMeter meter(team);
    const auto deadline = Clock::now() + std::chrono::milliseconds(250);
    for (int round = 0; round < 9 && (round == 0 || Clock::now() < deadline); ++round) {
      for (size_t c = 0; c < choices.size(); ++c) {
        const auto start = Clock::now();
        run_steps(inputs, outputs, p, choices[c]);
        best[c] = std::min(best[c], std::chrono::duration<double, std::micro>(Clock::now() - start).count());
        barriers[c] = counters.barriers;
        if (c == 0 && round == 0 && best[0] > 500e3) return 0;  // long runs: step by step, nothing compared
      }
    }
    return meter.waiting_share();
  }

  // What a SuperKernel choice depends on: the team, the steps and their shapes (v3: records
  // carry the handoff they were measured with; those made before are measured again).
  std::string superkernel_key(const Prepared& p) const {
    std::string key = fmt::format("superkernel v3\nthreads={}\n", team.size());
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      if (!runs(i)) continue;
      key += step_name(i);
      for (const Value* v : step_outputs(plan.steps[i])) key += " " + dims_to_string(p.shapes.at(v));
      key += "\n";
    }
    return key;
  }

  void run_steps(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs, Prepared& p,
                 const RegionChoice& region) {
    std::unique_lock<std::mutex> team_held;
    // (A run nested in another's region, an If branch's, has the team already.)
    if (team.size() > 1 && !team.in_region()) team_held = std::unique_lock(team_mutex);
    const int64_t barriers_before = ThreadTeam::barriers_on_this_thread();
    bind_run(inputs, outputs, p);
    StepProfile* profile = options.profile;
    if (profile) {
      if (profile->steps.empty()) describe_steps(*profile, p);
      profile->begin_run();
    }
    // A region needs every worker from its start and would wait for a sleeping one's wake-up
    // (150-250 us on a VM: a small model's whole run); step by step, the caller runs a sleeping
    // worker's part of each step itself until the first job has woken it. So a region chosen by
    // measurement (runs back to back) gives way after a pause; one the user asked for does not.
    const bool in_region =
        region.on && (options.superkernel == SuperKernelMode::on || p.region_alone || !team.helpers_asleep());
    if (region.on && !in_region) team.wake_helpers();  // for the next run, if this one's steps never do
    if (in_region) {
      run_region(p, region.floor_ns);
    } else {
      run_step_by_step(p);
    }
    const auto start = profile ? StepProfile::Clock::now() : StepProfile::Clock::time_point{};
    const auto& outs = graph.outputs();
    bool copied = false;
    for (size_t i = 0; i < outs.size(); ++i) {
      void* src = data_of(p, outs[i]);
      if (src != outputs[i].raw()) std::memcpy(outputs[i].raw(), src, outputs[i].nbytes()), copied = true;
    }
    if (profile && copied)
      profile->record(static_cast<int64_t>(plan.steps.size()), 0, start, StepProfile::Clock::now());
    counters.barriers = ThreadTeam::barriers_on_this_thread() - barriers_before;
    counters.superkernel = in_region;
  }

  bool runs(size_t i) const {
    const bool chain_tail = chain_of[i] >= 0 && plan.row_chains[static_cast<size_t>(chain_of[i])].first_product != i;
    return plan.steps[i].kind != fusion::StepKind::View && !shape_only[i] && !chain_tail;
  }

  void run_step_by_step(Prepared& p) {
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      if (!runs(i)) continue;
      if (plan.steps[i].kind == fusion::StepKind::Kernel) {
        run_kernel_step(i, p);
      } else {
        run_node_step_timed(i, p);
      }
    }
  }

  // ---- the SuperKernel: every step in one parallel region (superkernel_schedule.h) ----

  SuperKernelReport superkernel_report() {
    std::lock_guard lock(pool_mutex);
    SuperKernelReport report;
    if (shapes.empty() || shapes.front().contexts.front()->in_use) return report;
    const Prepared& p = *shapes.front().contexts.front();
    const RegionChoice choice = region_for(p);
    if (team.size() == 1) {
      report.choice = "off (one worker)";
    } else if (options.superkernel == SuperKernelMode::off || choice.on || p.superkernel) {
      report.choice = choice.text();
    }
    if (!choice.on || p.scheduled_floor_ns != choice.floor_ns) return report;
    for (const RegionStep& step : p.region_schedule) {
      SuperKernelReport::Step s{step_name(step.step), step.workers, {}};
      for (size_t w : step.waits) s.waits_for.push_back(step_name(p.region_schedule[w].step));
      report.steps.push_back(std::move(s));
    }
    return report;
  }

  std::string step_name(size_t i) const {
    const auto& step = plan.steps[i];
    if (step.kind == fusion::StepKind::Kernel) return step.kernel.name;
    return step.node->name.empty() ? step.node->op : step.node->name;
  }

  void run_region(Prepared& p, double floor_ns) {
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      if (runs(i) && plan.steps[i].kind == fusion::StepKind::Kernel) bind_kernel(i, p);
    }
    if (p.scheduled_floor_ns != floor_ns) schedule_region_steps(p, floor_ns);
    for (size_t s = 0; s < p.region_schedule.size(); ++s) p.region_done[s].value.store(0, std::memory_order_relaxed);
    // A schedule with every step on one worker (a small model) needs no other worker at all.
    team.region([&](int worker) { walk_region(worker, p); }, p.region_alone ? 1 : 0);
    counters.region_waits = p.region_waits;
  }

  // Each worker walks the schedule: its part of each step it takes part in, after the steps that
  // step waits for are complete. A library call or host step is worker 0's; the others serve its
  // parallel loops (assist) when it uses them all.
  void walk_region(int worker, Prepared& p) {
    const std::vector<RegionStep>& schedule = p.region_schedule;
    for (size_t s = 0; s < schedule.size(); ++s) {
      const RegionStep& step = schedule[s];
      if (worker >= step.workers) continue;
      std::atomic<int64_t>& done = p.region_done[s].value;
      if (!step.blocks && worker > 0) {
        team.assist(worker, done, 1);
        continue;
      }
      for (size_t w : step.waits) team.wait_at_least(p.region_done[w].value, schedule[w].done_target);
      if (step.blocks) {
        const auto [first, end] = worker_blocks(p.kernel_blocks[step.step], step.workers, worker);
        if (first < end) run_kernel_blocks(step.step, worker, first, end, p);
      } else {
        team.set_region_workers(step.workers);
        run_node_step_timed(step.step, p);
      }
      done.fetch_add(1, std::memory_order_release);
    }
  }

  void schedule_region_steps(Prepared& p, double floor_ns) {
    std::vector<RegionStepInput> steps;
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      if (!runs(i)) continue;
      const auto& step = plan.steps[i];
      RegionStepInput in;
      in.step = i;
      in.blocks = step.kind == fusion::StepKind::Kernel;
      if (in.blocks) {
        const int block_dim = p.kernels[i]->block_dim;
        in.max_workers = static_cast<int>(std::min<int64_t>(p.kernel_blocks[i], block_dim > 0 ? block_dim : team.size()));
      } else {
        in.max_workers = library_calls[i] != nullptr ? team.size() : 1;  // the reference kernels are serial
      }
      // A row chain is its first step with the reads, writes and work of all three.
      const auto [first, last] = chain_span(i);
      for (auto s = static_cast<size_t>(first); s <= static_cast<size_t>(last); ++s) {
        const auto& part = plan.steps[s];
        in.work_ns += estimated_step_ns(static_cast<double>(step_bytes(part, p)), step_flops(part, p));
        for (const Value* v : step_inputs(part)) add_bytes_of(v, p, in.reads);
        for (const Value* v : step_outputs(part)) add_bytes_of(v, p, in.writes);
      }
      steps.push_back(std::move(in));
    }
    p.region_schedule = schedule_region(steps, team.size(), floor_ns);
    p.region_done = std::make_unique<StepCounter[]>(p.region_schedule.size());
    p.scheduled_floor_ns = floor_ns;
    p.region_alone = std::all_of(p.region_schedule.begin(), p.region_schedule.end(),
                                 [](const RegionStep& step) { return step.workers == 1; });
    p.region_waits = 0;
    for (const RegionStep& step : p.region_schedule) p.region_waits += static_cast<int64_t>(step.waits.size());
  }

  // Where `v`'s bytes are, for the schedule's dependencies: its arena range, or the tensor as a
  // whole (a caller's input or output: bind_run keeps outputs apart from inputs and each other).
  // Constants and shape-only values are never written during a run, so they order nothing.
  void add_bytes_of(const Value* v, const Prepared& p, std::vector<ByteRange>& ranges) const {
    const auto [r, within, spans] = place_of(v);
    if (r->constant || p.shape_only_values.count(r) || !p.bound.count(r)) return;
    // A Concat's block: its own part of r; a strided part: all of r.
    const size_t bytes = value_bytes(spans ? r : v, p.shapes.at(spans ? r : v));
    auto offset = p.arena_offset.find(r);
    if (offset == p.arena_offset.end()) {
      ranges.push_back({r, within, within + std::max<size_t>(bytes, 1)});
      return;
    }
    ranges.push_back({&p.arena, offset->second + within, offset->second + within + bytes});
  }
};

StepRunner::StepRunner(const Graph& graph, const fusion::FusionPlan& plan, std::vector<KernelStep> kernel_steps,
                       const std::vector<std::unique_ptr<LibraryCall>>& library_calls, std::vector<bool> shape_only,
                       ThreadTeam& team, KernelProvider& provider, const RunOptions& options, RunCounters& counters)
    : impl_(std::make_unique<Impl>(graph, plan, std::move(kernel_steps), library_calls, std::move(shape_only), team,
                                   provider, options, counters)) {}

StepRunner::~StepRunner() = default;

void StepRunner::run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs) {
  impl_->run(inputs, outputs);
}

SuperKernelReport StepRunner::superkernel_report() const { return impl_->superkernel_report(); }

}  // namespace tilefuse::runtime
