#include "conformance/node_test_case.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

// The onnx headers need these to pick the same protobuf classes the library was built with.
#define ONNX_NAMESPACE onnx
#define ONNX_ML 1
#include <onnx/onnx_pb.h>

#include "ir/error.h"

namespace fs = std::filesystem;

namespace tilefuse::conformance {

std::string node_tests_root() { return std::string(TILEFUSE_BINARY_DIR) + "/onnx-node-tests/node"; }

namespace {

std::vector<std::string> sorted_entries(const std::string& dir, bool want_directories) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_directory() == want_directories) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// "input_3.pb" files of a data set in index order (plain string sort would put 10 before 2).
std::vector<std::string> numbered_files(const fs::path& dir, const std::string& prefix) {
  std::vector<std::string> files;
  for (size_t i = 0; fs::exists(dir / (prefix + std::to_string(i) + ".pb")); ++i) {
    files.push_back((dir / (prefix + std::to_string(i) + ".pb")).string());
  }
  return files;
}

}  // namespace

std::vector<std::string> list_node_test_cases(const std::string& root) {
  if (!fs::is_directory(root)) return {};
  return sorted_entries(root, /*want_directories=*/true);
}

ModelSummary summarize_model(const std::string& model_path) {
  std::ifstream in(model_path, std::ios::binary);
  onnx::ModelProto model;
  if (!in || !model.ParseFromIstream(&in)) {
    fail_user("cannot parse '{}' as an ONNX ModelProto", model_path);
  }
  ModelSummary summary;
  for (const auto& node : model.graph().node()) summary.ops.push_back({node.domain(), node.op_type()});
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  for (const auto& input : model.graph().input()) {
    if (initializers.count(input.name())) continue;
    summary.input_names.push_back(input.name());
    summary.input_types.push_back(input.type().tensor_type().elem_type());
  }
  for (const auto& output : model.graph().output()) {
    summary.output_types.push_back(output.type().tensor_type().elem_type());
  }
  return summary;
}

std::vector<DataSet> list_data_sets(const std::string& case_dir) {
  std::vector<DataSet> sets;
  for (const auto& name : sorted_entries(case_dir, /*want_directories=*/true)) {
    if (name.rfind("test_data_set_", 0) != 0) continue;
    fs::path dir = fs::path(case_dir) / name;
    sets.push_back({numbered_files(dir, "input_"), numbered_files(dir, "output_")});
  }
  return sets;
}

}  // namespace tilefuse::conformance
