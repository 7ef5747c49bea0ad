// The public C++ API in one page: load a model, compile it once, run it many times writing into
// the same output buffers. Built with only include/ on its include path (CMake target
// run_model_example), which is how the build checks that the public header stands alone.
//
//   run_model_example MODEL.onnx [RUNS]
//
// Every input is filled with 0.5 (symbolic dims take the value 1); prints each output's type and
// its first value.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "tilefuse/tilefuse.h"

namespace {

tilefuse::Tensor filled(const tilefuse::TensorSpec& spec) {
  std::vector<int64_t> shape = spec.shape;
  for (int64_t& d : shape) d = d < 0 ? 1 : d;
  tilefuse::Tensor t(spec.dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, 0.5);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.onnx [RUNS]\n", argv[0]);
    return 1;
  }
  const int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  try {
    tilefuse::Model model = tilefuse::load_onnx(argv[1]);
    tilefuse::Executable exe = tilefuse::compile(model, {.mode = tilefuse::Mode::fused, .threads = 2});

    std::map<std::string, tilefuse::Tensor> inputs;
    for (const tilefuse::TensorSpec& spec : exe.inputs()) inputs[spec.name] = filled(spec);
    std::map<std::string, tilefuse::Tensor> outputs;
    for (int run = 0; run < runs; ++run) exe.run(inputs, outputs);  // the second run on reuses `outputs`

    for (const tilefuse::TensorSpec& spec : exe.outputs()) {
      const tilefuse::Tensor& y = outputs.at(spec.name);
      std::printf("%s: %s = %s, first value %g\n", spec.name.c_str(), spec.type.c_str(), y.summary().c_str(),
                  y.numel() > 0 ? y.get_f64(0) : 0.0);
    }
    std::printf("%d runs, %lld launches per run\n", runs, static_cast<long long>(exe.launches()));
  } catch (const tilefuse::UserError& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
  return 0;
}
