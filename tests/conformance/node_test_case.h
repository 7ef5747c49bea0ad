// One case of the ONNX backend node tests, as `onnx.backend.test.cmd_tools generate-data` writes
// it: DIR/model.onnx plus DIR/test_data_set_*/{input,output}_*.pb.
#pragma once

#include <string>
#include <vector>

namespace tilefuse::conformance {

// Where `make node-tests` puts the generated cases for this build tree.
std::string node_tests_root();

struct OpRef {
  std::string domain;  // "" for the default ONNX domain
  std::string op_type;
};

struct ModelSummary {
  std::vector<OpRef> ops;                // every node of the main graph, in order
  std::vector<std::string> input_names;  // graph inputs that are not initializers, in order
  // Declared ONNX element types (TensorProto.DataType numbers; 0 if not a tensor) of those inputs
  // and of the graph outputs, in order.
  std::vector<int> input_types;
  std::vector<int> output_types;
};

struct DataSet {
  std::vector<std::string> input_files;   // input_0.pb, input_1.pb, ... in index order
  std::vector<std::string> output_files;  // output_0.pb, ...
};

// Case directory names under `root`, sorted; empty if `root` does not exist.
std::vector<std::string> list_node_test_cases(const std::string& root);

// Reads model.onnx of a case with the onnx protobuf classes, without importing it.
ModelSummary summarize_model(const std::string& model_path);

// The case's test_data_set_* directories, sorted.
std::vector<DataSet> list_data_sets(const std::string& case_dir);

}  // namespace tilefuse::conformance
