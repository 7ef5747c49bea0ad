#include "fusion/row_chains.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "ir/log.h"
#include "ir/shape.h"
#include "ir/tensor.h"

namespace tilefuse::fusion {

namespace {

bool is_product(const PlanStep& step) {
  return step.kind == StepKind::LibraryCall && (step.node->op == "MatMul" || step.node->op == "FusedMatMul");
}

bool is_graph_output(const Value* v, const Graph& graph) {
  return std::find(graph.outputs().begin(), graph.outputs().end(), v) != graph.outputs().end();
}

// Every use of `v` is by a node of `nodes`.
bool only_read_by(const Value* v, const std::vector<Node*>& nodes) {
  return !v->users.empty() && std::all_of(v->users.begin(), v->users.end(), [&](const Node* user) {
           return std::find(nodes.begin(), nodes.end(), user) != nodes.end();
         });
}

// `v` addressed by the kernel at the domain's points in row-major order: its own contiguous
// layout (a dim of extent 1 may have any stride).
bool read_in_place(const IterationSpace& space, const Value* v, const std::vector<int64_t>& dims) {
  auto it = space.access.find(v);
  if (it == space.access.end() || it->second.level != Level::Full || !(it->second.offset == Dim(0))) return false;
  const std::vector<int64_t> want = contiguous_strides(dims);
  if (it->second.strides.size() != want.size()) return false;
  for (size_t d = 0; d < want.size(); ++d) {
    if (dims[d] != 1 && !(it->second.strides[d] == Dim(want[d]))) return false;
  }
  return true;
}

// The kernel step turns rows of `x` into rows of its one output, [..., M, L] like x, reducing
// over the last axis only: row r of its output depends on row r of x and on nothing else x.
bool row_kernel_of(const PlanStep& step, const Value* x) {
  if (step.kind != StepKind::Kernel || step.kernel.outputs.size() != 1) return false;
  const FusedKernel& k = step.kernel;
  const Value* y = k.outputs[0];
  if (x->dtype != DType::f32 || y->dtype != DType::f32 || !is_static(x->shape) || x->shape != y->shape) return false;
  if (x->rank() < 2 || k.space.domain != x->shape || !k.space.gathers.empty() || !k.space.passed_along.empty()) return false;
  if (k.space.reduced_axes != std::vector<int64_t>{x->rank() - 1}) return false;
  if (std::find(k.inputs.begin(), k.inputs.end(), x) == k.inputs.end()) return false;
  const std::vector<int64_t> dims = static_dims(x->shape);
  return read_in_place(k.space, x, dims) && read_in_place(k.space, y, dims);
}

// The chain starting at product step i, if there is one.
std::optional<RowChain> chain_at(const FusionPlan& plan, const Graph& graph, size_t i, int64_t min_bytes) {
  const PlanStep& first = plan.steps[i];
  if (!is_product(first) || first.node->has_attr("perm_y")) return std::nullopt;
  const Value* x = first.node->outputs[0];
  if (is_graph_output(x, graph) || !is_static(x->shape)) return std::nullopt;
  if (product(static_dims(x->shape)) * 4 < min_bytes) return std::nullopt;
  std::optional<RowChain> chain;
  for (size_t k = i + 1; k < plan.steps.size() && !chain; ++k) {
    if (!row_kernel_of(plan.steps[k], x) || !only_read_by(x, plan.steps[k].kernel.nodes)) continue;
    const Value* y = plan.steps[k].kernel.outputs[0];
    if (is_graph_output(y, graph) || y->users.size() != 1) return std::nullopt;
    for (size_t s = k + 1; s < plan.steps.size(); ++s) {
      const PlanStep& second = plan.steps[s];
      if (!is_product(second) || second.node != y->users[0]) continue;
      if (second.node->input(0) != y || second.node->input(1) == y || second.node->has_attr("perm_a")) return std::nullopt;
      chain = RowChain{i, k, s};
      break;
    }
  }
  return chain;
}

// Moves the steps between the chain's first product and its second (other than its kernel)
// before the first product. None reads what the chain computes (its product's and kernel's
// results have no other reader), so the order stays topological.
RowChain make_consecutive(FusionPlan& plan, const RowChain& c) {
  std::vector<PlanStep> moved, chain;
  for (size_t s = c.first_product; s <= c.second_product; ++s) {
    const bool in_chain = s == c.first_product || s == c.kernel || s == c.second_product;
    (in_chain ? chain : moved).push_back(std::move(plan.steps[s]));
  }
  size_t at = c.first_product;
  for (PlanStep& step : moved) plan.steps[at++] = std::move(step);
  const size_t start = at;
  for (PlanStep& step : chain) plan.steps[at++] = std::move(step);
  return RowChain{start, start + 1, start + 2};
}

}  // namespace

int chain_rows(FusionPlan& plan, const Graph& graph, int64_t min_bytes) {
  plan.row_chains.clear();
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const std::optional<RowChain> found = chain_at(plan, graph, i, min_bytes);
    if (!found) continue;
    const RowChain c = make_consecutive(plan, *found);
    plan.steps[c.kernel].kernel.row_by_row = true;
    plan.row_chains.push_back(c);
    logger().debug("row chain: '{}' -> {} -> '{}'", plan.steps[c.first_product].node->name, plan.steps[c.kernel].kernel.name,
               plan.steps[c.second_product].node->name);
    i = c.second_product;
  }
  return static_cast<int>(plan.row_chains.size());
}

}  // namespace tilefuse::fusion
