// The model package against the interpreted executor, in one process on the same inputs: per-run
// latency of each (runs interleaved, so that the machine's noise hits both alike), the package's
// load time and its first run, and whether the outputs agree bit for bit.
//
//   package_ab MODEL.onnx PACKAGE_DIR [--input NAME=FILE.npy ...] [--runs N] [--threads T] [--topn K]
//
// Prints one JSON object. Inputs not given get a fixed pattern (symbolic dims: 1).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tilefuse/npy.h"
#include "tilefuse/tilefuse.h"

namespace {

using Clock = std::chrono::steady_clock;
using Tensors = std::map<std::string, tilefuse::Tensor>;

double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

tilefuse::Tensor pattern(const tilefuse::TensorSpec& spec) {
  std::vector<int64_t> shape = spec.shape;
  for (int64_t& d : shape) d = d < 0 ? 1 : d;
  tilefuse::Tensor t(spec.dtype, shape);
  const bool is_float = spec.dtype == tilefuse::DType::f32 || spec.dtype == tilefuse::DType::f64;
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, is_float ? std::sin(0.37 * static_cast<double>(i)) : i % 2);
  return t;
}

double timed_run(const tilefuse::Executable& exe, const Tensors& inputs, Tensors& outputs) {
  const auto start = Clock::now();
  exe.run(inputs, outputs);
  return ms_since(start);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.onnx PACKAGE_DIR [--input NAME=FILE.npy ...] [--runs N] [--threads T] [--topn K]\n", argv[0]);
    return 1;
  }
  int runs = 50, threads = 2, topn = 3;
  std::map<std::string, std::string> files;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--runs") runs = std::atoi(value.c_str());
    else if (flag == "--threads") threads = std::atoi(value.c_str());
    else if (flag == "--topn") topn = std::atoi(value.c_str());
    else if (flag == "--input") files[value.substr(0, value.find('='))] = value.substr(value.find('=') + 1);
  }
  try {
    auto start = Clock::now();
    const tilefuse::Executable exe =
        tilefuse::compile(tilefuse::load_onnx(argv[1]), {.threads = threads, .autotune_topn = topn});
    const double compile_ms = ms_since(start);
    Tensors inputs;
    for (const auto& spec : exe.inputs()) {
      inputs[spec.name] = files.count(spec.name) ? tilefuse::read_npy(files[spec.name]) : pattern(spec);
    }
    Tensors from_executor, from_package;
    exe.run(inputs, from_executor);  // tunes the TopN candidates on these inputs
    start = Clock::now();
    exe.save(argv[2]);
    const double save_ms = ms_since(start);

    start = Clock::now();
    const tilefuse::Executable package = tilefuse::Executable::load(argv[2], {.threads = threads});
    const double load_ms = ms_since(start);
    const double first_run_ms = timed_run(package, inputs, from_package);

    std::vector<double> executor_ms, package_ms;
    for (int i = 0; i < 3; ++i) timed_run(exe, inputs, from_executor), timed_run(package, inputs, from_package);
    for (int i = 0; i < runs; ++i) {
      executor_ms.push_back(timed_run(exe, inputs, from_executor));
      package_ms.push_back(timed_run(package, inputs, from_package));
    }
    bool identical = true;
    for (const auto& [name, t] : from_executor) {
      const tilefuse::Tensor& p = from_package.at(name);
      identical = identical && t.nbytes() == p.nbytes() && std::memcmp(t.raw(), p.raw(), t.nbytes()) == 0;
    }
    std::printf(
        "{\"model\": \"%s\", \"launches\": %lld, \"compile_ms\": %.1f, \"save_ms\": %.1f, \"load_ms\": %.2f, "
        "\"first_run_ms\": %.2f, \"executor_ms\": %.4f, \"package_ms\": %.4f, \"package_over_executor\": %.3f, "
        "\"identical\": %s}\n",
        argv[1], static_cast<long long>(package.launches()), compile_ms, save_ms, load_ms, first_run_ms,
        median(executor_ms), median(package_ms), median(package_ms) / median(executor_ms), identical ? "true" : "false");
  } catch (const tilefuse::UserError& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
  return 0;
}
