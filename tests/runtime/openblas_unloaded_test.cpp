// What runs on tilefuse's own GEMM engine never loads OpenBLAS, whose thread pool spins beside
// the team's workers for its first ~100 ms (reference/openblas.h): not linked, not loaded by a
// product, a packed weight or a convolution.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "reference/openblas.h"
#include "runtime/conv_gemm.h"
#include "runtime/matmul_call.h"
#include "runtime/sgemm.h"

namespace tilefuse::runtime {
namespace {

bool process_maps(const std::string& library) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find(library) != std::string::npos) return true;
  }
  return false;
}

Tensor filled(std::vector<int64_t> shape) {
  Tensor t(DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, (i % 7) / 3.0 - 1.0);
  return t;
}

// Prepares `op` over `shapes` (the second input constant) and runs it on two workers into `out`.
void run_call(const std::string& op, const std::vector<std::vector<int64_t>>& shapes, std::vector<int64_t> out) {
  Graph g;
  std::vector<Tensor> ins = {filled(shapes[0]), filled(shapes[1])};
  Node* node = g.add_node(op, "n", {g.add_input("x", DType::f32, shape_of(shapes[0])), g.add_constant("w", ins[1])},
                          {"y"});
  g.infer_shapes();
  std::unique_ptr<LibraryCall> call = op == "Conv" ? prepare_conv_call(*node, default_blocking(48 << 10, 2 << 20))
                                                   : prepare_matmul_call(*node, default_blocking(48 << 10, 2 << 20));
  ThreadTeam team(2);
  std::vector<Tensor> outs = {Tensor(DType::f32, std::move(out))};
  call->run(team, ins, outs);
}

TEST(OpenBlasUnloaded, ProductsAndConvolutionsOnTheOwnEngine) {
  if (!own_gemm_engine()) GTEST_SKIP() << "this CPU runs products on OpenBLAS";
  // ctest runs each test in a process of its own; run as one binary, an earlier test loads it.
  if (reference::openblas::loaded()) GTEST_SKIP() << "an earlier test in this process loaded OpenBLAS";
  ASSERT_FALSE(process_maps("libopenblas")) << "OpenBLAS is mapped before any call: something links it";
  run_call("MatMul", {{33, 64}, {64, 48}}, {33, 48});
  run_call("Conv", {{1, 8, 12, 12}, {16, 8, 3, 3}}, {1, 16, 10, 10});
  EXPECT_FALSE(process_maps("libopenblas"));
  EXPECT_FALSE(reference::openblas::loaded());
}

}  // namespace
}  // namespace tilefuse::runtime
