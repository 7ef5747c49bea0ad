#include "runtime/cumsum_call.h"

#include <type_traits>

#include "ir/error.h"
#include "reference/integer_math.h"

namespace tilefuse::runtime {

namespace {

struct Lines {
  int64_t n = 0;      // elements along the axis
  int64_t inner = 1;  // elements after it (the stride of the axis)
  bool exclusive = false, reverse = false;
};

// Sums lines [begin, end) of x into y: line l starts at (l / inner) * n * inner + l % inner.
template <typename T>
void sum_lines(const T* x, T* y, const Lines& s, int64_t begin, int64_t end) {
  using A = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  for (int64_t line = begin; line < end; ++line) {
    const int64_t base = (line / s.inner) * s.n * s.inner + line % s.inner;
    A acc = 0;
    for (int64_t k = 0; k < s.n; ++k) {
      const int64_t at = base + (s.reverse ? s.n - 1 - k : k) * s.inner;
      const A v = static_cast<A>(x[at]);
      if (!s.exclusive) acc = reference::wrap_add(acc, v);
      y[at] = static_cast<T>(acc);
      if (s.exclusive) acc = reference::wrap_add(acc, v);
    }
  }
}

class CumSumCall : public LibraryCall {
 public:
  explicit CumSumCall(const Node& node) : node_(node) {}

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    Tensor& y = outs[0];
    if (!y.defined() || y.numel() == 0) return;
    const Tensor& x = in[0];
    if (in[1].numel() != 1) fail_user("{}: axis must be one value, got {}", node_.describe(), in[1].summary());
    int64_t axis = in[1].get_i64(0);
    if (axis < -x.rank() || axis >= x.rank()) {
      fail_user("{}: axis {} is out of range for {} (allowed [{}, {}])", node_.describe(), axis, x.summary(), -x.rank(),
                x.rank() - 1);
    }
    if (axis < 0) axis += x.rank();
    Lines s{x.shape()[axis], 1, node_.attr_int("exclusive", 0) != 0, node_.attr_int("reverse", 0) != 0};
    for (int64_t d = axis + 1; d < x.rank(); ++d) s.inner *= x.shape()[d];
    const int64_t lines = x.numel() / s.n;
    auto over_team = [&](const auto* xp, auto* yp) {
      team.run(lines, [&](int, int64_t begin, int64_t end) { sum_lines(xp, yp, s, begin, end); });
    };
    switch (x.dtype()) {
      case DType::f32: return over_team(x.data<float>(), y.data<float>());
      case DType::f64: return over_team(x.data<double>(), y.data<double>());
      case DType::i32: return over_team(x.data<int32_t>(), y.data<int32_t>());
      case DType::i64: return over_team(x.data<int64_t>(), y.data<int64_t>());
      default: fail_internal("{}: cumsum_call of {}", node_.describe(), dtype_name(x.dtype()));
    }
  }

 private:
  const Node& node_;
};

}  // namespace

bool cumsum_call_supports(const Node& node) {
  if (node.op != "CumSum" || node.inputs.size() < 2 || node.input(1) == nullptr) return false;
  const DType t = node.input(0)->dtype;
  return node.input(0)->rank() > 0 && (t == DType::f32 || t == DType::f64 || t == DType::i32 || t == DType::i64);
}

std::unique_ptr<LibraryCall> prepare_cumsum_call(const Node& node) { return std::make_unique<CumSumCall>(node); }

}  // namespace tilefuse::runtime
