#include "fusion/loop_nest.h"

#include <algorithm>
#include <optional>

namespace tilefuse::fusion {

Dim LoopNest::outer_count() const {
  Dim n = 1;
  for (const auto& a : outer) n = n * a.extent;
  return n;
}

Dim LoopNest::inner_count() const {
  Dim n = 1;
  for (const auto& a : inner) n = n * a.extent;
  return n;
}

Dim LoopNest::reduced_count() const {
  Dim n = 1;
  for (size_t a = 0; a < inner.size(); ++a) {
    if (!(columns && a + 1 == inner.size())) n = n * inner[a].extent;
  }
  return n;
}

namespace {

// `a` then `b` (b inner) can become one axis if every tensor steps over b's whole extent exactly
// when it steps once along a.
bool mergeable(const LoopAxis& a, const LoopAxis& b) {
  for (const auto& [value, stride_a] : a.strides) {
    if (!(stride_a == b.strides.at(value) * b.extent)) return false;
  }
  return true;
}

void merge_into(LoopAxis& a, const LoopAxis& b) {
  a.extent = a.extent * b.extent;
  a.strides = b.strides;  // the merged axis steps like its inner part
}

std::vector<LoopAxis> merged(std::vector<LoopAxis> axes) {
  std::vector<LoopAxis> out;
  for (auto& axis : axes) {
    if (axis.extent == Dim(1)) continue;  // size-1 axes contribute nothing to any offset
    if (!out.empty() && mergeable(out.back(), axis)) {
      merge_into(out.back(), axis);
    } else {
      out.push_back(std::move(axis));
    }
  }
  return out;
}

// The input whose order units follow: the largest one read along every axis, row by row
// (stride 1 along the vectorised axis), at constant strides. Null where any input is read
// across rows (such kernels walk column tiles down the rows instead; walks_across_rows).
const Value* leading_input(const LoopNest& nest, const std::vector<Value*>& loads) {
  const Value* lead = nullptr;
  int64_t lead_elements = 0;
  for (const Value* v : loads) {
    const Dim& along = nest.inner.back().strides.at(v);
    if (!(along == Dim(0)) && !(along == Dim(1)) && !is_run_time_unit_stride(along)) return nullptr;
    if (!(along == Dim(1))) continue;
    int64_t elements = 1;
    bool full = true;
    for (const LoopAxis& a : nest.outer) {
      const std::optional<int64_t> stride = a.strides.at(v).const_value();
      if (!stride || *stride == 0) full = false;
      elements *= a.extent.const_value().value_or(1);  // a symbolic batch counts alike for every input
    }
    if (full && elements > lead_elements) lead = v, lead_elements = elements;
  }
  return lead;
}

// An elementwise kernel's units (rows) are numbered in its domain's order, its output's. Where
// the largest input holds those rows in another order (a Transpose of whole rows, as splitting
// attention heads does: [B, S, H, D] read as [B, H, S, D]), each row's load lands on another
// page, which the hardware prefetchers do not follow, and every unit waits on memory. Numbered
// in the input's order the loads stream and the stores scatter instead, which the store buffer
// absorbs: split_heads (tanh(x.reshape(B, S, 8, 64).transpose(1, 2) * 0.125 + 1) on
// f32[8, 512, 512]) went from 0.91-1.26 to 0.64-0.86 ms (bench/README.md).
void number_units_in_input_order(LoopNest& nest, const std::vector<Value*>& loads) {
  if (nest.reduces || nest.outer.size() < 2) return;
  const Value* lead = leading_input(nest, loads);
  if (lead == nullptr) return;
  std::stable_sort(nest.outer.begin(), nest.outer.end(), [lead](const LoopAxis& a, const LoopAxis& b) {
    return *a.strides.at(lead).const_value() > *b.strides.at(lead).const_value();
  });
}

}  // namespace

bool LoopNest::walks_across_rows(const std::vector<Value*>& loads) const {
  if (reduces || inner.empty()) return false;
  return std::any_of(loads.begin(), loads.end(), [&](const Value* v) {
    const Dim& stride = inner.back().strides.at(v);
    return !(stride == Dim(0)) && !(stride == Dim(1)) && !is_run_time_unit_stride(stride);
  });
}

LoopNest build_loop_nest(const IterationSpace& space, const std::vector<Value*>& loads) {
  std::vector<LoopAxis> outer, inner;
  bool innermost_reduced = false;  // of the axes longer than 1
  for (size_t a = 0; a < space.domain.size(); ++a) {
    LoopAxis axis{space.domain[a], {}};
    for (const auto& [value, access] : space.access) axis.strides[value] = access.strides[a];
    bool reduced = std::binary_search(space.reduced_axes.begin(), space.reduced_axes.end(), static_cast<int64_t>(a));
    if (!(axis.extent == Dim(1))) innermost_reduced = reduced;
    (reduced ? inner : outer).push_back(std::move(axis));
  }
  LoopNest nest;
  nest.reduces = !space.reduced_axes.empty();
  nest.outer = merged(std::move(outer));
  nest.inner = merged(std::move(inner));
  nest.columns = nest.reduces && !innermost_reduced && !nest.outer.empty() && !nest.inner.empty();
  if (nest.tiles_columns() && !nest.outer.empty()) {
    // Elementwise and column reductions: the innermost kept axis is walked (and vectorised) in
    // column tiles.
    nest.inner.push_back(nest.outer.back());
    nest.outer.pop_back();
    number_units_in_input_order(nest, loads);
  }
  if (nest.inner.empty()) {
    // A domain of all-1 axes (a scalar): one element, one iteration.
    LoopAxis unit{Dim(1), {}};
    for (const auto& [value, access] : space.access) unit.strides[value] = Dim(0);
    nest.inner.push_back(std::move(unit));
  }
  return nest;
}

}  // namespace tilefuse::fusion
