#include "runtime/broadcast_call.h"

#include <functional>

#include "ir/error.h"
#include "ir/shape.h"

namespace tilefuse::runtime {

namespace {

// Element strides of `x` right-aligned onto `out`: 0 on axes it broadcasts (size 1 or absent).
std::vector<int64_t> broadcast_strides(const Node& node, const Tensor& x, const std::vector<int64_t>& out) {
  if (x.rank() > static_cast<int64_t>(out.size())) {
    fail_user("{}: operand {} has more axes than the planned output {}", node.describe(), x.summary(),
              dims_to_string(out));
  }
  std::vector<int64_t> strides(out.size(), 0);
  const std::vector<int64_t> own = contiguous_strides(x.shape());
  const size_t offset = out.size() - x.shape().size();
  for (size_t d = 0; d < x.shape().size(); ++d) {
    const int64_t n = x.shape()[d];
    if (n == out[offset + d]) {
      strides[offset + d] = n == 1 ? 0 : own[d];
    } else if (n != 1) {
      fail_user("{}: operand {} does not broadcast to the planned output {} (axis {} is {}, not 1 or {})",
                node.describe(), x.summary(), dims_to_string(out), offset + d, n, out[offset + d]);
    }
  }
  return strides;
}

// y[i] = op(a[i * sa], b[i * sb]) for i < n, where each stride is 0 or 1.
template <typename Op>
void row(const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n, Op op) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = op(a[i], b[i]);
  } else if (sa == 1) {
    const float bv = *b;
    for (int64_t i = 0; i < n; ++i) y[i] = op(a[i], bv);
  } else if (sb == 1) {
    const float av = *a;
    for (int64_t i = 0; i < n; ++i) y[i] = op(av, b[i]);
  } else {
    const float v = op(*a, *b);
    for (int64_t i = 0; i < n; ++i) y[i] = v;
  }
}

template <typename Op>
void compute(ThreadTeam& team, const Tensor& a, const std::vector<int64_t>& sa, const Tensor& b,
             const std::vector<int64_t>& sb, Tensor& out, Op op) {
  if (out.numel() == 0) return;
  const std::vector<int64_t>& shape = out.shape();
  const int64_t width = shape.empty() ? 1 : shape.back();
  const int64_t rows = out.numel() / width;
  const int64_t inner_a = shape.empty() ? 0 : sa.back(), inner_b = shape.empty() ? 0 : sb.back();
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* py = out.data<float>();
  team.run(rows, [&](int, int64_t first, int64_t end) {
    for (int64_t r = first; r < end; ++r) {
      int64_t oa = 0, ob = 0, rest = r;
      for (size_t d = shape.size() - 1; d-- > 0;) {
        const int64_t i = rest % shape[d];
        rest /= shape[d];
        oa += i * sa[d], ob += i * sb[d];
      }
      row(pa + oa, inner_a, pb + ob, inner_b, py + r * width, width, op);
    }
  });
}

class BroadcastCall : public LibraryCall {
 public:
  explicit BroadcastCall(const Node& node) : node_(node) {}

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    Tensor& out = outs[0];
    if (!out.defined()) return;
    const std::vector<int64_t> sa = broadcast_strides(node_, in[0], out.shape());
    const std::vector<int64_t> sb = broadcast_strides(node_, in[1], out.shape());
    const std::string& op = node_.op;
    if (op == "Add") return compute(team, in[0], sa, in[1], sb, out, std::plus<float>());
    if (op == "Sub") return compute(team, in[0], sa, in[1], sb, out, std::minus<float>());
    if (op == "Mul") return compute(team, in[0], sa, in[1], sb, out, std::multiplies<float>());
    compute(team, in[0], sa, in[1], sb, out, std::divides<float>());
  }

 private:
  const Node& node_;
};

}  // namespace

bool broadcast_call_supports(const Node& node) {
  const bool arithmetic = node.op == "Add" || node.op == "Sub" || node.op == "Mul" || node.op == "Div";
  if (!arithmetic || node.inputs.size() != 2 || node.input(0) == nullptr || node.input(1) == nullptr) return false;
  return node.input(0)->dtype == DType::f32 && node.input(1)->dtype == DType::f32 && node.outputs[0]->dtype == DType::f32;
}

std::unique_ptr<LibraryCall> prepare_broadcast_call(const Node& node) { return std::make_unique<BroadcastCall>(node); }

}  // namespace tilefuse::runtime
