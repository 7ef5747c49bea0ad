// ONNX If and Loop end to end: models written with python3-onnx, expected outputs computed with
// numpy, run by the reference interpreter, fused, and from a model package. A Loop of known trip
// count is unrolled and fused; an If on a run-time condition runs as a host step, both branches
// taken; a Loop whose scan length depends on data is refused by the executor with a clear error.
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/cli_process.h"
#include "driver/executor.h"
#include "e2e/e2e_cache_dir.h"
#include "frontend/onnx_importer.h"
#include "io/npy.h"
#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "tilefuse/tilefuse.h"

namespace tilefuse::e2e {
namespace {

using ::testing::HasSubstr;
using testing::ScratchDir;

// y = If(sum(x) > 0, x * 2 + b, relu(x) - b); then 3 times h = tanh(h * w), scanning h.
// Writes cf.onnx, and for x positive (pos) and negative (neg) the input and numpy's outputs.
void write_control_flow_model(const ScratchDir& dir) {
  const std::string script = "d = " + testing::shell_quoted(dir.path().string()) + R"(
import numpy as np
from onnx import helper, TensorProto, numpy_helper
import onnx
F = TensorProto.FLOAT
then_g = helper.make_graph([helper.make_node('Mul', ['x', 'two'], ['t0']), helper.make_node('Add', ['t0', 'b'], ['t_out'])],
    'then', [], [helper.make_tensor_value_info('t_out', F, ['N', 8])], [numpy_helper.from_array(np.array(2.0, np.float32), 'two')])
else_g = helper.make_graph([helper.make_node('Relu', ['x'], ['e0']), helper.make_node('Sub', ['e0', 'b'], ['e_out'])],
    'else', [], [helper.make_tensor_value_info('e_out', F, ['N', 8])])
body = helper.make_graph([helper.make_node('Mul', ['h_in', 'w'], ['m']), helper.make_node('Tanh', ['m'], ['h_out']),
                          helper.make_node('Identity', ['cond_in'], ['cond_out']), helper.make_node('Identity', ['h_out'], ['scan'])],
    'body', [helper.make_tensor_value_info('i', TensorProto.INT64, []), helper.make_tensor_value_info('cond_in', TensorProto.BOOL, []),
             helper.make_tensor_value_info('h_in', F, ['N', 8])],
    [helper.make_tensor_value_info('cond_out', TensorProto.BOOL, []), helper.make_tensor_value_info('h_out', F, ['N', 8]),
     helper.make_tensor_value_info('scan', F, ['N', 8])])
nodes = [helper.make_node('ReduceSum', ['x'], ['s'], keepdims=0), helper.make_node('Greater', ['s', 'zero'], ['c']),
         helper.make_node('If', ['c'], ['y'], then_branch=then_g, else_branch=else_g, name='branch'),
         helper.make_node('Loop', ['trips', '', 'y'], ['h_final', 'hs'], body=body, name='loop')]
b = np.linspace(-1, 1, 8).astype(np.float32)
w = np.full(8, 0.9, np.float32)
graph = helper.make_graph(nodes, 'control_flow', [helper.make_tensor_value_info('x', F, ['N', 8])],
    [helper.make_tensor_value_info('h_final', F, ['N', 8]), helper.make_tensor_value_info('hs', F, [3, 'N', 8])],
    [numpy_helper.from_array(b, 'b'), numpy_helper.from_array(np.array(0.0, np.float32), 'zero'),
     numpy_helper.from_array(np.array(3, np.int64), 'trips'), numpy_helper.from_array(w, 'w')])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, d + '/cf.onnx')
for name, sign, rows in [('pos', 1, 4), ('neg', -1, 5)]:
    x = (sign * np.abs(np.random.RandomState(rows).randn(rows, 8))).astype(np.float32)
    y = x * 2 + b if x.sum() > 0 else np.maximum(x, 0) - b
    hs = []
    for _ in range(3):
        y = np.tanh(y * w)
        hs.append(y)
    np.save(d + '/' + name + '_x.npy', x)
    np.save(d + '/' + name + '_h_final.npy', y)
    np.save(d + '/' + name + '_hs.npy', np.stack(hs))
)";
  ASSERT_EQ(testing::run_python(dir, script), 0);
}

class ControlFlow : public ::testing::Test {
 protected:
  void SetUp() override { write_control_flow_model(dir); }
  Tensor npy(const std::string& name) const { return io::read_npy(dir.file(name + ".npy")); }
  void expect_numpy_outputs(const std::vector<Tensor>& actual, const std::string& input) const {
    ASSERT_EQ(actual.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      const CompareResult r = compare_tensors(actual[i], npy(input + (i == 0 ? "_h_final" : "_hs")), {1e-5, 1e-6});
      EXPECT_TRUE(r.ok) << input << " output " << i << ": " << r.message;
    }
  }
  ScratchDir dir;
};

TEST_F(ControlFlow, TheReferenceTakesEitherBranchAndRunsTheLoop) {
  const Graph g = frontend::import_onnx_file(dir.file("cf.onnx"));
  for (const char* input : {"pos", "neg"}) {
    expect_numpy_outputs(reference::run_graph(g, {{"x", npy(std::string(input) + "_x")}}), input);
  }
}

TEST_F(ControlFlow, FusedTheLoopIsUnrolledIntoOneKernelAndTheIfRunsOnTheHost) {
  const Graph g = frontend::import_onnx_file(dir.file("cf.onnx"));
  driver::ExecutorCounters counters;
  driver::Executor exe(g, executor_options(), counters);
  int tanh_kernels = 0, ifs = 0, loops = 0;
  for (const auto& step : exe.plan().steps) {
    if (step.kind == fusion::StepKind::Kernel) {
      int tanhs = 0;
      for (const Node* n : step.kernel.nodes) tanhs += n->op == "Tanh";
      tanh_kernels += tanhs == 3;
    } else {
      ifs += step.node->op == "If";
      loops += step.node->op == "Loop";
    }
  }
  EXPECT_EQ(tanh_kernels, 1) << fusion::print_plan(exe.plan());
  EXPECT_EQ(ifs, 1);
  EXPECT_EQ(loops, 0);
  for (const char* input : {"pos", "neg"}) expect_numpy_outputs(exe.run({{"x", npy(std::string(input) + "_x")}}), input);
}

TEST_F(ControlFlow, APackageCarriesBothBranches) {
  Options options;
  options.threads = 2;
  options.cache_dir = test_cache_dir();
  const Executable compiled = compile(load_onnx(dir.file("cf.onnx")), options);
  compiled.run({{"x", npy("pos_x")}});
  compiled.save(dir.file("cf.tfx"));
  const Executable loaded = Executable::load(dir.file("cf.tfx"));
  for (const char* input : {"pos", "neg"}) {
    const auto outputs = loaded.run({{"x", npy(std::string(input) + "_x")}});
    expect_numpy_outputs({outputs.at("h_final"), outputs.at("hs")}, input);
  }
}

TEST_F(ControlFlow, ALoopWhoseScanLengthDependsOnDataIsRefusedByTheExecutorOnly) {
  const std::string script = "d = " + testing::shell_quoted(dir.path().string()) + R"(
import numpy as np
from onnx import helper, TensorProto, numpy_helper
import onnx
F = TensorProto.FLOAT
body = helper.make_graph([helper.make_node('Add', ['h_in', 'step'], ['h_out']), helper.make_node('Add', ['i', 'one'], ['i1']),
                          helper.make_node('Less', ['i1', 'limit'], ['cond_out']), helper.make_node('Mul', ['h_out', 'two'], ['scan'])],
  'body', [helper.make_tensor_value_info('i', TensorProto.INT64, []), helper.make_tensor_value_info('cond_in', TensorProto.BOOL, []),
           helper.make_tensor_value_info('h_in', F, [4])],
  [helper.make_tensor_value_info('cond_out', TensorProto.BOOL, []), helper.make_tensor_value_info('h_out', F, [4]),
   helper.make_tensor_value_info('scan', F, [4])],
  [numpy_helper.from_array(np.array(1, np.int64), 'one'), numpy_helper.from_array(np.array(2.0, np.float32), 'two')])
graph = helper.make_graph([helper.make_node('Loop', ['m', '', 'h0'], ['h', 'hs'], body=body, name='loop')], 'dyn_loop',
  [helper.make_tensor_value_info('m', TensorProto.INT64, []), helper.make_tensor_value_info('h0', F, [4]),
   helper.make_tensor_value_info('step', F, [4]), helper.make_tensor_value_info('limit', TensorProto.INT64, [])],
  [helper.make_tensor_value_info('h', F, [4]), helper.make_tensor_value_info('hs', F, ['T', 4])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)])
model.ir_version = 8
onnx.save(model, d + '/loop.onnx')
)";
  ASSERT_EQ(testing::run_python(dir, script), 0);
  const Graph g = frontend::import_onnx_file(dir.file("loop.onnx"));
  Tensor m = Tensor::scalar_i64(5), limit = Tensor::scalar_i64(3);
  const Tensor h0 = Tensor::from_vector(DType::f32, {4}, std::vector<float>{0, 1, 2, 3});
  const Tensor step = Tensor::from_vector(DType::f32, {4}, std::vector<float>{0.5, 0.5, 0.5, 0.5});
  const std::map<std::string, Tensor> inputs = {{"m", m}, {"limit", limit}, {"h0", h0}, {"step", step}};
  // Stops after 3 of the 5 trips: h = h0 + 3 * 0.5, hs[k] = 2 * (h0 + (k + 1) * 0.5).
  const std::vector<Tensor> out = reference::run_graph(g, inputs);
  EXPECT_EQ(out.at(0).get_f64(3), 4.5);
  EXPECT_EQ(out.at(1).shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(out.at(1).get_f64(4), 2.0);  // hs[1][0] = 2 * (0 + 2 * 0.5)
  driver::ExecutorCounters counters;
  try {
    driver::Executor exe(g, executor_options(), counters);
    exe.run(inputs);
    ADD_FAILURE() << "the executor ran a Loop whose scan output has no size known from the inputs";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("depends on tensor data"));
  }
}

}  // namespace
}  // namespace tilefuse::e2e
