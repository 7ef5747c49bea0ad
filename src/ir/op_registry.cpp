#include "ir/op_registry.h"

#include <algorithm>

#include "ir/checked_size.h"
#include "ir/error.h"
#include "ir/graph.h"

namespace tilefuse {

const AttrSpec* OpDef::find_attr(std::string_view attr) const {
  for (const auto& spec : attrs) {
    if (spec.name == attr) return &spec;
  }
  return nullptr;
}

OpRegistry& OpRegistry::global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    register_elementwise_ops(*r);
    register_reduction_ops(*r);
    register_movement_ops(*r);
    register_shape_ops(*r);
    register_nn_ops(*r);
    register_matmul_ops(*r);
    register_window_ops(*r);
    register_index_ops(*r);
    register_resize_ops(*r);
    register_recurrent_ops(*r);
    register_detection_ops(*r);
    register_control_flow_ops(*r);
    return r;
  }();
  return *registry;
}

void OpRegistry::add(OpDef def) {
  if (find(def.name) != nullptr) fail_internal("op '{}' registered twice", def.name);
  defs_.push_back(std::move(def));
}

const OpDef* OpRegistry::find(std::string_view name) const {
  for (const auto& def : defs_) {
    if (def.name == name) return &def;
  }
  return nullptr;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& def : defs_) out.push_back(def.name);
  std::sort(out.begin(), out.end());
  return out;
}

const OpDef& check_node(const Node& node, const OpRegistry& registry) {
  const OpDef* def = registry.find(node.op);
  if (def == nullptr) fail_user("{}: op type '{}' is not supported", node.describe(), node.op);
  int n_in = static_cast<int>(node.inputs.size());
  if (n_in < def->min_inputs || n_in > def->max_inputs) {
    fail_user("{}: takes {} to {} inputs, got {}", node.describe(), def->min_inputs, def->max_inputs, n_in);
  }
  for (int i = 0; i < def->min_inputs; ++i) {
    if (node.inputs[i] == nullptr) fail_user("{}: required input {} is missing", node.describe(), i);
  }
  int n_out = static_cast<int>(node.outputs.size());
  if (n_out < def->min_outputs || n_out > def->max_outputs) {
    fail_user("{}: produces {} to {} outputs, got {}", node.describe(), def->min_outputs, def->max_outputs, n_out);
  }
  for (const auto& spec : def->attrs) {
    auto it = node.attrs.find(spec.name);
    if (it == node.attrs.end()) {
      if (spec.required) fail_user("{}: required attribute '{}' is missing", node.describe(), spec.name);
      continue;
    }
    if (attr_kind(it->second) != spec.kind) {
      fail_user("{}: attribute '{}' must be of kind {}, got {}", node.describe(), spec.name,
                attr_kind_name(spec.kind), attr_kind_name(attr_kind(it->second)));
    }
  }
  if (!def->input_dtypes.empty() && node.input(0) != nullptr) {
    DType t = node.input(0)->dtype;
    if (std::find(def->input_dtypes.begin(), def->input_dtypes.end(), t) == def->input_dtypes.end()) {
      fail_user("{}: input '{}' has element type {}, which {} does not accept", node.describe(),
                node.input(0)->name, dtype_name(t), node.op);
    }
  }
  return *def;
}

namespace {

// An inferred shape whose size cannot be represented (a model that expands a scalar to 2^66
// elements) is refused here, where the tensor and the node are known, before any layer computes
// with it. Symbolic dims are checked by the executor once their values are bound.
void check_representable_size(const Value& value, const Node& node) {
  if (!is_static(value.shape)) return;
  const std::vector<int64_t> dims = static_dims(value.shape);
  if (nbytes_if_valid(value.dtype, dims)) return;  // the message is only formatted for a failure
  checked_nbytes(value.dtype, dims, fmt::format("tensor '{}' ({})", value.name, node.describe()));
}

}  // namespace

void infer_node(Node& node, Graph& graph) {
  const OpDef& def = check_node(node);
  if (def.infer) {
    try {
      def.infer(node, graph);
    } catch (const UserError& error) {
      // Arithmetic errors deep in shape inference (an overflowing dim) do not know the node.
      const std::string where = node.describe();
      if (std::string_view(error.what()).find(where) != std::string_view::npos) throw;
      throw UserError(fmt::format("{}: {}", where, error.what()));
    }
  }
  for (const Value* out : node.outputs) {
    if (out != nullptr) check_representable_size(*out, node);
  }
}

}  // namespace tilefuse
