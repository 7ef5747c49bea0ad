#include "api/inspect.h"

#include <set>

#include <fmt/format.h>

#include "api/text_table.h"

namespace tilefuse::api {
namespace {

constexpr TensorRole kRoles[] = {TensorRole::input, TensorRole::constant, TensorRole::intermediate,
                                 TensorRole::output};

TensorRole role_of(const Value& value, const std::set<const Value*>& inputs, const std::set<const Value*>& outputs) {
  if (inputs.count(&value)) return TensorRole::input;
  if (value.is_constant()) return TensorRole::constant;
  if (outputs.count(&value)) return TensorRole::output;
  return TensorRole::intermediate;
}

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

nlohmann::json bytes_to_json(const Dim& bytes) {
  if (bytes.is_const()) return bytes.value();
  return bytes.to_string();
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
  const std::set<const Value*> inputs(graph.inputs().begin(), graph.inputs().end());
  const std::set<const Value*> outputs(graph.outputs().begin(), graph.outputs().end());
  for (const Value* v : values_in_reading_order(graph)) {
    Dim bytes = num_elements(v->shape) * Dim(static_cast<int64_t>(dtype_size(v->dtype)));
    TensorRole role = role_of(*v, inputs, outputs);
    report.tensors.push_back({v->name, role, v->dtype, v->shape, bytes});
    report.bytes_by_role[role] = report.bytes_by_role[role] + bytes;
    report.total_bytes = report.total_bytes + bytes;
  }
  return report;
}

nlohmann::json report_to_json(const InspectReport& report) {
  nlohmann::json json;
  json["graph"] = report.graph_name;
  json["num_nodes"] = report.num_nodes;
  json["ops"] = report.op_counts;
  json["tensors"] = nlohmann::json::array();
  for (const TensorInfo& t : report.tensors) {
    json["tensors"].push_back({{"name", t.name},
                               {"role", role_name(t.role)},
                               {"dtype", dtype_name(t.dtype)},
                               {"shape", shape_to_string(t.shape)},
                               {"bytes", bytes_to_json(t.bytes)}});
  }
  nlohmann::json totals;
  for (const auto& [role, bytes] : report.bytes_by_role) totals[std::string(role_name(role))] = bytes_to_json(bytes);
  totals["all"] = bytes_to_json(report.total_bytes);
  json["bytes"] = totals;
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
  return out;
}

}  // namespace tilefuse::api
