// tilefuse::runtime alone: load a package and run it (no compiler, no ONNX).
//   load_and_run PACKAGE.tfx INPUT_DIR EXPECTED_DIR
#include <cstdio>

#include "compare.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s PACKAGE.tfx INPUT_DIR EXPECTED_DIR\n", argv[0]);
    return 2;
  }
  try {
    const tilefuse::Executable exe = tilefuse::Executable::load(argv[1]);
    std::map<std::string, tilefuse::Tensor> inputs;
    for (const tilefuse::TensorSpec& spec : exe.inputs()) {
      inputs[spec.name] = tilefuse::read_npy(std::string(argv[2]) + "/" + spec.name + ".npy");
    }
    return compare_outputs(exe.run(inputs), argv[3]);
  } catch (const tilefuse::UserError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
