// Every bundled model runs fused and unfused (generated, compiled, loaded kernels) and must
// match the reference interpreter on the model's committed inputs.
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "frontend/onnx_importer.h"
#include "io/npy.h"
#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "driver/executor.h"
#include "e2e/e2e_cache_dir.h"

namespace tilefuse {
namespace {

namespace fs = std::filesystem;

using e2e::executor_options;

struct ModelCase {
  std::string name;
  bool fuse;
};

std::string case_name(const ::testing::TestParamInfo<ModelCase>& info) {
  return info.param.name + (info.param.fuse ? "_fused" : "_unfused");
}

class GeneratedKernels : public ::testing::TestWithParam<ModelCase> {};

TEST_P(GeneratedKernels, MatchReference) {
  fs::path dir = fs::path(TILEFUSE_SOURCE_DIR) / "examples/models";
  Graph g = frontend::import_onnx_file((dir / (GetParam().name + ".onnx")).string());
  std::map<std::string, Tensor> inputs;
  for (const Value* in : g.inputs()) {
    inputs[in->name] = io::read_npy((dir / GetParam().name / "inputs" / (in->name + ".npy")).string());
  }
  std::vector<Tensor> expected = reference::run_graph(g, inputs);

  driver::ExecutorOptions options = executor_options();
  options.fuse = GetParam().fuse;
  driver::ExecutorCounters counters;
  driver::Executor exe(g, options, counters);
  std::vector<Tensor> outputs;
  for (int run = 0; run < 2; ++run) {  // the second run reuses every buffer
    exe.run(inputs, outputs);
    ASSERT_EQ(outputs.size(), expected.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      // f32 kernels: 1e-5 relative; transcendental ops are within a few ULP of the reference,
      // which the absolute term covers near zero.
      auto r = compare_tensors(outputs[i], expected[i], {1e-5, 1e-6});
      EXPECT_TRUE(r.ok) << "output " << g.outputs()[i]->name << " run " << run << ": " << r.message;
    }
  }
}

std::vector<ModelCase> all_cases() {
  std::vector<ModelCase> cases;
  for (const char* m : {"bias_gelu", "elementwise_chain", "layernorm_decomposed", "layernorm_opset17",
                        "scale_mask_softmax", "mlp_block", "symbolic_batch"}) {
    cases.push_back({m, true});
    cases.push_back({m, false});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(BundledModels, GeneratedKernels, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace tilefuse
