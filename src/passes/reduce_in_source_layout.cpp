#include "passes/reduce_in_source_layout.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "ir/op_registry.h"
#include "ir/shape.h"
#include "passes/node_rewrite.h"
#include "passes/pattern.h"

namespace tilefuse::passes {

namespace {

bool is_plain_reduction(const Node& n) {
  static const char* const kOps[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"};
  return std::any_of(std::begin(kOps), std::end(kOps), [&](const char* op) { return n.op == op; });
}

// Whether `node` alone reads `v` (maybe as several operands), and `v` is no graph output.
bool read_only_by(const Graph& graph, const Value* v, const Node* node) {
  return !graph.is_output(v) && !v->users.empty() &&
         std::all_of(v->users.begin(), v->users.end(), [&](const Node* user) { return user == node; });
}

// The operand a pointwise op carries a chain through: its one operand that is not a single value
// (maybe read several times), of the op's own shape; the others are the same wherever they are
// read, so the op commutes with any transpose of it. nullptr if there is not exactly one.
const Value* chain_operand(const Node& op) {
  if (!op.def().has(kPointwise) || op.outputs.size() != 1) return nullptr;
  const Value* chain = nullptr;
  for (const Value* v : op.inputs) {
    if (v == nullptr || num_elements(v->shape) == Dim(1)) continue;
    if (chain != nullptr && v != chain) return nullptr;
    chain = v;
  }
  return chain != nullptr && chain->shape == op.outputs[0]->shape ? chain : nullptr;
}

struct Chain {
  const Node* transpose = nullptr;
  std::vector<const Node*> ops;  // from the Transpose's reader to the reduction's input
};

// The Transpose and the pointwise ops between it and `reduce`, or no Transpose.
Chain chain_to_transpose(const Graph& graph, const Node& reduce) {
  Chain chain;
  const Node* reader = &reduce;
  const Value* v = reduce.input(0);
  while (v != nullptr && v->producer != nullptr && read_only_by(graph, v, reader)) {
    const Node* p = v->producer;
    if (p->op == "Transpose") {
      chain.transpose = p;
      std::reverse(chain.ops.begin(), chain.ops.end());
      return chain;
    }
    chain.ops.push_back(p);
    reader = p;
    v = chain_operand(*p);
  }
  return {};
}

std::vector<int64_t> transpose_perm(const Node& transpose) {
  std::vector<int64_t> perm = transpose.attr_ints("perm");
  if (perm.empty()) {  // the default reverses the axes
    perm.resize(static_cast<size_t>(transpose.input(0)->rank()));
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  return perm;
}

// The Transpose that puts the source's kept axes (in ascending order, as a keepdims=0 reduction
// leaves them) in the order `wanted`: result axis j is the position of wanted[j] among them.
std::vector<int64_t> order_of(const std::vector<int64_t>& wanted) {
  std::vector<int64_t> kept = wanted, perm;
  std::sort(kept.begin(), kept.end());
  for (int64_t axis : wanted) perm.push_back(std::lower_bound(kept.begin(), kept.end(), axis) - kept.begin());
  return perm;
}

bool rewrite(Graph& graph, Node& reduce) {
  if (!is_plain_reduction(reduce) || reduce.outputs.size() != 1) return false;
  const auto axes = reduced_axes(reduce);
  if (!axes || axes->empty()) return false;
  const Chain chain = chain_to_transpose(graph, reduce);
  if (chain.transpose == nullptr) return false;
  const std::vector<int64_t> perm = transpose_perm(*chain.transpose);
  const int64_t rank = static_cast<int64_t>(perm.size());
  // Apply the chain to the source: each op reads what the previous one made.
  Value* source = chain.transpose->input(0);
  const Value* old = chain.transpose->outputs[0];
  for (const Node* op : chain.ops) {
    std::vector<Value*> inputs = op->inputs;
    std::replace(inputs.begin(), inputs.end(), const_cast<Value*>(old), source);
    old = op->outputs[0];
    source = added_node(graph, op->op, op->name + "/in_source_layout", inputs, op->attrs);
  }
  std::vector<int64_t> source_axes;
  for (int64_t a : *axes) source_axes.push_back(perm[static_cast<size_t>(a)]);
  std::sort(source_axes.begin(), source_axes.end());
  AttributeMap attrs = reduce.attrs;
  std::vector<Value*> inputs = {source};
  if (reduce.has_input(1)) {
    inputs.push_back(int_constant(graph, reduce.name + "_source_axes", source_axes));
  } else {
    attrs["axes"] = source_axes;
  }
  const bool keepdims = reduce.attr_int("keepdims", 1) != 0;
  // The kept axes in the order the graph wants them, as axes of the source.
  std::vector<int64_t> wanted;
  for (int64_t a = 0; a < rank; ++a) {
    if (!std::binary_search(axes->begin(), axes->end(), a)) wanted.push_back(perm[static_cast<size_t>(a)]);
  }
  const bool same_order = std::is_sorted(wanted.begin(), wanted.end());
  Value* out = reduce.outputs[0];
  if (same_order && !keepdims) {
    replace_value(graph, out, reduce.op, reduce.name, inputs, attrs);
    return true;
  }
  Value* reduced = added_node(graph, reduce.op, reduce.name + "/in_source_layout", inputs, attrs);
  if (same_order && is_static(out->shape)) {  // only size-1 axes move: a view
    replace_value(graph, out, "Reshape", reduce.name, {reduced, int_constant(graph, reduce.name + "_shape", static_dims(out->shape))});
    return true;
  }
  replace_value(graph, out, "Transpose", reduce.name, {reduced}, {{"perm", keepdims ? perm : order_of(wanted)}});
  return true;
}

}  // namespace

int reduce_in_source_layout(Graph& graph) {
  return rewrite_nodes(graph, [&](Node& n) { return rewrite(graph, n); });
}

}  // namespace tilefuse::passes
