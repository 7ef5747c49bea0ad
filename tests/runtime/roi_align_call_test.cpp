// The direct RoiAlign against the reference kernel: avg and max, half_pixel and output_half_pixel,
// a fixed sampling ratio and the adaptive one, regions inside, across the border and beyond it,
// a malformed (inverted) region, two images, on 1 and 2 workers; and a batch index out of range.
#include "runtime/roi_align_call.h"

#include <gtest/gtest.h>

#include "ir/error.h"
#include "ir/tensor_compare.h"
#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

struct Case {
  Graph graph;
  Node* node = nullptr;
};

void build(Case& c, const std::string& mode, const std::string& transform, int64_t ratio) {
  Value* x = c.graph.add_input("x", DType::f32, {Dim(2), Dim(3), Dim(12), Dim(10)});
  Value* rois = c.graph.add_input("rois", DType::f32, {Dim(6), Dim(4)});
  Value* batch = c.graph.add_input("batch", DType::i64, {Dim(6)});
  c.node = c.graph.add_node("RoiAlign", "roi_align", {x, rois, batch}, {"y"},
                            {{"mode", mode},
                             {"coordinate_transformation_mode", transform},
                             {"output_height", int64_t{3}},
                             {"output_width", int64_t{4}},
                             {"sampling_ratio", ratio},
                             {"spatial_scale", 0.5}});
  c.graph.infer_shapes();
}

std::vector<Tensor> inputs(int64_t image_of_last) {
  Tensor x(DType::f32, {2, 3, 12, 10});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(((i * 37) % 53) / 9.0 - 2.5);
  // x1, y1, x2, y2 before the scale of 0.5: inside, across the border, beyond it, inverted, tiny, whole map.
  const std::vector<float> boxes = {2, 2, 14, 18, -6, 4, 8, 30, 22, 26, 40, 40, 12, 12, 4, 4, 5, 5, 5.5f, 5.5f, 0, 0, 20, 24};
  Tensor rois(DType::f32, {6, 4});
  std::copy(boxes.begin(), boxes.end(), rois.data<float>());
  Tensor batch = Tensor::from_vector<int64_t>(DType::i64, {6}, {0, 1, 0, 1, 0, image_of_last});
  return {x, rois, batch};
}

TEST(RoiAlignCall, MatchesReference) {
  for (const char* mode : {"avg", "max"}) {
    for (const char* transform : {"half_pixel", "output_half_pixel"}) {
      for (int64_t ratio : {0, 2}) {
        Case c;
        build(c, mode, transform, ratio);
        ASSERT_TRUE(roi_align_call_supports(*c.node));
        const std::vector<Tensor> in = inputs(1);
        const Tensor expected = reference::evaluate_node(*c.node, in).at(0);
        std::unique_ptr<LibraryCall> call = prepare_roi_align_call(*c.node);
        for (int workers : {1, 2}) {
          ThreadTeam team(workers);
          std::vector<Tensor> outs = {Tensor(DType::f32, expected.shape())};
          call->run(team, in, outs);
          const CompareResult r = compare_tensors(outs[0], expected, {1e-5, 1e-5});
          EXPECT_TRUE(r.ok) << mode << " " << transform << " ratio " << ratio << " on " << workers
                            << " workers: " << r.message;
        }
      }
    }
  }
}

TEST(RoiAlignCall, ABatchIndexOutOfRangeIsAUserError) {
  Case c;
  build(c, "avg", "half_pixel", 2);
  std::unique_ptr<LibraryCall> call = prepare_roi_align_call(*c.node);
  ThreadTeam team(2);
  std::vector<Tensor> outs = {Tensor(DType::f32, {6, 3, 3, 4})};
  try {
    call->run(team, inputs(2), outs);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("batch index 2 of region 5 is out of range for 2 images"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tilefuse::runtime
