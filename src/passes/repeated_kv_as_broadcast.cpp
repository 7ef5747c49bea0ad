#include "passes/repeated_kv_as_broadcast.h"

#include <optional>
#include <string>
#include <vector>

#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {

// A value's dims, where none is symbolic.
std::optional<std::vector<int64_t>> known_dims(const Value* v) {
  return is_static(v->shape) ? std::optional(static_dims(v->shape)) : std::nullopt;
}

// The operand as Reshape(Expand(Unsqueeze(x, g))) with the Reshape merging g into g - 1, maybe
// under a Transpose of the last two axes.
struct Repeat {
  Value* x = nullptr;
  int64_t g = 0;             // the repeat axis, in the unsqueezed rank
  int64_t n = 0;             // repeats
  bool swap_last = false;    // a Transpose of the last two axes on top
};

bool swaps_last_two(const Node& t, int64_t rank) {
  const std::vector<int64_t> perm = t.attr_ints("perm");
  if (static_cast<int64_t>(perm.size()) != rank || rank < 2) return false;
  for (int64_t k = 0; k + 2 < rank; ++k) {
    if (perm[k] != k) return false;
  }
  return perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2;
}

std::optional<Repeat> repeat_of(Value* operand) {
  Repeat r;
  Node* n = operand->producer;
  if (n != nullptr && n->op == "Transpose" && swaps_last_two(*n, operand->rank())) {
    r.swap_last = true;
    n = n->input(0)->producer;
  }
  if (n == nullptr || n->op != "Reshape") return std::nullopt;
  const Value* merged = n->outputs[0];
  Node* expand = n->input(0)->producer;
  if (expand == nullptr || expand->op != "Expand") return std::nullopt;
  Node* unsqueeze = expand->input(0)->producer;
  if (unsqueeze == nullptr || unsqueeze->op != "Unsqueeze") return std::nullopt;
  r.x = unsqueeze->input(0);
  const auto x = known_dims(r.x), u = known_dims(unsqueeze->outputs[0]), e = known_dims(expand->outputs[0]),
             m = known_dims(merged);
  if (!x || !u || !e || !m || u->size() != x->size() + 1 || e->size() != u->size() || m->size() != x->size()) {
    return std::nullopt;
  }
  // The one axis the Unsqueeze added: of length 1, and the only one the Expand changes.
  const int64_t rank = static_cast<int64_t>(u->size());
  for (int64_t k = 0; k < rank; ++k) {
    if ((*e)[k] != (*u)[k]) {
      if (r.n != 0 || (*u)[k] != 1) return std::nullopt;
      r.g = k;
      r.n = (*e)[k];
    }
  }
  // A repeated axis after the heads and before the matrix's two: the Reshape merges it into them.
  if (r.n < 2 || r.g < 1 || r.g > rank - 3) return std::nullopt;
  std::vector<int64_t> want = *e;
  want[r.g - 1] *= r.n;
  want.erase(want.begin() + r.g);
  return want == *m ? std::optional<Repeat>(r) : std::nullopt;
}



// The one reader of `v`, where it is a Transpose and `v` no graph output.
Node* sole_transpose_reader(const Graph& graph, const Value* v) {
  if (v->users.size() != 1 || graph.is_output(v)) return nullptr;
  Node* t = v->users[0];
  return t->op == "Transpose" && t->attr_ints("perm").size() == static_cast<size_t>(v->rank()) && known_dims(t->outputs[0])
             ? t
             : nullptr;
}

// `t`'s perm over the product with the heads split at g - 1 into [kv_heads, n], both moved as one.
std::vector<int64_t> grouped_perm(const Node& t, int64_t g) {
  std::vector<int64_t> perm;
  for (int64_t axis : t.attr_ints("perm")) {
    if (axis < g - 1) perm.push_back(axis);
    if (axis == g - 1) perm.insert(perm.end(), {g - 1, g});
    if (axis > g - 1) perm.push_back(axis + 1);
  }
  return perm;
}

bool rewrite(Graph& graph, Node& matmul) {
  if (matmul.op != "MatMul" || matmul.inputs.size() != 2) return false;
  Value* a = matmul.input(0);
  const auto repeat = repeat_of(matmul.input(1));
  const auto a_dims = known_dims(a), out_dims = known_dims(matmul.outputs[0]);
  if (!repeat || !a_dims || !out_dims || a->rank() != repeat->x->rank()) return false;
  const int64_t g = repeat->g, heads = (*a_dims)[g - 1];
  if (heads % repeat->n != 0 || heads / repeat->n != repeat->x->shape[g - 1].value()) return false;
  // a's heads split into [kv_heads, n], so batch dim g of both operands lines up.
  std::vector<int64_t> a_split = *a_dims;
  a_split[g - 1] = heads / repeat->n;
  a_split.insert(a_split.begin() + g, repeat->n);
  const std::string& name = matmul.name;
  Value* a_grouped = added_node(graph, "Reshape", name + "/query_groups", {a, int_constant(graph, name + "_groups_shape", a_split)});
  Value* b = added_node(graph, "Unsqueeze", name + "/kv_heads", {repeat->x, int_constant(graph, name + "_kv_axis", {g})});
  if (repeat->swap_last) {
    std::vector<int64_t> perm(static_cast<size_t>(b->rank()));
    for (size_t k = 0; k < perm.size(); ++k) perm[k] = static_cast<int64_t>(k);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    b = added_node(graph, "Transpose", name + "/kv_heads_transposed", {b}, {{"perm", perm}});
  }
  Value* product = added_node(graph, "MatMul", name + "/grouped", {a_grouped, b});
  Value* out = matmul.outputs[0];
  if (Node* t = sole_transpose_reader(graph, out)) {
    // Transpose(Reshape(p)) is Reshape(Transpose'(p)) with the grouped heads moved as one axis, so
    // the Transpose can still fold into the product's store (passes/matmul_transpose_folding.h).
    Value* moved = added_node(graph, "Transpose", name + "/grouped_moved", {product}, {{"perm", grouped_perm(*t, g)}});
    replace_value(graph, t->outputs[0], "Reshape", t->name, {moved, int_constant(graph, name + "_moved_shape", *known_dims(t->outputs[0]))});
    return true;
  }
  replace_value(graph, out, "Reshape", name, {product, int_constant(graph, name + "_shape", *out_dims)});
  return true;
}

}  // namespace

int repeated_kv_as_broadcast(Graph& graph) {
  return rewrite_nodes(graph, [&](Node& n) { return rewrite(graph, n); });
}

}  // namespace tilefuse::passes
