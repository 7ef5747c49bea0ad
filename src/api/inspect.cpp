#include "api/inspect.h"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "api/text_table.h"
#include "fusion/execution_plan.h"
#include "fusion/shape_only_steps.h"
#include "runtime/library_call.h"

namespace tilefuse::api {
namespace {

constexpr TensorRole kRoles[] = {TensorRole::input, TensorRole::constant, TensorRole::intermediate,
                                 TensorRole::output};

// The plan table lists this many op types of a kernel; the JSON lists them all.
constexpr size_t kOpsShownPerStep = 6;

// Which role a value of one graph plays in it.
class RoleLookup {
 public:
  explicit RoleLookup(const Graph& graph)
      : inputs_(graph.inputs().begin(), graph.inputs().end()), outputs_(graph.outputs().begin(), graph.outputs().end()) {}

  TensorRole role_of(const Value& value) const {
    if (inputs_.count(&value)) return TensorRole::input;
    if (value.is_constant()) return TensorRole::constant;
    if (outputs_.count(&value)) return TensorRole::output;
    return TensorRole::intermediate;
  }

  TensorInfo describe(const Value& value) const {
    Dim bytes = num_elements(value.shape) * Dim(static_cast<int64_t>(dtype_size(value.dtype)));
    return {value.name, role_of(value), value.dtype, value.shape, bytes};
  }

  std::vector<TensorInfo> describe_all(const std::vector<Value*>& values) const {
    std::vector<TensorInfo> out;
    for (const Value* v : values) {
      if (v != nullptr) out.push_back(describe(*v));  // absent optional inputs
    }
    return out;
  }

 private:
  std::set<const Value*> inputs_;
  std::set<const Value*> outputs_;
};

// Inputs first, then constants, then node outputs in topological order: the order a reader
// follows the data.
std::vector<const Value*> values_in_reading_order(const Graph& graph) {
  std::vector<const Value*> ordered(graph.inputs().begin(), graph.inputs().end());
  std::set<const Value*> listed(ordered.begin(), ordered.end());
  for (const Value* v : graph.values()) {
    if (v->is_constant() && listed.insert(v).second) ordered.push_back(v);
  }
  for (const Node* node : graph.nodes()) {
    for (const Value* out : node->outputs) {
      if (listed.insert(out).second) ordered.push_back(out);
    }
  }
  return ordered;
}

// What a fused GEMM or convolution computes in its store besides the product, in order: the
// folded bias, the residual, the activation (PointwiseDepthwiseConv: the 1x1 convolution's, then
// "depthwise" and the depthwise convolution's).
std::vector<std::string> epilogue_of(const Node& node) {
  if (node.op == "PointwiseDepthwiseConv") {  // each convolution's, in order
    std::vector<std::string> parts;
    if (node.has_input(3)) parts.push_back("bias");
    if (const std::string act = node.attr_string("pointwise_activation", ""); !act.empty()) parts.push_back(act);
    parts.push_back("depthwise");
    if (node.has_input(4)) parts.push_back("bias");
    if (const std::string act = node.attr_string("activation", ""); !act.empty()) parts.push_back(act);
    return parts;
  }
  if (node.op != "FusedMatMul" && node.op != "FusedConv") return {};
  std::vector<std::string> parts;
  if (node.has_input(2)) parts.push_back("bias");
  if (node.op == "FusedConv" && node.has_input(3)) parts.push_back("residual");
  if (const std::string act = node.attr_string("activation", ""); !act.empty()) parts.push_back(act);
  return parts;
}

PlanStepInfo describe_step(const fusion::PlanStep& step, const RoleLookup& roles) {
  PlanStepInfo info;
  info.kind = step.kind;
  // A host op the runtime has its own code for (Gather, Split, Concat, ...) runs as a library call.
  if (step.kind == fusion::StepKind::Host && runtime::library_call_supports(*step.node)) info.kind = fusion::StepKind::LibraryCall;
  info.bytes = fusion::step_bytes(step);
  if (step.kind != fusion::StepKind::Kernel) {
    // What step_bytes counts for these steps: every present input and every output.
    info.name = step.node->name;
    info.ops = {{step.node->op, step.node->name}};
    info.epilogue = epilogue_of(*step.node);
    info.inputs = roles.describe_all(step.node->inputs);
    info.outputs = roles.describe_all(step.node->outputs);
    return info;
  }
  const fusion::FusedKernel& kernel = step.kernel;
  info.name = kernel.name;
  for (const Node* n : kernel.nodes) info.ops.push_back({n->op, n->name});
  info.patterns = kernel.patterns;
  info.domain = kernel.space.domain;
  info.reduced_axes = kernel.space.reduced_axes;
  info.inputs = roles.describe_all(kernel.inputs);
  info.outputs = roles.describe_all(kernel.outputs);
  return info;
}

double reduction(double fused, double unfused) { return unfused == 0 ? 0 : 1 - fused / unfused; }

PlanSummary summarize_plans(const Graph& graph) {
  const fusion::ExecutionPlan fused = fusion::plan_for_execution(graph, true);
  const fusion::ExecutionPlan unfused = fusion::plan_for_execution(graph, false);
  PlanSummary summary;
  const RoleLookup roles(fused.graph);
  const std::vector<bool> per_shape = fusion::find_shape_only_steps(fused.plan);
  for (size_t i = 0; i < fused.plan.steps.size(); ++i) {
    summary.steps.push_back(describe_step(fused.plan.steps[i], roles));
    summary.steps.back().per_shape = per_shape[i];
  }
  for (size_t c = 0; c < fused.plan.row_chains.size(); ++c) {
    const fusion::RowChain& chain = fused.plan.row_chains[c];
    for (size_t s : {chain.first_product, chain.kernel, chain.second_product}) summary.steps[s].row_chain = static_cast<int>(c);
  }
  summary.kernels_fused = fusion::run_time_launches(fused.plan, per_shape);
  summary.kernels_unfused = fusion::run_time_launches(unfused.plan, fusion::find_shape_only_steps(unfused.plan));
  summary.bytes_fused = fused.plan.compulsory_bytes();
  summary.bytes_unfused = unfused.plan.compulsory_bytes();
  summary.launch_reduction = reduction(static_cast<double>(summary.kernels_fused),
                                       static_cast<double>(summary.kernels_unfused));
  for (const Dim& bytes : {summary.bytes_fused, summary.bytes_unfused}) {
    for (const std::string& s : bytes.symbols()) summary.ratio_bindings[s] = kSymbolSizeForRatios;
  }
  summary.bytes_reduction = reduction(static_cast<double>(summary.bytes_fused.evaluate(summary.ratio_bindings)),
                                      static_cast<double>(summary.bytes_unfused.evaluate(summary.ratio_bindings)));
  return summary;
}

nlohmann::json bytes_to_json(const Dim& bytes) {
  if (bytes.is_const()) return bytes.value();
  return bytes.to_string();
}

// Ratios with three decimals: enough to read a percentage, stable in tests and diffs.
double rounded(double ratio) { return std::round(ratio * 1000) / 1000; }

nlohmann::json tensor_to_json(const TensorInfo& t) {
  return {{"name", t.name},
          {"role", role_name(t.role)},
          {"dtype", dtype_name(t.dtype)},
          {"shape", shape_to_string(t.shape)},
          {"bytes", bytes_to_json(t.bytes)}};
}

nlohmann::json tensors_to_json(const std::vector<TensorInfo>& tensors) {
  nlohmann::json json = nlohmann::json::array();
  for (const TensorInfo& t : tensors) json.push_back(tensor_to_json(t));
  return json;
}

nlohmann::json step_to_json(const PlanStepInfo& step) {
  nlohmann::json json = {{"kind", fusion::step_kind_name(step.kind)}, {"name", step.name}};
  json["ops"] = nlohmann::json::array();
  for (const PlanOp& op : step.ops) json["ops"].push_back({{"op", op.op}, {"node", op.node}});
  if (!step.epilogue.empty()) json["epilogue"] = step.epilogue;
  if (step.kind == fusion::StepKind::Kernel) {
    json["patterns"] = step.patterns;
    json["domain"] = shape_to_string(step.domain);
    json["reduced_axes"] = step.reduced_axes;
  }
  json["inputs"] = tensors_to_json(step.inputs);
  json["outputs"] = tensors_to_json(step.outputs);
  json["bytes"] = bytes_to_json(step.bytes);
  if (step.per_shape) json["per_shape"] = true;
  if (step.row_chain >= 0) json["row_chain"] = step.row_chain;
  return json;
}

void add_plan_json(const PlanSummary& plan, nlohmann::json& json) {
  json["plan"] = nlohmann::json::array();
  for (const PlanStepInfo& step : plan.steps) json["plan"].push_back(step_to_json(step));
  json["kernels_fused"] = plan.kernels_fused;
  json["kernels_unfused"] = plan.kernels_unfused;
  json["bytes_fused"] = bytes_to_json(plan.bytes_fused);
  json["bytes_unfused"] = bytes_to_json(plan.bytes_unfused);
  json["launch_reduction"] = rounded(plan.launch_reduction);
  json["bytes_reduction"] = rounded(plan.bytes_reduction);
  if (!plan.ratio_bindings.empty()) json["bytes_reduction_at"] = plan.ratio_bindings;
}

// "-50%" for a cut, "+50%" where the fused plan has more (a split reduction's partial and
// combine kernels), "-0%" for none.
std::string percent_cut(double reduction) {
  return reduction < 0 ? fmt::format("+{:.0f}%", -reduction * 100) : fmt::format("-{:.0f}%", reduction * 100);
}

std::string bindings_text(const SymbolBindings& bindings) {
  std::string out;
  for (const auto& [symbol, value] : bindings) out += fmt::format("{}{}={}", out.empty() ? "" : ", ", symbol, value);
  return out;
}

// "Add Mul Erf" for a kernel, abbreviated after kOpsShownPerStep op types; "FusedMatMul +bias
// +Gelu" for a GEMM with its epilogue.
std::string ops_text(const PlanStepInfo& step) {
  std::string out;
  for (size_t i = 0; i < step.ops.size() && i < kOpsShownPerStep; ++i) out += (i ? " " : "") + step.ops[i].op;
  if (step.ops.size() > kOpsShownPerStep) out += fmt::format(" +{} more", step.ops.size() - kOpsShownPerStep);
  for (const std::string& part : step.epilogue) out += " +" + part;
  return out;
}

std::string plan_to_table(const PlanSummary& plan) {
  std::string bytes_cut = percent_cut(plan.bytes_reduction);
  if (!plan.ratio_bindings.empty()) bytes_cut += " at " + bindings_text(plan.ratio_bindings);
  std::string out = fmt::format(
      "\nfusion plan: {} launches (unfused {}, {}), {} compulsory bytes (unfused {}, {}):\n", plan.kernels_fused,
      plan.kernels_unfused, percent_cut(plan.launch_reduction), plan.bytes_fused.to_string(),
      plan.bytes_unfused.to_string(), bytes_cut);
  std::vector<std::vector<std::string>> rows = {{"step", "kind", "name", "ops", "bytes"}};
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStepInfo& step = plan.steps[i];
    std::string kind(fusion::step_kind_name(step.kind));
    if (step.per_shape) kind += " (per shape)";
    if (step.row_chain >= 0) kind += fmt::format(" (row chain {})", step.row_chain);
    rows.push_back({std::to_string(i), kind, step.name, ops_text(step), step.bytes.to_string()});
  }
  return out + render_table(rows);
}

}  // namespace

std::string_view role_name(TensorRole role) {
  switch (role) {
    case TensorRole::input: return "input";
    case TensorRole::constant: return "constant";
    case TensorRole::intermediate: return "intermediate";
    case TensorRole::output: return "output";
  }
  return "?";
}

InspectReport inspect_graph(const Graph& graph) {
  InspectReport report;
  report.graph_name = graph.name;
  report.num_nodes = static_cast<int64_t>(graph.num_nodes());
  for (const Node* node : graph.nodes()) ++report.op_counts[node->op];
  for (TensorRole role : kRoles) report.bytes_by_role[role] = 0;
  const RoleLookup roles(graph);
  for (const Value* v : values_in_reading_order(graph)) {
    TensorInfo info = roles.describe(*v);
    report.bytes_by_role[info.role] = report.bytes_by_role[info.role] + info.bytes;
    report.total_bytes = report.total_bytes + info.bytes;
    report.tensors.push_back(std::move(info));
  }
  report.plan = summarize_plans(graph);
  return report;
}

nlohmann::json report_to_json(const InspectReport& report) {
  nlohmann::json json;
  json["graph"] = report.graph_name;
  json["num_nodes"] = report.num_nodes;
  json["ops"] = report.op_counts;
  json["tensors"] = tensors_to_json(report.tensors);
  nlohmann::json totals;
  for (const auto& [role, bytes] : report.bytes_by_role) totals[std::string(role_name(role))] = bytes_to_json(bytes);
  totals["all"] = bytes_to_json(report.total_bytes);
  json["bytes"] = totals;
  add_plan_json(report.plan, json);
  return json;
}

std::string report_to_table(const InspectReport& report) {
  std::string out = fmt::format("graph '{}': {} nodes, {} tensors\n\nops:\n", report.graph_name, report.num_nodes,
                                report.tensors.size());
  std::vector<std::vector<std::string>> op_rows;
  for (const auto& [op, count] : report.op_counts) op_rows.push_back({op, std::to_string(count)});
  out += render_table(op_rows);
  std::vector<std::vector<std::string>> tensor_rows = {{"name", "role", "type", "bytes"}};
  for (const TensorInfo& t : report.tensors) {
    tensor_rows.push_back({t.name, std::string(role_name(t.role)),
                           std::string(dtype_name(t.dtype)) + shape_to_string(t.shape), t.bytes.to_string()});
  }
  out += "\ntensors:\n" + render_table(tensor_rows);
  std::vector<std::vector<std::string>> total_rows;
  for (const auto& [role, bytes] : report.bytes_by_role) total_rows.push_back({std::string(role_name(role)), bytes.to_string()});
  total_rows.push_back({"all", report.total_bytes.to_string()});
  out += "\nbytes:\n" + render_table(total_rows);
  return out + plan_to_table(report.plan);
}

}  // namespace tilefuse::api
