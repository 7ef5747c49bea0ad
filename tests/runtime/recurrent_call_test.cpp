// RNN, GRU and LSTM on the GEMM engine against the reference kernel (double, step by step):
// every op, both directions and bidirectional, both layouts, per-batch sequence lengths (one of
// them 0), initial states, biases or none, GRU with and without linear_before_reset, weights as
// inputs or constants (packed when the call is prepared), sizes with SIMD tails, on 1 and 2
// workers, twice into the same outputs; and which nodes it takes.
#include "runtime/recurrent_call.h"

#include <gtest/gtest.h>

#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "runtime/sgemm.h"

namespace tilefuse::runtime {
namespace {

using Ints = std::vector<int64_t>;

Tensor random(Ints shape, int salt, double scale = 0.5) {
  Tensor t(DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, scale * (((i * 37 + salt * 11) % 29) / 14.0 - 1.0));
  return t;
}

struct Case {
  std::string op, direction;
  int64_t layout = 0;
  bool lens = false, states = false, bias = true;
  int64_t linear_before_reset = 0;
  bool constant_weights = false;
};

// A node of `c` on seq 5, batch 3, input 7, hidden 17, with its inputs.
std::pair<Node*, std::vector<Tensor>> recurrent(Graph& g, const Case& c) {
  const int64_t seq = 5, batch = 3, input = 7, hidden = 17, dirs = c.direction == "bidirectional" ? 2 : 1;
  const int64_t gates = c.op == "LSTM" ? 4 : c.op == "GRU" ? 3 : 1;
  std::vector<Tensor> ins = {random(c.layout ? Ints{batch, seq, input} : Ints{seq, batch, input}, 1, 1.0),
                             random({dirs, gates * hidden, input}, 2), random({dirs, gates * hidden, hidden}, 3)};
  ins.push_back(c.bias ? random({dirs, 2 * gates * hidden}, 4) : Tensor());
  ins.push_back(c.lens ? Tensor::from_vector<int32_t>(DType::i32, {batch}, {5, 0, 3}) : Tensor());
  const Ints state = c.layout ? Ints{batch, dirs, hidden} : Ints{dirs, batch, hidden};
  ins.push_back(c.states ? random(state, 5) : Tensor());
  if (c.op == "LSTM") ins.push_back(c.states ? random(state, 6) : Tensor());
  std::vector<Value*> values;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!ins[i].defined()) {
      values.push_back(nullptr);
      continue;
    }
    if (c.constant_weights && (i == 1 || i == 2)) {  // packed once when the call is prepared
      values.push_back(g.add_constant("in" + std::to_string(i), ins[i]));
      continue;
    }
    Shape shape;
    for (int64_t d : ins[i].shape()) shape.push_back(Dim(d));
    values.push_back(g.add_input("in" + std::to_string(i), ins[i].dtype(), shape));
  }
  std::vector<std::string> outputs = {"y", "y_h"};
  if (c.op == "LSTM") outputs.push_back("y_c");
  AttributeMap attrs = {{"hidden_size", hidden}, {"direction", c.direction}, {"layout", c.layout}};
  if (c.op == "GRU") attrs["linear_before_reset"] = c.linear_before_reset;
  Node* node = g.add_node(c.op, "rnn", values, outputs, attrs);
  g.infer_shapes();
  return {node, ins};
}

TEST(RecurrentCall, MatchesTheReference) {
  std::vector<Case> cases;
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    for (const char* direction : {"forward", "reverse", "bidirectional"}) {
      cases.push_back({op, direction});
      cases.push_back({op, direction, 1, true, true});
      cases.push_back({op, direction, 0, true, false, false, 1});
      cases.push_back({op, direction, 0, true, true, true, 0, true});
      cases.push_back({op, direction, 1, false, false, true, 1, true});
    }
  }
  cases.push_back({"GRU", "bidirectional", 1, true, true, true, 1});
  if (!own_gemm_engine()) GTEST_SKIP() << "no AVX2 or AVX-512 here: the reference kernel runs these";
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op + " " + c.direction + " layout " + std::to_string(c.layout) + (c.lens ? " lens" : "") +
                 (c.states ? " states" : "") + (c.bias ? " bias" : "") + " lbr " + std::to_string(c.linear_before_reset) +
                 (c.constant_weights ? " packed" : ""));
    Graph g;
    auto [node, ins] = recurrent(g, c);
    ASSERT_TRUE(recurrent_call_supports(*node));
    const std::vector<Tensor> want = reference::evaluate_node(*node, ins);
    std::unique_ptr<LibraryCall> call = prepare_recurrent_call(*node, default_blocking(48 << 10, 1 << 20));
    for (int workers : {1, 2}) {
      ThreadTeam team(workers);
      std::vector<Tensor> got;
      for (const Tensor& w : want) got.emplace_back(DType::f32, w.shape());
      for (int run = 0; run < 2; ++run) call->run(team, ins, got);  // a second run into the same outputs
      for (size_t o = 0; o < want.size(); ++o) {
        const CompareResult r = compare_tensors(got[o], want[o], {1e-5, 1e-5});
        EXPECT_TRUE(r.ok) << "output " << o << " on " << workers << ": " << r.message;
      }
    }
  }
}

// A sequence of no steps outputs nothing and keeps the initial states, as the reference does.
TEST(RecurrentCall, AnEmptySequenceKeepsTheInitialStates) {
  if (!own_gemm_engine()) GTEST_SKIP() << "no AVX2 or AVX-512 here";
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(0), Dim(2), Dim(3)});
  Value* w = g.add_input("w", DType::f32, {Dim(1), Dim(16), Dim(3)});
  Value* r = g.add_input("r", DType::f32, {Dim(1), Dim(16), Dim(4)});
  Value* h0 = g.add_input("h0", DType::f32, {Dim(1), Dim(2), Dim(4)});
  Value* c0 = g.add_input("c0", DType::f32, {Dim(1), Dim(2), Dim(4)});
  Node* node = g.add_node("LSTM", "lstm", {x, w, r, nullptr, nullptr, h0, c0}, {"y", "y_h", "y_c"}, {{"hidden_size", int64_t{4}}});
  g.infer_shapes();
  const std::vector<Tensor> ins = {random({0, 2, 3}, 1), random({1, 16, 3}, 2), random({1, 16, 4}, 3), Tensor(), Tensor(),
                                   random({1, 2, 4}, 4), random({1, 2, 4}, 5)};
  const std::vector<Tensor> want = reference::evaluate_node(*node, ins);
  ThreadTeam team(2);
  std::vector<Tensor> got;
  for (const Tensor& t : want) got.emplace_back(DType::f32, t.shape());
  prepare_recurrent_call(*node, default_blocking(48 << 10, 1 << 20))->run(team, ins, got);
  for (size_t o = 0; o < want.size(); ++o) EXPECT_TRUE(got[o].same_bytes(want[o])) << "output " << o;
}

TEST(RecurrentCall, LeavesOtherActivationsClipPeepholesAndF64) {
  Graph g;
  auto [node, ins] = recurrent(g, {"LSTM", "forward"});
  EXPECT_TRUE(recurrent_call_supports(*node));
  node->attrs["activations"] = std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  EXPECT_TRUE(recurrent_call_supports(*node));
  node->attrs["activations"] = std::vector<std::string>{"HardSigmoid", "Tanh", "Tanh"};
  EXPECT_FALSE(recurrent_call_supports(*node));
  node->attrs.erase("activations");
  node->attrs["clip"] = 3.0;
  EXPECT_FALSE(recurrent_call_supports(*node));
  node->attrs.erase("clip");
  node->attrs["input_forget"] = int64_t{1};
  EXPECT_FALSE(recurrent_call_supports(*node));
  Graph f64;
  Value* x = f64.add_input("x", DType::f64, {Dim(2), Dim(1), Dim(3)});
  Value* w = f64.add_input("w", DType::f64, {Dim(1), Dim(4), Dim(3)});
  Value* r = f64.add_input("r", DType::f64, {Dim(1), Dim(4), Dim(4)});
  Node* rnn = f64.add_node("RNN", "rnn", {x, w, r}, {"y"}, {{"hidden_size", int64_t{4}}});
  EXPECT_FALSE(recurrent_call_supports(*rnn));
}

}  // namespace
}  // namespace tilefuse::runtime
