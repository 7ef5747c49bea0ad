#include "frontend/opset_support.h"

#include <map>
#include <optional>
#include <vector>

#include <onnx/version_converter/convert.h>

#include "frontend/tensor_proto_conversion.h"
#include "ir/error.h"
#include "ir/log.h"
#include "ir/op_registry.h"

namespace tilefuse::frontend {

namespace {

constexpr const char* kMicrosoftDomain = "com.microsoft";
// Ops newer than the onnx library's opsets (it knows up to 17), which it could neither check nor
// infer: they move to this private domain for the checker and come back as our ops.
constexpr const char* kNewerOpsDomain = "ai.tilefuse.newer";

bool is_newer_op(const std::string& op) { return op == "GroupNormalization" || op == "RMSNormalization"; }

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

std::string domain_label(const std::string& domain) { return is_default_domain(domain) ? "ai.onnx" : domain; }

std::optional<int64_t> imported_opset(const onnx::ModelProto& model, const std::string& domain) {
  for (const auto& opset : model.opset_import()) {
    bool match = is_default_domain(domain) ? is_default_domain(opset.domain()) : opset.domain() == domain;
    if (match) return opset.version();
  }
  return std::nullopt;
}

onnx::OperatorSetIdProto* mutable_default_opset(onnx::ModelProto& model) {
  for (auto& opset : *model.mutable_opset_import()) {
    if (is_default_domain(opset.domain())) return &opset;
  }
  fail_internal("mutable_default_opset: the model imports no default-domain opset");
}

bool is_supported(const onnx::NodeProto& node) {
  if (is_default_domain(node.domain())) {
    // Constant nodes become constant Values; they are not an IR op.
    return node.op_type() == "Constant" || OpRegistry::global().find(node.op_type()) != nullptr;
  }
  if (node.domain() == kNewerOpsDomain) return OpRegistry::global().find(node.op_type()) != nullptr;
  return node.domain() == kMicrosoftDomain && node.op_type() == "Gelu";
}

// The ops whose opset-18 form differs from opset 17 and that we rewrite: every Reduce* we import
// except ReduceSum, which already took `axes` as an input in opset 13.
bool takes_axes_input_since_18(const std::string& op) {
  return op == "ReduceMean" || op == "ReduceMax" || op == "ReduceMin" || op == "ReduceProd" || op == "ReduceL1" ||
         op == "ReduceL2" || op == "ReduceSumSquare" || op == "ReduceLogSum" || op == "ReduceLogSumExp";
}

std::vector<int64_t> axes_values(const onnx::TensorProto& proto, const std::string& where) {
  Tensor t = tensor_from_proto(proto, where);
  if (t.dtype() != DType::i64) fail_user("{}: input 'axes' must be int64, got {}", where, dtype_name(t.dtype()));
  return t.to_i64_vector();
}

// Constant contents of `name`: an initializer or the `value` of a Constant node.
std::optional<std::vector<int64_t>> constant_axes(const onnx::GraphProto& graph, const std::string& name,
                                                  const std::string& where) {
  for (const auto& init : graph.initializer()) {
    if (init.name() == name) return axes_values(init, where);
  }
  for (const auto& node : graph.node()) {
    if (node.op_type() != "Constant" || node.output_size() != 1 || node.output(0) != name) continue;
    for (const auto& attr : node.attribute()) {
      if (attr.name() == "value" && attr.type() == onnx::AttributeProto::TENSOR) return axes_values(attr.t(), where);
    }
  }
  return std::nullopt;
}

void remove_attribute(onnx::NodeProto& node, const std::string& name) {
  auto* attrs = node.mutable_attribute();
  for (int i = 0; i < attrs->size(); ++i) {
    if (attrs->Get(i).name() == name) {
      attrs->DeleteSubrange(i, 1);
      return;
    }
  }
}

int64_t int_attribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() == name) return attr.i();
  }
  return fallback;
}

// ReduceX(data, axes-input) -> ReduceX(data){axes=...}; with no or empty axes and
// noop_with_empty_axes=1 the opset-18 op is the identity.
void move_axes_to_attribute(onnx::NodeProto& node, const onnx::GraphProto& graph, const std::string& where) {
  std::vector<int64_t> axes;
  if (node.input_size() >= 2 && !node.input(1).empty()) {
    auto values = constant_axes(graph, node.input(1), where);
    if (!values) fail_user("{}: input 'axes' must be a constant (initializer or Constant node)", where);
    axes = *values;
  }
  bool noop = int_attribute(node, "noop_with_empty_axes", 0) != 0;
  remove_attribute(node, "noop_with_empty_axes");
  while (node.input_size() > 1) node.mutable_input()->RemoveLast();
  if (axes.empty() && noop) {
    node.set_op_type("Identity");
    node.clear_attribute();
    return;
  }
  if (axes.empty()) return;
  auto* attr = node.add_attribute();
  attr->set_name("axes");
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t a : axes) attr->add_ints(a);
}

// Opset 19 added the float8 types (TensorProto data types 17-20), opsets 21 and 23 4-bit types
// (21 UINT4, 22 INT4, 23 FLOAT4E2M1).
std::optional<std::string> narrow_type_name(int64_t onnx_type) {
  switch (onnx_type) {
    case 17: return "float8 type FLOAT8E4M3FN (opset 19)";
    case 18: return "float8 type FLOAT8E4M3FNUZ (opset 19)";
    case 19: return "float8 type FLOAT8E5M2 (opset 19)";
    case 20: return "float8 type FLOAT8E5M2FNUZ (opset 19)";
    case 21: return "4-bit type UINT4 (opset 21)";
    case 22: return "4-bit type INT4 (opset 21)";
    case 23: return "4-bit type FLOAT4E2M1 (opset 23)";
    default: return std::nullopt;
  }
}

void check_not_float8(int64_t onnx_type, const std::string& what) {
  if (auto name = narrow_type_name(onnx_type)) {
    fail_user("{} has the {}; tilefuse does not support float8 or 4-bit types", what, *name);
  }
}

void check_no_float8_values(const onnx::GraphProto& graph, const std::string& origin) {
  auto check_infos = [&](const auto& infos, const char* kind) {
    for (const onnx::ValueInfoProto& info : infos) {
      check_not_float8(info.type().tensor_type().elem_type(), fmt::format("{}: {} '{}'", origin, kind, info.name()));
    }
  };
  check_infos(graph.input(), "graph input");
  check_infos(graph.output(), "graph output");
  check_infos(graph.value_info(), "value");
  for (const auto& init : graph.initializer()) {
    check_not_float8(init.data_type(), fmt::format("{}: initializer '{}'", origin, init.name()));
  }
}

void check_no_float8_attributes(const onnx::NodeProto& node, const std::string& where) {
  for (const auto& attr : node.attribute()) {
    std::string what = fmt::format("{}: attribute '{}'", where, attr.name());
    if (attr.type() == onnx::AttributeProto::TENSOR) check_not_float8(attr.t().data_type(), what);
    if (attr.name() == "to" && (node.op_type() == "Cast" || node.op_type() == "CastLike")) {
      check_not_float8(attr.i(), what);
    }
  }
}

// Ops whose opset 19-23 form means something their opset-18 form does not, keyed by op type:
// the opset of the change and what changed. Every other op of opsets 19 to 23 that exists in
// opset 18 only gained types (float8, 4-bit, bool, string), which we reject or do not have.
// Pad's 'wrap' mode and Resize's 'half_pixel_symmetric' (opset 19) are attribute values our
// kernels implement; AveragePool's 'dilations' (opset 19) is handled in adapt_opset20_to_18.
struct Opset20Change {
  int opset;
  const char* change;
};
const std::map<std::string, Opset20Change> kIncompatibleChanges = {
    {"DFT", {20, "'dft_length' and 'axis' as inputs"}},
    {"GridSample", {20, "N-d inputs and the mode names 'linear' and 'cubic'"}},
};

void check_same_as_opset18(const onnx::NodeProto& node, int64_t opset, const std::string& where) {
  auto it = kIncompatibleChanges.find(node.op_type());
  if (it == kIncompatibleChanges.end() || it->second.opset > opset) return;
  fail_user("{}: the op changed in opset {} ({}) and cannot be read as its opset-18 form; export the model "
            "with opset 18 or older",
            where, it->second.opset, it->second.change);
}

// AveragePool gained 'dilations' in opset 19; all ones is the opset-18 op.
void drop_unit_dilations(onnx::NodeProto& node, const std::string& where) {
  auto* attrs = node.mutable_attribute();
  for (int i = 0; i < attrs->size(); ++i) {
    const auto& a = attrs->Get(i);
    if (a.name() != "dilations") continue;
    for (int64_t d : a.ints()) {
      if (d != 1) fail_user("{}: attribute 'dilations' (opset 19) other than 1 is not supported", where);
    }
    attrs->DeleteSubrange(i, 1);
    return;
  }
}

void ensure_opset_import(onnx::ModelProto& model, const std::string& domain, int64_t version) {
  if (imported_opset(model, domain)) return;
  auto* opset = model.add_opset_import();
  opset->set_domain(domain);
  opset->set_version(version);
}

}  // namespace

int default_domain_opset(const onnx::ModelProto& model, const std::string& origin) {
  std::optional<int64_t> version = imported_opset(model, "");
  if (!version) fail_user("{}: the model imports no opset for the default domain 'ai.onnx'", origin);
  if (*version > kMaxOpset) {
    fail_user("{}: opset {} of domain 'ai.onnx' is too new; tilefuse reads opsets up to {}. From PyTorch, "
              "export with torch.onnx.export(..., dynamo=False, opset_version=17)",
              origin, *version, kMaxOpset);
  }
  if (*version < 1) fail_user("{}: opset {} of domain 'ai.onnx' is not a valid opset", origin, *version);
  return static_cast<int>(*version);
}

namespace {

// The graph's nodes and those of its subgraphs (If's branches, Loop's body), recursively.
void all_nodes(const onnx::GraphProto& graph, std::vector<const onnx::NodeProto*>& out) {
  for (const auto& node : graph.node()) {
    out.push_back(&node);
    for (const auto& attr : node.attribute()) {
      if (attr.type() == onnx::AttributeProto::GRAPH) all_nodes(attr.g(), out);
    }
  }
}

}  // namespace

void check_ops_supported(const onnx::ModelProto& model, const std::string& origin) {
  std::string message;
  std::vector<const onnx::NodeProto*> nodes;
  all_nodes(model.graph(), nodes);
  for (const onnx::NodeProto* node_ptr : nodes) {
    const onnx::NodeProto& node = *node_ptr;
    if (is_supported(node)) continue;
    std::optional<int64_t> opset = imported_opset(model, node.domain());
    if (!message.empty()) message += '\n';
    message += fmt::format("{}: unsupported op '{}' (node '{}', domain '{}', opset {})", origin, node.op_type(),
                           node.name(), domain_label(node.domain()),
                           opset ? std::to_string(*opset) : "not imported");
  }
  if (!message.empty()) throw UserError(message);
}

void adapt_opset20_to_18(onnx::ModelProto& model, const std::string& origin) {
  onnx::OperatorSetIdProto* opset = mutable_default_opset(model);
  int64_t version = opset->version();
  if (version <= 18) return;
  onnx::GraphProto* graph = model.mutable_graph();
  check_no_float8_values(*graph, origin);
  bool moved_gelu = false;
  for (auto& node : *graph->mutable_node()) {
    std::string where = fmt::format("{}: node '{}' ({}, opset {})", origin, node.name(), node.op_type(), version);
    check_no_float8_attributes(node, where);
    if (!is_default_domain(node.domain())) continue;
    check_same_as_opset18(node, version, where);
    if (node.op_type() == "Cast" || node.op_type() == "CastLike") remove_attribute(node, "saturate");
    if (node.op_type() == "AveragePool") drop_unit_dilations(node, where);
    // Gelu joined ai.onnx in opset 20 with the semantics of our Gelu; in opset 19 it is not an op.
    if (node.op_type() == "Gelu" && version >= 20) {
      node.set_domain(kMicrosoftDomain);
      moved_gelu = true;
    }
  }
  if (moved_gelu) ensure_opset_import(model, kMicrosoftDomain, 1);
  opset->set_version(18);
  logger().info("{}: read opset {} of domain 'ai.onnx' as opset 18", origin, version);
}

// Split-18's num_outputs equals the number of outputs; opset 17 splits into that many equal
// parts without the attribute. The two agree whenever the axis divides evenly, and an uneven
// axis is refused by shape inference (static) or by the kernel (symbolic), never split wrongly.
void drop_split_num_outputs(onnx::NodeProto& node, const std::string& where) {
  if (node.input_size() > 1 && !node.input(1).empty()) return;
  auto* attrs = node.mutable_attribute();
  for (int i = 0; i < attrs->size(); ++i) {
    if (attrs->Get(i).name() != "num_outputs") continue;
    if (attrs->Get(i).i() != node.output_size()) {
      fail_user("{}: attribute 'num_outputs' = {} but the node has {} outputs", where, attrs->Get(i).i(),
                node.output_size());
    }
    attrs->DeleteSubrange(i, 1);
    return;
  }
}

// Resize-18 added antialias, axes and keep_aspect_ratio_policy; at their defaults the node is a
// Resize-13. Other values are refused here by name, before the opset-17 checker would reject the
// attribute without saying why.
void drop_resize_18_defaults(onnx::NodeProto& node, const std::string& where) {
  auto* attrs = node.mutable_attribute();
  for (int i = attrs->size(); i-- > 0;) {
    const auto& a = attrs->Get(i);
    bool is_default = (a.name() == "antialias" && a.i() == 0) ||
                      (a.name() == "keep_aspect_ratio_policy" && a.s() == "stretch");
    if (is_default) {
      attrs->DeleteSubrange(i, 1);
    } else if (a.name() == "antialias" || a.name() == "keep_aspect_ratio_policy" || a.name() == "axes") {
      fail_user("{}: attribute '{}' (opset 18) is supported only at its default", where, a.name());
    }
  }
}

void adapt_opset18_to_17(onnx::ModelProto& model, const std::string& origin) {
  onnx::OperatorSetIdProto* opset = mutable_default_opset(model);
  if (opset->version() != 18) return;
  onnx::GraphProto* graph = model.mutable_graph();
  bool moved_newer = false;
  for (auto& node : *graph->mutable_node()) {
    if (!is_default_domain(node.domain())) continue;
    std::string where = fmt::format("{}: node '{}' ({}, opset 18)", origin, node.name(), node.op_type());
    if (takes_axes_input_since_18(node.op_type())) move_axes_to_attribute(node, *graph, where);
    if (node.op_type() == "Split") drop_split_num_outputs(node, where);
    if (is_newer_op(node.op_type())) {
      node.set_domain(kNewerOpsDomain);
      moved_newer = true;
    }
    if (node.op_type() == "Resize") drop_resize_18_defaults(node, where);
    if (node.op_type() == "Pad" && node.input_size() > 3 && !node.input(3).empty()) {
      fail_user("{}: input 'axes' (opset 18) is not supported; pad every axis", where);
    }
  }
  if (moved_newer) ensure_opset_import(model, kNewerOpsDomain, 1);
  opset->set_version(kTargetOpset);
}

void convert_old_opset(onnx::ModelProto& model, const std::string& origin) {
  int64_t version = mutable_default_opset(model)->version();
  if (version >= kMinNativeOpset) return;
  logger().info("{}: converting opset {} to opset {} with onnx's version converter", origin, version, kTargetOpset);
  try {
    model = onnx::version_conversion::ConvertVersion(model, kTargetOpset);
  } catch (const std::exception& e) {
    fail_user("{}: cannot convert opset {} to opset {}: {}", origin, version, kTargetOpset, e.what());
  }
}

std::string ir_op_name(const onnx::NodeProto& node) {
  if (node.domain() == kMicrosoftDomain && node.op_type() == "Gelu") return "Gelu";
  return node.op_type();  // also the ops moved to kNewerOpsDomain
}

}  // namespace tilefuse::frontend
