// Broadcasts that only the run's shapes settle, inside kernels. A model exported with a symbol
// per input (an attention mask of `seq` keys added to scores of 16 keys) adds over a dim like
// max(16, seq): inference assumes seq is 1 or that max (Graph::assume_broadcast), each run
// checks it, and the kernel reads the mask with a stride settled at launch, 0 or 1
// (fusion/iteration_space.cpp). Each graph runs fused against the reference with the symbol at
// the other side's size and at 1, in one kernel; shapes that break the rule are refused by name.
#include <gtest/gtest.h>

#include "e2e/fused_vs_reference.h"
#include "ir/error.h"

namespace tilefuse {
namespace {

using e2e::filled;
using e2e::node;
using Case = e2e::GraphCase;

class RunTimeBroadcast : public ::testing::TestWithParam<Case> {};

TEST_P(RunTimeBroadcast, FusedMatchesReference) { e2e::expect_fused_matches_reference(GetParam()); }

// softmax(scores / 4 + mask), scores [N, 2, 8, 16] and mask [N, 1, 1, seq].
Value* masked_softmax(Graph& g) {
  Value* scores = g.add_input("scores", DType::f32, {Dim::symbol("N"), Dim(2), Dim(8), Dim(16)});
  Value* mask = g.add_input("mask", DType::f32, {Dim::symbol("N"), Dim(1), Dim(1), Dim::symbol("seq")});
  Value* scaled = node(g, "Div", {scores, g.add_constant("four", Tensor::scalar_f32(4.0f))});
  return node(g, "Softmax", {node(g, "Add", {scaled, mask})}, {{"axis", int64_t{-1}}});
}

std::map<std::string, Tensor> scores_and_mask(int64_t n, int64_t seq, int salt) {
  return {{"scores", filled({n, 2, 8, 16}, salt)}, {"mask", filled({n, 1, 1, seq}, salt + 1)}};
}

// softmax(scores * 0.125 + mask) over scores [N, 2, s, s] and a mask [N, 1, 1, t]; with
// `scaled_out`, the scaled scores are a graph output too (added first).
Value* scaled_masked_softmax(Graph& g, bool scaled_out) {
  Value* s = g.add_input("scores", DType::f32, {Dim::symbol("N"), Dim(2), Dim::symbol("s"), Dim::symbol("s")});
  Value* m = g.add_input("mask", DType::f32, {Dim::symbol("N"), Dim(1), Dim(1), Dim::symbol("t")});
  Value* scaled = node(g, "Mul", {s, g.add_constant("scale", Tensor::scalar_f32(0.125f))});
  if (scaled_out) g.add_output(scaled);
  return node(g, "Softmax", {node(g, "Add", {scaled, m})}, {{"axis", int64_t{-1}}});
}

std::map<std::string, Tensor> scaled_scores_and_mask(int64_t s, int64_t t) {
  return {{"scores", filled({2, 2, s, s}, 9)}, {"mask", filled({2, 1, 1, t}, 10)}};
}

std::vector<Case> cases() {
  std::vector<Case> out;
  out.push_back({"attention_mask_of_seq_keys",
                 [](Graph& g) {
                   g.add_output(masked_softmax(g));
                   return std::vector<std::map<std::string, Tensor>>{scores_and_mask(3, 16, 1), scores_and_mask(2, 1, 3)};
                 },
                 1, true});
  // GPT-2's dynamic export: scores [N, 2, s, s] scaled, then a mask of t keys added, softmax
  // over max(s, t). The scaled scores are computed over the kernel's domain and never stored;
  // with s = 1 they are themselves the broadcast operand.
  out.push_back({"scaled_scores_then_mask_of_other_length",
                 [](Graph& g) {
                   g.add_output(scaled_masked_softmax(g, false));
                   return std::vector<std::map<std::string, Tensor>>{scaled_scores_and_mask(24, 24), scaled_scores_and_mask(24, 1),
                                                                     scaled_scores_and_mask(1, 24)};
                 },
                 1, true});
  // The same with the scaled scores an output too: they leave in their own shape, which the
  // softmax's domain is not when s = 1 and t = 24.
  out.push_back({"scaled_scores_also_an_output",
                 [](Graph& g) {
                   g.add_output(scaled_masked_softmax(g, true));
                   return std::vector<std::map<std::string, Tensor>>{scaled_scores_and_mask(24, 24), scaled_scores_and_mask(1, 24)};
                 }});
  // Both sides symbolic, each broadcasting in turn along the vectorised axis: [N, s] * [N, t].
  out.push_back({"both_sides_symbolic",
                 [](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim::symbol("N"), Dim::symbol("s")});
                   Value* y = g.add_input("y", DType::f32, {Dim::symbol("N"), Dim::symbol("t")});
                   g.add_output(node(g, "Exp", {node(g, "Tanh", {node(g, "Mul", {x, y})})}));
                   auto run = [](int64_t n, int64_t s, int64_t t) {
                     return std::map<std::string, Tensor>{{"x", filled({n, s}, 5)}, {"y", filled({n, t}, 6)}};
                   };
                   return std::vector<std::map<std::string, Tensor>>{run(3, 40, 40), run(3, 1, 40), run(2, 37, 1)};
                 },
                 1, true});
  // Along an outer axis, with a row reduction after it: [N, r, 24] - [N, q, 1] summed per row.
  out.push_back({"outer_axis_then_row_sum",
                 [](Graph& g) {
                   Value* x = g.add_input("x", DType::f32, {Dim::symbol("N"), Dim::symbol("r"), Dim(24)});
                   Value* c = g.add_input("c", DType::f32, {Dim::symbol("N"), Dim::symbol("q"), Dim(1)});
                   Value* d = node(g, "Sub", {x, c});
                   g.add_output(node(g, "ReduceSum", {node(g, "Mul", {d, d})}, {{"axes", std::vector<int64_t>{2}}}));
                   auto run = [](int64_t r, int64_t q) {
                     return std::map<std::string, Tensor>{{"x", filled({2, r, 24}, 7)}, {"c", filled({2, q, 1}, 8)}};
                   };
                   return std::vector<std::map<std::string, Tensor>>{run(9, 9), run(9, 1), run(1, 5)};
                 },
                 1, true});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Graphs, RunTimeBroadcast, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// A mask of 5 keys against scores of 16 broadcasts under no rule: the run stops with the
// shapes named, before a kernel reads past the mask.
TEST(RunTimeBroadcastErrors, ShapesThatDoNotBroadcastAreRefusedByName) {
  Graph g;
  g.add_output(masked_softmax(g));
  g.infer_shapes();
  driver::ExecutorCounters counters;
  driver::Executor exe(g, e2e::executor_options(), counters);
  try {
    exe.run(scores_and_mask(2, 5, 1));
    ADD_FAILURE() << "a mask of 5 keys ran against scores of 16";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("seq = 5, which does not broadcast to max(16, seq) = 16"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace tilefuse
