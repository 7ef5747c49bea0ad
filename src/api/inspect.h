// What `tilefuse inspect` reports about a graph: its nodes by op type, every tensor with its
// shape (symbols kept), dtype and size in bytes (an expression when the shape is symbolic), and
// the fusion plan exactly as the executor runs it (fusion/execution_plan.h) next to the unfused
// baseline: launches and compulsory bytes (every step reads its inputs once and writes its
// outputs once) of both.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fusion/fusion_plan.h"
#include "ir/graph.h"

namespace tilefuse::api {

enum class TensorRole { input, constant, intermediate, output };

struct TensorInfo {
  std::string name;
  TensorRole role;
  DType dtype;
  Shape shape;
  Dim bytes;
};

// Large enough that per-sample tensors dominate the constant weights, as they do in real runs.
inline constexpr int64_t kSymbolSizeForRatios = 1024;

struct PlanOp {
  std::string op;
  std::string node;
};

// One step of the fused plan, as plain data (the plan itself points into a graph copy).
struct PlanStepInfo {
  fusion::StepKind kind;
  std::string name;                   // the kernel's name; the node's name for other steps
  std::vector<PlanOp> ops;            // one for steps that are not kernels
  std::vector<std::string> epilogue;  // library calls: what the op adds in its store ("bias", "Gelu", ...)
  std::vector<std::string> patterns;  // kernels: the patterns that merged it
  Shape domain;                       // kernels: the iteration space
  std::vector<int64_t> reduced_axes;  // kernels: axes reduced inside the kernel
  std::vector<TensorInfo> inputs;     // roles are those in the planned (decomposed) graph
  std::vector<TensorInfo> outputs;
  Dim bytes;                          // compulsory bytes (fusion::step_bytes)
  bool per_shape = false;             // computed once per set of input shapes, not on every run
  int row_chain = -1;                 // the row chain (fusion/row_chains.h) it runs in, or -1
};

struct PlanSummary {
  std::vector<PlanStepInfo> steps;  // the fused plan in execution order
  int64_t kernels_fused = 0;        // launches per run: kernels, library calls and host ops
  int64_t kernels_unfused = 0;
  Dim bytes_fused;
  Dim bytes_unfused;
  // 1 - fused/unfused. Symbolic byte counts are compared with every symbol bound to
  // kSymbolSizeForRatios (listed in ratio_bindings; empty when the bytes are static).
  double launch_reduction = 0;
  double bytes_reduction = 0;
  SymbolBindings ratio_bindings;
};

struct InspectReport {
  std::string graph_name;
  int64_t num_nodes = 0;
  std::map<std::string, int64_t> op_counts;  // op type -> number of nodes
  std::vector<TensorInfo> tensors;           // inputs, constants, then node outputs in order
  std::map<TensorRole, Dim> bytes_by_role;
  Dim total_bytes;
  PlanSummary plan;
};

std::string_view role_name(TensorRole role);

// Plans the graph fused and unfused (on copies; `graph` is not changed).
InspectReport inspect_graph(const Graph& graph);
// Bytes are JSON integers when static and expression strings ("512*N") when symbolic. The plan
// totals are top-level keys (kernels_fused, bytes_fused, ...), the steps are under "plan".
nlohmann::json report_to_json(const InspectReport& report);
// Aligned plain-text tables for people; the plan one line per step.
std::string report_to_table(const InspectReport& report);

}  // namespace tilefuse::api
