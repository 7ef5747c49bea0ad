// The public API (include/tilefuse/tilefuse.h): compile once and run many times, on the bundled
// models against their committed expected outputs; concurrent runs; steady runs that allocate
// nothing; errors that lose nothing.
#include "tilefuse/tilefuse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <latch>
#include <new>
#include <random>
#include <thread>

#include "e2e/e2e_cache_dir.h"
#include "io/npy.h"
#include "ir/tensor_compare.h"

// Allocations through operator new, counted on the threads that ask for it. Replacing the global
// operator new is how a test can see an allocation at all; counting costs a thread-local load.
namespace {
thread_local bool t_counting = false;
thread_local int64_t t_allocations = 0;
}  // namespace

void* operator new(std::size_t bytes) {
  if (t_counting) ++t_allocations;
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
// GCC 12 sees free() of what the replaced operator new returned once both are inlined, and warns
// though they are a matching pair (malloc and free).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace tilefuse {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// f32 kernels against float64 numpy (as the bundled-model tests allow).
constexpr Tolerance kVsNumpy{1e-4, 1e-5};
// Two runs of one compiled model: a tuned kernel may sum in another order than the first candidate.
constexpr Tolerance kRunToRun{1e-5, 1e-6};

std::string models_dir() { return std::string(TILEFUSE_SOURCE_DIR) + "/examples/models"; }

std::string npy(const std::string& model, const std::string& kind, const std::string& name) {
  return models_dir() + "/" + model + "/" + kind + "/" + name + ".npy";
}

Options test_options(Mode mode = Mode::fused) {
  return {.mode = mode, .threads = 2, .compile_threads = 2, .autotune_topn = 1, .cache_dir = e2e::test_cache_dir()};
}

std::map<std::string, Tensor> committed_inputs(const std::string& model, const Executable& exe) {
  std::map<std::string, Tensor> inputs;
  for (const TensorSpec& spec : exe.inputs()) inputs[spec.name] = io::read_npy(npy(model, "inputs", spec.name));
  return inputs;
}

// Seeded values in [-1, 1) of the declared dtype and shape, symbolic dims set to `symbol_value`.
std::map<std::string, Tensor> random_inputs(const Executable& exe, uint64_t seed, int64_t symbol_value = 2) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::map<std::string, Tensor> inputs;
  for (const TensorSpec& spec : exe.inputs()) {
    std::vector<int64_t> shape = spec.shape;
    for (int64_t& d : shape) d = d < 0 ? symbol_value : d;
    Tensor t(spec.dtype, shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, uniform(rng));
    inputs[spec.name] = t;
  }
  return inputs;
}

void expect_close(const std::map<std::string, Tensor>& actual, const std::map<std::string, Tensor>& expected,
                  const Tolerance& tolerance, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (const auto& [name, tensor] : expected) {
    CompareResult r = compare_tensors(actual.at(name), tensor, tolerance);
    EXPECT_TRUE(r.ok) << what << ", output '" << name << "': " << r.message;
  }
}

TEST(Executable, RunsEveryBundledModelTwiceIntoTheSameBuffers) {
  for (const char* name : {"bias_gelu", "elementwise_chain", "layernorm_decomposed", "layernorm_opset17", "mlp_block",
                           "scale_mask_softmax", "symbolic_batch"}) {
    SCOPED_TRACE(name);
    Executable exe = compile(load_onnx(models_dir() + "/" + name + ".onnx"), test_options());
    std::map<std::string, Tensor> inputs = committed_inputs(name, exe);
    std::map<std::string, Tensor> expected;
    for (const TensorSpec& spec : exe.outputs()) expected[spec.name] = io::read_npy(npy(name, "expected", spec.name));

    std::map<std::string, Tensor> outputs = exe.run(inputs);
    expect_close(outputs, expected, kVsNumpy, "first run");
    std::map<std::string, const void*> addresses;
    for (const auto& [out, t] : outputs) addresses[out] = t.raw();
    for (auto& [out, t] : outputs) std::memset(t.raw(), 0xff, t.nbytes());  // NaNs, unless written again

    exe.run(inputs, outputs);
    expect_close(outputs, expected, kVsNumpy, "second run");
    for (const auto& [out, t] : outputs) EXPECT_EQ(t.raw(), addresses.at(out)) << "output '" << out << "' moved";
    EXPECT_GT(exe.launches(), 0);
  }
}

TEST(Executable, CompilesFusedUnlessToldOtherwiseAndEveryModeAgrees) {
  Model model = load_onnx(models_dir() + "/mlp_block.onnx");
  Options defaults;
  defaults.cache_dir = e2e::test_cache_dir();
  Executable fused = compile(model, defaults);
  EXPECT_EQ(fused.mode(), Mode::fused);
  std::map<std::string, Tensor> inputs = random_inputs(fused, 7);
  const std::map<std::string, Tensor> reference = compile(model, test_options(Mode::reference)).run(inputs);
  expect_close(fused.run(inputs), reference, kVsNumpy, "fused");
  expect_close(compile(model, test_options(Mode::unfused)).run(inputs), reference, kVsNumpy, "unfused");
  expect_close(run(model, inputs, test_options()), reference, kVsNumpy, "one-shot run");
}

TEST(Executable, DescribesInputsAndOutputsWithSymbolicDims) {
  Executable exe = compile(load_onnx(models_dir() + "/symbolic_batch.onnx"), test_options());
  ASSERT_EQ(exe.inputs().size(), 1u);
  const TensorSpec x = exe.inputs()[0];
  EXPECT_EQ(x.dtype, DType::f32);
  ASSERT_FALSE(x.shape.empty());
  EXPECT_EQ(x.shape[0], -1) << x.type;
  EXPECT_THAT(x.type, HasSubstr("f32["));
  ASSERT_EQ(x.dim_names.size(), x.shape.size());
  EXPECT_THAT(x.type, HasSubstr(x.dim_names[0] + ","));
  for (size_t i = 1; i < x.shape.size(); ++i) EXPECT_EQ(x.dim_names[i], "") << "dim " << i << " is constant";
}

TEST(Executable, CountsTheBarriersOfARun) {
  const Model model = load_onnx(models_dir() + "/mlp_block.onnx");
  for (int threads : {1, 2}) {
    Options options = test_options();
    options.threads = threads;
    options.superkernel = false;  // step by step: a barrier per step that uses both workers
    const Executable exe = compile(model, options);
    exe.run(committed_inputs("mlp_block", exe));
    const int64_t barriers = exe.counters().at("barriers");
    EXPECT_EQ(exe.counters().at("superkernel"), 0);
    if (threads == 1) {
      EXPECT_EQ(barriers, 0) << "one thread never synchronises";
    } else {
      EXPECT_GT(barriers, 0);
      EXPECT_LE(barriers, exe.launches()) << "the GEMMs and the kernel each synchronise at most once";
    }
    options.superkernel = true;
    const Executable region = compile(model, options);
    region.run(committed_inputs("mlp_block", region));
    EXPECT_EQ(region.counters().at("superkernel"), threads == 1 ? 0 : 1) << "one worker has no region to enter";
    EXPECT_LE(region.counters().at("barriers"), barriers + 1) << "its own fork/join, and the GEMMs' inner ones";
  }
}

TEST(Executable, LoadsAModelFromBytesAsFromItsFile) {
  const std::string path = models_dir() + "/bias_gelu.onnx";
  std::ifstream file(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const Executable from_bytes = compile(load_onnx_bytes(bytes), test_options());
  const Executable from_file = compile(load_onnx(path), test_options());
  const std::map<std::string, Tensor> inputs = committed_inputs("bias_gelu", from_file);
  expect_close(from_bytes.run(inputs), from_file.run(inputs), kRunToRun, "from bytes");
  try {
    load_onnx_bytes(bytes.substr(0, bytes.size() / 2), "half a model");
    ADD_FAILURE() << "loaded half a model";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("half a model"));
  }
}

// Options::cpp_wrapper: the first run builds a package in the cache and runs through it; another
// executable of the same model finds that package and builds nothing.
TEST(Executable, TheCppWrapperRunsThroughAPackageBuiltOnceInTheCache) {
  char templ[] = "/tmp/tilefuse-cpp-wrapper-XXXXXX";
  Options options = test_options();
  options.cache_dir = mkdtemp(templ);
  options.cpp_wrapper = true;
  const Model model = load_onnx(models_dir() + "/mlp_block.onnx");
  const Executable first = compile(model, options);
  const std::map<std::string, Tensor> inputs = committed_inputs("mlp_block", first);
  std::map<std::string, Tensor> expected;
  for (const TensorSpec& spec : first.outputs()) expected[spec.name] = io::read_npy(npy("mlp_block", "expected", spec.name));
  EXPECT_EQ(first.launches(), 0) << "nothing is loaded before the first run";
  expect_close(first.run(inputs), expected, kVsNumpy, "first, building the package");
  EXPECT_EQ(first.counters().at("package_built"), 1);
  EXPECT_GT(first.launches(), 0);
  const Executable second = compile(model, options);
  expect_close(second.run(inputs), expected, kVsNumpy, "second, from the cache");
  EXPECT_EQ(second.counters().at("package_built"), 0);
  EXPECT_TRUE(fs::exists(fs::path(options.cache_dir) / "packages"));
  fs::remove_all(options.cache_dir);
}

// Four threads run one Executable at once, each on its own inputs (of its own batch size where the
// model has a symbolic batch), with tuning on so that first runs measure candidates while others
// wait; every result must equal what the reference interpreter computes for those inputs.
// Four threads run one executable 20 times each on inputs of their own (symbolic dims of
// different sizes), against the reference; afterwards a sequential run of each still agrees.
void expect_concurrent_runs_agree(const Executable& exe, const Executable& reference) {
  constexpr int kThreads = 4;
  std::vector<std::map<std::string, Tensor>> inputs, expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(random_inputs(exe, 100 + t, 1 + t));
    expected.push_back(reference.run(inputs.back()));
  }
  const int64_t runs_before = exe.counters().at("runs");
  std::vector<std::string> failures(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      std::map<std::string, Tensor> outputs;
      for (int run = 0; run < 20 && failures[t].empty(); ++run) {
        exe.run(inputs[t], outputs);
        for (const auto& [out, want] : expected[t]) {
          CompareResult r = compare_tensors(outputs.at(out), want, kVsNumpy);
          if (!r.ok) failures[t] = "run " + std::to_string(run) + ", output '" + out + "': " + r.message;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
  // Afterwards, a sequential run of each input still agrees (no context was left corrupted).
  for (int t = 0; t < kThreads; ++t) expect_close(exe.run(inputs[t]), expected[t], kVsNumpy, "sequential");
  EXPECT_EQ(exe.counters().at("runs") - runs_before, kThreads * 20 + kThreads);
}

TEST(Executable, ConcurrentRunsGiveTheResultsOfSequentialRuns) {
  std::string templ = (fs::temp_directory_path() / "tilefuse_concurrent_XXXXXX").string();
  Options options = test_options();
  options.cache_dir = mkdtemp(templ.data());
  options.autotune_topn = 3;  // a fresh cache: the first runs tune
  for (const char* name : {"symbolic_batch", "mlp_block", "scale_mask_softmax"}) {
    SCOPED_TRACE(name);
    Model model = load_onnx(models_dir() + "/" + name + ".onnx");
    const Executable exe = compile(model, options);
    const Executable reference = compile(model, test_options(Mode::reference));
    expect_concurrent_runs_agree(exe, reference);
    // The same from its package.
    const std::string package = options.cache_dir + "/" + name + ".tfx";
    exe.save(package);
    expect_concurrent_runs_agree(Executable::load(package, {.threads = 2}), reference);
  }
  fs::remove_all(options.cache_dir);
}

// The operator new calls on this thread of the last of two more runs into `outputs`.
int64_t allocations_of_a_steady_run(const Executable& exe, const std::map<std::string, Tensor>& inputs,
                                    std::map<std::string, Tensor>& outputs) {
  exe.run(inputs, outputs);
  t_allocations = 0;
  t_counting = true;
  exe.run(inputs, outputs);
  t_counting = false;
  return t_allocations;
}

// A deployed loop: the same input and output tensors every time. After the first runs of a shape,
// generated kernels, GEMMs and views allocate nothing on the calling thread.
TEST(Executable, SteadyRunsIntoTheSameBuffersAllocateNothing) {
  for (const char* name : {"mlp_block", "scale_mask_softmax", "symbolic_batch"}) {
    SCOPED_TRACE(name);
    Executable exe = compile(load_onnx(models_dir() + "/" + name + ".onnx"), test_options());
    const std::map<std::string, Tensor> inputs = random_inputs(exe, 3, 4);
    std::map<std::string, Tensor> outputs;
    exe.run(inputs, outputs);
    EXPECT_EQ(allocations_of_a_steady_run(exe, inputs, outputs), 0);
  }
}

// Every bundled model saved as a package and loaded back through the public API: the same
// inputs and outputs, numpy's results, and (like a compiled one) no allocation in steady runs.
TEST(Executable, EveryBundledModelRunsFromItsPackage) {
  const fs::path dir = fs::path(e2e::test_cache_dir()) / "packages_from_public_api";
  for (const char* name : {"bias_gelu", "elementwise_chain", "layernorm_decomposed", "layernorm_opset17", "mlp_block",
                           "scale_mask_softmax", "symbolic_batch"}) {
    SCOPED_TRACE(name);
    const Executable compiled = compile(load_onnx(models_dir() + "/" + name + ".onnx"), test_options());
    const std::map<std::string, Tensor> inputs = committed_inputs(name, compiled);
    compiled.run(inputs);
    const std::string path = (dir / (std::string(name) + ".tfx")).string();
    compiled.save(path);

    const Executable loaded = Executable::load(path, {.threads = 2});
    EXPECT_EQ(loaded.launches(), compiled.launches());
    ASSERT_EQ(loaded.inputs().size(), compiled.inputs().size());
    for (size_t i = 0; i < loaded.inputs().size(); ++i) {
      EXPECT_EQ(loaded.inputs()[i].type, compiled.inputs()[i].type);
      EXPECT_EQ(loaded.inputs()[i].shape, compiled.inputs()[i].shape);
    }
    std::map<std::string, Tensor> expected;
    for (const TensorSpec& spec : loaded.outputs()) expected[spec.name] = io::read_npy(npy(name, "expected", spec.name));
    std::map<std::string, Tensor> outputs;
    loaded.run(inputs, outputs);
    expect_close(outputs, expected, kVsNumpy, "package");
    EXPECT_EQ(allocations_of_a_steady_run(loaded, inputs, outputs), 0);
  }
  try {
    compile(load_onnx(models_dir() + "/mlp_block.onnx"), test_options(Mode::reference)).save((dir / "ref.tfx").string());
    ADD_FAILURE() << "saved a reference-mode executable";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("reference-mode executable has no kernels"));
  }
}

TEST(Executable, AWrongInputIsAUserErrorAndLeavesTheOutputsAlone) {
  Executable exe = compile(load_onnx(models_dir() + "/mlp_block.onnx"), test_options());
  const std::map<std::string, Tensor> good = random_inputs(exe, 5);
  std::map<std::string, Tensor> outputs = exe.run(good);
  const std::string out = exe.outputs()[0].name;
  const void* address = outputs.at(out).raw();

  std::map<std::string, Tensor> wrong_dtype = good;
  const TensorSpec x = exe.inputs()[0];
  wrong_dtype[x.name] = Tensor(DType::f64, good.at(x.name).shape());
  try {
    exe.run(wrong_dtype, outputs);
    FAIL() << "an f64 input for an f32 model ran";
  } catch (const UserError& error) {
    EXPECT_THAT(error.what(), HasSubstr("input '" + x.name + "'"));
    EXPECT_THAT(error.what(), HasSubstr("dtype"));
  }
  std::map<std::string, Tensor> unknown = good;
  unknown["not_an_input"] = good.at(x.name);
  EXPECT_THROW(exe.run(unknown, outputs), UserError);
  EXPECT_THROW(exe.run({}, outputs), UserError);

  ASSERT_EQ(outputs.count(out), 1u);
  EXPECT_EQ(outputs.at(out).raw(), address);
  expect_close(exe.run(good), outputs, kRunToRun, "after the errors");
}

TEST(Executable, AnOutputBufferThatIsAnInputGetsItsOwnTensor) {
  Executable exe = compile(load_onnx(models_dir() + "/layernorm_opset17.onnx"), test_options());
  const std::map<std::string, Tensor> inputs = committed_inputs("layernorm_opset17", exe);
  const TensorSpec y = exe.outputs()[0];
  const TensorSpec x = exe.inputs()[0];
  ASSERT_EQ(inputs.at(x.name).shape(), exe.run(inputs).at(y.name).shape());
  const Tensor before = inputs.at(x.name).clone();
  std::map<std::string, Tensor> outputs{{y.name, inputs.at(x.name)}};  // the caller aliases x as y
  exe.run(inputs, outputs);
  EXPECT_NE(outputs.at(y.name).raw(), inputs.at(x.name).raw());
  EXPECT_TRUE(inputs.at(x.name).same_bytes(before)) << "the input was written";
  expect_close(outputs, {{y.name, io::read_npy(npy("layernorm_opset17", "expected", y.name))}}, kVsNumpy, "aliased");
}

}  // namespace
}  // namespace tilefuse
