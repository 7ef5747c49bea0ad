// Every bundled example model (examples/models/*.onnx), imported and run by the reference
// interpreter on its committed inputs, against the outputs scripts/make_example_models.py
// computed independently with numpy in float64.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "frontend/onnx_importer.h"
#include "io/npy.h"
#include "ir/tensor_compare.h"
#include "reference/interpreter.h"

namespace tilefuse {
namespace {

namespace fs = std::filesystem;

// f32 math against float64 numpy: room for rounding in reductions, erf/exp and BLAS matmuls.
constexpr Tolerance kVsNumpy{1e-4, 1e-5};

std::string models_dir() { return std::string(TILEFUSE_SOURCE_DIR) + "/examples/models"; }

std::vector<std::string> bundled_model_names() {
  std::vector<std::string> names;
  if (!fs::is_directory(models_dir())) return names;
  for (const auto& entry : fs::directory_iterator(models_dir())) {
    if (entry.path().extension() == ".onnx") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class BundledModelTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string data_file(const std::string& kind, const std::string& tensor_name) const {
    return models_dir() + "/" + GetParam() + "/" + kind + "/" + tensor_name + ".npy";
  }
};

TEST_P(BundledModelTest, ReferenceMatchesNumpy) {
  Graph graph = frontend::import_onnx_file(models_dir() + "/" + GetParam() + ".onnx");

  std::map<std::string, Tensor> inputs;
  for (const Value* input : graph.inputs()) inputs[input->name] = io::read_npy(data_file("inputs", input->name));
  std::vector<Tensor> outputs = reference::run_graph(graph, inputs);

  ASSERT_EQ(outputs.size(), graph.outputs().size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = graph.outputs()[i]->name;
    Tensor expected = io::read_npy(data_file("expected", name));
    CompareResult result = compare_tensors(outputs[i], expected, kVsNumpy);
    EXPECT_TRUE(result.ok) << "output '" << name << "': " << result.message;
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, BundledModelTest, ::testing::ValuesIn(bundled_model_names()),
                         [](const auto& info) { return info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BundledModelTest);

// The models issue 2 asks for; regenerate them with `make models`.
TEST(BundledModels, AllRequiredModelsPresent) {
  const std::vector<std::string> names = bundled_model_names();
  for (const char* required : {"bias_gelu", "layernorm_decomposed", "layernorm_opset17", "scale_mask_softmax",
                               "elementwise_chain", "mlp_block", "symbolic_batch"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), required), names.end())
        << "examples/models/" << required << ".onnx is missing: run `make models`";
  }
}

}  // namespace
}  // namespace tilefuse
