// The tiny real-model set (tests/models/real, made by `make real-test-models` from bench/real):
// every architecture family of the real-model suite as PyTorch exports it, statically by the
// TorchScript exporter and with a dynamic batch and sequence by the torch.export one. Each model
// runs in reference and fused mode and must match PyTorch eager's outputs; the dynamic exports
// also run at batch 1, so their symbolic dims take a second value.
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>

#include "frontend/onnx_importer.h"
#include "io/npy.h"
#include "reference/interpreter.h"
#include "driver/executor.h"
#include "e2e/e2e_cache_dir.h"

namespace tilefuse {
namespace {

namespace fs = std::filesystem;

fs::path real_models_dir() { return fs::path(TILEFUSE_SOURCE_DIR) / "tests/models/real"; }

struct RealCase {
  std::string arch, variant;  // "bert", "dynamo_dynamic"
  bool fused;
};

std::string case_name(const ::testing::TestParamInfo<RealCase>& info) {
  return info.param.arch + "_" + info.param.variant + (info.param.fused ? "_fused" : "_reference");
}

// The first `n` entries along axis 0 (a batch slice) of a row-major tensor.
Tensor leading(const Tensor& t, int64_t n) {
  std::vector<int64_t> shape = t.shape();
  const int64_t per_item = shape[0] == 0 ? 0 : t.nbytes() / shape[0];
  shape[0] = n;
  Tensor out(t.dtype(), shape);
  std::memcpy(out.raw(), t.raw(), static_cast<size_t>(per_item * n));
  return out;
}

// Worst |actual - expected| relative to expected's largest magnitude: the measure.
double relative_error(const Tensor& actual, const Tensor& expected) {
  double worst = 0, scale = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    scale = std::max(scale, std::abs(expected.get_f64(i)));
    double d = std::abs(actual.get_f64(i) - expected.get_f64(i));
    worst = std::max(worst, d != d ? INFINITY : d);
  }
  return worst / std::max(scale, 1e-30);
}

std::vector<Tensor> run_model(const Graph& g, const std::map<std::string, Tensor>& inputs, bool fused) {
  if (!fused) return reference::run_graph(g, inputs);
  const driver::ExecutorOptions options = e2e::executor_options();
  driver::ExecutorCounters counters;
  driver::Executor exe(g, options, counters);
  std::vector<Tensor> outputs;
  exe.run(inputs, outputs);
  return outputs;
}

void expect_matches(const Graph& g, const std::map<std::string, Tensor>& inputs, const Tensor& eager, bool fused,
                    const std::string& what) {
  std::vector<Tensor> outputs = run_model(g, inputs, fused);
  ASSERT_EQ(outputs.size(), 1u) << what;
  ASSERT_EQ(outputs[0].shape(), eager.shape()) << what;
  // PyTorch and tilefuse both compute in f32 with different orders; 1e-4 of the largest
  // magnitude is ten times tighter than the bound and far above what we see (~1e-6).
  EXPECT_LE(relative_error(outputs[0], eager), 1e-4) << what;
}

class RealModels : public ::testing::TestWithParam<RealCase> {};

TEST_P(RealModels, MatchPyTorchEager) {
  const RealCase& c = GetParam();
  const fs::path dir = real_models_dir() / c.arch;
  Graph g = frontend::import_onnx_file((dir / (c.variant + ".onnx")).string());
  std::map<std::string, Tensor> inputs;
  for (const Value* in : g.inputs()) inputs[in->name] = io::read_npy((dir / "inputs" / (in->name + ".npy")).string());
  const Tensor eager = io::read_npy((dir / "eager.npy").string());
  expect_matches(g, inputs, eager, c.fused, "batch " + std::to_string(eager.shape()[0]));
  if (c.fused) {
    // The same model imported again (its values elsewhere in memory) must find every kernel in
    // the cache: kernel text that followed pointer order once made BERT recompile a kernel on
    // every run.
    Graph again = frontend::import_onnx_file((dir / (c.variant + ".onnx")).string());
    driver::ExecutorCounters counters;
    driver::Executor second(again, e2e::executor_options(), counters);
    EXPECT_EQ(counters.cache.compiles.load(), 0) << "a second import of the model compiled kernels again";
  }
  if (c.variant.find("dynamic") == std::string::npos) return;
  std::map<std::string, Tensor> one;
  for (const auto& [name, t] : inputs) one[name] = leading(t, 1);
  expect_matches(g, one, leading(eager, 1), c.fused, "batch 1");
}

std::vector<RealCase> all_cases() {
  std::vector<RealCase> cases;
  if (!fs::is_directory(real_models_dir())) return cases;
  std::vector<fs::path> models;
  for (const auto& arch : fs::directory_iterator(real_models_dir())) {
    if (!arch.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(arch.path())) {
      if (f.path().extension() == ".onnx") models.push_back(f.path());
    }
  }
  std::sort(models.begin(), models.end());
  for (const fs::path& m : models) {
    for (bool fused : {false, true}) cases.push_back({m.parent_path().filename().string(), m.stem().string(), fused});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(TinyRealModels, RealModels, ::testing::ValuesIn(all_cases()), case_name);

TEST(RealModelSet, EveryFamilyIsPresent) {
  for (const char* arch : {"bert", "gpt2", "llama", "vit", "whisper_encoder", "resnet50", "mobilenet_v3_large",
                           "convnext_tiny"}) {
    for (const char* variant : {"torchscript_static", "dynamo_dynamic"}) {
      EXPECT_TRUE(fs::exists(real_models_dir() / arch / (std::string(variant) + ".onnx")))
          << arch << "/" << variant << ".onnx is missing: run `make real-test-models`";
    }
  }
}

}  // namespace
}  // namespace tilefuse
