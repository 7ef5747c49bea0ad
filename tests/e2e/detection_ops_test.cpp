// The detection ops through the executor, fused and not, against the reference interpreter on the
// same graph: RoiAlign over a convolution's feature map, as Faster R-CNN's box head reads it; and
// NonMaxSuppression's selected rows gathered into the kept boxes, as a detector's post-processing
// does, which the executor refuses (their count is known only when it runs: the API then falls
// back to the reference interpreter, whose kernel the ONNX node tests check).
#include <gtest/gtest.h>

#include <limits>

#include "driver/executor.h"
#include "tilefuse/error.h"
#include "e2e/e2e_cache_dir.h"
#include "ir/tensor_compare.h"
#include "reference/interpreter.h"

namespace tilefuse {
namespace {

Tensor values(const std::vector<int64_t>& shape, int salt, double scale) {
  Tensor t(DType::f32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, scale * (((i * 37 + salt * 11) % 97) / 97.0));
  return t;
}

void expect_executor_matches_reference(const Graph& g, const std::map<std::string, Tensor>& inputs) {
  const std::vector<Tensor> expected = reference::run_graph(g, inputs);
  for (bool fuse : {true, false}) {
    driver::ExecutorOptions options = e2e::executor_options();
    options.fuse = fuse;
    driver::ExecutorCounters counters;
    driver::Executor exe(g, options, counters);
    for (int run = 0; run < 2; ++run) {  // the second run reuses the first's buffers
      const std::vector<Tensor> actual = exe.run(inputs);
      ASSERT_EQ(actual.size(), expected.size());
      for (size_t i = 0; i < actual.size(); ++i) {
        const CompareResult r = compare_tensors(actual[i], expected[i], {1e-5, 1e-5});
        EXPECT_TRUE(r.ok) << (fuse ? "fused" : "unfused") << " run " << run << " output " << i << ": " << r.message;
      }
    }
  }
}

TEST(DetectionOps, NonMaxSuppressionNeedsTheReferenceInterpreter) {
  Graph g;
  Value* boxes = g.add_input("boxes", DType::f32, {Dim(1), Dim(200), Dim(4)});
  Value* scores = g.add_input("scores", DType::f32, {Dim(1), Dim(3), Dim(200)});
  // torchvision writes INT64_MAX, which a double does not hold.
  Value* max_kept = g.add_constant("max_kept", Tensor::from_vector<int64_t>(DType::i64, {1}, {std::numeric_limits<int64_t>::max()}));
  Value* iou = g.add_constant("iou", Tensor::from_vector<float>(DType::f32, {1}, {0.3f}));
  Value* score = g.add_constant("score", Tensor::from_vector<float>(DType::f32, {1}, {0.2f}));
  Value* selected = g.add_node("NonMaxSuppression", "nms", {boxes, scores, max_kept, iou, score}, {"selected"},
                               {{"center_point_box", int64_t{1}}})->outputs[0];
  // The kept boxes' indices (column 2), then the boxes themselves.
  Value* column = g.add_node("Gather", "box_index", {selected, g.add_constant("two", Tensor::scalar_i64(2))},
                             {"box_index"}, {{"axis", int64_t{1}}})->outputs[0];
  Value* flat = g.add_node("Reshape", "flat", {boxes, g.add_constant("shape", Tensor::from_vector<int64_t>(DType::i64, {2}, {200, 4}))},
                           {"flat"})->outputs[0];
  Value* kept = g.add_node("Gather", "kept", {flat, column}, {"kept"})->outputs[0];
  g.set_outputs({selected, kept});
  g.infer_shapes();
  // Centres on a 10 x 10 grid, 30 wide: neighbours overlap, and many are suppressed.
  Tensor b(DType::f32, {1, 200, 4});
  for (int64_t i = 0; i < 200; ++i) {
    b.set_f64(i * 4, static_cast<double>((i % 10) * 12)), b.set_f64(i * 4 + 1, static_cast<double>((i / 10 % 10) * 12));
    b.set_f64(i * 4 + 2, 30.0 + static_cast<double>(i % 3)), b.set_f64(i * 4 + 3, 30.0);
  }
  const std::map<std::string, Tensor> inputs = {{"boxes", b}, {"scores", values({1, 3, 200}, 1, 1.0)}};
  const std::vector<Tensor> expected = reference::run_graph(g, inputs);
  EXPECT_GT(expected[0].shape()[0], 10);   // boxes of all three classes kept
  EXPECT_LT(expected[0].shape()[0], 300);  // and many suppressed
  driver::ExecutorCounters counters;
  try {
    driver::Executor(g, e2e::executor_options(), counters).run(inputs);
    FAIL() << "the executor ran a data-dependent shape";
  } catch (const NeedsReferenceMode& e) {
    EXPECT_NE(std::string(e.what()).find("(NonMaxSuppression)"), std::string::npos) << e.what();
  }
}

TEST(DetectionOps, RoiAlignOverAConvolutionsMap) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(1), Dim(4), Dim(24), Dim(24)});
  Value* conv = g.add_node("Conv", "conv", {x, g.add_constant("w", values({8, 4, 3, 3}, 2, 0.2))}, {"features"},
                           {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})->outputs[0];
  Value* rois = g.add_input("rois", DType::f32, {Dim(5), Dim(4)});
  Value* batch = g.add_constant("batch", Tensor::from_vector<int64_t>(DType::i64, {5}, {0, 0, 0, 0, 0}));
  g.set_outputs({g.add_node("RoiAlign", "roi_align", {conv, rois, batch}, {"pooled"},
                            {{"output_height", int64_t{7}}, {"output_width", int64_t{7}}, {"sampling_ratio", int64_t{2}},
                             {"spatial_scale", 0.25}})->outputs[0]});
  g.infer_shapes();
  Tensor r = Tensor::from_vector<float>(DType::f32, {5, 4}, {0, 0, 96, 96, 10, 20, 50, 70, 40, 40, 45, 90, -8, 30, 30, 100, 60, 60, 120, 120});
  expect_executor_matches_reference(g, {{"x", values({1, 4, 24, 24}, 3, 2.0)}, {"rois", r}});
}

}  // namespace
}  // namespace tilefuse
