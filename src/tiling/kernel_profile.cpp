#include "tiling/kernel_profile.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "fusion/loop_nest.h"
#include "ir/op_registry.h"

namespace tilefuse::tiling {

namespace {

// Rough vector cost of one op, in cycles per 16-lane vector (AVX-512 class core): what matters is
// the ratio between cheap arithmetic, divisions and transcendental functions, not the absolute.
double vector_cycles(const Node& n) {
  static const std::map<std::string, double, std::less<>> costs = {
      {"Div", 5},     {"Reciprocal", 5}, {"Sqrt", 6},  {"Pow", 30},   {"Exp", 10}, {"Log", 14},
      {"Tanh", 16},   {"Sigmoid", 14},   {"Erf", 18},  {"Gelu", 24},  {"Softplus", 24},
      {"Elu", 12},    {"Cast", 2},       {"Where", 1}, {"Transpose", 2}, {"Sin", 20},   {"Cos", 20},
      {"Selu", 12},   {"Celu", 12},      {"Mish", 40},   {"Tan", 30},   {"Asin", 25},  {"Acos", 25},
      {"Atan", 25},   {"Sinh", 20},      {"Cosh", 20},   {"Asinh", 30}, {"Acosh", 30}, {"Atanh", 25},
      {"Softsign", 5}};
  auto it = costs.find(n.op);
  // Plain arithmetic issues on two vector pipes: half a cycle per vector.
  return it == costs.end() ? 0.5 : it->second;
}

int64_t value_bytes(const Value* v, const SymbolBindings& b) {
  int64_t n = 1;
  for (const Dim& d : v->shape) n *= d.evaluate(b);
  return n * static_cast<int64_t>(dtype_size(v->dtype));
}

bool varies_with_outer(const fusion::LoopNest& nest, const Value* v) {
  return std::any_of(nest.outer.begin(), nest.outer.end(),
                     [&](const fusion::LoopAxis& a) { return !(a.strides.at(v) == Dim(0)); });
}

// Passes over a row, counted as the code generator schedules them (codegen/kernel_schedule.cpp):
// a reduction runs in the pass after the reductions it depends on, and so does a full-size op.
// A row-level op after a reduction (the mean's division, `sum + mean`) runs between passes and
// adds none: a lone row sum is one pass, sigmoid(x) * sum(x) two.
int count_passes(const fusion::FusedKernel& k) {
  std::map<const Value*, int> reductions_before;  // reductions a value depends on, in a chain
  int passes = 1;
  for (const Node* n : k.nodes) {
    int d = 0;
    for (const Value* in : n->inputs) {
      if (in != nullptr && reductions_before.count(in)) d = std::max(d, reductions_before.at(in));
    }
    const bool reduction = n->def().has(kReduction);
    if (reduction || k.space.access.at(n->outputs[0]).level == fusion::Level::Full) passes = std::max(passes, d + 1);
    for (const Value* out : n->outputs) reductions_before[out] = reduction ? d + 1 : d;
  }
  return passes;
}

}  // namespace

KernelProfile profile_kernel(const fusion::FusedKernel& kernel, const SymbolBindings& bindings) {
  const fusion::LoopNest nest = fusion::build_loop_nest(kernel.space, kernel.inputs);
  KernelProfile p;
  p.outer = std::max<int64_t>(1, nest.outer_count().evaluate(bindings));
  p.inner = std::max<int64_t>(1, nest.inner_count().evaluate(bindings));
  p.reduces = nest.reduces;
  p.column_reduction = nest.columns;
  if (nest.tiles_columns()) p.columns = std::max<int64_t>(1, nest.inner.back().extent.evaluate(bindings));
  p.passes = nest.reduces ? count_passes(kernel) : 1;
  p.walks_across_rows = nest.walks_across_rows(kernel.inputs);
  p.row_by_row = kernel.row_by_row;
  for (const Value* in : kernel.inputs) {
    int64_t bytes = value_bytes(in, bindings);
    // A column reduction's units also differ by column tile.
    const bool by_column = nest.columns && !(nest.inner.back().strides.at(in) == Dim(0));
    if (varies_with_outer(nest, in) || by_column) {
      p.streamed_read_bytes += bytes;
      if (nest.inner.back().strides.at(in) == Dim(1)) p.has_streamed_contiguous_input = true;
    } else {
      p.resident_read_bytes += bytes;
    }
  }
  const int64_t domain_elements = p.elements();
  for (const Value* out : kernel.outputs) {
    int64_t bytes = value_bytes(out, bindings);
    p.write_bytes += bytes;
    if (has_streamed_stores(out->dtype) && bytes == domain_elements * static_cast<int64_t>(dtype_size(out->dtype))) p.streamable_write_bytes += bytes;
  }
  // A kernel over native types (integer or f64 values) is a plain scalar loop: it has neither
  // non-temporal stores nor software prefetch, so candidates differing in them would be equal.
  if (fusion::has_native_values(kernel.space)) p.streamable_write_bytes = 0, p.has_streamed_contiguous_input = false;
  double cycles = 0;
  int carried = 0;
  for (const Node* n : kernel.nodes) {
    const bool full = kernel.space.access.at(n->outputs[0]).level == fusion::Level::Full;
    cycles += vector_cycles(*n) * (full || n->def().has(kReduction) ? 1.0 : 1.0 / double(p.inner));
    if (full && p.passes > 1) ++carried;
  }
  p.cycles_per_element = cycles / 16.0;
  // Column reductions compute carried values again rather than keep them (codegen).
  p.scratch_row_bytes = p.passes > 1 && !p.column_reduction ? int64_t{carried} * ((p.inner + 15) / 16 * 16) * 4 : 0;
  return p;
}

SymbolBindings symbol_hints(const fusion::FusedKernel& kernel, int64_t hint) {
  SymbolBindings b;
  auto add = [&](const Dim& d) {
    for (const auto& s : d.symbols()) b[s] = hint;
  };
  for (const Dim& d : kernel.space.domain) add(d);
  for (const auto* group : {&kernel.inputs, &kernel.outputs}) {
    for (const Value* v : *group) {
      for (const Dim& d : v->shape) add(d);
    }
  }
  return b;
}

bool has_streamed_stores(DType dtype) { return dtype == DType::f32 || dtype == DType::f16 || dtype == DType::bf16; }

bool is_static(const fusion::FusedKernel& kernel) { return symbol_hints(kernel, 1).empty(); }

std::string KernelProfile::describe() const {
  return fmt::format("{} rows x {} elements ({}), {} pass(es); streamed read {} B, resident read {} B, write {} B; "
                     "{:.2f} cycles/element",
                     outer, inner, column_reduction ? "column reduction" : reduces ? "row kernel" : "elementwise", passes, streamed_read_bytes,
                     resident_read_bytes, write_bytes, cycles_per_element);
}

}  // namespace tilefuse::tiling
