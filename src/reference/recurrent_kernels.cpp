// RNN, GRU and LSTM, step by step in double, as the ONNX operator definitions write them:
// gates in the order of W (LSTM i, o, f, c; GRU z, r, h), optional bias, per-batch sequence
// lengths (steps past a sequence's end leave its state alone and output zeros), initial states,
// LSTM peepholes and input_forget, gate clipping, custom activations, both directions, both
// layouts.
#include <algorithm>
#include <cmath>
#include <functional>

#include "reference/kernel_args.h"
#include "reference/kernel_table.h"

namespace tilefuse::reference {

namespace {

using Activation = std::function<double(double)>;

// The activations the ops name, with the alpha/beta they consume (in order) from the node's lists.
Activation make_activation(const Node& node, const std::string& name, const std::vector<double>& alphas,
                           const std::vector<double>& betas, size_t& ai, size_t& bi) {
  auto take = [](const std::vector<double>& v, size_t& i, double fallback) { return i < v.size() ? v[i++] : fallback; };
  if (name == "Sigmoid") return [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  if (name == "Tanh") return [](double x) { return std::tanh(x); };
  if (name == "Relu") return [](double x) { return std::max(0.0, x); };
  if (name == "Softsign") return [](double x) { return x / (1.0 + std::abs(x)); };
  if (name == "Softplus") return [](double x) { return std::log1p(std::exp(x)); };
  if (name == "LeakyRelu") {
    double a = take(alphas, ai, 0.01);
    return [a](double x) { return x < 0 ? a * x : x; };
  }
  if (name == "ThresholdedRelu") {
    double a = take(alphas, ai, 1.0);
    return [a](double x) { return x > a ? x : 0.0; };
  }
  if (name == "Elu") {
    double a = take(alphas, ai, 1.0);
    return [a](double x) { return x < 0 ? a * (std::exp(x) - 1) : x; };
  }
  if (name == "HardSigmoid" || name == "Affine" || name == "ScaledTanh") {
    double a = take(alphas, ai, name == "HardSigmoid" ? 0.2 : 1.0), b = take(betas, bi, name == "HardSigmoid" ? 0.5 : 0.0);
    if (name == "HardSigmoid") return [a, b](double x) { return std::clamp(a * x + b, 0.0, 1.0); };
    if (name == "Affine") return [a, b](double x) { return a * x + b; };
    return [a, b](double x) { return a * std::tanh(b * x); };
  }
  fail_user("{}: activation '{}' is not one of the ONNX recurrent activations", node.describe(), name);
}

struct Cell {
  int64_t gates, hidden, input, batch, seq, dirs;
  bool batch_first;
  std::vector<Activation> f;  // per direction: the op's activations (f, g[, h])
};

std::vector<double> doubles(const Tensor* t) {
  std::vector<double> v;
  if (t == nullptr) return v;
  v.resize(static_cast<size_t>(t->numel()));
  for (int64_t i = 0; i < t->numel(); ++i) v[i] = t->get_f64(i);
  return v;
}

// out[j] += sum_k a[k] * m[j][k] for j < rows (m row-major with `cols` columns).
void matvec(const double* a, const double* m, int64_t rows, int64_t cols, double* out) {
  for (int64_t j = 0; j < rows; ++j) {
    double s = 0;
    for (int64_t k = 0; k < cols; ++k) s += a[k] * m[j * cols + k];
    out[j] += s;
  }
}

std::vector<Tensor> recurrent(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  const std::string& op = node.op;
  Cell c{};
  c.gates = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
  c.hidden = node.attr_int("hidden_size", 0);
  c.batch_first = node.attr_int("layout", 0) != 0;
  c.seq = x.shape()[c.batch_first ? 1 : 0], c.batch = x.shape()[c.batch_first ? 0 : 1], c.input = x.shape()[2];
  const std::string direction = node.attr_string("direction", "forward");
  c.dirs = direction == "bidirectional" ? 2 : 1;
  const size_t per_dir = op == "LSTM" ? 3 : op == "GRU" ? 2 : 1;
  std::vector<std::string> names;
  if (auto it = node.attrs.find("activations"); it != node.attrs.end()) {
    names = std::get<std::vector<std::string>>(it->second);
  }
  const std::vector<std::string> defaults = op == "LSTM" ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                            : op == "GRU" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                          : std::vector<std::string>{"Tanh"};
  if (names.empty()) {
    for (int64_t d = 0; d < c.dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  if (names.size() != per_dir * static_cast<size_t>(c.dirs)) {
    fail_user("{}: attribute 'activations' has {} entries; it needs {} per direction", node.describe(), names.size(), per_dir);
  }
  const std::vector<double> alphas = node.attr_floats("activation_alpha"), betas = node.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  for (const std::string& n : names) c.f.push_back(make_activation(node, n, alphas, betas, ai, bi));

  const double clip = node.attr_float("clip", 0.0);
  const bool linear_before_reset = node.attr_int("linear_before_reset", 0) != 0;
  const bool input_forget = node.attr_int("input_forget", 0) != 0;
  const int64_t H = c.hidden, G = c.gates;
  std::vector<double> X = doubles(&x), W = doubles(&required_input(node, in, 1)), R = doubles(&required_input(node, in, 2));
  std::vector<double> B = doubles(optional_input(in, 3)), h0 = doubles(optional_input(in, 5));
  std::vector<double> c0 = op == "LSTM" ? doubles(optional_input(in, 6)) : std::vector<double>{};
  std::vector<double> P = op == "LSTM" ? doubles(optional_input(in, 7)) : std::vector<double>{};
  std::vector<int64_t> lens(static_cast<size_t>(c.batch), c.seq);
  if (const Tensor* sl = optional_input(in, 4)) {
    for (int64_t b = 0; b < c.batch; ++b) lens[b] = std::clamp<int64_t>(sl->get_i64(b), 0, c.seq);
  }
  auto x_at = [&](int64_t t, int64_t b) { return X.data() + (c.batch_first ? (b * c.seq + t) : (t * c.batch + b)) * c.input; };
  // Outputs in layout 0: Y [seq, dirs, batch, H], states [dirs, batch, H]; transposed at the end.
  std::vector<double> Y(static_cast<size_t>(c.seq * c.dirs * c.batch * H), 0.0);
  std::vector<double> Yh(static_cast<size_t>(c.dirs * c.batch * H), 0.0), Yc(Yh.size(), 0.0);
  auto squash = [clip](double v) { return clip > 0 ? std::clamp(v, -clip, clip) : v; };
  for (int64_t d = 0; d < c.dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const double* w = W.data() + d * G * H * c.input;
    const double* r = R.data() + d * G * H * H;
    const Activation& f = c.f[d * per_dir];
    const Activation& g = per_dir > 1 ? c.f[d * per_dir + 1] : f;
    const Activation& h_act = per_dir > 2 ? c.f[d * per_dir + 2] : g;
    for (int64_t b = 0; b < c.batch; ++b) {
      std::vector<double> h(static_cast<size_t>(H), 0.0), cell(static_cast<size_t>(H), 0.0);
      // Initial states are [dirs, batch, H], or [batch, dirs, H] in layout 1.
      const int64_t state_row = c.batch_first ? b * c.dirs + d : d * c.batch + b;
      if (!h0.empty()) std::copy_n(h0.data() + state_row * H, H, h.begin());
      if (!c0.empty()) std::copy_n(c0.data() + state_row * H, H, cell.begin());
      for (int64_t s = 0; s < lens[b]; ++s) {
        const int64_t t = reverse ? lens[b] - 1 - s : s;
        std::vector<double> xw(static_cast<size_t>(G * H), 0.0), hr(static_cast<size_t>(G * H), 0.0);
        matvec(x_at(t, b), w, G * H, c.input, xw.data());
        matvec(h.data(), r, G * H, H, hr.data());
        if (!B.empty()) {
          for (int64_t j = 0; j < G * H; ++j) xw[j] += B[d * 2 * G * H + j], hr[j] += B[d * 2 * G * H + G * H + j];
        }
        std::vector<double> next(static_cast<size_t>(H));
        for (int64_t j = 0; j < H; ++j) {
          if (op == "RNN") {
            next[j] = f(squash(xw[j] + hr[j]));
          } else if (op == "LSTM") {  // gates i, o, f, c
            const double* p = P.empty() ? nullptr : P.data() + d * 3 * H;
            const double i_g = f(squash(xw[j] + hr[j] + (p ? p[j] * cell[j] : 0)));
            const double f_g = input_forget ? 1 - i_g : f(squash(xw[2 * H + j] + hr[2 * H + j] + (p ? p[2 * H + j] * cell[j] : 0)));
            const double c_g = g(squash(xw[3 * H + j] + hr[3 * H + j]));
            cell[j] = f_g * cell[j] + i_g * c_g;
            const double o_g = f(squash(xw[H + j] + hr[H + j] + (p ? p[H + j] * cell[j] : 0)));
            next[j] = o_g * h_act(cell[j]);
          }
        }
        if (op == "GRU") {  // gates z, r, h; the candidate needs every reset gate first
          std::vector<double> z(static_cast<size_t>(H)), rg(static_cast<size_t>(H)), rh(static_cast<size_t>(H), 0.0);
          for (int64_t j = 0; j < H; ++j) z[j] = f(squash(xw[j] + hr[j])), rg[j] = f(squash(xw[H + j] + hr[H + j]));
          if (!linear_before_reset) {  // (r . h) R_h^T + Rb_h
            std::vector<double> reset_h(static_cast<size_t>(H));
            for (int64_t j = 0; j < H; ++j) reset_h[j] = rg[j] * h[j];
            matvec(reset_h.data(), r + 2 * H * H, H, H, rh.data());
            if (!B.empty()) {
              for (int64_t j = 0; j < H; ++j) rh[j] += B[d * 6 * H + 5 * H + j];
            }
          }
          for (int64_t j = 0; j < H; ++j) {
            const double recurrent = linear_before_reset ? rg[j] * hr[2 * H + j] : rh[j];
            const double cand = g(squash(xw[2 * H + j] + recurrent));
            next[j] = (1 - z[j]) * cand + z[j] * h[j];
          }
        }
        h = next;
        std::copy(h.begin(), h.end(), Y.begin() + ((t * c.dirs + d) * c.batch + b) * H);
      }
      std::copy(h.begin(), h.end(), Yh.begin() + (d * c.batch + b) * H);
      std::copy(cell.begin(), cell.end(), Yc.begin() + (d * c.batch + b) * H);
    }
  }
  // Layout 1 wants Y as [batch, seq, dirs, H] and the states as [batch, dirs, H].
  auto tensor = [&](const std::vector<double>& v, std::vector<int64_t> shape0, bool is_y) {
    std::vector<int64_t> shape = shape0;
    if (c.batch_first) shape = is_y ? std::vector<int64_t>{c.batch, c.seq, c.dirs, H} : std::vector<int64_t>{c.batch, c.dirs, H};
    Tensor out(x.dtype(), shape);
    for (int64_t i = 0; i < out.numel(); ++i) {
      int64_t src = i;
      if (c.batch_first && is_y) {  // i = ((b * seq + t) * dirs + d) * H + j
        const int64_t j = i % H, d = (i / H) % c.dirs, t = (i / H / c.dirs) % c.seq, b = i / H / c.dirs / c.seq;
        src = ((t * c.dirs + d) * c.batch + b) * H + j;
      } else if (c.batch_first) {  // i = (b * dirs + d) * H + j
        const int64_t j = i % H, d = (i / H) % c.dirs, b = i / H / c.dirs;
        src = (d * c.batch + b) * H + j;
      }
      out.set_f64(i, v[src]);
    }
    return out;
  };
  std::vector<Tensor> out = {tensor(Y, {c.seq, c.dirs, c.batch, H}, true), tensor(Yh, {c.dirs, c.batch, H}, false)};
  if (op == "LSTM") out.push_back(tensor(Yc, {c.dirs, c.batch, H}, false));
  return out;
}

}  // namespace

void register_recurrent_kernels(KernelTable& table) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) table[op] = recurrent;
}

}  // namespace tilefuse::reference
