#include "codegen/kernel_schedule.h"

#include <algorithm>
#include <set>

#include "codegen/pointwise_expr.h"
#include "fusion/iteration_space.h"
#include "ir/op_registry.h"

namespace tilefuse::codegen {

using fusion::Level;
using fusion::LoopAxis;

bool is_reduction(const Node& n) { return n.def().has(kReduction); }

std::vector<const Value*> operands_of(const Node& n) {
  if (fusion::is_gather_op(n)) return {};
  if (is_reduction(n) || fusion::is_view_op(n) || n.op == "Slice" || n.op == "Expand") return {n.input(0)};
  return {n.inputs.begin(), n.inputs.end()};
}

Level KernelSchedule::level_of(const Value* v) const { return kernel->space.access.at(v).level; }

bool KernelSchedule::internal(const Value* v) const {
  return v->producer != nullptr &&
         std::find(kernel->nodes.begin(), kernel->nodes.end(), v->producer) != kernel->nodes.end();
}

bool KernelSchedule::in_pass(const Node& n, int p) const {
  if (is_reduction(n)) return reduction_pass.at(&n) == p;
  auto it = pass_of.find(n.outputs[0]);
  return it != pass_of.end() && it->second == p;
}

bool KernelSchedule::constant_over_row(const Value* v) const {
  if (level_of(v) == Level::Reduced) return true;
  return std::all_of(nest.inner.begin(), nest.inner.end(), [&](const LoopAxis& a) { return a.strides.at(v) == Dim(0); });
}

bool KernelSchedule::changes_with_unit(const Value* v) const {
  return std::any_of(nest.outer.begin(), nest.outer.end(), [&](const LoopAxis& a) { return !(a.strides.at(v) == Dim(0)); });
}

namespace {

class Scheduler {
 public:
  Scheduler(const fusion::FusedKernel& kernel, const KernelTiling& tiling, KernelVariant variant) {
    s_.kernel = &kernel;
    s_.tiling = tiling;
    s_.jit = variant == KernelVariant::Jit;
    s_.nest = fusion::build_loop_nest(kernel.space, kernel.inputs);
    s_.columns = s_.nest.columns;
    s_.native = fusion::has_native_values(kernel.space);
  }

  KernelSchedule run() && {
    collect_buffers();
    collect_symbols();
    schedule_passes();
    collect_streamed_inputs();
    collect_transposed_inputs();
    s_.prefetch_pass = choose_prefetch_pass();
    return std::move(s_);
  }

 private:
  const fusion::FusedKernel& k() const { return *s_.kernel; }

  void collect_buffers() {
    for (const Value* v : k().inputs) add_buffer(v);
    for (const Value* v : k().outputs) add_buffer(v);
  }

  void add_buffer(const Value* v) {
    s_.buffer_index[v] = static_cast<int>(s_.buffers.size());
    s_.buffers.push_back(v);
  }

  void collect_symbols() {
    std::set<std::string> names;
    auto add = [&](const Dim& d) {
      auto symbols = d.symbols();
      names.insert(symbols.begin(), symbols.end());
    };
    for (const auto& d : k().space.domain) add(d);
    for (const Value* v : s_.buffers) {
      for (const auto& d : v->shape) add(d);
    }
    s_.symbols.assign(names.begin(), names.end());
  }

  // Passes over the inner axes: a full-size value can be computed in the first pass after every
  // reduction it depends on has finished. Reductions finish at the end of their pass; row-level
  // (reduced) values are ready after the pass that finishes their last reduction.
  void schedule_passes() {
    for (const Node* n : k().nodes) {
      int p = 0;
      for (const Value* in : operands_of(*n)) {
        if (in == nullptr || !s_.internal(in)) continue;
        p = std::max(p, s_.level_of(in) == Level::Full ? s_.pass_of.at(in) : s_.ready_after.at(in));
      }
      const Value* out = n->outputs[0];
      if (is_reduction(*n)) {
        s_.reduction_pass[n] = p;
        s_.ready_after[out] = p + 1;
        s_.num_passes = std::max(s_.num_passes, p + 1);
      } else if (s_.level_of(out) == Level::Full) {
        s_.pass_of[out] = p;
        s_.num_passes = std::max(s_.num_passes, p + 1);
      } else {
        s_.ready_after[out] = p;
      }
      for (size_t i = 1; i < n->outputs.size(); ++i) s_.pass_of[n->outputs[i]] = p;
    }
    // Full values consumed in a later pass than they are made in go through the scratch row. A
    // column reduction's unit spans many rows, too many to keep: it computes them again instead.
    if (s_.columns) return;
    for (const Node* n : k().nodes) {
      const int use_pass = is_reduction(*n)                 ? s_.reduction_pass.at(n)
                           : s_.pass_of.count(n->outputs[0]) ? s_.pass_of.at(n->outputs[0])
                                                             : -1;
      for (const Value* in : operands_of(*n)) {
        if (in == nullptr || !s_.internal(in) || s_.level_of(in) != Level::Full) continue;
        if (use_pass > s_.pass_of.at(in) && !s_.scratch_slot.count(in)) {
          const int slot = static_cast<int>(s_.scratch_slot.size());
          s_.scratch_slot[in] = slot;
        }
      }
    }
  }

  // External inputs that each unit reads at a place of its own, contiguously: what software
  // prefetch fetches ahead (broadcast inputs such as LayerNorm's gamma stay in cache anyway).
  void collect_streamed_inputs() {
    for (const Node* n : k().nodes) {
      for (const Value* in : operands_of(*n)) {
        if (in == nullptr || s_.internal(in) || s_.constant_over_row(in)) continue;
        // A column reduction's units also differ by column tile: contiguous inputs stream.
        if (!s_.changes_with_unit(in) && !s_.columns) continue;
        if (!(s_.nest.inner.back().strides.at(in) == Dim(1))) continue;
        if (std::find(s_.streamed.begin(), s_.streamed.end(), in) == s_.streamed.end()) s_.streamed.push_back(in);
      }
    }
  }

  // Inputs a kernel reads across rows (strided along the vectorised axis) that are contiguous
  // down the rows (stride 1 along the last outer axis): a Transpose of the innermost axis. Such
  // a kernel computes blocks of tf::kLanes rows, and reads these inputs in tf::kLanes x tf::kLanes
  // blocks transposed in registers (tf::load_transposed): every cache line read whole, where a
  // vector of strided loads touched tf::kLanes lines (at a power-of-two row stride, all in one
  // cache set, evicting each other before the next row could use them: f32[2048, 4096]
  // transposed ran at 6 GB/s). Only for one-pass elementwise float kernels whose row-level
  // values are the same for every row of a block (they are loaded once per unit).
  void collect_transposed_inputs() {
    const fusion::LoopNest& nest = s_.nest;
    if (s_.native || nest.reduces || s_.num_passes != 1 || nest.inner.size() != 1 || nest.outer.empty()) return;
    const LoopAxis& rows = nest.outer.back();
    if (rows.extent == Dim(1)) return;
    for (const auto& [v, access] : k().space.access) {
      if ((access.level == Level::Reduced || s_.constant_over_row(v)) && !(rows.strides.at(v) == Dim(0))) return;
    }
    for (const Value* in : k().inputs) {
      const Dim& across = nest.inner.back().strides.at(in);
      if (in->dtype == DType::boolean || across == Dim(0) || across == Dim(1) || fusion::is_run_time_unit_stride(across) ||
          !(rows.strides.at(in) == Dim(1))) {
        continue;
      }
      s_.transposed.push_back(in);
    }
  }

  // Software prefetch of the next rows goes into the pass with the most arithmetic (vector math
  // counting ten ops), the later one on a tie: without it memory idles through that pass. Measured
  // against prefetching where the input is loaded: softmax 16.2 -> 13.3 ms (the exp pass),
  // LayerNorm 12.7 -> 10.8 ms (the last pass; bench/README.md).
  int choose_prefetch_pass() const {
    int best = 0;
    int most = -1;
    for (int p = 0; p < s_.num_passes; ++p) {
      int work = 0;
      for (const Node* n : k().nodes) {
        if (s_.in_pass(*n, p)) work += calls_vector_math(*n) ? 10 : 1;
      }
      if (work >= most) most = work, best = p;
    }
    return best;
  }

  KernelSchedule s_;
};

}  // namespace

KernelSchedule schedule_kernel(const fusion::FusedKernel& kernel, const KernelTiling& tiling, KernelVariant variant) {
  return Scheduler(kernel, tiling, variant).run();
}

}  // namespace tilefuse::codegen
