// tilefuse::tilefuse: import an ONNX model, compile it, run it, save it as a package.
//   compile_and_run MODEL.onnx INPUT_DIR EXPECTED_DIR PACKAGE.tfx
#include <cstdio>

#include "compare.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s MODEL.onnx INPUT_DIR EXPECTED_DIR PACKAGE.tfx\n", argv[0]);
    return 2;
  }
  try {
    tilefuse::configure_logging();  // warnings and errors to stderr (TILEFUSE_LOG_LEVEL changes it)
    const tilefuse::Executable exe = tilefuse::compile(tilefuse::load_onnx(argv[1]));
    std::map<std::string, tilefuse::Tensor> inputs;
    for (const tilefuse::TensorSpec& spec : exe.inputs()) {
      inputs[spec.name] = tilefuse::read_npy(std::string(argv[2]) + "/" + spec.name + ".npy");
    }
    const int status = compare_outputs(exe.run(inputs), argv[3]);
    exe.save(argv[4]);
    return status;
  } catch (const tilefuse::UserError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
