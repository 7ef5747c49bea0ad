#include "runtime/roi_align_call.h"

#include <algorithm>

#include "ir/error.h"
#include "reference/roi_align_samples.h"

namespace tilefuse::runtime {

namespace {

// One sample with f32 weights.
struct Sample {
  int64_t at[4];
  float w[4];
};

class RoiAlignCall : public LibraryCall {
 public:
  explicit RoiAlignCall(const Node& node) : node_(node), params_(reference::RoiAlignParams::of(node)) {}

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    const Tensor &x = in[0], &rois = in[1], &batch = in[2];
    Tensor& out = outs[0];
    if (!out.defined()) return;
    if (x.rank() != 4 || rois.rank() != 2 || rois.shape()[1] != 4 || batch.rank() != 1 ||
        batch.shape()[0] != rois.shape()[0]) {
      fail_user("{}: input {}, rois {} and batch_indices {} must be [N, C, H, W], [rois, 4] and [rois]",
                node_.describe(), x.summary(), rois.summary(), batch.summary());
    }
    const int64_t regions = rois.shape()[0], bins = params_.out_h * params_.out_w;
    if (out.numel() != regions * x.shape()[1] * bins) {
      fail_user("{}: {} regions of {} do not fill the planned output {}", node_.describe(), regions, x.summary(),
                out.summary());
    }
    for (int64_t r = 0; r < regions; ++r) {  // checked before any worker starts
      const int64_t image = batch.data<int64_t>()[r];
      if (image < 0 || image >= x.shape()[0]) {
        fail_user("{}: batch index {} of region {} is out of range for {} images", node_.describe(), image, r,
                  x.shape()[0]);
      }
    }
    team.run(regions, [&](int, int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) pool_region(x, rois, batch, out, r);
    });
  }

 private:
  void pool_region(const Tensor& x, const Tensor& rois, const Tensor& batch, Tensor& out, int64_t r) const {
    thread_local reference::RoiSamples geometry;
    thread_local std::vector<Sample> samples;
    const int64_t channels = x.shape()[1], height = x.shape()[2], width = x.shape()[3];
    const float* roi = rois.data<float>() + r * 4;
    const double coordinates[4] = {roi[0], roi[1], roi[2], roi[3]};
    reference::roi_samples(params_, coordinates, height, width, geometry);
    samples.resize(geometry.samples.size());
    for (size_t k = 0; k < samples.size(); ++k) {
      const reference::RoiSample& g = geometry.samples[k];
      samples[k] = {{g.at[0], g.at[1], g.at[2], g.at[3]},
                    {static_cast<float>(g.w[0]), static_cast<float>(g.w[1]), static_cast<float>(g.w[2]),
                     static_cast<float>(g.w[3])}};
    }
    const int64_t bins = params_.out_h * params_.out_w, per_bin = geometry.per_bin;
    const auto inverse_count = static_cast<float>(1.0 / geometry.count);
    const int64_t image = batch.data<int64_t>()[r];
    for (int64_t c = 0; c < channels; ++c) {
      const float* plane = x.data<float>() + (image * channels + c) * height * width;
      float* o = out.data<float>() + (r * channels + c) * bins;
      for (int64_t bin = 0; bin < bins; ++bin) {
        const Sample* s = samples.data() + bin * per_bin;
        float value = 0;
        for (int64_t k = 0; k < per_bin; ++k) {
          const float a = s[k].w[0] * plane[s[k].at[0]], b = s[k].w[1] * plane[s[k].at[1]];
          const float c2 = s[k].w[2] * plane[s[k].at[2]], d = s[k].w[3] * plane[s[k].at[3]];
          if (!params_.max_mode) {
            value += (a + b) + (c2 + d);
          } else {
            const float v = std::max({a, b, c2, d});
            value = k == 0 ? v : std::max(value, v);
          }
        }
        o[bin] = params_.max_mode ? value : value * inverse_count;
      }
    }
  }

  const Node& node_;
  reference::RoiAlignParams params_;
};

}  // namespace

bool roi_align_call_supports(const Node& node) {
  return node.op == "RoiAlign" && node.inputs.size() == 3 && node.input(0) != nullptr && node.input(1) != nullptr &&
         node.input(2) != nullptr && node.input(0)->dtype == DType::f32 && node.input(1)->dtype == DType::f32 &&
         node.input(2)->dtype == DType::i64;
}

std::unique_ptr<LibraryCall> prepare_roi_align_call(const Node& node) { return std::make_unique<RoiAlignCall>(node); }

}  // namespace tilefuse::runtime
