// What `tilefuse inspect` reports about a graph: its nodes by op type and every tensor with its
// shape (symbols kept), dtype and size in bytes (an expression when the shape is symbolic).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

struct InspectReport {
  std::string graph_name;
  int64_t num_nodes = 0;
  std::map<std::string, int64_t> op_counts;  // op type -> number of nodes
  std::vector<TensorInfo> tensors;           // inputs, constants, then node outputs in order
  std::map<TensorRole, Dim> bytes_by_role;
  Dim total_bytes;
};

std::string_view role_name(TensorRole role);

InspectReport inspect_graph(const Graph& graph);
// Bytes are JSON integers when static and expression strings ("512*N") when symbolic.
nlohmann::json report_to_json(const InspectReport& report);
// Aligned plain-text tables for people.
std::string report_to_table(const InspectReport& report);

}  // namespace tilefuse::api
