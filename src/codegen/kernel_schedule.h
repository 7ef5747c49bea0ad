// What a fused kernel's code does, decided before a line of it is printed: the buffers and
// symbols it takes, its loop nest, the passes over the inner axes (the pass that computes each
// value, the pass each reduction accumulates in, the values kept in a scratch row for a later
// pass), the inputs it streams (and prefetches) or reads in transposed blocks, and the pass that
// prefetches. Plain data: kernel_emitter.cpp prints it and decides nothing of its own. Lookups
// are keyed by value or node, but whatever is printed in order (buffers, symbols, streamed and
// transposed inputs) is a vector in the kernel's own order, so the text never depends on where
// things happen to lie in memory.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fusion/fusion_plan.h"
#include "fusion/loop_nest.h"
#include "tiling/kernel_tiling.h"

namespace tilefuse::codegen {

using tiling::KernelTiling;

// Static: every tiling parameter is a constant of the source (one source per TopN candidate).
// Jit: the block split is computed at launch from the symbol values and the worker count; the
// column tile, store kind and prefetch distance come from the tiling (planned at a hint size).
enum class KernelVariant { Static, Jit };

struct KernelSchedule {
  const fusion::FusedKernel* kernel = nullptr;
  KernelTiling tiling;
  bool jit = false;
  fusion::LoopNest nest;
  bool columns = false;  // a column reduction (fusion/loop_nest.h)
  bool native = false;   // computes in the values' own types (fusion::has_native_values), not float lanes

  std::vector<const Value*> buffers;  // the `buffers` argument: kernel inputs, then outputs
  std::map<const Value*, int> buffer_index;
  std::vector<std::string> symbols;  // the `symbols` argument, sorted

  int num_passes = 0;
  std::map<const Value*, int> pass_of;        // full-level values: the pass computing them
  std::map<const Value*, int> ready_after;    // row-level values: the pass after which they exist
  std::map<const Node*, int> reduction_pass;  // the pass a reduction accumulates in
  std::map<const Value*, int> scratch_slot;   // full values a later pass reads: their scratch row
  std::vector<const Value*> streamed;         // external inputs each unit reads contiguously
  std::vector<const Value*> transposed;       // inputs read in transposed blocks (blocks of rows)
  int prefetch_pass = 0;                      // the pass that prefetches the next rows

  fusion::Level level_of(const Value* v) const;
  bool internal(const Value* v) const;  // produced by one of the kernel's nodes
  bool in_pass(const Node& n, int p) const;
  bool constant_over_row(const Value* v) const;  // the same for every point of a row
  bool changes_with_unit(const Value* v) const;  // read at another place by each unit
};

KernelSchedule schedule_kernel(const fusion::FusedKernel& kernel, const KernelTiling& tiling, KernelVariant variant);

bool is_reduction(const Node& n);
// The values a node computes with, by input position (nullptr for an omitted optional input).
// A reduction's axes and a view's shape are compile-time facts, not operands; a gather's data
// and indices are read by its own load.
std::vector<const Value*> operands_of(const Node& n);

}  // namespace tilefuse::codegen
