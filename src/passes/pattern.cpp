#include "passes/pattern.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "ir/error.h"
#include "ir/op_registry.h"

namespace tilefuse::passes {

std::optional<std::vector<int64_t>> reduced_axes(const Node& node) {
  if (node.outputs.empty() || node.input(0) == nullptr) return std::nullopt;
  int64_t rank = node.input(0)->rank();
  std::vector<int64_t> axes;
  if (node.op == "Softmax" || node.op == "LogSoftmax") {
    axes = {normalize_axis(node.attr_int("axis", -1), rank, node.describe())};
  } else if (node.op == "LayerNormalization") {
    int64_t first = normalize_axis(node.attr_int("axis", -1), rank, node.describe());
    for (int64_t a = first; a < rank; ++a) axes.push_back(a);
  } else if (node.op.rfind("Reduce", 0) == 0) {
    if (node.has_attr("axes")) {
      axes = node.attr_ints("axes");
    } else if (node.has_input(1)) {
      if (!node.input(1)->constant) return std::nullopt;
      axes = node.input(1)->constant->to_i64_vector();
    }
    if (axes.empty()) {
      if (node.attr_int("noop_with_empty_axes", 0) != 0) return std::vector<int64_t>{};
      axes.resize(static_cast<size_t>(rank));
      std::iota(axes.begin(), axes.end(), 0);
    }
    for (int64_t& a : axes) a = normalize_axis(a, rank, node.describe());
  } else {
    return std::nullopt;
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

namespace {

bool attributes_equal(const Attribute& a, const Attribute& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Tensor>) {
          return x.same_bytes(std::get<Tensor>(b));
        } else {
          return x == std::get<T>(b);
        }
      },
      a);
}

bool any_input_broadcasts(const Node& node) {
  const Value* out = node.outputs.empty() ? nullptr : node.outputs[0];
  if (out == nullptr) return false;
  return std::any_of(node.inputs.begin(), node.inputs.end(),
                     [&](const Value* in) { return in != nullptr && in->shape != out->shape; });
}

bool reduces_trailing_axes(const Node& node) {
  auto axes = reduced_axes(node);
  if (!axes || axes->empty()) return false;
  int64_t rank = node.input(0)->rank();
  for (size_t i = 0; i < axes->size(); ++i) {
    if ((*axes)[axes->size() - 1 - i] != rank - 1 - static_cast<int64_t>(i)) return false;
  }
  return true;
}

std::string traits_text(uint32_t traits, std::string_view joiner, std::string_view negation) {
  static const std::pair<uint32_t, const char*> kNames[] = {
      {kPointwise, "Pointwise"},       {kBroadcasting, "Broadcasting"}, {kReduction, "Reduction"},
      {kDataMovement, "DataMovement"}, {kLibraryCall, "LibraryCall"},   {kShapeOp, "ShapeOp"},
      {kComposite, "Composite"}};
  std::string out;
  for (auto [bit, name] : kNames) {
    if ((traits & bit) == 0) continue;
    if (!out.empty()) out += joiner;
    out += std::string(negation) + name;
  }
  return out;
}

}  // namespace

bool NodeConstraint::accepts(const Node& node) const {
  if (!op_types.empty() && std::find(op_types.begin(), op_types.end(), node.op) == op_types.end()) return false;
  const OpDef* def = OpRegistry::global().find(node.op);
  uint32_t traits = def ? def->traits : 0;
  if ((traits & all_traits) != all_traits) return false;
  if (any_traits != 0 && (traits & any_traits) == 0) return false;
  if ((traits & no_traits) != 0) return false;
  if (node.outputs.empty()) return false;
  const Value* out = node.outputs[0];
  if (!dtypes.empty() && std::find(dtypes.begin(), dtypes.end(), out->dtype) == dtypes.end()) return false;
  if (shape == ShapeConstraint::Static && !is_static(out->shape)) return false;
  if (shape == ShapeConstraint::Dynamic && is_static(out->shape)) return false;
  if (broadcast != BroadcastConstraint::Any && any_input_broadcasts(node) != (broadcast == BroadcastConstraint::Some)) {
    return false;
  }
  if (reduce_axes == ReduceAxesConstraint::Trailing && !reduces_trailing_axes(node)) return false;
  for (const auto& attr : attrs) {
    auto it = node.attrs.find(attr.name);
    if (it == node.attrs.end() || !attributes_equal(it->second, attr.value)) return false;
  }
  return true;
}

std::string NodeConstraint::describe() const {
  std::vector<std::string> parts;
  if (!op_types.empty()) {
    std::string ops;
    for (const auto& op : op_types) ops += (ops.empty() ? "" : "|") + op;
    parts.push_back(ops);
  }
  if (all_traits) parts.push_back(traits_text(all_traits, " & ", ""));
  if (any_traits) parts.push_back("(" + traits_text(any_traits, " | ", "") + ")");
  if (no_traits) parts.push_back(traits_text(no_traits, " & ", "!"));
  if (!dtypes.empty()) {
    std::string types;
    for (DType t : dtypes) types += (types.empty() ? "" : "|") + std::string(dtype_name(t));
    parts.push_back(types);
  }
  if (shape != ShapeConstraint::Any) parts.push_back(shape == ShapeConstraint::Static ? "static" : "dynamic");
  if (broadcast != BroadcastConstraint::Any) {
    parts.push_back(broadcast == BroadcastConstraint::Some ? "broadcast" : "no-broadcast");
  }
  if (reduce_axes == ReduceAxesConstraint::Trailing) parts.push_back("trailing-axes");
  for (const auto& attr : attrs) parts.push_back(attr.name + "=...");
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out.empty() ? "any" : out;
}

std::string_view family_name(PatternFamily family) {
  switch (family) {
    case PatternFamily::ElementwiseChain: return "elementwise-chain";
    case PatternFamily::ElementwiseBroadcast: return "elementwise-broadcast";
    case PatternFamily::ElementwiseReduce: return "elementwise-reduce";
    case PatternFamily::ReduceElementwise: return "reduce-elementwise";
    case PatternFamily::Transpose: return "transpose";
    case PatternFamily::MatmulEpilogue: return "matmul-epilogue";
    case PatternFamily::User: return "user";
  }
  return "?";
}

int Pattern::index_of(const std::string& id) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

void Pattern::validate() const {
  if (nodes.empty()) fail_user("pattern '{}': has no nodes", name);
  std::set<std::string> ids;
  for (const auto& n : nodes) {
    if (!ids.insert(n.id).second) fail_user("pattern '{}': node id '{}' is used twice", name, n.id);
  }
  for (const auto& e : edges) {
    if (index_of(e.producer) < 0 || index_of(e.consumer) < 0) {
      fail_user("pattern '{}': edge {} -> {} names an unknown node", name, e.producer, e.consumer);
    }
    if (e.producer == e.consumer) fail_user("pattern '{}': edge {} -> {} is a self-loop", name, e.producer, e.consumer);
  }
  // Connected: the matcher extends from the anchor along edges, so every node must be reachable.
  std::set<std::string> reached = {nodes[0].id};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& e : edges) {
      bool has_p = reached.count(e.producer) != 0, has_c = reached.count(e.consumer) != 0;
      if (has_p != has_c) {
        reached.insert(has_p ? e.consumer : e.producer);
        grew = true;
      }
    }
  }
  if (reached.size() != nodes.size()) fail_user("pattern '{}': nodes are not all connected by edges", name);
}

}  // namespace tilefuse::passes
