#include "passes/matmul_split_folding.h"

#include <algorithm>
#include <optional>

#include "ir/op_registry.h"
#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {

constexpr int64_t kMinPartWidth = 32;

// The value is read by one node only, and is not a graph output.
bool single_use(const Graph& graph, const Value* v) { return v->users.size() == 1 && !graph.is_output(v); }

Tensor i64_vector(const std::vector<int64_t>& values) {
  return Tensor::from_vector<int64_t>(DType::i64, {static_cast<int64_t>(values.size())}, values);
}

// The product and the Reshapes (in order) from which `split` takes its input, if it folds.
struct SplitProduct {
  Node* product = nullptr;
  std::vector<Node*> reshapes;
};

// Whether B's columns are dim 1 of its constant (else dim 0: Gemm's transB, FusedMatMul's perm_b).
std::optional<bool> b_columns_last(const Node& p) {
  const Value* b = p.input(1);
  if (!b->constant || b->dtype != DType::f32 || b->rank() != 2) return std::nullopt;
  if (p.op == "Gemm") return p.attr_int("transB", 0) == 0;
  if (!p.has_attr("perm_b")) return true;
  if (p.attr_ints("perm_b") == std::vector<int64_t>{1, 0}) return false;
  return std::nullopt;
}

// A product whose columns a Split can take: a constant B (above), and a constant bias or C
// (FusedMatMul's is a [N] vector; Gemm's broadcasts, and only its dims along N are sliced).
bool splittable_product(const Node& p) {
  if (p.op != "MatMul" && p.op != "FusedMatMul" && p.op != "Gemm") return false;
  if (p.outputs[0]->dtype != DType::f32 || !b_columns_last(p)) return false;
  return !p.has_input(2) || (p.input(2)->constant && p.input(2)->rank() <= 2);
}

std::optional<SplitProduct> split_product(const Graph& graph, const Node& split) {
  const Value* x = split.input(0);
  const int64_t rank = x->rank();
  int64_t axis = split.attr_int("axis", 0);
  if (axis < 0) axis += rank;
  if (rank < 1 || axis != rank - 1) return std::nullopt;
  SplitProduct found;
  for (Node* n = x->producer; n != nullptr; n = n->input(0)->producer) {
    if (!single_use(graph, n->outputs[0])) return std::nullopt;
    if (n->op != "Reshape") {
      if (!splittable_product(*n)) return std::nullopt;
      found.product = n;
      break;
    }
    // A Reshape that keeps the last dim keeps every element's column.
    if (n->input(0)->rank() < 1 || n->input(0)->shape.back() != n->outputs[0]->shape.back()) return std::nullopt;
    found.reshapes.insert(found.reshapes.begin(), n);
  }
  if (found.product == nullptr) return std::nullopt;
  for (const Value* part : split.outputs) {
    if (!part->shape.back().is_const() || part->shape.back().value() < kMinPartWidth) return std::nullopt;
  }
  return found;
}

// Columns [first, first + count) of a constant whose columns are along `dim` (0 or 1 of a
// matrix, or the only dim of a vector). A dim of size 1 broadcasts and is kept whole.
Tensor columns_of(const Tensor& t, size_t dim, int64_t first, int64_t count) {
  std::vector<int64_t> shape = t.shape();
  if (shape.empty() || shape[dim] == 1) return t.clone();
  const int64_t rows = shape.size() == 1 ? 1 : shape[1 - dim];
  const int64_t cols = shape[dim];
  shape[dim] = count;
  Tensor part(t.dtype(), shape);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < count; ++c) {
      const int64_t from = dim == 1 || shape.size() == 1 ? r * cols + first + c : (first + c) * rows + r;
      const int64_t to = dim == 1 || shape.size() == 1 ? r * count + c : c * rows + r;
      part.set_f64(to, t.get_f64(from));
    }
  }
  return part;
}

// The part's product: the original's node with B (and a bias or C along the columns) sliced.
Value* part_product(Graph& graph, const Node& p, int64_t first, int64_t count, const std::string& suffix) {
  std::vector<Value*> inputs = p.inputs;
  const size_t b_dim = *b_columns_last(p) ? 1 : 0;
  inputs[1] = graph.add_constant(graph.unique_value_name(p.input(1)->name + suffix),
                                 columns_of(*p.input(1)->constant, b_dim, first, count));
  if (p.has_input(2)) {
    const Tensor& c = *p.input(2)->constant;
    inputs[2] = graph.add_constant(graph.unique_value_name(p.input(2)->name + suffix),
                                   columns_of(c, c.rank() - 1, first, count));
  }
  Node* part = graph.add_node(p.op, p.name + suffix, inputs, {graph.unique_value_name(p.outputs[0]->name + suffix)},
                              p.attrs);
  infer_node(*part, graph);
  return part->outputs[0];
}

// The target shape of a Reshape of the part: the original's with the part's width last. A
// constant where the original's output has at most one dim that is not a constant (it becomes
// -1); else computed from the original's target, as a shape-only step (fusion/shape_only_steps.h)
// the executor evaluates once per input shape: Concat(Slice(target, 0, -1), [width]).
Value* part_target(Graph& graph, const Node& r, int64_t width, const std::string& name) {
  const Shape& out = r.outputs[0]->shape;
  const auto symbolic = std::count_if(out.begin(), out.end(), [](const Dim& d) { return !d.is_const(); });
  if (symbolic <= 1) {
    std::vector<int64_t> dims;
    for (const Dim& d : out) dims.push_back(d.is_const() ? d.value() : -1);
    dims.back() = width;
    return graph.add_constant(graph.unique_value_name(name), i64_vector(dims));
  }
  Node* lead = graph.add_node("Slice", name + "_lead",
                              {r.input(1), graph.add_constant(graph.unique_value_name(name + "_from"), i64_vector({0})),
                               graph.add_constant(graph.unique_value_name(name + "_to"), i64_vector({-1}))},
                              {graph.unique_value_name(name + "_lead")});
  infer_node(*lead, graph);
  Node* target = graph.add_node("Concat", name,
                                {lead->outputs[0], graph.add_constant(graph.unique_value_name(name + "_width"), i64_vector({width}))},
                                {graph.unique_value_name(name)}, {{"axis", int64_t{0}}});
  infer_node(*target, graph);
  return target->outputs[0];
}

Value* part_reshape(Graph& graph, const Node& r, Value* in, int64_t width, const std::string& suffix) {
  Value* target = part_target(graph, r, width, r.name + suffix + "_shape");
  Node* reshape = graph.add_node("Reshape", r.name + suffix, {in, target}, {graph.unique_value_name(r.outputs[0]->name + suffix)},
                                 r.attrs);
  infer_node(*reshape, graph);
  return reshape->outputs[0];
}

bool fold(Graph& graph, Node& split) {
  if (split.op != "Split") return false;
  const std::optional<SplitProduct> found = split_product(graph, split);
  if (!found) return false;
  int64_t first = 0;
  for (size_t i = 0; i < split.outputs.size(); ++i) {
    Value* part = split.outputs[i];
    const int64_t width = part->shape.back().value();
    const std::string suffix = "_part" + std::to_string(i);
    if (part->users.empty() && !graph.is_output(part)) {  // nothing reads it: not computed at all
      first += width;
      continue;
    }
    Value* v = part_product(graph, *found->product, first, width, suffix);
    for (const Node* reshape : found->reshapes) v = part_reshape(graph, *reshape, v, width, suffix);
    graph.replace_all_uses(part, v);
    std::swap(part->name, v->name);  // graph outputs and debug dumps keep the Split's names
    first += width;
  }
  return true;
}

}  // namespace

int fold_matmul_splits(Graph& graph) {
  return rewrite_nodes(graph, [&](Node& n) { return fold(graph, n); });
}

}  // namespace tilefuse::passes
