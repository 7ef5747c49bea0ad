// The recurrent ops' layout 1 ([batch, seq, ..] inputs, outputs and states) is layout 0 with the
// first two axes swapped: RNN, GRU and LSTM, bidirectional, with initial states (which the
// kernel once read in layout 0's order whatever the layout) and sequence lengths.
#include <gtest/gtest.h>

#include "reference_test_util.h"

namespace tilefuse::testing {
namespace {

Tensor values(std::vector<int64_t> shape, int salt) {
  Tensor t(DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, 0.5 * (((i * 37 + salt * 11) % 29) / 14.0 - 1.0));
  return t;
}

// A [d0, d1, rest...] tensor as [d1, d0, rest...].
Tensor swap_first_two(const Tensor& t) {
  std::vector<int64_t> shape = t.shape();
  std::swap(shape[0], shape[1]);
  Tensor out(t.dtype(), shape);
  const int64_t d0 = t.shape()[0], d1 = t.shape()[1], rest = t.numel() / (d0 * d1);
  for (int64_t a = 0; a < d0; ++a) {
    for (int64_t b = 0; b < d1; ++b) {
      for (int64_t r = 0; r < rest; ++r) out.set_f64((b * d0 + a) * rest + r, t.get_f64((a * d1 + b) * rest + r));
    }
  }
  return out;
}

TEST(RecurrentKernels, LayoutOneIsLayoutZeroWithTheFirstAxesSwapped) {
  const int64_t seq = 4, batch = 3, input = 5, hidden = 6, dirs = 2;
  for (const std::string op : {"RNN", "GRU", "LSTM"}) {
    SCOPED_TRACE(op);
    const int64_t gates = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
    const Tensor x = values({seq, batch, input}, 1), h0 = values({dirs, batch, hidden}, 5), c0 = values({dirs, batch, hidden}, 6);
    const Tensor lens = Tensor::from_vector<int32_t>(DType::i32, {batch}, {4, 2, 0});
    std::vector<Tensor> common = {values({dirs, gates * hidden, input}, 2), values({dirs, gates * hidden, hidden}, 3),
                                  values({dirs, 2 * gates * hidden}, 4), lens};
    std::vector<Tensor> zero = {x}, one = {swap_first_two(x)};
    zero.insert(zero.end(), common.begin(), common.end());
    one.insert(one.end(), common.begin(), common.end());
    zero.push_back(h0), one.push_back(swap_first_two(h0));
    if (op == "LSTM") zero.push_back(c0), one.push_back(swap_first_two(c0));
    const size_t outputs = op == "LSTM" ? 3 : 2;
    AttributeMap attrs = {{"hidden_size", hidden}, {"direction", std::string("bidirectional")}};
    const std::vector<Tensor> want = run_node(op, zero, attrs, outputs);
    attrs["layout"] = int64_t{1};
    const std::vector<Tensor> got = run_node(op, one, attrs, outputs);
    // Y: [seq, dirs, batch, H] against [batch, seq, dirs, H]; states [dirs, batch, H] against [batch, dirs, H].
    Tensor y = Tensor(DType::f32, {seq, dirs, batch, hidden});
    for (int64_t t = 0; t < seq; ++t) {
      for (int64_t d = 0; d < dirs; ++d) {
        for (int64_t b = 0; b < batch; ++b) {
          for (int64_t j = 0; j < hidden; ++j) {
            y.set_f64(((t * dirs + d) * batch + b) * hidden + j, got[0].get_f64(((b * seq + t) * dirs + d) * hidden + j));
          }
        }
      }
    }
    EXPECT_TRUE(y.same_bytes(want[0])) << "Y";
    for (size_t o = 1; o < outputs; ++o) EXPECT_TRUE(swap_first_two(got[o]).same_bytes(want[o])) << "state " << o;
  }
}

}  // namespace
}  // namespace tilefuse::testing
