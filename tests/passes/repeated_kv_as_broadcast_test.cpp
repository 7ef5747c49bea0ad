// repeat_kv (Unsqueeze -> Expand -> Reshape of the key/value heads) before a MatMul becomes a
// broadcast batch dim of the product: keys under a Transpose of the last two axes (K^T), values
// without one, and a Transpose of the product moved onto the grouped product. Left alone: an
// Expand that repeats the matrix's own rows. Each rewritten graph computes what the original did
// (reference interpreter, before and after).
#include "passes/repeated_kv_as_broadcast.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;

Value* ints(Graph& g, const std::string& name, const std::vector<int64_t>& v) {
  return g.add_constant(g.unique_value_name(name), Tensor::from_vector<int64_t>(DType::i64, {static_cast<int64_t>(v.size())}, v));
}

// x [1, 2, 5, 4] (2 key/value heads) repeated 3 times into [1, 6, 5, 4], as repeat_kv writes it.
Value* repeat_kv(Graph& g, Value* x) {
  Value* u = g.add_node("Unsqueeze", "unsqueeze", {x, ints(g, "axis", {2})}, {"u"})->outputs[0];
  Value* e = g.add_node("Expand", "expand", {u, ints(g, "to", {1, 2, 3, 5, 4})}, {"e"})->outputs[0];
  return g.add_node("Reshape", "merge", {e, ints(g, "heads", {1, 6, 5, 4})}, {"repeated"})->outputs[0];
}

// Attention with 6 query heads over 2 key/value heads: softmax(q k^T) v, heads moved back last.
Graph attention(bool move_heads_back) {
  Graph g;
  Value* q = g.add_input("q", DType::f32, {1, 6, 5, 4});
  Value* k = g.add_input("k", DType::f32, {1, 2, 5, 4});
  Value* v = g.add_input("v", DType::f32, {1, 2, 5, 4});
  Value* kt = g.add_node("Transpose", "kt", {repeat_kv(g, k)}, {"kt"}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}})->outputs[0];
  Value* scores = g.add_node("MatMul", "scores", {q, kt}, {"scores"})->outputs[0];
  Value* p = g.add_node("Softmax", "softmax", {scores}, {"p"}, {{"axis", int64_t{-1}}})->outputs[0];
  Value* ctx = g.add_node("MatMul", "context", {p, repeat_kv(g, v)}, {"ctx"})->outputs[0];
  if (move_heads_back) ctx = g.add_node("Transpose", "back", {ctx}, {"y"}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}})->outputs[0];
  g.set_outputs({ctx});
  g.infer_shapes();
  return g;
}

TEST(RepeatedKvAsBroadcast, KeysAndValuesAreReadInPlace) {
  for (bool move_back : {false, true}) {
    Graph before = attention(move_back), after = attention(move_back);
    EXPECT_EQ(repeated_kv_as_broadcast(after), 2);
    EXPECT_EQ(count_op(after, "Expand"), 0);
    expect_same_results(before, after);
    if (move_back) {  // the output keeps its name through the moved Transpose
      EXPECT_EQ(after.outputs()[0]->name, "y");
    }
  }
}

TEST(RepeatedKvAsBroadcast, LeavesRepeatsOfTheMatrixItself) {
  Graph g;
  Value* a = g.add_input("a", DType::f32, {2, 5, 8});
  Value* x = g.add_input("x", DType::f32, {2, 4, 3});
  // x's rows repeated twice: the new axis merges into the matrix's rows, not into a batch dim.
  Value* u = g.add_node("Unsqueeze", "u", {x, ints(g, "axis", {2})}, {"u"})->outputs[0];
  Value* e = g.add_node("Expand", "e", {u, ints(g, "to", {2, 4, 2, 3})}, {"e"})->outputs[0];
  Value* r = g.add_node("Reshape", "r", {e, ints(g, "shape", {2, 8, 3})}, {"r"})->outputs[0];
  g.set_outputs({g.add_node("MatMul", "mm", {a, r}, {"y"})->outputs[0]});
  g.infer_shapes();
  EXPECT_EQ(repeated_kv_as_broadcast(g), 0);
}

}  // namespace
}  // namespace tilefuse::passes
