// Runs the real `tilefuse` binary (TILEFUSE_CLI) as a subprocess and captures what it prints,
// and writes small ONNX models with Debian's python3-onnx for it to load.
#pragma once

#include <sys/wait.h>

#include <string>
#include <vector>

#include "io/test_support.h"

namespace tilefuse::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string shell_quoted(const std::string& arg) {
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `env` is prepended to the command line, e.g. "TILEFUSE_LOG_LEVEL=debug".
inline CliResult run_cli(const ScratchDir& dir, const std::vector<std::string>& args, const std::string& env = "") {
  std::string command = env + " " + shell_quoted(TILEFUSE_CLI);
  for (const std::string& arg : args) command += " " + shell_quoted(arg);
  const std::string out = dir.file("cli.stdout");
  const std::string err = dir.file("cli.stderr");
  int status = std::system((command + " > " + shell_quoted(out) + " 2> " + shell_quoted(err)).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_bytes(out), read_bytes(err)};
}

// Writes DIR/<name>.onnx from a python snippet that defines `graph` with onnx.helper names
// (helper, TensorProto, numpy_helper, np are imported).
inline void write_onnx_model(const ScratchDir& dir, const std::string& name, const std::string& graph_code) {
  const std::string script =
      "import numpy as np\nfrom onnx import helper, TensorProto, numpy_helper\nimport onnx\n" + graph_code +
      "\nmodel = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)])\n"
      "model.ir_version = 8\n"
      "onnx.save(model, " + shell_quoted(dir.file(name + ".onnx")) + ")\n";
  ASSERT_EQ(run_python(dir, script), 0) << "could not build model " << name;
}

// z = x + y with x: f32[N, 4] (symbolic batch), y: f32[4]; the output is named "sum:0" to
// exercise file-name sanitising.
inline void write_add_model(const ScratchDir& dir) {
  write_onnx_model(dir, "add", R"(
graph = helper.make_graph(
    [helper.make_node('Add', ['x', 'y'], ['sum:0'], name='add')], 'add',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['N', 4]),
     helper.make_tensor_value_info('y', TensorProto.FLOAT, [4])],
    [helper.make_tensor_value_info('sum:0', TensorProto.FLOAT, ['N', 4])])
)");
}

}  // namespace tilefuse::testing
