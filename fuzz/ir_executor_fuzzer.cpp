// libFuzzer target for the executor (`make fuzz`): the input is graph text IR (ir/parser.h).
// A graph that parses, verifies and runs in the reference interpreter must give the same outputs
// when fused and compiled; a mismatch, a crash, a sanitizer report or any exception other than a
// UserError is a bug. Sizes are kept small (a memory cap and at most 4096 elements per input),
// so the fuzzer explores structure, not allocation.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include <spdlog/spdlog.h>

#include "ir/error.h"
#include "ir/log.h"
#include "ir/memory_budget.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/tensor_compare.h"
#include "ir/verifier.h"
#include "reference/interpreter.h"
#include "driver/executor.h"

namespace {

using namespace tilefuse;

constexpr int64_t kMaxInputElements = 4096;
constexpr int64_t kSymbolValue = 3;  // every symbolic dim

// Inputs with small deterministic values; nothing if an input would be too large.
bool make_inputs(const Graph& graph, std::map<std::string, Tensor>& inputs) {
  for (const Value* in : graph.inputs()) {
    std::vector<int64_t> dims;
    int64_t numel = 1;
    for (const Dim& d : in->shape) {
      SymbolBindings bindings;
      for (const auto& s : d.symbols()) bindings[s] = kSymbolValue;
      const int64_t v = d.evaluate(bindings);
      if (v < 0 || v > kMaxInputElements) return false;
      numel *= v;
      if (numel > kMaxInputElements) return false;
      dims.push_back(v);
    }
    Tensor t(in->dtype, dims);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, static_cast<double>((i * 7919) % 13) / 4.0 - 1.5);
    inputs[in->name] = t;
  }
  return true;
}

driver::ExecutorOptions fuzz_options() {
  driver::ExecutorOptions o;
  o.device.threads = 2;
  o.compile_threads = 1;
  o.cache_dir = (std::filesystem::temp_directory_path() / ("tilefuse_ir_fuzz_" + std::to_string(::getuid()))).string();
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool configured = [] {
    tilefuse::logger().set_level(spdlog::level::err);
    set_max_memory(size_t{512} << 20);
    return true;
  }();
  (void)configured;
  if (size > 4096) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    Graph graph = parse_graph(text);
    // The parser keeps declared output types as written (so printed graphs round-trip); the
    // executor and the reference must be compared on the types the ops really produce.
    graph.infer_shapes();
    verify_graph(graph);
    if (graph.outputs().empty()) return 0;
    std::map<std::string, Tensor> inputs;
    if (!make_inputs(graph, inputs)) return 0;
    const std::vector<Tensor> expected = reference::run_graph(graph, inputs);
    driver::ExecutorCounters counters;
    driver::Executor executor(graph, fuzz_options(), counters);
    const std::vector<Tensor> actual = executor.run(inputs);
    for (size_t i = 0; i < expected.size(); ++i) {
      const CompareResult r = compare_tensors(actual.at(i), expected[i], {1e-5, 1e-6});
      if (!r.ok) {
        std::fprintf(stderr, "fused output %zu differs from the reference: %s\n%s\n", i, r.message.c_str(),
                     print_graph(graph).c_str());
        std::abort();
      }
    }
  } catch (const UserError&) {
  }
  return 0;
}
