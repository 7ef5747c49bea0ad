// The SuperKernel (runtime/superkernel_schedule.h) against step-by-step runs: the same bits on
// every bundled model and the tiny GPT-2 export, at 2 and 3 workers (3 on this project's 2 cores:
// a worker often descheduled between its steps), with fewer barriers; and the per-model choice
// that `automatic` measures, records in the cache and reuses.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "build/hashing.h"
#include "driver/executor.h"
#include "e2e/fused_vs_reference.h"
#include "frontend/onnx_importer.h"
#include "io/npy.h"
#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "support/scoped_cpu.h"
#include "tiling/hardware_model.h"

namespace tilefuse {
namespace {

namespace fs = std::filesystem;

struct ModelFiles {
  std::string name;
  fs::path model;
  fs::path inputs;  // <input name>.npy
};

std::vector<ModelFiles> models() {
  const fs::path root(TILEFUSE_SOURCE_DIR);
  std::vector<ModelFiles> out;
  for (const char* name : {"bias_gelu", "elementwise_chain", "layernorm_decomposed", "layernorm_opset17", "mlp_block",
                           "scale_mask_softmax", "symbolic_batch"}) {
    out.push_back({name, root / "examples/models" / (std::string(name) + ".onnx"), root / "examples/models" / name / "inputs"});
  }
  out.push_back({"gpt2", root / "tests/models/real/gpt2/dynamo_dynamic.onnx", root / "tests/models/real/gpt2/inputs"});
  return out;
}

std::map<std::string, Tensor> read_inputs(const Graph& g, const fs::path& dir) {
  std::map<std::string, Tensor> inputs;
  for (const Value* in : g.inputs()) inputs[in->name] = io::read_npy((dir / (in->name + ".npy")).string());
  return inputs;
}

struct RunResult {
  std::vector<Tensor> outputs;
  int64_t barriers = 0, superkernel = 0;
  std::string choice;  // superkernel_report().choice
};

RunResult run(const Graph& g, const std::map<std::string, Tensor>& inputs, int threads, runtime::SuperKernelMode mode,
        const std::string& cache_dir = e2e::test_cache_dir()) {
  driver::ExecutorOptions options = e2e::executor_options();
  options.device.threads = threads;
  options.superkernel = mode;
  options.cache_dir = cache_dir;
  // The detected caches and cores without the calibration probe: under load the probe measures a
  // fork/join so slow that the cost model keeps whole kernels on one worker.
  options.hardware = tiling::detect_hardware();
  driver::ExecutorCounters counters;
  driver::Executor exe(g, options, counters);
  RunResult r;
  for (int i = 0; i < 3; ++i) exe.run(inputs, r.outputs);  // the later runs reuse the context and its schedule
  r.barriers = counters.barriers;
  r.superkernel = counters.superkernel;
  r.choice = exe.superkernel_report().choice;
  return r;
}

class SuperKernel : public ::testing::TestWithParam<ModelFiles> {};

TEST_P(SuperKernel, GivesTheBitsOfStepByStepRunsWithFewerBarriers) {
  const Graph g = frontend::import_onnx_file(GetParam().model.string());
  const auto inputs = read_inputs(g, GetParam().inputs);
  const std::vector<Tensor> expected = reference::run_graph(g, inputs);
  for (int threads : {2, 3}) {
    SCOPED_TRACE(testing::Message() << threads << " workers");
    const RunResult off = run(g, inputs, threads, runtime::SuperKernelMode::off);
    const RunResult on = run(g, inputs, threads, runtime::SuperKernelMode::on);
    EXPECT_EQ(off.superkernel, 0);
    EXPECT_EQ(on.superkernel, 1);
    // The region's own fork/join, plus the library calls' inner ones, which off has too.
    EXPECT_LE(on.barriers, off.barriers + 1);
    ASSERT_EQ(on.outputs.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_TRUE(compare_tensors(on.outputs[i], off.outputs[i], {0, 0}).ok) << "output " << i << " differs from off";
      const CompareResult r = compare_tensors(on.outputs[i], expected[i], {1e-5, 1e-5});
      EXPECT_TRUE(r.ok) << "output " << i << ": " << r.message;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, SuperKernel, ::testing::ValuesIn(models()),
                         [](const auto& info) { return info.param.name; });

// Four kernels in a chain: a materialised transpose between normalised rows splits them.
Graph kernel_chain() {
  Graph g;
  Value* v = g.add_input("x", DType::f32, {Dim(512), Dim(1024)});
  for (int i = 0; i < 4; ++i) {
    Value* mean = e2e::node(g, "ReduceMean", {v}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}});
    v = e2e::node(g, "Transpose", {e2e::node(g, "Sub", {v, mean})}, {{"perm", std::vector<int64_t>{1, 0}}});
  }
  g.add_output(v);
  g.infer_shapes();
  return g;
}

// A chain of kernels with nothing else between them: one barrier for the whole run.
TEST(SuperKernelBarriers, AChainOfKernelsSynchronisesOnceInsteadOfOncePerKernel) {
  const Graph g = kernel_chain();
  const std::map<std::string, Tensor> inputs{{"x", e2e::filled({512, 1024}, 3, 0.5)}};
  const RunResult off = run(g, inputs, 2, runtime::SuperKernelMode::off);
  const RunResult on = run(g, inputs, 2, runtime::SuperKernelMode::on);
  EXPECT_GE(off.barriers, 4);
  EXPECT_EQ(on.barriers, 1);
  EXPECT_TRUE(compare_tensors(on.outputs[0], off.outputs[0], {0, 0}).ok);
  const CompareResult r = compare_tensors(on.outputs[0], reference::run_graph(g, inputs)[0], {1e-5, 1e-4});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(SuperKernelReport, NamesEachStepItsWorkersAndTheStepItWaitsFor) {
  const Graph g = kernel_chain();
  const std::map<std::string, Tensor> inputs{{"x", e2e::filled({512, 1024}, 3, 0.5)}};
  driver::ExecutorOptions options = e2e::executor_options();
  options.hardware = tiling::detect_hardware();
  driver::ExecutorCounters counters;
  driver::Executor exe(g, options, counters);
  EXPECT_EQ(exe.superkernel_report().choice, "unmeasured") << "before any run";
  exe.run(inputs);
  const runtime::SuperKernelReport report = exe.superkernel_report();
  EXPECT_EQ(report.choice, "on floor_ns=0");
  ASSERT_GE(report.steps.size(), 4U);
  EXPECT_TRUE(report.steps[0].waits_for.empty());
  for (size_t i = 1; i < report.steps.size(); ++i) {
    EXPECT_EQ(report.steps[i].waits_for, std::vector<std::string>{report.steps[i - 1].name})
        << "each step of a chain waits for the one before it, and that implies the rest";
    EXPECT_EQ(report.steps[i].workers, 2);
  }
  options.superkernel = runtime::SuperKernelMode::off;
  driver::Executor off(g, options, counters);
  off.run(inputs);
  EXPECT_EQ(off.superkernel_report().choice, "off");
  EXPECT_TRUE(off.superkernel_report().steps.empty());
}

// A SuperKernel record as the cache writes it: the choice and its checksum.
std::string valid_record(const std::string& choice) {
  return choice + "\nsha256=" + build::sha256_hex(choice + "\n") + "\n";
}

// Two workers, `automatic`, the given cache, no calibration probe (see run()).
driver::ExecutorOptions automatic_options(const std::string& cache) {
  driver::ExecutorOptions options = e2e::executor_options();
  options.device.threads = 2;
  options.superkernel = runtime::SuperKernelMode::automatic;
  options.cache_dir = cache;
  options.hardware = tiling::detect_hardware();
  return options;
}

// `automatic` measures on the first run and records the choice; a later executor takes a valid
// record as it is (written here each way), and a broken one is measured again and replaced.
TEST(SuperKernelChoice, IsMeasuredOnceRecordedAndReused) {
  const ModelFiles model = models().back();  // the GPT-2 export: many steps
  const Graph g = frontend::import_onnx_file(model.model.string());
  const auto inputs = read_inputs(g, model.inputs);
  // A cache of its own: the binary's holds the records of the other suites' models too.
  const std::string cache = e2e::test_cache_dir() + "/superkernel_choice";
  fs::create_directories(cache);
  const auto automatic = [&] { return run(g, inputs, 2, runtime::SuperKernelMode::automatic, cache).choice; };
  automatic();
  std::vector<fs::path> records;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(cache) / "superkernel")) {
    if (entry.path().filename() == "choice") records.push_back(entry.path());
  }
  ASSERT_EQ(records.size(), 1U) << "one record for the one shape";
  const auto write = [&](const std::string& text) { std::ofstream(records[0], std::ios::trunc) << text; };
  write(valid_record("on floor_ns=0"));
  EXPECT_EQ(automatic(), "on floor_ns=0");
  write(valid_record("off"));
  EXPECT_EQ(automatic(), "off");
  write("on floor_ns=0\nsha256=0000\n");
  const std::string remeasured = automatic();
  std::ifstream reread(records[0]);
  std::string choice;
  std::getline(reread, choice);
  const std::string text((std::istreambuf_iterator<char>(reread)), std::istreambuf_iterator<char>());
  EXPECT_EQ(choice + "\n" + text, valid_record(choice)) << "a valid record replaces the broken one";
  EXPECT_EQ(choice.rfind(remeasured + " handoff_us=", 0), 0U) << "the way measured, and the handoff it was measured with";
}

// A record keeps the team's handoff it was measured with (runtime/cpu_wait.h). One measured while
// the team handed off far more slowly than it does now (the workers' CPUs placed apart) is
// measured again and replaced; one measured with handoffs as fast as now is reused; a record
// whose fields do not parse is measured again.
TEST(SuperKernelChoice, ARecordMeasuredWithSlowerHandoffsIsMeasuredAgain) {
  const ModelFiles model = models().back();
  const Graph g = frontend::import_onnx_file(model.model.string());
  const auto inputs = read_inputs(g, model.inputs);
  const std::string cache = e2e::test_cache_dir() + "/superkernel_handoff";
  fs::remove_all(fs::path(cache) / "superkernel");
  const auto automatic = [&] { return run(g, inputs, 2, runtime::SuperKernelMode::automatic, cache).choice; };
  const std::string first = automatic();
  std::vector<fs::path> records;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(cache) / "superkernel")) {
    if (entry.path().filename() == "choice") records.push_back(entry.path());
  }
  ASSERT_EQ(records.size(), 1U);
  const auto recorded = [&] {
    std::ifstream in(records[0]);
    std::string choice;
    std::getline(in, choice);
    return choice;
  };
  EXPECT_EQ(recorded().rfind(first + " handoff_us=", 0), 0U) << recorded();
  const auto write = [&](const std::string& text) { std::ofstream(records[0], std::ios::trunc) << valid_record(text); };

  write("on floor_ns=100000 handoff_us=0.00");
  EXPECT_EQ(automatic(), "on floor_ns=100000") << "measured with handoffs no slower than now: reused";
  EXPECT_EQ(recorded(), "on floor_ns=100000 handoff_us=0.00");

  write("on floor_ns=100000 handoff_us=100000.00");
  const std::string remeasured = automatic();
  const std::string line = recorded();
  EXPECT_EQ(line.rfind(remeasured + " handoff_us=", 0), 0U) << line;
  EXPECT_LT(std::stod(line.substr(line.find('=', line.find("handoff_us")) + 1)), 100000.0) << "replaced: " << line;

  for (const char* broken : {"on handoff_us=1", "off floor_ns=3", "on floor_ns=0 handoff_us=fast", "sideways"}) {
    write(broken);
    automatic();
    EXPECT_NE(recorded(), broken) << "measured again and replaced";
  }
}

// A region chosen by measurement needs every worker from its start: a run that finds one asleep
// (the model was not called for a while) goes step by step instead, which runs the sleeper's
// part of each step on the caller rather than waiting for its wake-up, and wakes it for the next
// runs, which are in the region again. The bits do not change.
TEST(SuperKernelChoice, AChosenRegionGivesWayToStepsWhileWorkersSleep) {
  const ModelFiles model = models().back();
  const Graph g = frontend::import_onnx_file(model.model.string());
  const auto inputs = read_inputs(g, model.inputs);
  const std::string cache = e2e::test_cache_dir() + "/superkernel_sleepers";
  run(g, inputs, 2, runtime::SuperKernelMode::automatic, cache);  // measures and records
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(cache) / "superkernel")) {
    if (entry.path().filename() == "choice") std::ofstream(entry.path(), std::ios::trunc) << valid_record("on floor_ns=0");
  }
  driver::ExecutorCounters counters;
  driver::Executor exe(g, automatic_options(cache), counters);
  ASSERT_EQ(exe.superkernel_report().choice, "unmeasured");
  std::vector<Tensor> first, after_pause, back_to_back;
  exe.run(inputs, first);
  ASSERT_EQ(exe.superkernel_report().choice, "on floor_ns=0");
  // Workers sleep after 2 ms without a job; the margin is for a loaded machine, where a worker may
  // wait for a CPU before it gets to sleep.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  exe.run(inputs, after_pause);
  ASSERT_EQ(counters.superkernel, 0) << "the run after a pause goes step by step";
  // The woken worker can first be placed on the caller's busy CPU and wait there until the kernel
  // moves it (up to ~10 ms on this project's VM): the caller keeps running its parts meanwhile.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (counters.superkernel == 0 && std::chrono::steady_clock::now() < deadline) exe.run(inputs, back_to_back);
  EXPECT_EQ(counters.superkernel, 1) << "runs back to back are in the region again";
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_TRUE(compare_tensors(after_pause[i], first[i], {0, 0}).ok) << "output " << i;
    EXPECT_TRUE(compare_tensors(back_to_back[i], first[i], {0, 0}).ok) << "output " << i;
  }
}

// Measured while another process keeps every CPU busy, the choice is not recorded and the runs
// go step by step meanwhile: a record made so kept small models on one worker for good.
TEST(SuperKernelChoice, AChoiceMeasuredBesideABusyProcessIsNotRecorded) {
  const testing_support::ScopedEnv strict("TILEFUSE_RECORD_BUSY_MEASUREMENTS", std::nullopt);
  const ModelFiles model = models().back();
  const Graph g = frontend::import_onnx_file(model.model.string());
  const auto inputs = read_inputs(g, model.inputs);
  const std::string cache = e2e::test_cache_dir() + "/superkernel_busy";
  fs::remove_all(fs::path(cache) / "superkernel");
  driver::ExecutorCounters counters;
  driver::Executor exe(g, automatic_options(cache), counters);
  std::vector<Tensor> busy_outputs;
  {
    const testing_support::BusyCpus busy;
    exe.run(inputs, busy_outputs);
  }
  EXPECT_EQ(counters.superkernel, 0) << "step by step";
  EXPECT_FALSE(fs::exists(fs::path(cache) / "superkernel")) << "nothing recorded";
  const std::vector<Tensor> expected = run(g, inputs, 2, runtime::SuperKernelMode::off, cache).outputs;
  ASSERT_EQ(busy_outputs.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_TRUE(compare_tensors(busy_outputs[i], expected[i], {0, 0}).ok) << "output " << i;
  }
}

}  // namespace
}  // namespace tilefuse
