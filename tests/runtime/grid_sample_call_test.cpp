// The direct GridSample against the reference kernel: nearest, bilinear and bicubic (and opset
// 20's linear and cubic), zeros, border and reflection padding, with and without align_corners,
// grid values inside, on and beyond the borders (several reflections), NaN and inf, more output
// positions than one block of taps and a partial block, a batch of two, on 1 and 2 workers.
#include "runtime/grid_sample_call.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/tensor_compare.h"
#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

using Ints = std::vector<int64_t>;

Tensor image(const Ints& shape) {
  Tensor x(DType::f32, shape);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(((i * 37) % 53) / 9.0 - 2.5);
  return x;
}

// Normalised coordinates from -3.3 to 3.3 (inside, on the borders, beyond them), a NaN and an inf.
Tensor grid_of(const Ints& shape) {
  Tensor g(DType::f32, shape);
  for (int64_t i = 0; i < g.numel(); ++i) g.data<float>()[i] = static_cast<float>(((i * 29) % 67) / 10.0 - 3.3);
  g.data<float>()[7] = std::numeric_limits<float>::quiet_NaN();
  g.data<float>()[12] = std::numeric_limits<float>::infinity();
  return g;
}

TEST(GridSampleCall, MatchesReferenceInEveryModeAndPadding) {
  const Ints x_shape = {2, 3, 7, 9}, grid_shape = {2, 10, 13, 2};  // 130 positions: two blocks and a part
  const Tensor x = image(x_shape), grid = grid_of(grid_shape);
  for (const char* mode : {"nearest", "bilinear", "bicubic", "linear", "cubic"}) {
    for (const char* padding : {"zeros", "border", "reflection"}) {
      for (int64_t align : {0, 1}) {
        Graph g;
        Node* node = g.add_node("GridSample", "sample",
                                {g.add_input("x", DType::f32, shape_of(x_shape)),
                                 g.add_input("grid", DType::f32, shape_of(grid_shape))},
                                {"y"},
                                {{"mode", std::string(mode)},
                                 {"padding_mode", std::string(padding)},
                                 {"align_corners", align}});
        g.infer_shapes();
        ASSERT_TRUE(grid_sample_call_supports(*node)) << mode;
        const Tensor expected = reference::evaluate_node(*node, {x, grid}).at(0);
        std::unique_ptr<LibraryCall> call = prepare_grid_sample_call(*node);
        for (int workers : {1, 2}) {
          ThreadTeam team(workers);
          std::vector<Tensor> outs = {Tensor(DType::f32, expected.shape())};
          call->run(team, {x, grid}, outs);
          const CompareResult r = compare_tensors(outs[0], expected, {1e-5, 1e-5});
          EXPECT_TRUE(r.ok) << mode << " " << padding << " align " << align << " on " << workers
                            << " workers: " << r.message;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tilefuse::runtime
