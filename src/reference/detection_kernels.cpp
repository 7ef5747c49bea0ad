// The detection ops' kernels, as the ONNX reference (onnx/reference/ops/op_non_max_suppression.py,
// op_roi_align.py) and ONNX Runtime compute them.
//
// NonMaxSuppression: per batch and class, the boxes whose score exceeds score_threshold (all, if
// it is absent; NaN scores never), best score first and equal scores in index order, each kept
// unless its IoU with a box already kept exceeds iou_threshold, until max_output_boxes_per_class
// (absent: 0, nothing) are kept. Box geometry in f32, as ONNX Runtime: boxes of no area never
// suppress or get suppressed.
//
// RoiAlign: each region's samples (roi_align_samples.h) averaged per bin (avg), or the largest
// of the samples' weighted corner values (max: ONNX Runtime's definition, which the ONNX
// reference follows). In double.
#include <algorithm>
#include <cmath>
#include <vector>

#include "reference/kernel_args.h"
#include "reference/kernel_table.h"
#include "reference/roi_align_samples.h"

namespace tilefuse::reference {

namespace {

// ---- NonMaxSuppression ----

struct Box {
  float y_min, x_min, y_max, x_max;
};

Box box_at(const float* b, bool center_point) {
  if (!center_point) return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
  const float half_w = b[2] / 2, half_h = b[3] / 2;  // [x_center, y_center, width, height]
  return {b[1] - half_h, b[0] - half_w, b[1] + half_h, b[0] + half_w};
}

bool suppresses(const Box& a, const Box& b, float iou_threshold) {
  const float x0 = std::max(a.x_min, b.x_min), x1 = std::min(a.x_max, b.x_max);
  if (x1 <= x0) return false;
  const float y0 = std::max(a.y_min, b.y_min), y1 = std::min(a.y_max, b.y_max);
  if (y1 <= y0) return false;
  const float intersection = (x1 - x0) * (y1 - y0);
  const float area_a = (a.x_max - a.x_min) * (a.y_max - a.y_min), area_b = (b.x_max - b.x_min) * (b.y_max - b.y_min);
  const float union_area = area_a + area_b - intersection;
  if (intersection <= 0 || area_a <= 0 || area_b <= 0 || union_area <= 0) return false;
  return intersection / union_area > iou_threshold;
}

// An optional scalar input's value, or `fallback` where it is absent or empty.
double optional_scalar(const Node& node, const std::vector<Tensor>& in, size_t i, const char* what, double fallback) {
  const Tensor* t = optional_input(in, i);
  return t == nullptr || t->numel() == 0 ? fallback : scalar_value(node, *t, what);
}

std::vector<Tensor> non_max_suppression_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& boxes = required_input(node, in, 0);
  const Tensor& scores = required_input(node, in, 1);
  if (boxes.rank() != 3 || scores.rank() != 3 || boxes.shape()[2] != 4 || boxes.shape()[0] != scores.shape()[0] ||
      boxes.shape()[1] != scores.shape()[2]) {
    fail_user("{}: boxes {} and scores {} must be [batches, boxes, 4] and [batches, classes, boxes]", node.describe(),
              boxes.summary(), scores.summary());
  }
  // An integer read as one: torchvision writes INT64_MAX, which a double rounds out of range.
  const Tensor* max_input = optional_input(in, 2);
  const int64_t max_kept = max_input == nullptr || max_input->numel() == 0 ? 0 : std::max<int64_t>(0, max_input->get_i64(0));
  const auto iou_threshold = static_cast<float>(optional_scalar(node, in, 3, "iou_threshold", 0));
  const Tensor* score_threshold = optional_input(in, 4);
  const bool thresholded = score_threshold != nullptr && score_threshold->numel() > 0;
  const float threshold = thresholded ? static_cast<float>(scalar_value(node, *score_threshold, "score_threshold")) : 0;
  const bool center_point = node.attr_int("center_point_box", 0) != 0;
  const int64_t batches = boxes.shape()[0], count = boxes.shape()[1], classes = scores.shape()[1];
  std::vector<int64_t> rows;  // batch, class, box
  std::vector<std::pair<float, int64_t>> candidates;
  std::vector<Box> kept;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t c = 0; c < classes; ++c) {
      const float* score = scores.data<float>() + (b * classes + c) * count;
      candidates.clear();
      for (int64_t i = 0; i < count; ++i) {
        if (!std::isnan(score[i]) && (!thresholded || score[i] > threshold)) candidates.push_back({score[i], i});
      }
      std::stable_sort(candidates.begin(), candidates.end(),
                       [](const auto& x, const auto& y) { return x.first > y.first; });
      kept.clear();
      for (const auto& [s, i] : candidates) {
        if (static_cast<int64_t>(kept.size()) >= max_kept) break;
        const Box box = box_at(boxes.data<float>() + (b * count + i) * 4, center_point);
        if (std::any_of(kept.begin(), kept.end(), [&](const Box& k) { return suppresses(box, k, iou_threshold); })) {
          continue;
        }
        kept.push_back(box);
        rows.insert(rows.end(), {b, c, i});
      }
    }
  }
  Tensor out(DType::i64, {static_cast<int64_t>(rows.size() / 3), 3});
  std::copy(rows.begin(), rows.end(), out.data<int64_t>());
  return {out};
}

// ---- RoiAlign ----

std::vector<Tensor> roi_align_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  const Tensor& rois = required_input(node, in, 1);
  const Tensor& batch = required_input(node, in, 2);
  if (x.rank() != 4 || rois.rank() != 2 || rois.shape()[1] != 4 || batch.rank() != 1 ||
      batch.shape()[0] != rois.shape()[0]) {
    fail_user("{}: input {}, rois {} and batch_indices {} must be [N, C, H, W], [rois, 4] and [rois]", node.describe(),
              x.summary(), rois.summary(), batch.summary());
  }
  const int64_t channels = x.shape()[1], height = x.shape()[2], width = x.shape()[3], regions = rois.shape()[0];
  const RoiAlignParams p = RoiAlignParams::of(node);
  std::vector<double> xd(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) xd[static_cast<size_t>(i)] = x.get_f64(i);
  Tensor y(x.dtype(), {regions, channels, p.out_h, p.out_w});
  RoiSamples s;
  for (int64_t r = 0; r < regions; ++r) {
    const int64_t image = batch.get_i64(r);
    if (image < 0 || image >= x.shape()[0]) {
      fail_user("{}: batch index {} of region {} is out of range for {} images", node.describe(), image, r, x.shape()[0]);
    }
    const double roi[4] = {rois.get_f64(r * 4), rois.get_f64(r * 4 + 1), rois.get_f64(r * 4 + 2), rois.get_f64(r * 4 + 3)};
    roi_samples(p, roi, height, width, s);
    for (int64_t c = 0; c < channels; ++c) {
      const double* plane = xd.data() + (image * channels + c) * height * width;
      for (int64_t bin = 0; bin < p.out_h * p.out_w; ++bin) {
        double value = 0;
        for (int64_t k = 0; k < s.per_bin; ++k) {
          const RoiSample& t = s.samples[static_cast<size_t>(bin * s.per_bin + k)];
          if (!p.max_mode) {
            value += t.w[0] * plane[t.at[0]] + t.w[1] * plane[t.at[1]] + t.w[2] * plane[t.at[2]] + t.w[3] * plane[t.at[3]];
            continue;
          }
          const double v = std::max({t.w[0] * plane[t.at[0]], t.w[1] * plane[t.at[1]], t.w[2] * plane[t.at[2]],
                                     t.w[3] * plane[t.at[3]]});
          value = k == 0 ? v : std::max(value, v);
        }
        y.set_f64((r * channels + c) * p.out_h * p.out_w + bin, p.max_mode ? value : value / s.count);
      }
    }
  }
  return {y};
}

}  // namespace

void register_detection_kernels(KernelTable& table) {
  table["NonMaxSuppression"] = non_max_suppression_kernel;
  table["RoiAlign"] = roi_align_kernel;
}

}  // namespace tilefuse::reference
