// Deploying a compiled model: load a package that `tilefuse compile` wrote and run it, linking
// only libtilefuse_runtime (no compiler, no ONNX, no OpenSSL) with only include/ on the include
// path (CMake target run_package_example).
//
//   tilefuse compile model.onnx -o model.tfx          # on the build machine, once
//   run_package_example model.tfx OUT_DIR [RUNS]      # wherever the model runs
//
// Every input is filled with a fixed pattern (symbolic dims take the value 3) and written to
// OUT_DIR/inputs/<name>.npy; the outputs go to OUT_DIR/outputs/<name>.npy. Prints the load time,
// the first run's and the steady runs' times.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "tilefuse/npy.h"
#include "tilefuse/tilefuse.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

tilefuse::Tensor pattern(const tilefuse::TensorSpec& spec) {
  std::vector<int64_t> shape = spec.shape;
  for (int64_t& d : shape) d = d < 0 ? 3 : d;
  tilefuse::Tensor t(spec.dtype, shape);
  const bool is_integer = spec.dtype != tilefuse::DType::f32 && spec.dtype != tilefuse::DType::f64 &&
                          spec.dtype != tilefuse::DType::f16 && spec.dtype != tilefuse::DType::bf16;
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, is_integer ? i % 2 : std::sin(0.37 * static_cast<double>(i)));
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.tfx OUT_DIR [RUNS]\n", argv[0]);
    return 1;
  }
  const std::filesystem::path out = argv[2];
  const int runs = argc > 3 ? std::atoi(argv[3]) : 10;
  try {
    Clock::time_point start = Clock::now();
    const tilefuse::Executable exe = tilefuse::Executable::load(argv[1]);
    const double load_ms = ms_since(start);

    std::filesystem::create_directories(out / "inputs");
    std::filesystem::create_directories(out / "outputs");
    std::map<std::string, tilefuse::Tensor> inputs;
    for (const tilefuse::TensorSpec& spec : exe.inputs()) {
      inputs[spec.name] = pattern(spec);
      tilefuse::write_npy((out / "inputs" / (spec.name + ".npy")).string(), inputs[spec.name]);
    }
    std::map<std::string, tilefuse::Tensor> outputs;
    start = Clock::now();
    exe.run(inputs, outputs);
    const double first_ms = ms_since(start);
    start = Clock::now();
    for (int run = 1; run < runs; ++run) exe.run(inputs, outputs);
    const double steady_ms = runs > 1 ? ms_since(start) / (runs - 1) : 0;

    for (const auto& [name, tensor] : outputs) tilefuse::write_npy((out / "outputs" / (name + ".npy")).string(), tensor);
    std::printf("loaded in %.2f ms, first run %.2f ms, then %.3f ms per run (%d runs, %lld launches per run)\n", load_ms,
                first_ms, steady_ms, runs, static_cast<long long>(exe.launches()));
  } catch (const tilefuse::UserError& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
  return 0;
}
