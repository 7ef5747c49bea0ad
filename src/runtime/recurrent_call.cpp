#include "runtime/recurrent_call.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ir/error.h"
#include "runtime/vector_clones.h"
#include "runtime/vectorisable_math.h"

namespace tilefuse::runtime {

namespace {

enum class Cell { rnn, gru, lstm };

Cell cell_of(const std::string& op) { return op == "LSTM" ? Cell::lstm : op == "GRU" ? Cell::gru : Cell::rnn; }

std::vector<std::string> default_activations(const std::string& op) {
  if (op == "LSTM") return {"Sigmoid", "Tanh", "Tanh"};
  if (op == "GRU") return {"Sigmoid", "Tanh"};
  return {"Tanh"};
}

// Sizes of one run, from the input's shape and the layout.
struct Steps {
  int64_t seq = 0, batch = 0, input = 0;
  bool batch_first = false;
  // Row of (t, b) in X, in the input products' matrix and in Y's [.., H] rows for direction d.
  int64_t row(int64_t t, int64_t b) const { return batch_first ? b * seq + t : t * batch + b; }
  int64_t y_row(int64_t t, int64_t b, int64_t d, int64_t dirs) const {
    return batch_first ? (b * seq + t) * dirs + d : (t * dirs + d) * batch + b;
  }
  int64_t state_row(int64_t b, int64_t d, int64_t dirs) const { return batch_first ? b * dirs + d : d * batch + b; }
};

class RecurrentCall : public LibraryCall {
 public:
  RecurrentCall(const Node& node, const GemmBlocking& blocking)
      : cell_(cell_of(node.op)), blocking_(blocking), gates_(cell_ == Cell::lstm ? 4 : cell_ == Cell::gru ? 3 : 1),
        hidden_(node.attr_int("hidden_size", 0)) {
    const std::string direction = node.attr_string("direction", "forward");
    dirs_ = direction == "bidirectional" ? 2 : 1;
    reverse_first_ = direction == "reverse";
    batch_first_ = node.attr_int("layout", 0) != 0;
    linear_before_reset_ = node.attr_int("linear_before_reset", 0) != 0;
    pack_weights(node);
  }

  size_t packed_bytes() const override { return total_bytes(packed_); }
  std::vector<const PackedOperand*> packed_operands() const override { return operands_of(packed_); }

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    const Tensor& x = in[0];
    Steps s{x.shape()[batch_first_ ? 1 : 0], x.shape()[batch_first_ ? 0 : 1], x.shape()[2], batch_first_};
    lens_.assign(static_cast<size_t>(s.batch), s.seq);
    if (in.size() > 4 && in[4].defined()) {
      for (int64_t b = 0; b < s.batch; ++b) lens_[b] = std::clamp<int64_t>(in[4].get_i64(b), 0, s.seq);
    }
    for (Tensor& out : outs) {
      if (out.defined()) std::fill_n(out.data<float>(), out.numel(), 0.0f);
    }
    if (s.batch == 0) return;
    for (int64_t d = 0; d < dirs_; ++d) direction(team, in, outs, s, d);
  }

 private:
  // Constant W and R packed once, per direction W^T, R^T and (GRU) R_h^T: each step multiplies
  // by R^T, and packing it in every step's product cost as much as the product.
  void pack_weights(const Node& node) {
    const Value* w = node.input(1);
    const Value* r = node.input(2);
    if (!w->constant || !r->constant) return;
    const int64_t H = hidden_, GH = gates_ * hidden_, input = w->constant->shape()[2];
    for (int64_t d = 0; d < dirs_; ++d) {
      packed_.push_back(PackedOperand::pack_b({w->constant->data<float>() + d * GH * input, 1, input}, input, GH));
      const float* r_d = r->constant->data<float>() + d * GH * H;
      packed_.push_back(PackedOperand::pack_b({r_d, 1, H}, H, GH));
      if (cell_ == Cell::gru) packed_.push_back(PackedOperand::pack_b({r_d + 2 * H * H, 1, H}, H, H));
    }
  }

  // The packed operand `which` (0 W^T, 1 R^T, 2 R_h^T) of direction d, or null.
  const PackedOperand* packed(int64_t d, int which) const {
    const size_t per_direction = cell_ == Cell::gru ? 3 : 2;
    return packed_.empty() ? nullptr : &packed_[static_cast<size_t>(d) * per_direction + static_cast<size_t>(which)];
  }

  const float* optional(const std::vector<Tensor>& in, size_t i) const {
    return in.size() > i && in[i].defined() ? in[i].data<float>() : nullptr;
  }

  void direction(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs, const Steps& s, int64_t d) {
    const int64_t H = hidden_, GH = gates_ * hidden_;
    const float* w = in[1].data<float>() + d * GH * s.input;
    const float* r = in[2].data<float>() + d * GH * H;
    const float* bias = optional(in, 3);
    const float* wb = bias ? bias + d * 2 * GH : nullptr;
    const float* rb = bias ? wb + GH : nullptr;
    // The input's products for every step, with W's bias and (but for GRU's h gate) R's.
    summed_bias_.assign(static_cast<size_t>(GH), 0.0f);
    for (int64_t j = 0; wb != nullptr && j < GH; ++j) summed_bias_[j] = wb[j] + (cell_ == Cell::gru && j >= 2 * H ? 0.0f : rb[j]);
    xw_.resize(static_cast<size_t>(s.seq * s.batch * GH));
    GemmProblem inputs{.m = s.seq * s.batch, .n = GH, .k = s.input};
    inputs.a.view = {in[0].data<float>(), s.input, 1};
    inputs.b.view = {w, 1, s.input};  // W is [GH, input]: its transpose is the product's B
    inputs.b.packed = packed(d, 0);
    inputs.c = xw_.data(), inputs.ldc = GH, inputs.col_bias = summed_bias_.data();
    if (s.seq > 0) sgemm(team, {&inputs, 1}, blocking_);  // an empty sequence leaves the initial states

    h_.assign(static_cast<size_t>(s.batch * H), 0.0f);
    c_.assign(h_.size(), 0.0f);
    const float* h0 = optional(in, 5);
    const float* c0 = cell_ == Cell::lstm ? optional(in, 6) : nullptr;
    for (int64_t b = 0; b < s.batch; ++b) {
      if (h0) std::copy_n(h0 + s.state_row(b, d, dirs_) * H, H, h_.begin() + b * H);
      if (c0) std::copy_n(c0 + s.state_row(b, d, dirs_) * H, H, c_.begin() + b * H);
    }
    hr_.resize(static_cast<size_t>(s.batch * GH));
    const bool reverse = reverse_first_ || d == 1;
    float* y = outs[0].defined() ? outs[0].data<float>() : nullptr;
    for (int64_t step = 0; step < s.seq; ++step) {
      GemmProblem state{.m = s.batch, .n = GH, .k = H};  // hr = h R^T
      state.a.view = {h_.data(), H, 1};
      state.b.view = {r, 1, H};
      state.b.packed = packed(d, 1);
      state.c = hr_.data(), state.ldc = GH;
      sgemm(team, {&state, 1}, blocking_);
      if (cell_ == Cell::gru) {
        gru_step(team, s, step, reverse, d, r, rb);
      } else {
        cell_step(team, s, step, reverse);
      }
      for (int64_t b = 0; y != nullptr && b < s.batch; ++b) {
        if (step < lens_[b]) std::copy_n(h_.begin() + b * H, H, y + s.y_row(time_of(step, reverse, b), b, d, dirs_) * H);
      }
    }
    for (size_t o = 1; o < outs.size() && o < 3; ++o) {
      if (!outs[o].defined()) continue;
      const std::vector<float>& state = o == 1 ? h_ : c_;
      for (int64_t b = 0; b < s.batch; ++b) {
        std::copy_n(state.begin() + b * H, H, outs[o].data<float>() + s.state_row(b, d, dirs_) * H);
      }
    }
  }

  // The time of batch row b at this step (which runs backwards from the row's end in reverse).
  int64_t time_of(int64_t step, bool reverse, int64_t b) const { return reverse ? lens_[b] - 1 - step : step; }

  // The xw row of batch row b at this step, or null where the row's sequence has ended.
  const float* xw_row(const Steps& s, int64_t step, bool reverse, int64_t b) const {
    if (step >= lens_[b]) return nullptr;
    return xw_.data() + s.row(time_of(step, reverse, b), b) * gates_ * hidden_;
  }

  // RNN (tanh) and LSTM (gates i, o, f, c) for every running batch row, the hidden units
  // split over the team.
  void cell_step(ThreadTeam& team, const Steps& s, int64_t step, bool reverse) {
    team.run(hidden_, [&](int, int64_t j0, int64_t j1) { cell_units(s, step, reverse, j0, j1); });
  }

  TF_VECTOR_CLONES void cell_units(const Steps& s, int64_t step, bool reverse, int64_t j0, int64_t j1) {
    const int64_t H = hidden_;
    for (int64_t b = 0; b < s.batch; ++b) {
      const float* xw = xw_row(s, step, reverse, b);
      if (xw == nullptr) continue;
      const float* hr = hr_.data() + b * gates_ * H;
      float* h = h_.data() + b * H;
      float* c = c_.data() + b * H;
      if (cell_ == Cell::rnn) {
#pragma GCC ivdep
        for (int64_t j = j0; j < j1; ++j) h[j] = vmath::tanh(xw[j] + hr[j]);
        continue;
      }
#pragma GCC ivdep
      for (int64_t j = j0; j < j1; ++j) {
        const float i = vmath::sigmoid(xw[j] + hr[j]), o = vmath::sigmoid(xw[H + j] + hr[H + j]);
        const float f = vmath::sigmoid(xw[2 * H + j] + hr[2 * H + j]), g = vmath::tanh(xw[3 * H + j] + hr[3 * H + j]);
        c[j] = f * c[j] + i * g;
        h[j] = o * vmath::tanh(c[j]);
      }
    }
  }

  // GRU (gates z, r, h): without linear_before_reset the candidate multiplies (r . h) by R_h,
  // a second product of the step, so every row's reset gate comes first.
  void gru_step(ThreadTeam& team, const Steps& s, int64_t step, bool reverse, int64_t d, const float* r, const float* rb) {
    const int64_t H = hidden_, GH = gates_ * H;
    gate_.resize(static_cast<size_t>(s.batch * 2 * H));  // z and r per row
    reset_h_.assign(static_cast<size_t>(s.batch * H), 0.0f);
    team.run(H, [&](int, int64_t j0, int64_t j1) { gru_gates(s, step, reverse, j0, j1); });
    if (!linear_before_reset_) {  // rh = (r . h) R_h^T, into the h gate's columns of hr
      GemmProblem reset{.m = s.batch, .n = H, .k = H};
      reset.a.view = {reset_h_.data(), H, 1};
      reset.b.view = {r + 2 * H * H, 1, H};
      reset.b.packed = packed(d, 2);
      reset.c = hr_.data() + 2 * H, reset.ldc = GH;
      sgemm(team, {&reset, 1}, blocking_);
    }
    team.run(H, [&](int, int64_t j0, int64_t j1) { gru_candidates(s, step, reverse, rb, j0, j1); });
  }

  // Units [j0, j1) of every running row: the update and reset gates, and r . h.
  TF_VECTOR_CLONES void gru_gates(const Steps& s, int64_t step, bool reverse, int64_t j0, int64_t j1) {
    const int64_t H = hidden_, GH = gates_ * H;
    for (int64_t b = 0; b < s.batch; ++b) {
      const float* xw = xw_row(s, step, reverse, b);
      if (xw == nullptr) continue;
      const float* hr = hr_.data() + b * GH;
      float* z = gate_.data() + b * 2 * H;
#pragma GCC ivdep
      for (int64_t j = j0; j < j1; ++j) {
        z[j] = vmath::sigmoid(xw[j] + hr[j]);
        z[H + j] = vmath::sigmoid(xw[H + j] + hr[H + j]);
        reset_h_[b * H + j] = z[H + j] * h_[b * H + j];
      }
    }
  }

  // Units [j0, j1) of every running row: the candidate and the new state.
  TF_VECTOR_CLONES void gru_candidates(const Steps& s, int64_t step, bool reverse, const float* rb, int64_t j0, int64_t j1) {
    const int64_t H = hidden_, GH = gates_ * H;
    for (int64_t b = 0; b < s.batch; ++b) {
      const float* xw = xw_row(s, step, reverse, b);
      if (xw == nullptr) continue;
      const float* hr = hr_.data() + b * GH;
      const float* z = gate_.data() + b * 2 * H;
      float* h = h_.data() + b * H;
#pragma GCC ivdep
      for (int64_t j = j0; j < j1; ++j) {
        const float rh = hr[2 * H + j] + (rb ? rb[2 * H + j] : 0.0f);
        const float candidate = vmath::tanh(xw[2 * H + j] + (linear_before_reset_ ? z[H + j] * rh : rh));
        h[j] = (1.0f - z[j]) * candidate + z[j] * h[j];
      }
    }
  }

  Cell cell_;
  GemmBlocking blocking_;
  int64_t gates_, hidden_, dirs_ = 1;
  bool reverse_first_ = false, batch_first_ = false, linear_before_reset_ = false;
  std::vector<PackedOperand> packed_;
  // Buffers of the run, kept (with their capacity) from run to run.
  std::vector<int64_t> lens_;
  std::vector<float> summed_bias_, xw_, hr_, h_, c_, gate_, reset_h_;
};

}  // namespace

bool recurrent_call_supports(const Node& node) {
  if (node.op != "RNN" && node.op != "GRU" && node.op != "LSTM") return false;
  if (!own_gemm_engine() || node.attr_int("hidden_size", 0) <= 0 || node.attr_float("clip", 0.0) != 0.0) return false;
  if (node.op == "LSTM" && (node.has_input(7) || node.attr_int("input_forget", 0) != 0)) return false;
  for (size_t i : {0, 1, 2, 3, 5, 6}) {
    if (node.has_input(i) && node.input(i)->dtype != DType::f32) return false;
  }
  if (node.input(0) == nullptr || node.input(0)->rank() != 3) return false;
  if (auto it = node.attrs.find("activations"); it != node.attrs.end()) {
    const auto& names = std::get<std::vector<std::string>>(it->second);
    const std::vector<std::string> defaults = default_activations(node.op);
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] != defaults[i % defaults.size()]) return false;
    }
  }
  return true;
}

std::unique_ptr<LibraryCall> prepare_recurrent_call(const Node& node, const GemmBlocking& blocking) {
  return std::make_unique<RecurrentCall>(node, blocking);
}

}  // namespace tilefuse::runtime
